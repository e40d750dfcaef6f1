package lower_test

import (
	"context"
	"os"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/phasec/phasec/barrier"
	"github.com/phasec/phasec/ir"
	"github.com/phasec/phasec/lower"
	"github.com/phasec/phasec/op"
	"github.com/phasec/phasec/passes"
	"github.com/phasec/phasec/passes/passtest"
	"github.com/phasec/phasec/syntax"
	"github.com/phasec/phasec/syntax/printer"
)

func TestStaticPlanBlockMemoryGolden(t *testing.T) {
	passtest.Run(t, barrier.Registry, "../testdata/passes/StaticPlanBlockMemory", "StaticPlanBlockMemory")
}

func TestStaticPlanBlockMemoryOffsetsGolden(t *testing.T) {
	passtest.Run(t, barrier.Registry, "../testdata/passes/StaticPlanBlockMemory/offsets", "StaticPlanBlockMemory{planner=offsets}")
}

func TestMemoryLoweringGolden(t *testing.T) {
	for _, pass := range []string{"LowerAllocTensor", "KillAfterLastUse", "LowerRuntimeBuiltin"} {
		t.Run(pass, func(t *testing.T) { passtest.Run(t, barrier.Registry, "../testdata/passes/"+pass, pass) })
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
	require.Equal(t, op.BuiltinAllocTensor, bind.Value.(*ir.Call).Op)
	bind.Var.SetStructInfo(ir.TensorInfoOf(ir.Int32, ir.I64(2), ir.I64(4)))
	_, _, errs := lower.PlanBlockMemory(mod, lower.PlannerTVM)
	require.Len(t, errs, 1, "got %v", errs)
	found := errs[0]
	require.Equal(t, lower.DiagAllocDType, found.Code)
	require.Contains(t, found.Msg, "alloc_tensor of dtype float32 is bound to alloc annotated R.Tensor((2, 4), dtype=\"int32\")")
	require.Equal(t, 24, found.Span.Line)
}

// TestUnknownPlanner: a planner option other than tvm and offsets fails
// the pass with an error naming the value, before any IR is changed.
func TestUnknownPlanner(t *testing.T) {
	p, errs := barrier.Registry.ParseAndBuild("--passes", "StaticPlanBlockMemory{planner=best}")
	require.Empty(t, errs)
	src, err := os.ReadFile("../testdata/passes/StaticPlanBlockMemory/chain.tvms")
	require.NoError(t, err)
	mod, diags := syntax.Parse("chain.tvms", src)
	require.Empty(t, diags)
	_, err = passes.NewPassContext().Run(context.Background(), p, mod)
	require.ErrorContains(t, err, `unknown planner "best" (want tvm or offsets)`)
}

// TestOffsetsAlignToElements: float32x3 elements are 12 bytes, so arena
// offsets must be multiples of 48 (12 and the 16-byte minimum); the
// padding makes the arena (b at 0, a and c at 48: 60 bytes) larger than
// TVM's two storages (36 + 12 bytes), so the class keeps TVM's storages
// and the plan is never worse than TVM's.
func TestOffsetsAlignToElements(t *testing.T) {
	const src = `# from tvm.script import ir as I
# from tvm.script import tir as T
# from tvm.script import relax as R

@I.ir_module
class Module:
    @T.prim_func(private=True)
    def k(var_A: T.handle, var_B: T.handle):
        T.evaluate(0)

    @R.function
    def main(x: R.Tensor((1,), dtype="float32x3")) -> R.Tensor((1,), dtype="float32x3"):
        R.func_attr({"relax.force_pure": True})
        cls = Module
        a = R.builtin.alloc_tensor(R.shape([1]), R.dtype("float32x3"), R.prim_value(0), R.str("global"))
        cls.k(x, a)
        b = R.builtin.alloc_tensor(R.shape([3]), R.dtype("float32x3"), R.prim_value(0), R.str("global"))
        cls.k(a, b)
        c = R.builtin.alloc_tensor(R.shape([1]), R.dtype("float32x3"), R.prim_value(0), R.str("global"))
        cls.k(b, c)
        d = R.builtin.alloc_tensor(R.shape([1]), R.dtype("float32x3"), R.prim_value(0), R.str("global"))
        cls.k(c, d)
        return d
`
	mod, diags := syntax.Parse("align.tvms", []byte(src))
	require.Empty(t, diags)
	tvm, st, errs := lower.PlanBlockMemory(mod, lower.PlannerTVM)
	require.Empty(t, errs)
	require.Equal(t, lower.PlanStats{Tensors: 3, Unplanned: 1, Storages: 2, TVMBytes: 48, ArenaBytes: 48, LowerBound: 48}, st)
	offs, _, errs := lower.PlanBlockMemory(mod, lower.PlannerOffsets)
	require.Empty(t, errs)
	require.Equal(t, printer.Print(tvm), printer.Print(offs), "the class falls back to TVM's storages")
}
