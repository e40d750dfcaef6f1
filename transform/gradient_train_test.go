package transform_test

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/phasec/phasec/eval"
	"github.com/phasec/phasec/eval/evaltest"
	"github.com/phasec/phasec/op"
	"github.com/phasec/phasec/semcheck"
	"github.com/phasec/phasec/tensor"
	"github.com/phasec/phasec/transform"
)

// mlp64 is a two-layer perceptron with a cross-entropy loss in float64,
// for finite differences.
const mlp64 = `
@I.ir_module
class Module:
    @R.function
    def main(x: R.Tensor((5, 4), "float64"), w0: R.Tensor((4, 6), "float64"), b0: R.Tensor((6,), "float64"), w1: R.Tensor((6, 3), "float64"), b1: R.Tensor((3,), "float64"), label: R.Tensor((5, 3), "float64")) -> R.Tensor((), "float64"):
        with R.dataflow():
            lv0 = R.matmul(x, w0)
            lv1 = R.add(lv0, b0)
            h = R.nn.relu(lv1)
            lv2 = R.matmul(h, w1)
            out = R.add(lv2, b1)
            logits = R.nn.log_softmax(out)
            gv = R.nn.cross_entropy_with_logits(logits, label)
            R.output(gv)
        return gv
`

// The MLP's loss gradient with respect to every weight agrees with
// central differences (gradStep, gradTol as the per-op check).
func TestGradientOfMLPLossMatchesFiniteDifferences(t *testing.T) {
	mod := evaltest.Parse(t, "mlp64.tvms", mlp64)
	wrt := []string{"w0", "b0", "w1", "b1"}
	out, err := transform.Differentiate(mod, "main", wrt, 0)
	require.NoError(t, err)
	args := gradArgs(t, mod, false)
	setOneHot(args[5].(*tensor.Tensor), []int{0, 2, 1, 2, 0})
	checkNumericGradient(t, out, args, wrt)
}

// setOneHot makes each row of t the one-hot vector of its class.
func setOneHot(t *tensor.Tensor, classes []int) {
	n := int(t.Shape[1])
	for r, c := range classes {
		for j := range n {
			v := 0.0
			if j == c {
				v = 1
			}
			t.SetFloat64(r*n+j, v)
		}
	}
}

// One step of SGD written in TVMScript (testdata/models/mlp_sgd.tvms),
// through Gradient and the whole pipeline, runs on the VM: the updated
// weights are the evaluator's (float32 kernels against the float64-exact
// evaluator: eval.TranscendentalTol, as log_softmax uses exp and log),
// and the loss with them is lower.
func TestSGDStepOnTheVMLowersTheLoss(t *testing.T) {
	mod := parseFile(t, "../testdata/models/mlp_sgd.tvms")
	built, err := runPipeline(t, "canonicalize,Gradient{func_name=loss},optimize,lower,build", mod)
	require.NoError(t, err)
	ref, err := runPipeline(t, "canonicalize,Gradient{func_name=loss}", mod)
	require.NoError(t, err)

	args, err := eval.RandomArgs(mod.Func("main"), 3, nil, 1)
	require.NoError(t, err)
	setOneHot(args[5].(*tensor.Tensor), []int{0, 1, 2, 2, 1, 0, 1, 2})
	args[6].(*tensor.Tensor).SetFloat64(0, 0.5) // the learning rate

	want, err := eval.New(ref).Call("main", args...)
	require.NoError(t, err)
	got, err := semcheck.Evaluate(built, "main", args, want)
	require.NoError(t, err)
	require.NoError(t, eval.Compare(got, want, eval.TranscendentalTol), "the VM's step is the evaluator's")

	step := got.(op.Tuple)
	before := scalarOf(step[0])
	updated := append([]op.Value{args[0]}, step[1:]...)
	updated = append(updated, args[5])
	after, err := semcheck.Evaluate(built, "loss", updated, nil)
	require.NoError(t, err)
	require.Less(t, scalarOf(after), before, "one step of SGD lowers the loss")
	wantAfter, err := eval.New(ref).Call("loss", updated...)
	require.NoError(t, err)
	require.NoError(t, eval.Compare(after, wantAfter, eval.TranscendentalTol))
	t.Logf("loss %.6f -> %.6f after one step", before, scalarOf(after))
}
