package transform_test

import (
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/phasec/phasec/eval"
	"github.com/phasec/phasec/eval/evaltest"
	"github.com/phasec/phasec/ir"
	"github.com/phasec/phasec/ir/irgen"
	"github.com/phasec/phasec/passes"
	"github.com/phasec/phasec/passes/passtest"
	"github.com/phasec/phasec/syntax"
	"github.com/phasec/phasec/tensor"
	"github.com/phasec/phasec/transform"
)

// The model rewrites (issue 22): CombineParallelMatmul,
// FoldBatchnormToConv2D, AdjustMatmulOrder, ExpandMatmulOfSum,
// ReorderPermuteDimsAfterConcat, ReorderTakeAfterMatmul,
// FuseTransposeMatmul. Their goldens
// (TVM's cases) are in helpers_test.go's map; this file holds what the
// goldens cannot say.

func TestModelRewritesBadOptions(t *testing.T) {
	requireBadPipelines(t, map[string]string{
		`CombineParallelMatmul{min_branches=1}`:       `pipeline:1:1: error PIPE002: pass CombineParallelMatmul: option min_branches: want 2 or more`,
		`CombineParallelMatmul{min_branches=-3}`:      `pipeline:1:1: error PIPE002: pass CombineParallelMatmul: option min_branches: want 2 or more`,
		`canonicalize,CombineParallelMatmul{min=2}`:   `pipeline:1:36: error .*CombineParallelMatmul.*min`,
		`FoldBatchnormToConv2D{assume_inference=yes}`: `pipeline:1:\d+: error PIPE003: .*assume_inference: want true or false, got "yes"`,
	})
}

// Each rewrite works on high-level ops: after LegalizeOps (inside the
// optimize barrier at -O2) there is nothing left for it, and the static
// check says so (CHK005) naming the step.
func TestModelRewritesRejectedAfterLegalization(t *testing.T) {
	mod := evaltest.Parse(t, "m.tvms", `
@I.ir_module
class Module:
    @R.function
    def main(x: R.Tensor((2, 4), "float32"), w: R.Tensor((4, 4), "float32")) -> R.Tensor((2, 4), "float32"):
        with R.dataflow():
            y = R.matmul(x, w)
            R.output(y)
        return y
`)
	for _, p := range modelRewrites {
		t.Run(p.Name(), func(t *testing.T) {
			_, err := runPipeline(t, "LegalizeOps,"+p.Name(), mod)
			require.Error(t, err)
			assert.Contains(t, err.Error(), "CHK005")
			assert.Contains(t, err.Error(), "LegalizeOps")
			_, err = runPipeline(t, p.Name()+",LegalizeOps", mod)
			require.NoError(t, err)
		})
	}
}

var modelRewrites = []*passes.Pass{
	transform.CombineParallelMatmul, transform.FoldBatchnormToConv2D, transform.AdjustMatmulOrder,
	transform.ExpandMatmulOfSum, transform.ReorderPermuteDimsAfterConcat, transform.ReorderTakeAfterMatmul,
	transform.FuseTransposeMatmul,
}

// The evaluator's random int64 arguments index out of range; the take
// goldens are checked here with each index tensor filled with valid
// indices (i mod 3: every table axis in them has 3 or more entries at
// the oracle's symbolic size 3).
func TestReorderTakeAfterMatmulComputesTheSame(t *testing.T) {
	inputs, err := passtest.Inputs("../testdata/passes/ReorderTakeAfterMatmul")
	require.NoError(t, err)
	for _, path := range inputs {
		t.Run(filepath.Base(path), func(t *testing.T) {
			mod := evaltest.Parse(t, path, readFile(t, path))
			args, err := eval.RandomArgs(mod.Func("main"), 1, nil, 3)
			require.NoError(t, err)
			for _, a := range args {
				if tt, ok := a.(*tensor.Tensor); ok && tt.DType.IsSigned() {
					for i := range int(tt.NumElements()) {
						tt.SetFloat64(i, float64(i%3))
					}
				}
			}
			evaltest.CheckPipeline(t, mod, "ReorderTakeAfterMatmul", evaltest.Options{Args: args})
		})
	}
}

