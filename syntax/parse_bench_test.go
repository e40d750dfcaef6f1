package syntax

import (
	"fmt"
	"go/parser"
	"go/token"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/phasec/phasec/ir/irgen"
)

// genModule returns a module whose main function has n bindings in one
// dataflow block (irgen.ChainSource: adds, annotated multiplies and relus);
// genGo is a Go file of similar size and shape for the go/parser baseline.
func genModule(n int) string { return irgen.ChainSource(n) }

func genGo(n int) string {
	var b strings.Builder
	b.WriteString("package p\n\nfunc main(x, y []float32) []float32 {\n\tlv0 := add(x, y)\n")
	for i := 1; i < n; i++ {
		switch i % 3 {
		case 0:
			fmt.Fprintf(&b, "\tlv%d := add(lv%d, x)\n", i, i-1)
		case 1:
			fmt.Fprintf(&b, "\tvar lv%d Tensor[float32, Shape[N, Sixteen]] = multiply(lv%d, y)\n", i, i-1)
		default:
			fmt.Fprintf(&b, "\tlv%d := nn.relu(lv%d)\n", i, i-1)
		}
	}
	fmt.Fprintf(&b, "\treturn add(lv%d, x)\n}\n", n-1)
	return b.String()
}

// BenchmarkParse compares, at 10k, 100k and 1M bindings (the 1M module is
// ~55 MB): the whole Parse (lex + read + build + normalize; for valid input
// the deferred reading of deferred.go), the eager statement reader alone
// (lexing included: what Parse runs on input with syntax errors), and
// go/parser on a Go file of similar size and shape; below 1M also participle's parser of the same grammar (the
// grammar of record; it cannot take 1M statements, participle caps a
// repetition at a million) and the lexer alone, scanning into the token
// slice participle reads. Ratios to read: Parse/GoParser at each size, and
// Parse/1000000 over Parse/100000 (linear is 10).
func BenchmarkParse(b *testing.B) {
	for _, n := range []int{10_000, 100_000, 1_000_000} {
		src := []byte(genModule(n))
		goSrc := []byte(genGo(n))
		b.Run(fmt.Sprintf("Parse/%d", n), func(b *testing.B) {
			b.SetBytes(int64(len(src)))
			b.ReportAllocs()
			for b.Loop() {
				if _, d := Parse("bench.tvms", src); len(d) > 0 {
					b.Fatal(d)
				}
			}
		})
		b.Run(fmt.Sprintf("Reader/%d", n), func(b *testing.B) {
			b.SetBytes(int64(len(src)))
			b.ReportAllocs()
			for b.Loop() {
				if tree, rec := readFile("bench.tvms", src); tree == nil || rec != nil {
					b.Fatal(rec.diags)
				}
			}
		})
		if n < 1_000_000 {
			benchParticiple(b, n, src)
		}
		b.Run(fmt.Sprintf("GoParser/%d", n), func(b *testing.B) {
			b.SetBytes(int64(len(goSrc)))
			b.ReportAllocs()
			for b.Loop() {
				if _, err := parser.ParseFile(token.NewFileSet(), "bench.go", goSrc, 0); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

func benchParticiple(b *testing.B, n int, src []byte) {
	b.Run(fmt.Sprintf("Participle/%d", n), func(b *testing.B) {
		b.SetBytes(int64(len(src)))
		b.ReportAllocs()
		for b.Loop() {
			if _, err := parseTree("bench.tvms", src); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run(fmt.Sprintf("Lex/%d", n), func(b *testing.B) {
		b.SetBytes(int64(len(src)))
		b.ReportAllocs()
		for b.Loop() {
			if _, err := lexTokens("bench.tvms", src); err != nil {
				b.Fatal(err)
			}
		}
	})
}

// TestGeneratedModuleParses keeps the benchmark input honest.
func TestGeneratedModuleParses(t *testing.T) {
	mod := mustParse(t, genModule(50))
	assert.Len(t, bindings(t, mod, "main"), 51, "bindings of main")
	_, err := parser.ParseFile(token.NewFileSet(), "g.go", genGo(50), 0)
	require.NoError(t, err)
}

// BenchmarkParseWithErrors: reading the 100k-binding module with 20 syntax
// errors spread through it, beside the clean module. Recovery skips the damaged
// statements in place, so the ratio should stay near 1 (it was ~40 when
// recovery re-parsed the file once per error).
func BenchmarkParseWithErrors(b *testing.B) {
	const n = 100_000
	clean := genModule(n)
	lines := strings.Split(clean, "\n")
	for k := 1; k <= 20; k++ {
		i := 10 + k*(len(lines)-20)/21
		lines[i] = strings.Replace(lines[i], "(", "(,", 1)
	}
	broken := []byte(strings.Join(lines, "\n"))
	for _, c := range []struct {
		name string
		src  []byte
		errs int
	}{{"clean", []byte(clean), 0}, {"20errors", broken, 20}} {
		b.Run(c.name, func(b *testing.B) {
			b.SetBytes(int64(len(c.src)))
			b.ReportAllocs()
			for b.Loop() {
				// The statement reader alone: the builder would skip the
				// chain after the first dropped binding (its names are
				// poisoned), which is not what is measured here.
				_, rec := readFile("bench.tvms", c.src)
				if got := 0; rec != nil {
					got = len(rec.diags)
					if got != c.errs {
						b.Fatalf("%d diagnostics, want %d", got, c.errs)
					}
				} else if c.errs != 0 {
					b.Fatal("no diagnostics")
				}
			}
		})
	}
}
