package syntax

import (
	"github.com/alecthomas/participle/v2/lexer"
)

// baseLexer tokenizes the Python subset TVMScript uses. It knows nothing
// about indentation: it emits newlines ("nl"), runs of blanks ("ws") and
// comments as ordinary tokens, and the indentation wrapper (indent.go) turns
// them into NEWLINE / INDENT / DEDENT.
//
// Rule order matters: the regexps are tried in order, so triple-quoted
// strings precede simple strings, floats precede ints, and keywords precede
// names (a keyword is its own token type so that a Name capture in the
// grammar never swallows "in" or "else").
var baseLexer = lexer.MustSimple([]lexer.SimpleRule{
	{Name: "Comment", Pattern: `#[^\n]*`},
	{Name: "String", Pattern: `"""(?s:.*?)"""|'''(?s:.*?)'''|"(?:\\.|[^"\\\n])*"|'(?:\\.|[^'\\\n])*'`},
	{Name: "Float", Pattern: `(?:\d+\.\d*|\.\d+)(?:[eE][-+]?\d+)?|\d+[eE][-+]?\d+`},
	{Name: "Int", Pattern: `0[xX][0-9a-fA-F]+|\d+`},
	{Name: "Keyword", Pattern: `(?:def|class|if|elif|else|for|in|with|as|return|and|or|not|pass|True|False|None|lambda|is)\b`},
	{Name: "Name", Pattern: `[A-Za-z_]\w*`},
	{Name: "Op", Pattern: `\*\*|//|->|==|!=|<=|>=|<<|>>|[-+*/%@<>=()\[\]{},:.;~&|^]`},
	{Name: "NL", Pattern: `\r?\n`},
	{Name: "WS", Pattern: `[ \t\f]+|\\\r?\n`},
})

// Token type names the grammar refers to. NEWLINE, INDENT and DEDENT are
// synthesized by the indentation wrapper.
const (
	tokNewline = "NEWLINE"
	tokIndent  = "INDENT"
	tokDedent  = "DEDENT"
)

// pythonLexer is the lexer definition the parser uses.
var pythonLexer = newIndentLexer(baseLexer)