// FoldBatchnormToConv2D{assume_inference=true} folds training-mode batch
// norms as TVM's pass does: the result is the inference computation,
// DecomposeOpsForInference's reading of the same batch norm.
func TestFoldBatchnormAssumeInferenceIsInferenceSemantics(t *testing.T) {
	path := "../testdata/passes/FoldBatchnormToConv2D/training.tvms"
	mod := evaltest.Parse(t, path, readFile(t, path))
	unchanged, err := runPipeline(t, "FoldBatchnormToConv2D", mod)
	require.NoError(t, err)
	assert.Equal(t, 1, countOp(unchanged, "relax.nn.batch_norm"), "a training-mode batch norm is not folded by default")

	inference, err := runPipeline(t, "DecomposeOpsForInference", mod)
	require.NoError(t, err)
	folded, err := runPipeline(t, "FoldBatchnormToConv2D{assume_inference=true},FoldConstant", mod)
	require.NoError(t, err)
	assert.Zero(t, countOp(folded, "relax.nn.batch_norm"))
	evaltest.CheckSame(t, inference, folded, evaltest.Options{})
}

// cnnModule is a small ResNet-style CNN in NCHW with constant weights:
// conv-bn-relu twice, a residual add, conv-bn-relu, max pooling. Batch
// norms are in inference mode.
func cnnModule(seed uint64) string {
	rng := rand.New(rand.NewPCG(seed, 7))
	vals := func(n int, lo, hi float64) []float64 {
		out := make([]float64, n)
		for i := range out {
			out[i] = lo + (hi-lo)*rng.Float64()
		}
		return out
	}
	var src strings.Builder
	src.WriteString(`@I.ir_module
class Module:
    @R.function
    def main(data: R.Tensor((2, 3, 8, 8), "float32")) -> R.Tensor((2, 6, 4, 4), "float32"):
        with R.dataflow():
`)
	layer := func(name, in string, cin, cout int) string {
		w := constant([]int{cout, cin, 3, 3}, vals(cout*cin*9, -0.5, 0.5))
		fmt.Fprintf(&src, "            %s_conv = R.nn.conv2d(%s, %s, padding=[1, 1, 1, 1])\n", name, in, w)
		fmt.Fprintf(&src, "            %s_bn = R.nn.batch_norm(%s_conv, %s, %s, %s, %s, axis=1, epsilon=1e-5, training=False)\n", name, name,
			constant([]int{cout}, vals(cout, 0.5, 1.5)), constant([]int{cout}, vals(cout, -0.5, 0.5)),
			constant([]int{cout}, vals(cout, -0.2, 0.2)), constant([]int{cout}, vals(cout, 0.5, 2)))
		fmt.Fprintf(&src, "            %s_norm = %s_bn[0]\n", name, name)
		fmt.Fprintf(&src, "            %s = R.nn.relu(%s_norm)\n", name, name)
		return name
	}
	a := layer("a", "data", 3, 6)
	b := layer("b", a, 6, 6)
	src.WriteString("            res = R.add(" + a + ", " + b + ")\n")
	c := layer("c", "res", 6, 6)
	src.WriteString("            out = R.nn.max_pool2d(" + c + ", pool_size=[2, 2], strides=[2, 2])\n")
	src.WriteString("            R.output(out)\n        return out\n")
	return src.String()
}

