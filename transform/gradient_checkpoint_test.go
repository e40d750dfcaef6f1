package transform_test

import (
	"fmt"
	"os"
	"regexp"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/phasec/phasec/eval"
	"github.com/phasec/phasec/eval/evaltest"
	"github.com/phasec/phasec/ir"
	"github.com/phasec/phasec/op"
	"github.com/phasec/phasec/tensor"
	"github.com/phasec/phasec/transform"
)

// checkpointCases are the checkpoint goldens (testdata/passes/Gradient/
// checkpoint*) with the recomputations the adjoint must hold, in order.
// The cases mirror TVM v0.23's tests/python/relax/test_transform_gradient_checkpoint.py
// and the lists are read off its expected modules (TVM's printer renumbers
// vars; here they keep the names of the forward vars they recompute).
var checkpointCases = []struct {
	file    string
	require []string
	want    []string
}{
	{"checkpoint/sequential", nil, []string{"lv3_cp", "lv1_cp"}},                                    // test_sequential
	{"checkpoint/consecutive", nil, []string{"lv3_cp", "lv1_cp"}},                                   // test_sequential_consecutive
	{"checkpoint/tuple_stage", nil, []string{"lv1_cp", "lv2_cp", "lv3_cp", "item_cp"}},              // test_tuple
	{"checkpoint/tree", nil, []string{"lv2_cp", "lv3_cp"}},                                          // test_tree, Expected1
	{"checkpoint_require/tree", []string{"z"}, []string{"lv3_cp"}},                                  // test_tree, Expected2
	{"checkpoint/dag", nil, []string{"lv11_cp", "lv12_cp", "lv6_cp", "lv7_cp", "lv1_cp", "lv2_cp"}}, // test_dag
	{"checkpoint/mlp", nil, []string{"o0_cp", "o1_cp", "o2_cp", "h0_cp", "h1_cp"}},
}

func readCheckpointCase(t *testing.T, file string) string {
	t.Helper()
	src, err := os.ReadFile("../testdata/passes/Gradient/" + file + ".tvms")
	require.NoError(t, err)
	return string(src)
}

// TestGradientCheckpointRecomputesAsTVM: the adjoint recomputes exactly the
// bindings TVM's expected modules recompute, in their order, each before
// its first use and after its operands; the markers are gone from the
// adjoint and kept in the original function.
func TestGradientCheckpointRecomputesAsTVM(t *testing.T) {
	for _, c := range checkpointCases {
		t.Run(c.file, func(t *testing.T) {
			mod := evaltest.Parse(t, c.file, readCheckpointCase(t, c.file))
			out, err := transform.Differentiate(mod, "main", c.require, 0)
			require.NoError(t, err)
			adj := out.Func("main_adjoint")
			require.NotNil(t, adj)

			var recomputed []string
			defined := map[*ir.Var]bool{}
			for _, p := range adj.Params {
				defined[p] = true
			}
			for _, bind := range adj.Body.(*ir.SeqExpr).Blocks[0].Bindings {
				vb := bind.(*ir.VarBinding)
				if c, ok := vb.Value.(*ir.Call); ok {
					assert.NotContains(t, []*ir.Op{op.StartCheckpoint, op.EndCheckpoint}, c.Op, "a marker is left in the adjoint (%s)", vb.Var.Name)
				}
				ir.Walk(vb.Value, &ir.Visitor{Expr: func(e ir.Expr) bool {
					if v, ok := e.(*ir.Var); ok {
						assert.True(t, defined[v], "%s reads %s before it is bound", vb.Var.Name, v.Name)
					}
					return true
				}})
				defined[vb.Var] = true
				if strings.HasSuffix(vb.Var.Name, "_cp") {
					recomputed = append(recomputed, vb.Var.Name)
				}
			}
			assert.Equal(t, c.want, recomputed)
			assert.Same(t, mod.Func("main"), out.Func("main"), "the original function is left as it is")
		})
	}
}

// checkpointMarker matches a marker binding of the checkpoint goldens.
var checkpointMarker = regexp.MustCompile(`(\w+) = R\.grad\.(?:start|end)_checkpoint\((\w+)\)`)

