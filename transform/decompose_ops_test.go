package transform_test

import (
	"context"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/phasec/phasec/barrier"
	"github.com/phasec/phasec/eval"
	"github.com/phasec/phasec/eval/evaltest"
	"github.com/phasec/phasec/op"
	"github.com/phasec/phasec/passes"
	"github.com/phasec/phasec/passes/passtest"
	"github.com/phasec/phasec/tensor"
)

// runGoldens runs pipeline on every input of dir, or the pipeline
// special names for an input (by file name without .tvms).
func runGoldens(t *testing.T, dir, pipeline string, special map[string]string) {
	t.Helper()
	inputs, err := passtest.Inputs(dir)
	require.NoError(t, err)
	require.NotEmpty(t, inputs)
	for _, path := range inputs {
		name := strings.TrimSuffix(filepath.Base(path), ".tvms")
		p := pipeline
		if s, ok := special[name]; ok {
			p = s
		}
		t.Run(name, func(t *testing.T) {
			passtest.RunFile(t, barrier.Registry, path, p, passtest.Options{})
		})
	}
}

// TVM's test_transform_decompose_ops.py, the inference cases.
func TestDecomposeOpsForInference(t *testing.T) {
	runGoldens(t, "../testdata/passes/DecomposeOpsForInference", "DecomposeOpsForInference", map[string]string{
		"test_batch_norm_inference": "DecomposeOpsForInference{func_name=main}",
		"func_name":                 "DecomposeOpsForInference{func_name=main}",
		"bad_func_name":             `DecomposeOpsForInference{func_name="main("}`,
	})
}

// TVM's test_transform_decompose_ops.py, the training cases.
func TestDecomposeOpsForTraining(t *testing.T) {
	runGoldens(t, "../testdata/passes/DecomposeOpsForTraining", "DecomposeOpsForTraining", map[string]string{
		"test_batch_norm_training": "DecomposeOpsForTraining{func_name=main}",
	})
}

// The pass returns its input when there is nothing to decompose.
func TestDecomposeOpsUnchanged(t *testing.T) {
	mod := evaltest.Parse(t, "m", `
@I.ir_module
class Module:
    @R.function
    def main(x: R.Tensor((4, 8), dtype="float32"), g: R.Tensor((8,), dtype="float32")) -> R.Tensor((4, 8), dtype="float32"):
        y: R.Tensor((4, 8), dtype="float32") = R.nn.layer_norm(x, g, g, axes=[-1])
        return y
`)
	for _, spec := range []string{"DecomposeOpsForInference", "DecomposeOpsForTraining{func_name=other}"} {
		p, diags := barrier.Registry.ParseAndBuild("p", spec)
		require.Empty(t, diags)
		out, err := passes.NewPassContext().Run(context.Background(), p, mod)
		require.NoError(t, err)
		assert.Same(t, mod, out, spec)
	}
}