// constant spells an R.const tensor of the given shape and values.
func constant(shape []int, vals []float64) string {
	var nest func(dims []int, v []float64) string
	nest = func(dims []int, v []float64) string {
		if len(dims) == 1 {
			parts := make([]string, len(v))
			for i, x := range v {
				parts[i] = fmt.Sprintf("%.4f", x)
			}
			return "[" + strings.Join(parts, ", ") + "]"
		}
		k := len(v) / dims[0]
		parts := make([]string, dims[0])
		for i := range dims[0] {
			parts[i] = nest(dims[1:], v[i*k:(i+1)*k])
		}
		return "[" + strings.Join(parts, ", ") + "]"
	}
	return "R.const(" + nest(shape, vals) + `, "float32")`
}

// The CNN built and run on the VM with its batch norms folded computes
// what it computes unfolded (and what the evaluator computes), and the
// folded build has no batch norm left (TVM's VerifyFolding).
func TestFoldBatchnormCNNOnTheVM(t *testing.T) {
	mod := evaltest.Parse(t, "cnn.tvms", cnnModule(1))
	require.Equal(t, 3, countOp(mod, "relax.nn.batch_norm"))

	folded, err := runPipeline(t, "canonicalize,FoldBatchnormToConv2D,FoldConstant", mod)
	require.NoError(t, err)
	assert.Zero(t, countOp(folded, "relax.nn.batch_norm"))
	assert.Equal(t, 3, countOp(folded, "relax.nn.conv2d"))

	plainVM, err := runPipeline(t, "canonicalize,optimize,lower,build", mod)
	require.NoError(t, err)
	foldedVM, err := runPipeline(t, "canonicalize,FoldBatchnormToConv2D,FoldConstant,optimize,lower,build", mod)
	require.NoError(t, err)
	// float32 kernels against each other and against the float64
	// evaluator: folding reassociates (x*w)*s into x*(w*s).
	compareBuilds(t, mod, plainVM, foldedVM, eval.Float32Tol)
}

func countOp(mod *ir.Module, name string) int {
	n := 0
	for _, fname := range mod.Names() {
		f := mod.Func(fname)
		if f == nil {
			continue
		}
		ir.Inspect(f.Body, func(e ir.Expr) bool {
			if c, ok := e.(*ir.Call); ok {
				if o, ok := c.Op.(*ir.Op); ok && o.Name == name {
					n++
				}
			}
			return true
		})
	}
	return n
}

// rewriteChain is a module of about n bindings in main's dataflow block:
// n/per copies of unit (a format with %[1]d the unit's index, %[2]s its
// input var, defining h%[1]d), chained through h.
func rewriteChain(n, per int, params, unit string) *ir.Module {
	var src strings.Builder
	fmt.Fprintf(&src, "@I.ir_module\nclass Module:\n    @R.function\n    def main(%s):\n        with R.dataflow():\n", params)
	prev := "x"
	units := n / per
	for i := range units {
		fmt.Fprintf(&src, unit, i, prev)
		prev = fmt.Sprintf("h%d", i)
	}
	fmt.Fprintf(&src, "            R.output(%s)\n        return %s\n", prev, prev)
	mod, diags := syntax.Parse("chain.tvms", []byte(src.String()))
	if len(diags) > 0 {
		panic(diags[0].Error())
	}
	return irgen.MustNormalize(mod)
}

