package transform_test

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/phasec/phasec/eval"
	"github.com/phasec/phasec/eval/evaltest"
	"github.com/phasec/phasec/ir"
	"github.com/phasec/phasec/op"
	"github.com/phasec/phasec/passes/passtest"
	"github.com/phasec/phasec/semcheck"
	"github.com/phasec/phasec/syntax"
)

// TestSplitCallTIRByPatternRunsOnTheVM is the pass's semantic oracle: each
// golden input, split and built (lower, build), runs on the VM (the GEMMs
// in vm/blas through the phasec_blas module, the epilogues as kernels) and
// agrees with the evaluator on the input.
func TestSplitCallTIRByPatternRunsOnTheVM(t *testing.T) {
	inputs, err := passtest.Inputs("../testdata/passes/SplitCallTIRByPattern")
	require.NoError(t, err)
	ran := 0
	for _, path := range inputs {
		src, err := os.ReadFile(path)
		require.NoError(t, err)
		t.Run(filepath.Base(path), func(t *testing.T) {
			mod := evaltest.Parse(t, path, string(src))
			split, err := runPipeline(t, "SplitCallTIRByPattern", mod)
			require.NoError(t, err)
			require.NotSame(t, mod, split, "nothing split")
			built, err := runPipeline(t, "SplitCallTIRByPattern,lower,build", mod)
			require.NoError(t, err)
			f := mod.Func("main")
			for seed := range uint64(3) {
				args, err := eval.RandomArgs(f, seed, map[string]int64{"n": 3}, 4)
				require.NoError(t, err)
				want, err := semcheck.Evaluate(mod, "main", args, nil)
				require.NoError(t, err)
				got, err := semcheck.Evaluate(built, "main", args, want)
				require.NoError(t, err)
				// vm/blas accumulates in another order than the loops.
				require.NoError(t, eval.Compare(got, want, eval.TranscendentalTol), "seed %d", seed)
				ran++
			}
		})
	}
	assert.GreaterOrEqual(t, ran, 9)
}

// The pass where it belongs in a full pipeline: after the optimize
// barrier's fusion, on the bundled MLP, every matmul kernel FuseTIR made
// becomes a phasec_blas GEMM and the result is what the evaluator computes.
func TestSplitCallTIRByPatternInThePipeline(t *testing.T) {
	mod := parseFile(t, "../testdata/models/mlp.tvms")
	opt, err := runPipeline(t, "canonicalize,optimize,SplitCallTIRByPattern", mod)
	require.NoError(t, err)
	packed := 0
	ir.Inspect(opt.Func("main").Body, func(e ir.Expr) bool {
		if c, ok := e.(*ir.Call); ok && c.Op == op.CallDPSPacked {
			packed++
		}
		return true
	})
	assert.Equal(t, 2, packed, "the MLP's two matmuls")
	built, err := runPipeline(t, "canonicalize,optimize,SplitCallTIRByPattern,lower,build", mod)
	require.NoError(t, err)
	args, err := eval.RandomArgs(mod.Func("main"), 5, map[string]int64{"batch": 8}, 4)
	require.NoError(t, err)
	want, err := semcheck.Evaluate(mod, "main", args, nil)
	require.NoError(t, err)
	got, err := semcheck.Evaluate(built, "main", args, want)
	require.NoError(t, err)
	require.NoError(t, eval.Compare(got, want, eval.TranscendentalTol))
}

// splitChain is a module of n calls of one fused GEMM + bias kernel in a
// chain.
func splitChain(n int) *ir.Module {
	var b strings.Builder
	b.WriteString(`@I.ir_module
class Module:
    @T.prim_func(private=True)
    def fused_matmul_add(x: T.Buffer((T.int64(4), T.int64(4)), "float32"), w: T.Buffer((T.int64(4), T.int64(4)), "float32"), out: T.Buffer((T.int64(4), T.int64(4)), "float32")):
        T.func_attr({"tir.noalias": True})
        mm = T.alloc_buffer((T.int64(4), T.int64(4)))
        for i, j, k in T.grid(T.int64(4), T.int64(4), T.int64(4)):
            with T.block("matmul"):
                v_i, v_j, v_k = T.axis.remap("SSR", [i, j, k])
                with T.init():
                    mm[v_i, v_j] = T.float32(0.0)
                mm[v_i, v_j] = mm[v_i, v_j] + x[v_i, v_k] * w[v_k, v_j]
        for i, j in T.grid(T.int64(4), T.int64(4)):
            with T.block("add"):
                v_i, v_j = T.axis.remap("SS", [i, j])
                out[v_i, v_j] = mm[v_i, v_j] + x[v_i, v_j]

    @R.function
    def main(x: R.Tensor((4, 4), dtype="float32"), w: R.Tensor((4, 4), dtype="float32")) -> R.Tensor((4, 4), dtype="float32"):
        with R.dataflow():
            lv0 = x
`)
	for i := 1; i <= n; i++ {
		fmt.Fprintf(&b, "            lv%d = R.call_tir(Module.fused_matmul_add, (lv%d, w), out_sinfo=R.Tensor((4, 4), dtype=\"float32\"))\n", i, i-1)
	}
	fmt.Fprintf(&b, "            gv = lv%d\n            R.output(gv)\n        return gv\n", n)
	mod, errs := syntax.Parse("chain.tvms", []byte(b.String()))
	if len(errs) > 0 {
		panic(errs)
	}
	out, errs := ir.NormalizeModule(mod)
	if len(errs) > 0 {
		panic(errs)
	}
	return out
}