// The semantic oracle: the decomposed module computes what the composite
// ops compute in the reference evaluator. The inference decomposition
// normalizes with the moving statistics (batch_norm's training=False);
// the training one with the batch's, returning the updated moving ones
// (training=True, the default). Tolerance: eval.Float32Tol (the
// evaluator computes the composite ops in float64 and the decomposition
// rounds to float32 after each op).
func TestDecomposeOpsComputesTheSame(t *testing.T) {
	inference := evaltest.Parse(t, "inference", `
@I.ir_module
class Module:
    @R.function
    def main(x: R.Tensor((2, 3, 4, 5), dtype="float32"), gamma: R.Tensor((3,), dtype="float32"), beta: R.Tensor((3,), dtype="float32"), mm: R.Tensor((3,), dtype="float32"), mv: R.Tensor((3,), dtype="float32")):
        with R.dataflow():
            v = R.abs(mv)
            bn = R.nn.batch_norm(x, gamma, beta, mm, v, axis=1, epsilon=1e-3, training=False)
            bn2 = R.nn.batch_norm(x, gamma, beta, mm, v, axis=-3, epsilon=1e-5, center=False, training=False)
            out = (bn[0], bn[1], bn[2], bn2[0])
            R.output(out)
        return out
`)
	evaltest.CheckPipeline(t, inference, "DecomposeOpsForInference", evaltest.Options{Seed: 1})

	training := evaltest.Parse(t, "training", `
@I.ir_module
class Module:
    @R.function
    def main(x: R.Tensor((2, 3, 4, 5), dtype="float32"), gamma: R.Tensor((3,), dtype="float32"), beta: R.Tensor((3,), dtype="float32"), mm: R.Tensor((3,), dtype="float32"), mv: R.Tensor((3,), dtype="float32"), g2: R.Tensor((4, 5), dtype="float32"), g1: R.Tensor((5,), dtype="float32")):
        with R.dataflow():
            bn = R.nn.batch_norm(x, gamma, beta, mm, mv, axis=1, epsilon=1e-3, momentum=0.3)
            bn2 = R.nn.batch_norm(x, gamma, beta, mm, mv, axis=-3, scale=False)
            ln = R.nn.layer_norm(x, g2, g2, axes=[-2, -1], epsilon=1e-4)
            ln2 = R.nn.layer_norm(x, g1, g1, axes=[3], scale=False)
            out = (bn[0], bn[1], bn[2], bn2[0], bn2[1], ln, ln2)
            R.output(out)
        return out
`)
	evaltest.CheckPipeline(t, training, "DecomposeOpsForTraining", evaltest.Options{Seed: 2})

	shape := evaltest.Parse(t, "tensor_to_shape", `
@I.ir_module
class Module:
    @R.function
    def main(x: R.Tensor((2, 3), dtype="float32"), t: R.Tensor((2,), dtype="int64")) -> R.Tensor(ndim=2, dtype="float32"):
        s: R.Shape(ndim=2) = R.tensor_to_shape(t)
        y: R.Tensor(ndim=2, dtype="float32") = R.reshape(x, s)
        return y
`)
	x := tensor.New(tensor.Float32, 2, 3)
	for i := range 6 {
		x.SetFloat64(i, float64(i))
	}
	target := tensor.New(tensor.Int64, 2)
	target.SetFloat64(0, 3)
	target.SetFloat64(1, 2)
	out := evaltest.CheckPipeline(t, shape, "DecomposeOpsForInference", evaltest.Options{Args: []op.Value{x, target}})
	got, err := eval.New(out).Call("main", x, target)
	require.NoError(t, err)
	assert.Equal(t, []int64{3, 2}, got.(*tensor.Tensor).Shape)
}

// TVM's documents leave implicit that LegalizeOps needs tensor_to_shape
// decomposed first; here the lower barrier's diagnostic names the pass,
// and with it the module lowers and builds.
func TestTensorToShapeNeedsDecomposition(t *testing.T) {
	src := `
@I.ir_module
class Module:
    @R.function
    def main(x: R.Tensor((2, 3), dtype="float32"), t: R.Tensor((2,), dtype="int64")) -> R.Tensor(ndim=2, dtype="float32"):
        s: R.Shape(ndim=2) = R.tensor_to_shape(t)
        y: R.Tensor(ndim=2, dtype="float32") = R.reshape(x, s)
        return y
`
	run := func(spec string) error {
		p, diags := barrier.Registry.ParseAndBuild("p", spec)
		require.Empty(t, diags)
		_, err := passes.NewPassContext().Run(context.Background(), p, evaltest.Parse(t, "m", src))
		return err
	}
	err := run("canonicalize,lower")
	require.Error(t, err)
	assert.Regexp(t, `LOW030.*R.reshape .*unknown shape.*hint: .*R.tensor_to_shape.*DecomposeOpsForInference`, err.Error())
	require.NoError(t, run("canonicalize,DecomposeOpsForInference,lower,build"))
}
