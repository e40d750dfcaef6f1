package transform_test

import (
	"fmt"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/phasec/phasec/ir"
	"github.com/phasec/phasec/ir/irgen"
	"github.com/phasec/phasec/transform"
)

func TestRemoveUnusedParametersUnchangedIsSameModule(t *testing.T) {
	mod := irgen.MustNormalize(irgen.MultiFunc(3, 4))
	assert.Same(t, mod, run(t, transform.RemoveUnusedParameters, mod))
}

func TestRemoveUnusedParametersEveryCallSite(t *testing.T) {
	mod := withUnusedParams(irgen.MultiFunc(5, 3))
	out := run(t, transform.RemoveUnusedParameters, mod)
	for i := range 5 {
		f := out.Func(fmt.Sprintf("f%d", i))
		require.NotNil(t, f)
		assert.Len(t, f.Params, 3, "f%d keeps x, w, b and loses u", i)
		assert.Len(t, mod.Func(fmt.Sprintf("f%d", i)).Params, 4, "the input is not edited")
	}
	ir.Inspect(out.Func("main").Body, func(e ir.Expr) bool {
		if c, ok := e.(*ir.Call); ok {
			if _, ok := c.Op.(*ir.GlobalVar); ok {
				assert.Len(t, c.Args, 3)
			}
		}
		return true
	})
}

// withUnusedParams returns mod (an irgen.MultiFunc module) normalized, with
// an unused parameter u appended to every private function and main's
// calls passing b for it.
func withUnusedParams(mod *ir.Module) *ir.Module {
	main := mod.Func("main")
	b := main.Params[2]
	for name, bf := range mod.Functions() {
		f := bf.(*ir.Function)
		if name == "main" {
			continue
		}
		u := ir.NewVar("u", ir.TensorInfoOf(ir.Float32, ir.I64(irgen.Width)))
		nf := *f
		nf.Params = append(append([]*ir.Var{}, f.Params...), u)
		mod.Set(name, &nf)
	}
	m := &ir.Mutator{PostExpr: func(e ir.Expr) ir.Expr {
		if c, ok := e.(*ir.Call); ok {
			if gv, ok := c.Op.(*ir.GlobalVar); ok {
				return ir.NewCall(ir.NewGlobalVar(gv.Name), append(append([]ir.Expr{}, c.Args...), b)...)
			}
		}
		return e
	}}
	mod.Set("main", m.Function(main))
	return irgen.MustNormalize(mod)
}

// BenchmarkRemoveUnusedParameters measures linearity: 10k and 100k
// bindings as 1k and 10k private functions of 10 bindings, each with an
// unused parameter, called from main.
func BenchmarkRemoveUnusedParameters(b *testing.B) {
	benchPass(b, transform.RemoveUnusedParameters, func(n int) *ir.Module { return withUnusedParams(irgen.MultiFunc(n/10, 10)) })
}
