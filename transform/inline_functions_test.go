package transform_test

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/phasec/phasec/eval/evaltest"
	"github.com/phasec/phasec/ir"
	"github.com/phasec/phasec/ir/irgen"
	"github.com/phasec/phasec/transform"
)

func TestInlinePrivateFunctionsUnchangedIsSameModule(t *testing.T) {
	mod := irgen.MustNormalize(irgen.Chain(20))
	assert.Same(t, mod, run(t, transform.InlinePrivateFunctions, mod))
}

func TestInlinePrivateFunctionsMultiFunc(t *testing.T) {
	mod := irgen.MustNormalize(irgen.MultiFunc(4, 3))
	out := run(t, transform.InlinePrivateFunctions, mod)
	assert.Equal(t, []string{"main"}, out.Names(), "every private function is inlined and removed")
	calls := 0
	ir.Inspect(out.Func("main").Body, func(e ir.Expr) bool {
		if c, ok := e.(*ir.Call); ok {
			if _, ok := c.Op.(*ir.GlobalVar); ok {
				calls++
			}
		}
		return true
	})
	assert.Zero(t, calls)
	assert.Len(t, mod.Names(), 5, "the input is not edited")
	evaltest.CheckSame(t, mod, out, evaltest.Options{})
}

func TestInlinePrivateFunctionsSymVarNotDetermined(t *testing.T) {
	src := header + `@I.ir_module
class Module:
    @R.function
    def main(x: R.Tensor(dtype="float32", ndim=1)) -> R.Tensor(dtype="float32", ndim=1):
        cls = Module
        y = cls.f(x)
        return y

    @R.function(private=True)
    def f(a: R.Tensor(("n",), dtype="float32")) -> R.Tensor(("n",), dtype="float32"):
        n = T.int64()
        z = R.zeros(R.shape([n]), dtype="float32")
        return z
`
	mod := normalized(t, evaltest.Parse(t, "sym.tvms", src))
	_, err := runErr(transform.InlinePrivateFunctions, mod)
	require.ErrorContains(t, err, "do not determine the symbolic variable n")
}

// BenchmarkInlinePrivateFunctions: 10k and 100k bindings as 1k and 10k
// private functions of 10 bindings, all inlined into main.
func BenchmarkInlinePrivateFunctions(b *testing.B) {
	benchPass(b, transform.InlinePrivateFunctions, func(n int) *ir.Module { return irgen.MustNormalize(irgen.MultiFunc(n/10, 10)) })
}
