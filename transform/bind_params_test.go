package transform_test

import (
	"context"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/phasec/phasec/barrier"
	"github.com/phasec/phasec/eval"
	"github.com/phasec/phasec/eval/evaltest"
	"github.com/phasec/phasec/ir"
	"github.com/phasec/phasec/passes"
	"github.com/phasec/phasec/passes/passtest"
	"github.com/phasec/phasec/syntax/printer"
	"github.com/phasec/phasec/tensor"
	"github.com/phasec/phasec/transform"
)

const bindParamsDir = "../testdata/passes/BindParams"

// bindParamsArrays are the arrays of the .npz file beside each input
// (NAME.npz for NAME.tvms); `go test -update` writes them. An input
// without an entry has no file (missing_file).
func bindParamsArrays() map[string][]tensor.Named {
	r := rand.New(rand.NewPCG(20, 1))
	f32 := func(shape ...int64) *tensor.Tensor {
		t := tensor.New(tensor.Float32, shape...)
		for i := range t.NumElements() {
			t.SetFloat64(int(i), float64(r.Float32()))
		}
		return t
	}
	arange := tensor.New(tensor.Float32, 16)
	for i := range 16 {
		arange.SetFloat64(i, float64(i))
	}
	return map[string][]tensor.Named{
		"test_bind_params":               {{Name: "w", Tensor: f32(16, 16)}},
		"test_bind_params_symbolic_vars": {{Name: "w0", Tensor: f32(6, 4)}, {Name: "b0", Tensor: f32(6)}, {Name: "w1", Tensor: f32(8, 6)}, {Name: "b1", Tensor: f32(8)}},
		"test_bind_params_by_var_name":   {{Name: "A", Tensor: arange}},
		"other_functions":                {{Name: "A", Tensor: f32(4)}},
		"no_such_parameter":              {{Name: "B", Tensor: f32(4)}},
		"dtype_mismatch":                 {{Name: "A", Tensor: f32(4)}, {Name: "B", Tensor: tensor.New(tensor.Float64, 4)}},
		"shape_mismatch":                 {{Name: "A", Tensor: f32(4, 5)}, {Name: "B", Tensor: f32(3, 1)}},
		"symbolic_conflict":              {{Name: "A", Tensor: f32(4)}, {Name: "B", Tensor: f32(6)}},
	}
}

func bindParamsPipeline(input string) string {
	npz := strings.TrimSuffix(input, ".tvms") + ".npz"
	return "BindParams{func=main,params=" + filepath.ToSlash(npz) + "}"
}

// TestBindParams runs TVM's test_transform_bind_params.py cases and the
// bad-input cases, each with the arrays of its own .npz file.
func TestBindParams(t *testing.T) {
	if passtest.Updating() {
		for name, arrays := range bindParamsArrays() {
			require.NoError(t, tensor.WriteNpz(filepath.Join(bindParamsDir, name+".npz"), arrays))
		}
	}
	inputs, err := passtest.Inputs(bindParamsDir)
	require.NoError(t, err)
	require.NotEmpty(t, inputs)
	for _, path := range inputs {
		t.Run(strings.TrimSuffix(filepath.Base(path), ".tvms"), func(t *testing.T) {
			passtest.RunFile(t, barrier.Registry, path, bindParamsPipeline(path), passtest.Options{})
		})
	}
}

// The bound module computes with the remaining arguments what the input
// computed with the arrays passed as arguments (TVM's test_bind_params
// compares the two builds the same way).
func TestBindParamsComputesTheSame(t *testing.T) {
	path := filepath.Join(bindParamsDir, "test_bind_params.tvms")
	src, err := os.ReadFile(path)
	require.NoError(t, err)
	before := evaltest.Parse(t, path, string(src))
	arrays, err := tensor.ReadNpz(strings.TrimSuffix(path, ".tvms") + ".npz")
	require.NoError(t, err)
	after, errs := transform.BindParamArrays(before, "main", "test", arrays)
	require.Empty(t, errs)
	require.Len(t, after.Func("main").Params, 1)

	x, err := eval.RandomArgs(after.Func("main"), 7, nil, 3)
	require.NoError(t, err)
	want, err := eval.New(before).Call("main", x[0], arrays[0].Tensor)
	require.NoError(t, err)
	got, err := eval.New(after).Call("main", x...)
	require.NoError(t, err)
	require.NoError(t, eval.Compare(got, want, eval.Float32Tol))
}

