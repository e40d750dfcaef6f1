package printer

import (
	"bytes"
	"fmt"
	goast "go/ast"
	"go/parser"
	goprinter "go/printer"
	"go/token"
	"io"
	"strings"
	"testing"

	"github.com/phasec/phasec/ir"
	"github.com/phasec/phasec/ir/irgen"

	"github.com/stretchr/testify/assert"
)

// Printing throughput on generated modules of 10 000, 100 000 and 1 000 000
// bindings (irgen.Chain: one dataflow block over a symbolic batch), next to
// go/printer printing a parsed Go file of similar size in the same run. MB/s
// is over the output text. tvmscript/ is Print (the text as a string),
// fprint/ is Fprint to io.Discard (what phasec fmt does); the printer must be
// linear, so compare the 1M/100k ratios. The 1M module takes seconds to
// build; leave it out with -bench 'Print/.*=(10|100)000'.

var benchSizes = []int{10_000, 100_000, 1_000_000}

func BenchmarkPrint(b *testing.B) {
	for _, n := range benchSizes {
		var mod *ir.Module
		size := 0
		build := func() {
			if mod == nil {
				mod = irgen.MustNormalize(irgen.Chain(n))
				size = len(Print(mod))
			}
		}
		b.Run(fmt.Sprintf("tvmscript/bindings=%d", n), func(b *testing.B) {
			build()
			b.SetBytes(int64(size))
			b.ReportAllocs()
			for b.Loop() {
				Print(mod)
			}
		})
		b.Run(fmt.Sprintf("fprint/bindings=%d", n), func(b *testing.B) {
			build()
			b.SetBytes(int64(size))
			b.ReportAllocs()
			for b.Loop() {
				if err := Fprint(io.Discard, mod); err != nil {
					b.Fatal(err)
				}
			}
		})
		if mod == nil {
			continue // both filtered out: no size to match
		}
		file, fset := goFileOfSize(b, size)
		var buf bytes.Buffer
		if err := goprinter.Fprint(&buf, fset, file); err != nil {
			b.Fatal(err)
		}
		b.Run(fmt.Sprintf("goprinter/bytes=%d", buf.Len()), func(b *testing.B) {
			b.SetBytes(int64(buf.Len()))
			b.ReportAllocs()
			for b.Loop() {
				buf.Reset()
				if err := goprinter.Fprint(&buf, fset, file); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// goFileOfSize parses a Go function shaped like the Relax chain (one call
// per statement, chained through the previous result) of about size bytes.
func goFileOfSize(b *testing.B, size int) (*goast.File, *token.FileSet) {
	b.Helper()
	var src strings.Builder
	src.WriteString("package chain\n\nfunc main(x, w, bias []float32) []float32 {\n\tlv0 := matmul(x, w)\n")
	for i := 1; src.Len() < size; i++ {
		fmt.Fprintf(&src, "\tlv%d := add(lv%d, bias, float32(%d))\n", i, i-1, i%7)
	}
	src.WriteString("\treturn nil\n}\n")
	fset := token.NewFileSet()
	file, err := parser.ParseFile(fset, "chain.go", src.String(), parser.ParseComments)
	if err != nil {
		b.Fatal(err)
	}
	return file, fset
}

// The printer must stay linear: printing 100 000 bindings that all share
// the hint "lv" must not probe names quadratically.
func TestPrintSharedHintsLinear(t *testing.T) {
	const n = 20_000
	mod := irgen.MustNormalize(irgen.Chain(n))
	f := mod.Func("main")
	for _, blk := range f.Body.(*ir.SeqExpr).Blocks {
		for _, bd := range blk.Bindings {
			bd.BoundVar().Name = "lv"
		}
	}
	out := Print(mod)
	assert.Contains(t, out, fmt.Sprintf(" lv%d: ", n-1), "expected suffixes up to lv%d", n-1)
}
