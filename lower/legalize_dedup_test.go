package lower_test

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/phasec/phasec/eval/evaltest"
	"github.com/phasec/phasec/ir"
	"github.com/phasec/phasec/lower"
)

const dedupSrc = `@I.ir_module
class Module:
    @R.function
    def main(x: R.Tensor((2, 3), dtype="float32"), y: R.Tensor((2, 3), dtype="float32"), z: R.Tensor((3,), dtype="float32")):
        with R.dataflow():
            a = R.add(x, y)
            b = R.add(a, x)
            c = R.add(x, z)
            d = R.multiply(b, c)
            e = R.multiply(d, a)
            gv = R.add(e, y)
            R.output(gv)
        return gv
`

// callees maps each binding of main to the global its R.call_tir calls.
func callees(t *testing.T, mod *ir.Module) map[string]string {
	t.Helper()
	got := map[string]string{}
	for _, blk := range mod.Func("main").Body.(*ir.SeqExpr).Blocks {
		for _, bind := range blk.Bindings {
			vb := bind.(*ir.VarBinding)
			call, ok := vb.Value.(*ir.Call)
			require.True(t, ok, "%s is not a call", vb.Var.Name)
			got[vb.Var.Name] = call.Args[0].(*ir.GlobalVar).Name
		}
	}
	return got
}

func primFuncs(mod *ir.Module) []string {
	var names []string
	for _, n := range mod.Names() {
		if mod.PrimFunc(n) != nil {
			names = append(names, n)
		}
	}
	return names
}

// Calls whose legalized PrimFuncs are structurally equal share one PrimFunc,
// as TVM's BlockBuilder::AddFunction deduplicates them: the three (2, 3) +
// (2, 3) adds share add, the broadcasting add gets its own, the two
// multiplies of (2, 3) operands share multiply.
func TestLegalizeOpsDeduplicatesPrimFuncs(t *testing.T) {
	mod := evaltest.Parse(t, "dedup.tvms", dedupSrc)
	got, errs := lower.LegalizeModule(mod, lower.LegalizeOptions{})
	require.False(t, errs.HasErrors(), "%v", errs)
	require.ElementsMatch(t, []string{"add", "add1", "multiply"}, primFuncs(got))
	require.Equal(t, map[string]string{"a": "add", "b": "add", "c": "add1", "d": "multiply", "e": "multiply", "gv": "add"}, callees(t, got))
	evaltest.CheckSame(t, mod, got, evaltest.Options{Seed: 3})
}

// A generated PrimFunc equal to one the module already has reuses it, under
// its own name (TVM seeds the dedup map with the context module's functions).
func TestLegalizeOpsReusesExistingPrimFunc(t *testing.T) {
	mod := evaltest.Parse(t, "dedup.tvms", dedupSrc)
	first, errs := lower.LegalizeModule(mod, lower.LegalizeOptions{})
	require.False(t, errs.HasErrors(), "%v", errs)
	withMul := mod.Clone()
	withMul.Set("my_mul", first.PrimFunc("multiply"))
	got, errs := lower.LegalizeModule(withMul, lower.LegalizeOptions{})
	require.False(t, errs.HasErrors(), "%v", errs)
	require.ElementsMatch(t, []string{"add", "add1", "my_mul"}, primFuncs(got))
	calls := callees(t, got)
	require.Equal(t, "my_mul", calls["d"])
	require.Equal(t, "my_mul", calls["e"])
	for v, callee := range calls {
		require.False(t, strings.HasPrefix(callee, "multiply"), "%s calls %s", v, callee)
	}
	evaltest.CheckSame(t, mod, got, evaltest.Options{Seed: 4})
}
