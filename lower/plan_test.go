package lower_test

import (
	"context"
	"os"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/phasec/phasec/ir"
	"github.com/phasec/phasec/lower"
	"github.com/phasec/phasec/passes"
	"github.com/phasec/phasec/passes/passtest"
	"github.com/phasec/phasec/syntax"
)

func TestStaticPlanBlockMemoryGolden(t *testing.T) {
	passtest.Run(t, "../testdata/passes/StaticPlanBlockMemory", "StaticPlanBlockMemory")
}

func TestStaticPlanBlockMemoryOffsetsGolden(t *testing.T) {
	passtest.Run(t, "../testdata/passes/StaticPlanBlockMemory/offsets", "StaticPlanBlockMemory{planner=offsets}")
}

func TestMemoryLoweringGolden(t *testing.T) {
	for _, pass := range []string{"LowerAllocTensor", "KillAfterLastUse", "LowerRuntimeBuiltin"} {
		t.Run(pass, func(t *testing.T) { passtest.Run(t, "../testdata/passes/"+pass, pass) })
	}
}

// TestAllocDTypeDisagrees builds what the parser refuses: an alloc_tensor
// of float32 bound to a var annotated int32. The planner reports it at the
// allocation instead of planning 4-byte elements for a wrong dtype.
func TestAllocDTypeDisagrees(t *testing.T) {
	src, err := os.ReadFile("../testdata/passes/StaticPlanBlockMemory/chain.tvms")
	require.NoError(t, err)
	mod, diags := syntax.Parse("chain.tvms", src)
	require.Empty(t, diags)
	bind := mod.Func("main").Body.(*ir.SeqExpr).Blocks[0].Bindings[0].(*ir.VarBinding)
	require.Equal(t, ir.OpBuiltinAllocTensor, bind.Value.(*ir.Call).Op)
	bind.Var.SetStructInfo(ir.TensorInfoOf(ir.Int32, ir.I64(2), ir.I64(4)))
	_, _, errs := lower.StaticPlanBlockMemory(mod, lower.PlannerTVM)
	require.Len(t, errs, 1, "got %v", errs)
	found := errs[0]
	require.Equal(t, lower.DiagAllocDType, found.Code)
	require.Contains(t, found.Msg, "alloc_tensor of dtype float32 is bound to alloc annotated R.Tensor((2, 4), dtype=\"int32\")")
	require.Equal(t, 24, found.Span.Line)
}

// TestUnknownPlanner: a planner option other than tvm and offsets fails
// the pass with an error naming the value, before any IR is changed.
func TestUnknownPlanner(t *testing.T) {
	p, errs := passes.ParseAndBuild("--passes", "StaticPlanBlockMemory{planner=best}")
	require.Empty(t, errs)
	src, err := os.ReadFile("../testdata/passes/StaticPlanBlockMemory/chain.tvms")
	require.NoError(t, err)
	mod, diags := syntax.Parse("chain.tvms", src)
	require.Empty(t, diags)
	_, err = passes.NewPassContext().Run(context.Background(), p, mod)
	require.ErrorContains(t, err, `unknown planner "best" (want tvm or offsets)`)
}
