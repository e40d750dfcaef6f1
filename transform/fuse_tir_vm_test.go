package transform_test

import (
	"github.com/phasec/phasec/lower"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/phasec/phasec/eval"
	"github.com/phasec/phasec/eval/evaltest"
	"github.com/phasec/phasec/ir"
	"github.com/phasec/phasec/passes"
	"github.com/phasec/phasec/passes/passtest"
	"github.com/phasec/phasec/semcheck"
	"github.com/phasec/phasec/transform"
)

// fuseTIRVMCases are hand-written fusion groups (the form FuseOps makes:
// private Primitive functions of high-level ops, constants passed in as
// parameters) called from main. LegalizeOps turns each op into a call_tir.
var fuseTIRVMCases = map[string]string{
	"add_exp_sum": `
@I.ir_module
class Module:
    @R.function(private=True)
    def fused_add_exp_sum(x: R.Tensor((16, 64), dtype="float32"), b: R.Tensor((64,), dtype="float32")) -> R.Tensor((16,), dtype="float32"):
        R.func_attr({"Primitive": 1})
        with R.dataflow():
            lv = R.add(x, b)
            lv1 = R.exp(lv)
            gv = R.sum(lv1, axis=[1])
            R.output(gv)
        return gv

    @R.function
    def main(x: R.Tensor((16, 64), dtype="float32"), b: R.Tensor((64,), dtype="float32")) -> R.Tensor((16,), dtype="float32"):
        cls = Module
        with R.dataflow():
            gv = cls.fused_add_exp_sum(x, b)
            R.output(gv)
        return gv
`,
	"matmul_bias_relu": `
@I.ir_module
class Module:
    @R.function(private=True)
    def fused_matmul_add_relu(x: R.Tensor((8, 32), dtype="float32"), w: R.Tensor((32, 16), dtype="float32"), bias: R.Tensor((16,), dtype="float32")) -> R.Tensor((8, 16), dtype="float32"):
        R.func_attr({"Primitive": 1})
        with R.dataflow():
            lv = R.matmul(x, w)
            lv1 = R.add(lv, bias)
            gv = R.nn.relu(lv1)
            R.output(gv)
        return gv

    @R.function
    def main(x: R.Tensor((8, 32), dtype="float32"), w: R.Tensor((32, 16), dtype="float32"), bias: R.Tensor((16,), dtype="float32")) -> R.Tensor((8, 16), dtype="float32"):
        cls = Module
        with R.dataflow():
            gv = cls.fused_matmul_add_relu(x, w, bias)
            R.output(gv)
        return gv
`,
	"layer_norm": `
@I.ir_module
class Module:
    @R.function(private=True)
    def fused_layer_norm(x: R.Tensor((8, 32), dtype="float32"), g: R.Tensor((32,), dtype="float32"), b: R.Tensor((32,), dtype="float32"), eps: R.Tensor((), dtype="float32")) -> R.Tensor((8, 32), dtype="float32"):
        R.func_attr({"Primitive": 1})
        with R.dataflow():
            mu = R.mean(x, axis=[1], keepdims=True)
            d = R.subtract(x, mu)
            sq = R.multiply(d, d)
            var = R.mean(sq, axis=[1], keepdims=True)
            ve = R.add(var, eps)
            r = R.rsqrt(ve)
            n = R.multiply(d, r)
            s = R.multiply(n, g)
            gv = R.add(s, b)
            R.output(gv)
        return gv

    @R.function
    def main(x: R.Tensor((8, 32), dtype="float32"), g: R.Tensor((32,), dtype="float32"), b: R.Tensor((32,), dtype="float32")) -> R.Tensor((8, 32), dtype="float32"):
        cls = Module
        with R.dataflow():
            gv = cls.fused_layer_norm(x, g, b, R.const(1e-5, "float32"))
            R.output(gv)
        return gv
`,
	// A symbolic row count: the fused kernel's buffers and loops carry n.
	"softmax_symbolic": `
@I.ir_module
class Module:
    @R.function(private=True)
    def fused_softmax(x: R.Tensor(("n", 32), dtype="float32")) -> R.Tensor(("n", 32), dtype="float32"):
        R.func_attr({"Primitive": 1})
        with R.dataflow():
            m = R.max(x, axis=[1], keepdims=True)
            d = R.subtract(x, m)
            e = R.exp(d)
            s = R.sum(e, axis=[1], keepdims=True)
            gv = R.divide(e, s)
            R.output(gv)
        return gv

    @R.function
    def main(x: R.Tensor(("n", 32), dtype="float32")) -> R.Tensor(("n", 32), dtype="float32"):
        cls = Module
        with R.dataflow():
            gv = cls.fused_softmax(x)
            R.output(gv)
        return gv
`,
}

