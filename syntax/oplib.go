package syntax

// The parser resolves R.<op> names through ir's op registry, which the op
// library (package op) fills when it initializes. Importing it here makes
// every op resolvable wherever TVMScript is parsed or printed.
import _ "github.com/phasec/phasec/op"
