package transform_test

import (
	"context"
	"fmt"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/phasec/phasec/eval/evaltest"
	"github.com/phasec/phasec/ir"
	"github.com/phasec/phasec/ir/irgen"
	"github.com/phasec/phasec/passes"
	"github.com/phasec/phasec/transform"
)

// rebindChain returns irgen.Chain(calls) with every intermediate result
// rebound once before its use (lv0 = matmul(x, w); alias0 = lv0;
// lv1 = add(alias0, b); ...), normalized: 2*calls-1 bindings, of which
// CanonicalizeBindings removes every alias.
func rebindChain(calls int) *ir.Module {
	mod := irgen.Chain(calls)
	f := mod.Func("main")
	seq := f.Body.(*ir.SeqExpr)
	in := seq.Blocks[0].Bindings
	binds := make([]ir.Binding, 0, 2*len(in))
	alias := map[*ir.Var]*ir.Var{}
	for i, b := range in {
		vb := b.(*ir.VarBinding)
		call := vb.Value.(*ir.Call)
		args := make([]ir.Expr, len(call.Args))
		for j, a := range call.Args {
			args[j] = a
			if v, ok := a.(*ir.Var); ok && alias[v] != nil {
				args[j] = alias[v]
			}
		}
		binds = append(binds, ir.NewVarBinding(vb.Var, ir.NewCall(call.Op, args...)))
		if i < len(in)-1 {
			a := ir.NewDataflowVar(fmt.Sprintf("alias%d", i), nil)
			binds = append(binds, ir.NewVarBinding(a, vb.Var))
			alias[vb.Var] = a
		}
	}
	nf := &ir.Function{Params: f.Params, Body: &ir.SeqExpr{Blocks: []*ir.BindingBlock{{Dataflow: true, Bindings: binds}}, Body: seq.Body}, Ret: f.Ret, Pure: f.Pure, Attrs: f.Attrs}
	out := ir.NewModule()
	out.Set("main", nf)
	return irgen.MustNormalize(out)
}

// TestRebindChain: the aliases of a rebound chain all go, leaving the
// chain itself, which computes the same.
func TestRebindChain(t *testing.T) {
	const calls = 41
	in := rebindChain(calls)
	out, err := passes.NewPassContext().Run(context.Background(), transform.CanonicalizeBindings, in)
	require.NoError(t, err)
	requireSameModule(t, irgen.MustNormalize(irgen.Chain(calls)), out)
	evaltest.CheckSame(t, in, out, evaltest.Options{})

	again, err := passes.NewPassContext().Run(context.Background(), transform.CanonicalizeBindings, out)
	require.NoError(t, err)
	require.Same(t, out.Func("main"), again.Func("main"), "a canonical function is returned as is")
}

// BenchmarkCanonicalizeBindings canonicalizes rebound chains of 10k and
// 100k bindings (half of them trivial rebindings); the time and
// allocations per binding must not grow with the function (see
// measureLinear).
func BenchmarkCanonicalizeBindings(b *testing.B) {
	benchLinear(b, func(n int) *ir.Module { return rebindChain(n / 2) }, func(b *testing.B, mod *ir.Module) {
		f := mod.Func("main")
		if out, errs := transform.CanonicalizeFunction(mod, f); errs.HasErrors() || out == f {
			b.Fatalf("nothing canonicalized: %v", errs)
		}
	})
}
