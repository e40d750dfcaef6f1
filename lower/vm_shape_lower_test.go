package lower_test

import (
	"os"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/phasec/phasec/diag"
	"github.com/phasec/phasec/ir"
	"github.com/phasec/phasec/lower"
	"github.com/phasec/phasec/passes/passtest"
	"github.com/phasec/phasec/syntax"
)

func TestVMShapeLowerGolden(t *testing.T) {
	passtest.Run(t, "../testdata/passes/VMShapeLower", "VMShapeLower")
}

func TestVMShapeLowerNoErrCtxGolden(t *testing.T) {
	passtest.Run(t, "../testdata/passes/VMShapeLower/no_err_ctx", "VMShapeLower{emit_err_ctx=false}")
}

func TestComputePrimValueGolden(t *testing.T) {
	passtest.Run(t, "../testdata/passes/ComputePrimValue", "ComputePrimValue")
}

func parseModule(t *testing.T, src string) *ir.Module {
	t.Helper()
	mod, errs := syntax.Parse("test.tvms", []byte(src))
	require.Empty(t, errs)
	return mod
}

// codes returns the diagnostic codes of errs.
func codes(errs diag.List) []string {
	var out []string
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
		_, _, errs := lower.VMShapeLower(mod, true)
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
		_, _, errs := lower.VMShapeLower(mod, true)
		require.Equal(t, []string{lower.DiagShapePattern}, codes(errs))
	})

	t.Run("local function", func(t *testing.T) {
		src, err := os.ReadFile("../testdata/relax_if_local_function.tvms")
		require.NoError(t, err)
		mod := parseModule(t, string(src))
		_, _, errs := lower.VMShapeLower(mod, true)
		require.Equal(t, []string{lower.DiagNestedFunction}, codes(errs))
		require.ErrorContains(t, errs.Err(), "run LambdaLift")
	})
}