// modelRewriteInputs builds, per pass, a chain whose every unit the pass
// rewrites.
var modelRewriteInputs = []struct {
	pass  *passes.Pass
	per   int
	input func(n int) *ir.Module
}{
	{transform.ExpandMatmulOfSum, 2, func(n int) *ir.Module {
		return rewriteChain(n, 2, `x: R.Tensor((4, 4), "float32"), A: R.Tensor((4, 4), "float32"), B: R.Tensor((4, 4), "float32")`,
			"            w%[1]d = R.add(A, B)\n            h%[1]d = R.matmul(%[2]s, w%[1]d)\n")
	}},
	{transform.ReorderTakeAfterMatmul, 2, func(n int) *ir.Module {
		return rewriteChain(n, 2, `x: R.Tensor((1, 8), "float32"), T: R.Tensor((8, 8), "float32"), idx: R.Tensor((8,), "int64")`,
			"            w%[1]d = R.take(T, idx, axis=1)\n            h%[1]d = R.matmul(%[2]s, w%[1]d)\n")
	}},
	{transform.ReorderPermuteDimsAfterConcat, 4, func(n int) *ir.Module {
		return rewriteChain(n, 4, `x: R.Tensor((8, 8), "float32"), G: R.Tensor((8, 8), "float32"), W: R.Tensor((16, 8), "float32")`,
			"            a%[1]d = R.permute_dims(%[2]s)\n            b%[1]d = R.permute_dims(G)\n            c%[1]d = R.concat((a%[1]d, b%[1]d), axis=1)\n            h%[1]d = R.matmul(c%[1]d, W)\n")
	}},
	{transform.AdjustMatmulOrder, 2, func(n int) *ir.Module {
		return rewriteChain(n, 2, `x: R.Tensor((1, 16), "float32"), A: R.Tensor((16, 2), "float32"), B: R.Tensor((2, 16), "float32")`,
			"            w%[1]d = R.matmul(A, B)\n            h%[1]d = R.matmul(%[2]s, w%[1]d)\n")
	}},
	{transform.FoldBatchnormToConv2D, 3, func(n int) *ir.Module {
		return rewriteChain(n, 3, `x: R.Tensor((1, 1, 2, 2), "float32")`,
			"            c%[1]d = R.nn.conv2d(%[2]s, R.const([[[[0.5]]]], \"float32\"))\n"+
				"            b%[1]d = R.nn.batch_norm(c%[1]d, R.const([1.5], \"float32\"), R.const([0.1], \"float32\"), R.const([0.2], \"float32\"), R.const([0.9], \"float32\"), axis=1, training=False)\n"+
				"            h%[1]d = b%[1]d[0]\n")
	}},
	{transform.FuseTransposeMatmul, 2, func(n int) *ir.Module {
		return rewriteChain(n, 2, `x: R.Tensor((2, 4), "float32"), W: R.Tensor((4, 4), "float32")`,
			"            w%[1]d = R.permute_dims(W)\n            h%[1]d = R.matmul(%[2]s, w%[1]d)\n")
	}},
	{transform.CombineParallelMatmul, 3, func(n int) *ir.Module {
		return rewriteChain(n, 3, `x: R.Tensor((2, 4), "float32"), W1: R.Tensor((4, 4), "float32"), W2: R.Tensor((4, 4), "float32")`,
			"            a%[1]d = R.matmul(%[2]s, W1)\n            b%[1]d = R.matmul(%[2]s, W2)\n            h%[1]d = R.add(a%[1]d, b%[1]d)\n")
	}},
}

// The chains of the linearity benchmark are rewritten, every unit, and
// compute what they computed (at a size the evaluator runs quickly).
func TestModelRewriteChainsAreRewritten(t *testing.T) {
	for _, in := range modelRewriteInputs {
		t.Run(in.pass.Name(), func(t *testing.T) {
			mod := in.input(12 * in.per)
			opts := evaltest.Options{}
			if in.pass == transform.ReorderTakeAfterMatmul {
				args, err := eval.RandomArgs(mod.Func("main"), 1, nil, 3)
				require.NoError(t, err)
				idx := args[2].(*tensor.Tensor)
				for i := range int(idx.NumElements()) {
					idx.SetFloat64(i, float64(7-i))
				}
				opts.Args = args
			}
			out := evaltest.CheckPipeline(t, mod, in.pass.Name(), opts)
			assert.False(t, ir.StructuralEqual(mod.Func("main"), out.Func("main"), ir.EqualOptions{}), "nothing rewritten")
		})
	}
}

func readFile(t *testing.T, path string) string {
	t.Helper()
	src, err := os.ReadFile(path)
	require.NoError(t, err)
	return string(src)
}
