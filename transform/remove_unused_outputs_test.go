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

func TestRemoveUnusedOutputsInnerUnchangedIsSameModule(t *testing.T) {
	mod := irgen.MustNormalize(irgen.MultiFunc(3, 4))
	assert.Same(t, mod, run(t, transform.RemoveUnusedOutputsInner, mod))
}

func TestRemoveUnusedOutputsInnerLeavesInputAlone(t *testing.T) {
	mod := pairModule(2)
	before := mod.Func("f0")
	out := run(t, transform.RemoveUnusedOutputsInner, mod)
	assert.Same(t, before, mod.Func("f0"), "the input module is not edited")
	_, isTuple := out.Func("f0").Ret.(*ir.TupleInfo)
	assert.False(t, isTuple, "f0 returns its one used element bare")
}

// pairModule is n private functions returning a pair of which main uses
// only the first element, each called once from main in a chain.
func pairModule(n int) *ir.Module {
	var src strings.Builder
	src.WriteString("@I.ir_module\nclass Module:\n")
	src.WriteString("    @R.function\n    def main(x: R.Tensor((4,), dtype=\"float32\")) -> R.Tensor((4,), dtype=\"float32\"):\n        cls = Module\n")
	prev := "x"
	for i := range n {
		fmt.Fprintf(&src, "        p%d = cls.f%d(%s)\n        y%d = p%d[0]\n", i, i, prev, i, i)
		prev = fmt.Sprintf("y%d", i)
	}
	src.WriteString("        return " + prev + "\n")
	for i := range n {
		fmt.Fprintf(&src, "\n    @R.function(private=True)\n    def f%d(a: R.Tensor((4,), dtype=\"float32\")) -> R.Tuple(R.Tensor((4,), dtype=\"float32\"), R.Tensor((4,), dtype=\"float32\")):\n", i)
		src.WriteString("        b = R.add(a, a)\n        c = R.multiply(a, a)\n        d = R.subtract(b, c)\n        e = R.nn.relu(d)\n        f = R.add(e, a)\n        g = R.multiply(f, b)\n        h = R.subtract(g, c)\n        t = (h, c)\n        return t\n")
	}
	mod, diags := syntax.Parse("pairs.tvms", []byte(src.String()))
	if len(diags) > 0 {
		panic(diags[0])
	}
	return irgen.MustNormalize(mod)
}

// BenchmarkRemoveUnusedOutputsInner: 10k and 100k bindings as 1k and 10k
// private functions of 8 bindings plus their two call-site bindings in
// main.
func BenchmarkRemoveUnusedOutputsInner(b *testing.B) {
	benchPass(b, transform.RemoveUnusedOutputsInner, func(n int) *ir.Module { return pairModule(n / 10) })
}
