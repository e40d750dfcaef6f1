package lower_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/phasec/phasec/barrier"
	"github.com/phasec/phasec/diag"
	"github.com/phasec/phasec/ir"
	"github.com/phasec/phasec/ir/irgen"
	"github.com/phasec/phasec/lower"
	"github.com/phasec/phasec/passes"
	"github.com/phasec/phasec/passes/passtest"
	"github.com/phasec/phasec/syntax"
	"github.com/phasec/phasec/syntax/printer"
)

func TestVMShapeLowerGolden(t *testing.T) {
	passtest.Run(t, barrier.Registry, "../testdata/passes/VMShapeLower", "VMShapeLower")
}

func TestVMShapeLowerNoErrCtxGolden(t *testing.T) {
	passtest.Run(t, barrier.Registry, "../testdata/passes/VMShapeLower/no_err_ctx", "VMShapeLower{emit_err_ctx=false}")
}

func TestComputePrimValueGolden(t *testing.T) {
	passtest.Run(t, barrier.Registry, "../testdata/passes/ComputePrimValue", "ComputePrimValue")
}

func parseModule(t *testing.T, src string) *ir.Module {
	t.Helper()
	mod, errs := syntax.Parse("test.tvms", []byte(src))
	require.Empty(t, errs)
	return mod
}

// codes returns the diagnostic codes of errs.
func codes(errs diag.List) []diag.Code {
	var out []diag.Code
	for _, d := range errs {
		out = append(out, d.Code)
	}
	return out
}

// TestVMShapeLowerUnlowerable covers the inputs the parser and the
// contracts keep away from VMShapeLower, built by hand: each is a
// diagnostic (TVM aborts on all three).
func TestVMShapeLowerUnlowerable(t *testing.T) {
	const header = "# from tvm.script import ir as I\n# from tvm.script import tir as T\n# from tvm.script import relax as R\n\n@I.ir_module\nclass Module:\n"

	t.Run("variable only inside a composite", func(t *testing.T) {
		mod := parseModule(t, header+`    @R.function
    def main(x: R.Tensor(("n",), dtype="float32"), y: R.Tensor(("n * 2",), dtype="float32")) -> R.Tensor(("n * 2",), dtype="float32"):
        n = T.int64()
        return y
`)
		// Drop x: n now appears only in n * 2, which nothing can compute.
		f := *mod.Func("main")
		f.Params = f.Params[1:]
		mod.Set("main", &f)
		_, _, errs := lower.LowerShapes(mod, true)
		require.Contains(t, codes(errs), lower.DiagUncomputable)
		require.ErrorContains(t, errs.Err(), "symbolic variable n is never defined by a parameter or match_cast on its own")
	})

	t.Run("tensor shaped by a shape var", func(t *testing.T) {
		mod := parseModule(t, header+`    @R.function
    def main(s: R.Shape(ndim=2), x: R.Tensor(dtype="float32", ndim=2)) -> R.Shape(ndim=2):
        return s
`)
		f := mod.Func("main")
		s, x := f.Params[0], f.Params[1]
		x.SetStructInfo(&ir.TensorInfo{Shape: s, DType: ir.Float32, NDim: 2})
		_, _, errs := lower.LowerShapes(mod, true)
		require.Equal(t, []diag.Code{lower.DiagShapePattern}, codes(errs))
	})

	t.Run("local function", func(t *testing.T) {
		src, err := os.ReadFile("../testdata/relax_if_local_function.tvms")
		require.NoError(t, err)
		mod := parseModule(t, string(src))
		_, _, errs := lower.LowerShapes(mod, true)
		require.Equal(t, []diag.Code{lower.DiagNestedFunction}, codes(errs))
		require.ErrorContains(t, errs.Err(), "run LambdaLift")
	})
}

// TestVMShapeLowerSplicePath checks that the straight-line path builds
// exactly what re-emitting through the Builder builds, on the golden
// inputs, the corpus models and generated chains taken to VMShapeLower's
// input by the passes before it.
func TestVMShapeLowerSplicePath(t *testing.T) {
	var mods []*ir.Module
	names := []string{}
	paths, err := filepath.Glob("../testdata/passes/VMShapeLower/*.tvms")
	require.NoError(t, err)
	for _, p := range paths {
		src, err := os.ReadFile(p)
		require.NoError(t, err)
		if mod, errs := syntax.Parse(p, src); len(errs) == 0 {
			mods, names = append(mods, mod), append(names, p)
		}
	}
	before, errs := barrier.Registry.ParseAndBuild("--passes", "canonicalize,lower,StaticPlanBlockMemory,LowerAllocTensor,KillAfterLastUse,LowerRuntimeBuiltin,ComputePrimValue")
	require.Nil(t, errs)
	prepare := func(name string, mod *ir.Module) {
		out, err := passes.NewPassContext().Run(context.Background(), before, mod)
		require.NoError(t, err, name)
		mods, names = append(mods, out), append(names, name)
	}
	for _, p := range []string{"../testdata/models/mlp_legalized.tvms", "../testdata/passes/barriers/build/symbolic.tvms", "../testdata/lowered_legalized_symbolic.tvms"} {
		src, err := os.ReadFile(p)
		require.NoError(t, err)
		mod, errs := syntax.Parse(p, src)
		require.Empty(t, errs)
		prepare(p, mod)
	}
	for _, sym := range []bool{false, true} {
		prepare(fmt.Sprintf("chain symbolic=%v", sym), irgen.LegalizedChain(50, irgen.DNNOptions{Batch: 8, Symbolic: sym}))
		prepare(fmt.Sprintf("transformer symbolic=%v", sym), irgen.Transformer(1, irgen.DNNOptions{Batch: 8, Symbolic: sym}))
	}
	for i, mod := range mods {
		fast, _, errs := lower.LowerShapes(mod, true)
		lower.UseRewriter(true)
		slow, _, errs2 := lower.LowerShapes(mod, true)
		lower.UseRewriter(false)
		require.Equal(t, errs.Error(), errs2.Error(), names[i])
		if errs.HasErrors() {
			continue
		}
		require.True(t, ir.StructuralEqual(fast, slow, ir.EqualOptions{}), "%s: %v", names[i], ir.Diff(fast, slow, ir.EqualOptions{}))
		require.Equal(t, printer.Print(slow), printer.Print(fast), names[i])
	}
}

// BenchmarkVMShapeLower times VMShapeLower alone on a 100k-binding chain
// with a symbolic batch (every allocation's shape from the heap), through
// the straight-line path and through the Builder (the Rewriter path), side
// by side.
func BenchmarkVMShapeLower(b *testing.B) {
	before, errs := barrier.Registry.ParseAndBuild("--passes", "canonicalize,lower,StaticPlanBlockMemory,LowerAllocTensor,KillAfterLastUse,LowerRuntimeBuiltin,ComputePrimValue")
	require.Nil(b, errs)
	in, err := passes.NewPassContext().Run(context.Background(), before, irgen.LegalizedChain(100_000, irgen.DNNOptions{Batch: 8, Symbolic: true}))
	require.NoError(b, err)
	for _, path := range []string{"splice", "rewriter"} {
		b.Run("path="+path, func(b *testing.B) {
			lower.UseRewriter(path == "rewriter")
			defer lower.UseRewriter(false)
			cpu0 := cpuTime()
			defer func() { b.ReportMetric(float64(cpuTime()-cpu0)/float64(b.N), "cpu-ns/op") }()
			for b.Loop() {
				if _, _, errs := lower.LowerShapes(in, true); errs.HasErrors() {
					b.Fatal(errs)
				}
			}
		})
	}
}
