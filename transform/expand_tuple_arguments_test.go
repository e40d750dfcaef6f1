package transform_test

import (
	"fmt"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"

	"github.com/phasec/phasec/ir"
	"github.com/phasec/phasec/ir/irgen"
	"github.com/phasec/phasec/syntax"
	"github.com/phasec/phasec/transform"
)

func TestExpandTupleArgumentsInnerUnchangedIsSameModule(t *testing.T) {
	mod := irgen.MustNormalize(irgen.MultiFunc(3, 4))
	assert.Same(t, mod, run(t, transform.ExpandTupleArgumentsInner, mod))
}

func TestExpandTupleArgumentsInnerEveryCallSite(t *testing.T) {
	mod := tupleArgModule(3)
	out := run(t, transform.ExpandTupleArgumentsInner, mod)
	for i := range 3 {
		name := fmt.Sprintf("f%d", i)
		assert.Len(t, out.Func(name).Params, 2, "%s takes the pair's elements", name)
		assert.Len(t, mod.Func(name).Params, 1, "the input is not edited")
	}
	ir.Inspect(out.Func("main").Body, func(e ir.Expr) bool {
		if c, ok := e.(*ir.Call); ok {
			if _, ok := c.Op.(*ir.GlobalVar); ok {
				assert.Len(t, c.Args, 2)
			}
		}
		return true
	})
}

// tupleArgModule is n private functions taking a pair, each called once
// from main in a chain.
func tupleArgModule(n int) *ir.Module {
	const t4 = `R.Tensor((4,), dtype="float32")`
	var src strings.Builder
	src.WriteString("@I.ir_module\nclass Module:\n")
	fmt.Fprintf(&src, "    @R.function\n    def main(x: %s) -> %s:\n        cls = Module\n", t4, t4)
	prev := "x"
	for i := range n {
		fmt.Fprintf(&src, "        p%d = (%s, x)\n        y%d = cls.f%d(p%d)\n", i, prev, i, i, i)
		prev = fmt.Sprintf("y%d", i)
	}
	src.WriteString("        return " + prev + "\n")
	for i := range n {
		fmt.Fprintf(&src, "\n    @R.function(private=True)\n    def f%d(p: R.Tuple(%s, %s)) -> %s:\n", i, t4, t4, t4)
		src.WriteString("        a = p[0]\n        b = p[1]\n        c = R.add(a, b)\n        d = R.multiply(c, a)\n        e = R.nn.relu(d)\n        f = R.subtract(e, b)\n        return f\n")
	}
	mod, diags := syntax.Parse("tuple_args.tvms", []byte(src.String()))
	if len(diags) > 0 {
		panic(diags[0])
	}
	return irgen.MustNormalize(mod)
}

// BenchmarkExpandTupleArgumentsInner: 10k and 100k bindings as 1.25k and
// 12.5k private functions of 6 bindings plus two in main each.
func BenchmarkExpandTupleArgumentsInner(b *testing.B) {
	benchPass(b, transform.ExpandTupleArgumentsInner, func(n int) *ir.Module { return tupleArgModule(n / 8) })
}