// TVM's test_bind_params_symbolic_vars checks the struct info the bound
// symbolic variables leave: x is (batch, 4), the bindings (batch, 6) and
// (batch, 8), the return (batch, 8).
func TestBindParamsSymbolicVars(t *testing.T) {
	path := filepath.Join(bindParamsDir, "test_bind_params_symbolic_vars.tvms")
	res := passtest.RunFile(t, barrier.Registry, path, bindParamsPipeline(path), passtest.Options{})
	require.NotNil(t, res.Output)
	f := res.Output.Func("main")
	require.Len(t, f.Params, 1)
	batch := f.Params[0].StructInfo().(*ir.TensorInfo).Shape.(*ir.ShapeExpr).Values[0]
	tensorOf := func(dims ...ir.PrimExpr) ir.StructInfo {
		return &ir.TensorInfo{Shape: ir.NewShapeExpr(dims...), DType: ir.Float32, NDim: len(dims)}
	}
	same := func(want, got ir.StructInfo) {
		t.Helper()
		assert.True(t, ir.StructuralEqual(want, got, ir.EqualOptions{}), "want %s, got %s", want, got)
	}
	same(tensorOf(batch, ir.I64(4)), f.Params[0].StructInfo())
	same(tensorOf(batch, ir.I64(8)), f.Ret)
	binds := f.Body.(*ir.SeqExpr).Blocks[0].Bindings
	same(tensorOf(batch, ir.I64(6)), binds[0].BoundVar().StructInfo())
	same(tensorOf(batch, ir.I64(8)), binds[1].BoundVar().StructInfo())
}

// A run that fails leaves nothing half-applied: the error comes back and
// the input module is untouched.
func TestBindParamsNothingHalfApplied(t *testing.T) {
	path := filepath.Join(bindParamsDir, "dtype_mismatch.tvms")
	src, err := os.ReadFile(path)
	require.NoError(t, err)
	mod := evaltest.Parse(t, path, string(src))
	text := printer.Print(mod)
	p, diags := barrier.Registry.ParseAndBuild("p", bindParamsPipeline(path))
	require.Empty(t, diags)
	out, err := passes.NewPassContext().Run(context.Background(), p, mod)
	require.Error(t, err)
	assert.Nil(t, out)
	assert.Equal(t, text, printer.Print(mod), "the input module changed")
	assert.Len(t, mod.Func("main").Params, 2)
}

// Options: func and params are required; a function the module lacks is
// an error (TVM silently binds nothing).
func TestBindParamsOptions(t *testing.T) {
	mod := evaltest.Parse(t, "m", `
@I.ir_module
class Module:
    @R.function
    def main(A: R.Tensor((4,), dtype="float32")) -> R.Tensor((4,), dtype="float32"):
        return A
`)
	npz := filepath.Join(bindParamsDir, "other_functions.npz")
	for spec, want := range map[string]string{
		"BindParams{params=" + npz + "}":             `OPT201.*option func .* is required`,
		"BindParams{func=main}":                      `OPT201.*option params .* is required`,
		"BindParams{func=nosuch,params=" + npz + "}": `OPT202.*no Relax function "nosuch" \(functions: main\)`,
	} {
		p, diags := barrier.Registry.ParseAndBuild("p", spec)
		require.Empty(t, diags, spec)
		_, err := passes.NewPassContext().Run(context.Background(), p, mod)
		require.Error(t, err, spec)
		assert.Regexp(t, want, err.Error(), spec)
	}
}