// TestGradientCheckpointSameGradients: with checkpoints, the adjoint
// computes what it computes without them (the markers replaced by plain
// assignments), and both agree with central differences, in float64.
func TestGradientCheckpointSameGradients(t *testing.T) {
	for _, c := range checkpointCases {
		t.Run(c.file, func(t *testing.T) {
			src := strings.ReplaceAll(readCheckpointCase(t, c.file), `"float32"`, `"float64"`)
			plainSrc := checkpointMarker.ReplaceAllString(src, "$1 = $2")
			require.NotEqual(t, src, plainSrc)
			marked := evaltest.Parse(t, c.file, src)
			plain := evaltest.Parse(t, c.file+" without markers", plainSrc)

			wrt := c.require
			if wrt == nil {
				for _, p := range marked.Func("main").Params {
					wrt = append(wrt, p.Name)
				}
			}
			withCP, err := transform.Differentiate(marked, "main", wrt, 0)
			require.NoError(t, err)
			without, err := transform.Differentiate(plain, "main", wrt, 0)
			require.NoError(t, err)

			args := gradArgs(t, marked, false)
			got, err := eval.New(withCP).Call("main_adjoint", args...)
			require.NoError(t, err)
			want, err := eval.New(without).Call("main_adjoint", args...)
			require.NoError(t, err)
			gotGrads, wantGrads := got.(op.Tuple)[1].(op.Tuple), want.(op.Tuple)[1].(op.Tuple)
			require.Len(t, gotGrads, len(wrt))
			for i := range wrt {
				g, w := gotGrads[i].(*tensor.Tensor), wantGrads[i].(*tensor.Tensor)
				require.Equal(t, w.Shape, g.Shape)
				for j := range int(w.NumElements()) {
					// The recomputation repeats the same float64 operations.
					require.Equal(t, w.Float64At(j), g.Float64At(j), "d main / d %s[%d]", wrt[i], j)
				}
			}
			checkNumericGradient(t, withCP, args, wrt)
		})
	}
}

// TestGradientCheckpointLongStage: a stage as long as the function is
// recomputed without recursion, each binding once.
func TestGradientCheckpointLongStage(t *testing.T) {
	const n = 20000
	var b strings.Builder
	b.WriteString("@I.ir_module\nclass Module:\n    @R.function\n    def main(x: R.Tensor((2,), \"float64\")):\n        with R.dataflow():\n")
	b.WriteString("            s0 = R.grad.start_checkpoint(x)\n")
	for i := 1; i <= n; i++ {
		fmt.Fprintf(&b, "            s%d = R.multiply(s%d, s%d)\n", i, i-1, i-1)
	}
	fmt.Fprintf(&b, "            e = R.grad.end_checkpoint(s%d)\n            gv = R.sum(e)\n            R.output(gv)\n        return gv\n", n)
	mod := evaltest.Parse(t, "long", b.String())
	out, err := transform.Differentiate(mod, "main", nil, 0)
	require.NoError(t, err)
	recomputed := 0
	for _, bind := range out.Func("main_adjoint").Body.(*ir.SeqExpr).Blocks[0].Bindings {
		if strings.HasSuffix(bind.(*ir.VarBinding).Var.Name, "_cp") {
			recomputed++
		}
	}
	// s1 .. s{n-1} are read by the rules of their users; s{n}, the
	// stage's output, by none (multiply's rule reads its operands).
	assert.Equal(t, n-1, recomputed)
}

// TestGradientOfIntermediateVar: require_grads may name a var the
// function binds (as TVM's): its gradient is what flows into it, here
// d sum(h * h) / d h = 2h with h = 3x, next to the parameter's 18x.
func TestGradientOfIntermediateVar(t *testing.T) {
	mod := evaltest.Parse(t, "intermediate", `@I.ir_module
class Module:
    @R.function
    def main(x: R.Tensor((2, 3), "float64")):
        with R.dataflow():
            h = R.multiply(x, R.const(3.0, "float64"))
            s = R.multiply(h, h)
            loss = R.sum(s)
            R.output(loss)
        return loss
`)
	out, err := transform.Differentiate(mod, "main", []string{"h", "x"}, 0)
	require.NoError(t, err)
	args := gradArgs(t, mod, false)
	res, err := eval.New(out).Call("main_adjoint", args...)
	require.NoError(t, err)
	grads := res.(op.Tuple)[1].(op.Tuple)
	require.Len(t, grads, 2)
	x := args[0].(*tensor.Tensor)
	for i := range int(x.NumElements()) {
		assert.InDelta(t, 6*x.Float64At(i), grads[0].(*tensor.Tensor).Float64At(i), 1e-12, "d loss / d h[%d]", i)
		assert.InDelta(t, 18*x.Float64At(i), grads[1].(*tensor.Tensor).Float64At(i), 1e-12, "d loss / d x[%d]", i)
	}

	_, err = transform.Differentiate(mod, "main", []string{"hh"}, 0)
	require.Error(t, err)
	assert.Contains(t, err.Error(), `require_grads names "hh", which is not a parameter of main nor a var it binds (did you mean "h"?)`)
}
