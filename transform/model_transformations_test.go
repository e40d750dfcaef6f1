package transform_test

import (
	"fmt"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/phasec/phasec/eval"
	"github.com/phasec/phasec/eval/evaltest"
	"github.com/phasec/phasec/ir"
	"github.com/phasec/phasec/semcheck"
	"github.com/phasec/phasec/syntax/printer"
)

// TestModelTransformationsEndToEnd takes a ResNet-style CNN (convolutions
// with batch norm, ReLU, a residual add, max pooling; constant weights)
// through the model transformations a user applies before building, in the
// order PHASES.md gives: FoldBatchnormToConv2D (the batch norms into the
// convolutions, while they are NCHW), ConvertLayout to NHWC, then
// ToMixedPrecision (float16 storage, float32 accumulation), then the
// optimize, lower and build barriers; and checks on the VM that it computes
// what the untransformed model computes. Tolerance: Float16Tol (4 float16
// roundoffs of the output's largest magnitude, plus 1e-4), since weights and
// activations are stored in float16.
func TestModelTransformationsEndToEnd(t *testing.T) {
	mod := evaltest.Parse(t, "cnn.tvms", cnnModule(2))
	const transforms = "canonicalize,FoldBatchnormToConv2D,FoldConstant," + nhwc + ",ToMixedPrecision{out_dtype=float32}"
	transformed, err := runPipeline(t, transforms, mod)
	require.NoError(t, err)
	assert.Zero(t, countOp(transformed, "relax.nn.batch_norm"), "batch norms folded")
	assert.Positive(t, countOp(transformed, "relax.nn.conv2d"))
	nhwcConvs, f16Convs := 0, 0
	for _, c := range callsOf(transformed, "relax.nn.conv2d") {
		if c.Attrs["data_layout"] == "NHWC" {
			nhwcConvs++
		}
		if fmt.Sprint(c.Attrs["out_dtype"]) == "float32" && dtypeOf(c.Args[0]) == "float16" {
			f16Convs++
		}
	}
	assert.Equal(t, countOp(transformed, "relax.nn.conv2d"), nhwcConvs, "every convolution in NHWC")
	assert.Equal(t, nhwcConvs, f16Convs, "every convolution reads float16 and accumulates in float32:\n%s", printer.Print(transformed))

	plainVM, err := runPipeline(t, "canonicalize,optimize,lower,build", mod)
	require.NoError(t, err)
	doneVM, err := runPipeline(t, transforms+",optimize,lower,build", mod)
	require.NoError(t, err)
	compareBuilds(t, mod, plainVM, doneVM, eval.Float16Tol)
}

// callsOf lists the calls of the op named name in mod's functions.
func callsOf(mod *ir.Module, name string) []*ir.Call {
	var out []*ir.Call
	for _, fname := range mod.Names() {
		f := mod.Func(fname)
		if f == nil {
			continue
		}
		ir.Inspect(f.Body, func(e ir.Expr) bool {
			if c, ok := e.(*ir.Call); ok {
				if o, ok := c.Op.(*ir.Op); ok && o.Name == name {
					out = append(out, c)
				}
			}
			return true
		})
	}
	return out
}

// dtypeOf is the dtype of a tensor expression ("" when not a tensor).
func dtypeOf(e ir.Expr) string {
	if t, ok := e.StructInfo().(*ir.TensorInfo); ok {
		return t.DType.String()
	}
	return ""
}

// compareBuilds runs the original module's main on the evaluator and both
// built modules on the VM, on three random argument sets, and requires the
// transformed build to agree with the plain one and with the evaluator
// within tol.
func compareBuilds(t *testing.T, mod, plainVM, doneVM *ir.Module, tol eval.Tolerance) {
	t.Helper()
	for seed := range uint64(3) {
		args, err := eval.RandomArgs(mod.Func("main"), seed, nil, 3)
		require.NoError(t, err)
		want, err := eval.New(mod).Call("main", args...)
		require.NoError(t, err)
		plain, err := semcheck.Evaluate(plainVM, "main", args, want)
		require.NoError(t, err)
		got, err := semcheck.Evaluate(doneVM, "main", args, want)
		require.NoError(t, err)
		require.NoError(t, eval.Compare(got, plain, tol), "transformed vs untransformed on the VM, seed %d", seed)
		require.NoError(t, eval.Compare(got, want, tol), "transformed on the VM vs the evaluator, seed %d", seed)
	}
}