// TestFuseTIRRunsOnTheVM builds each group fused (legalized through the
// Go API, since the LegalizeOps pass refuses a module inside a fusion
// group; then FuseTIR, lower, build), runs it on the VM and compares with the reference
// evaluator on the unfused module: the fused PrimFunc (one root block
// holding every op's blocks and the intermediates as T.alloc_buffer) must
// compile to kernels that compute what the ops do.
func TestFuseTIRRunsOnTheVM(t *testing.T) {
	const header = "# from tvm.script import ir as I\n# from tvm.script import relax as R\n"
	for name, src := range fuseTIRVMCases {
		t.Run(name, func(t *testing.T) {
			mod := evaltest.Parse(t, name+".tvms", header+src)
			legal, diags := lower.LegalizeModule(mod, lower.LegalizeOptions{})
			require.Empty(t, diags)

			fused, err := runPipeline(t, "FuseTIR", legal)
			require.NoError(t, err)
			var prims []string
			for fname, f := range fused.Functions() {
				switch f := f.(type) {
				case *ir.PrimFunc:
					prims = append(prims, fname)
				case *ir.Function:
					assert.Nil(t, f.Attrs[ir.AttrPrimitive], "%s is still a Primitive function", fname)
				}
			}
			assert.Len(t, prims, 1, "the group should be one kernel, got %v", prims)

			built, err := runPipeline(t, "FuseTIR,lower,build", legal)
			require.NoError(t, err)
			for seed := range uint64(3) {
				args, err := eval.RandomArgs(mod.Func("main"), seed, nil, int64(5+seed))
				require.NoError(t, err)
				want, err := eval.New(mod).Call("main", args...)
				require.NoError(t, err)
				got, err := semcheck.Evaluate(built, "main", args, want)
				require.NoError(t, err)
				// float32 kernels against the float64-exact evaluator, with
				// exp and rsqrt in the groups.
				require.NoError(t, eval.Compare(got, want, eval.TranscendentalTol), "seed %d", seed)
			}
		})
	}
}

// FuseTIR is TVM's Sequential: its four steps run nested, whatever the
// opt level, so instruments see each under it.
func TestFuseTIRRunsItsStepsNested(t *testing.T) {
	log := &stepLog{}
	pc := passes.NewPassContext()
	pc.OptLevel = 0
	pc.Instruments = []passes.Instrument{log}
	_, err := pc.Run(t.Context(), transform.FuseTIR, parseFile(t, "../testdata/passes/FuseTIR/simple.tvms"))
	require.NoError(t, err)
	var top []string
	for _, s := range log.steps {
		if s[0] <= '1' {
			top = append(top, s)
		}
	}
	assert.Equal(t, []string{"1 ExpandTupleArguments", "1 RemoveUnusedParameters", "1 FuseTIRInner", "1 DeadCodeElimination", "0 FuseTIR"}, top)
}

// TestFuseTIRGoldensRunOnTheVM builds every FuseTIR golden input through
// FuseTIR, lower and build and runs its public functions on the VM against
// the evaluator on the input: TVM's cases (symbolic shapes, tir_vars,
// in-place outputs, tuple outputs, intermediates of dynamic kernels) as
// kernels that run.
func TestFuseTIRGoldensRunOnTheVM(t *testing.T) {
	inputs, err := passtest.Inputs("../testdata/passes/FuseTIR")
	require.NoError(t, err)
	ran := 0
	for _, path := range inputs {
		src, err := os.ReadFile(path)
		require.NoError(t, err)
		if strings.Contains(string(src), "# want") {
			continue
		}
		t.Run(filepath.Base(path), func(t *testing.T) {
			mod := evaltest.Parse(t, path, string(src))
			built, err := runPipeline(t, "FuseTIR,lower,build", mod)
			require.NoError(t, err)
			for _, name := range mod.Names() {
				f := mod.Func(name)
				if f == nil || !ir.IsPublic(f) || built.Func(name) == nil {
					continue // a public Primitive function became a PrimFunc
				}
				args, err := eval.RandomArgs(f, 7, nil, 4)
				require.NoError(t, err)
				want, err := semcheck.Evaluate(mod, name, args, nil)
				if err != nil {
					t.Logf("%s: not evaluable: %v", name, err)
					continue
				}
				got, err := semcheck.Evaluate(built, name, args, want)
				require.NoError(t, err, name)
				require.NoError(t, eval.Compare(got, want, eval.TranscendentalTol), name)
				ran++
			}
		})
	}
	assert.GreaterOrEqual(t, ran, 20, "too few golden functions ran on the VM")
}
