package kernel_test

import (
	"math/rand/v2"
	"os"
	"runtime"
	"strings"
	"sync"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/phasec/phasec/ir"
	"github.com/phasec/phasec/syntax"
	"github.com/phasec/phasec/tensor"
	"github.com/phasec/phasec/vm/abi"
	"github.com/phasec/phasec/vm/kernel"
)

func parseSource(t *testing.T, name string, src []byte) *ir.Module {
	t.Helper()
	mod, diags := syntax.Parse(name, src)
	require.False(t, diags.HasErrors(), "%v", diags)
	return mod
}

// TestRowKernels runs every PrimFunc LegalizeOps writes for the row and
// unary ops (testdata/tir_row_kernels.tvms: odd shapes, extent 1, rows
// longer than a chunk, one large enough to split across cores) on the
// general path, the vector path, the dispatched path and the reference
// interpreter (checkAll), and checks which dispatch each takes.
func TestRowKernels(t *testing.T) {
	src, err := os.ReadFile("../../testdata/tir_row_kernels.tvms")
	require.NoError(t, err)
	mod := parseSource(t, "tir_row_kernels.tvms", src)
	want := map[string]string{
		"layer_norm": "rows", "layer_norm1": "rows", "layer_norm2": "rows", "layer_norm3": "rows",
		"softmax": "rows", "softmax1": "rows", "softmax2": "rows",
		// Over the middle axis: the reductions run over a leading axis
		// (map form, one row per batch) and the elementwise nests over
		// (batch, axis) rows, so they form four groups.
		"softmax3":    "rows+elementwise+rows+elementwise",
		"log_softmax": "rows", "rms_norm": "rows",
		"sum": "rows", "sum1": "rows", "mean": "rows", "max": "rows", "min": "rows",
		"gelu": "elementwise", "gelu1": "elementwise", "gelu_tanh": "elementwise",
		"exp": "elementwise", "sigmoid": "elementwise", "tanh": "elementwise", "sqrt": "elementwise",
		"rsqrt": "elementwise", "log": "elementwise", "erf": "elementwise", "silu": "elementwise",
		"abs": "elementwise", "abs1": "elementwise",
		// Group norm's sums index channels g*3+c (affine); the last nest
		// reads the sums at c/3, which is not a row index, so it runs as
		// its own group.
		"group_norm": "rows+elementwise",
		// Batch norm's statistics reduce over every axis but the channel,
		// per channel; the nests between have no rows.
		"batch_norm": "rows+elementwise+rows+elementwise",
	}
	for _, name := range mod.Names() {
		f := mod.PrimFunc(name)
		if f == nil {
			continue
		}
		t.Run(name, func(t *testing.T) {
			before := kernel.FastTaken()
			k := checkAll(t, f, makeArgs(t, f, withVars(f, nil, nil), rand.New(rand.NewPCG(3, 4))))
			require.Equal(t, want[name], k.Pattern())
			require.Greater(t, kernel.FastTaken(), before, "fast path taken")
		})
	}
}

// fusedSrc holds PrimFuncs in the form TVM's FuseTIR writes (one root
// block, the fused ops' blocks in order, intermediates from
// T.alloc_buffer): a residual add before a layer norm, a dense with bias
// and GELU, and a chain of elementwise ops.
const fusedSrc = `
# from tvm.script import ir as I
# from tvm.script import tir as T

@I.ir_module
class Module:
    @T.prim_func(private=True)
    def fused_add_layer_norm(A: T.Buffer((T.int64(9), T.int64(45)), "float32"), R: T.Buffer((T.int64(9), T.int64(45)), "float32"), G: T.Buffer((T.int64(45),), "float32"), B: T.Buffer((T.int64(45),), "float32"), Y: T.Buffer((T.int64(9), T.int64(45)), "float32")):
        T.func_attr({"tir.noalias": True})
        with T.block("root"):
            T.reads()
            T.writes()
            S = T.alloc_buffer((T.int64(9), T.int64(45)))
            sm = T.alloc_buffer((T.int64(9), T.int64(1)))
            sq = T.alloc_buffer((T.int64(9), T.int64(1)))
            for i, j in T.grid(T.int64(9), T.int64(45)):
                with T.block("T_add"):
                    v_i, v_j = T.axis.remap("SS", [i, j])
                    S[v_i, v_j] = A[v_i, v_j] + R[v_i, v_j]
            for i, z, k in T.grid(T.int64(9), T.int64(1), T.int64(45)):
                with T.block("sum"):
                    v_i, v_z, v_k = T.axis.remap("SSR", [i, z, k])
                    with T.init():
                        sm[v_i, v_z] = T.float32(0)
                    sm[v_i, v_z] = sm[v_i, v_z] + S[v_i, v_k]
            for i, z, k in T.grid(T.int64(9), T.int64(1), T.int64(45)):
                with T.block("sqsum"):
                    v_i, v_z, v_k = T.axis.remap("SSR", [i, z, k])
                    with T.init():
                        sq[v_i, v_z] = T.float32(0)
                    sq[v_i, v_z] = sq[v_i, v_z] + S[v_i, v_k] * S[v_i, v_k]
            for i, j in T.grid(T.int64(9), T.int64(45)):
                with T.block("norm"):
                    v_i, v_j = T.axis.remap("SS", [i, j])
                    Y[v_i, v_j] = (S[v_i, v_j] - sm[v_i, T.int64(0)] / T.float32(45)) * T.rsqrt(sq[v_i, T.int64(0)] / T.float32(45) - sm[v_i, T.int64(0)] / T.float32(45) * (sm[v_i, T.int64(0)] / T.float32(45)) + T.float32(1e-5)) * G[v_j] + B[v_j]

    @T.prim_func(private=True)
    def fused_dense_add_gelu(X: T.Buffer((T.int64(5), T.int64(12)), "float32"), W: T.Buffer((T.int64(12), T.int64(19)), "float32"), Bias: T.Buffer((T.int64(19),), "float32"), Y: T.Buffer((T.int64(5), T.int64(19)), "float32")):
        T.func_attr({"tir.noalias": True})
        with T.block("root"):
            T.reads()
            T.writes()
            M = T.alloc_buffer((T.int64(5), T.int64(19)))
            Z = T.alloc_buffer((T.int64(5), T.int64(19)))
            for i, j, k in T.grid(T.int64(5), T.int64(19), T.int64(12)):
                with T.block("matmul"):
                    v_i, v_j, v_k = T.axis.remap("SSR", [i, j, k])
                    with T.init():
                        M[v_i, v_j] = T.float32(0)
                    M[v_i, v_j] = M[v_i, v_j] + X[v_i, v_k] * W[v_k, v_j]
            for i, j in T.grid(T.int64(5), T.int64(19)):
                with T.block("add"):
                    v_i, v_j = T.axis.remap("SS", [i, j])
                    Z[v_i, v_j] = M[v_i, v_j] + Bias[v_j]
            for i, j in T.grid(T.int64(5), T.int64(19)):
                with T.block("gelu"):
                    v_i, v_j = T.axis.remap("SS", [i, j])
                    Y[v_i, v_j] = Z[v_i, v_j] * (T.float32(0.5) + T.erf(Z[v_i, v_j] * T.float32(0.70710678118654757)) * T.float32(0.5))

    @T.prim_func(private=True)
    def fused_exp_chain(A: T.Buffer((T.int64(3), T.int64(4), T.int64(11)), "float32"), Y: T.Buffer((T.int64(3), T.int64(4), T.int64(11)), "float32")):
        T.func_attr({"tir.noalias": True})
        with T.block("root"):
            T.reads()
            T.writes()
            E = T.alloc_buffer((T.int64(3), T.int64(4), T.int64(11)))
            for i, j, k in T.grid(T.int64(3), T.int64(4), T.int64(11)):
                with T.block("exp"):
                    v_i, v_j, v_k = T.axis.remap("SSS", [i, j, k])
                    E[v_i, v_j, v_k] = T.exp(A[v_i, v_j, v_k] * T.float32(0.5))
            for i, j, k in T.grid(T.int64(3), T.int64(4), T.int64(11)):
                with T.block("sig"):
                    v_i, v_j, v_k = T.axis.remap("SSS", [i, j, k])
                    Y[v_i, v_j, v_k] = T.sigmoid(E[v_i, v_j, v_k] - T.float32(1)) / (E[v_i, v_j, v_k] + T.float32(2))

    @T.prim_func(private=True)
    def unaligned_chain(A: T.Buffer((T.int64(6), T.int64(8)), "float32"), Y: T.Buffer((T.int64(6), T.int64(8)), "float32")):
        T.func_attr({"tir.noalias": True})
        with T.block("root"):
            T.reads()
            T.writes()
            E = T.alloc_buffer((T.int64(6), T.int64(8)))
            for i, j in T.grid(T.int64(6), T.int64(8)):
                with T.block("exp"):
                    v_i, v_j = T.axis.remap("SS", [i, j])
                    E[v_i, v_j] = T.exp(A[v_i, v_j])
            for i, j in T.grid(T.int64(6), T.int64(8)):
                with T.block("shifted"):
                    v_i, v_j = T.axis.remap("SS", [i, j])
                    Y[v_i, v_j] = E[T.int64(5), v_j] + A[v_i, v_j]
`

// TestFusedRowGroups checks that fused PrimFuncs run as one row group
// (the pattern names one group) and agree with the general path; a read
// of an intermediate at another row (unaligned_chain reads row 5 of E for
// every row) splits the group, or its first rows would read E before it is
// computed.
func TestFusedRowGroups(t *testing.T) {
	mod := parseSource(t, "fused.tvms", []byte(fusedSrc))
	for name, pattern := range map[string]string{
		"fused_add_layer_norm": "rows",
		"fused_dense_add_gelu": "matmul+epilogue",
		"fused_exp_chain":      "elementwise",
		"unaligned_chain":      "elementwise",
	} {
		t.Run(name, func(t *testing.T) {
			f := mod.PrimFunc(name)
			require.NotNil(t, f)
			k := checkAll(t, f, makeArgs(t, f, withVars(f, nil, nil), rand.New(rand.NewPCG(8, 9))))
			require.Equal(t, pattern, k.Pattern())
		})
	}
}

// TestRowKernelsConcurrent calls row kernels large enough to split across
// cores from several goroutines at once (run with -race) and checks every
// result against the general path.
func TestRowKernelsConcurrent(t *testing.T) {
	mods := map[string]*ir.Module{}
	for _, k := range []struct{ file, name string }{
		{"tir_row_kernels.tvms", "layer_norm3"}, {"tir_row_kernels.tvms", "gelu1"}, {"tir_row_kernels.tvms", "softmax2"},
		// BERT's softmax and the row bench's log-softmax and RMS norm
		// split their rows across cores (softmaxParallelMin,
		// normParallelMin).
		{"tir_bert_rows.tvms", "softmax"}, {"tir_row_bench.tvms", "log_softmax"}, {"tir_row_bench.tvms", "rms_norm"},
	} {
		mod := mods[k.file]
		if mod == nil {
			src, err := os.ReadFile("../../testdata/" + k.file)
			require.NoError(t, err)
			mod = parseSource(t, k.file, src)
			mods[k.file] = mod
		}
		name := k.name
		f := mod.PrimFunc(name)
		k, err := kernel.Compile(f, name)
		require.NoError(t, err)
		g, err := kernel.CompileWith(f, name, kernel.Options{General: true})
		require.NoError(t, err)
		args := makeArgs(t, f, withVars(f, nil, nil), rand.New(rand.NewPCG(1, 2)))
		want := cloneArgs(args)
		require.NoError(t, g.Call(want))
		var wg sync.WaitGroup
		results := make([][]abi.Arg, 2*runtime.GOMAXPROCS(0))
		for i := range results {
			results[i] = cloneArgs(args)
			wg.Go(func() {
				for range 3 {
					if err := k.Call(results[i]); err != nil {
						panic(err)
					}
				}
			})
		}
		wg.Wait()
		for _, got := range results {
			for i := range got {
				if got[i].T != nil {
					compareTensors(t, want[i].T, got[i].T, 1, name)
				}
			}
		}
	}
}

var _ = tensor.Float32

// TestGeluForms checks that both GELU forms LegalizeOps writes are fused
// into one vm/blas call, and that a near miss is not.
func TestGeluForms(t *testing.T) {
	src, err := os.ReadFile("../../testdata/tir_row_kernels.tvms")
	require.NoError(t, err)
	mod := parseSource(t, "tir_row_kernels.tvms", src)
	value := func(f *ir.PrimFunc) ir.PrimExpr {
		var v ir.PrimExpr
		ir.WalkStmt(f.Body, &ir.StmtVisitor{Stmt: func(s ir.Stmt) bool {
			if st, ok := s.(*ir.BufferStore); ok {
				v = st.Value
			}
			return true
		}})
		return v
	}
	require.Equal(t, "exact", kernel.MatchGelu(value(mod.PrimFunc("gelu"))))
	require.Equal(t, "tanh", kernel.MatchGelu(value(mod.PrimFunc("gelu_tanh"))))
	require.Equal(t, "", kernel.MatchGelu(value(mod.PrimFunc("silu"))))
	near := parseSource(t, "near.tvms", []byte(strings.ReplaceAll(string(src), "0.70710678118654757", "0.7")))
	require.Equal(t, "", kernel.MatchGelu(value(near.PrimFunc("gelu"))))
}

// TestSoftmaxKernel checks that softmax and log-softmax over the last
// axis (odd row lengths, extent 1, rows longer than a chunk) take the
// one-kernel path of rows_softmax.go, not only agree with the general
// path (TestRowKernels).
func TestSoftmaxKernel(t *testing.T) {
	src, err := os.ReadFile("../../testdata/tir_row_kernels.tvms")
	require.NoError(t, err)
	mod := parseSource(t, "tir_row_kernels.tvms", src)
	for _, name := range []string{"softmax", "softmax1", "softmax2", "log_softmax"} {
		f := mod.PrimFunc(name)
		require.NotNil(t, f)
		args := makeArgs(t, f, withVars(f, nil, map[string]int64{"n": 5}), rand.New(rand.NewPCG(2, 3)))
		k := checkAll(t, f, args)
		before := kernel.FastTaken()
		require.NoError(t, k.Call(cloneArgs(args)))
		require.Greater(t, kernel.FastTaken(), before, "%s: fast path taken", name)
	}
}

// powSrc is R.power as LegalizeOps writes it: a scalar exponent (a 0-d
// buffer) and an elementwise one.
const powSrc = `
    @T.prim_func(private=True)
    def power(A: T.Buffer((T.int64(37), T.int64(53)), "float32"), B: T.Buffer((), "float32"), T_power: T.Buffer((T.int64(37), T.int64(53)), "float32")):
        T.func_attr({"tir.noalias": True})
        # with T.block("root"):
        for ax0, ax1 in T.grid(T.int64(37), T.int64(53)):
            with T.block("T_power"):
                v_ax0, v_ax1 = T.axis.remap("SS", [ax0, ax1])
                T.reads(A[v_ax0, v_ax1], B[()])
                T.writes(T_power[v_ax0, v_ax1])
                T_power[v_ax0, v_ax1] = T.pow(A[v_ax0, v_ax1], B[()])

    @T.prim_func(private=True)
    def power1(A: T.Buffer((T.int64(37), T.int64(53)), "float32"), B: T.Buffer((T.int64(37), T.int64(53)), "float32"), T_power: T.Buffer((T.int64(37), T.int64(53)), "float32")):
        T.func_attr({"tir.noalias": True})
        # with T.block("root"):
        for ax0, ax1 in T.grid(T.int64(37), T.int64(53)):
            with T.block("T_power"):
                v_ax0, v_ax1 = T.axis.remap("SS", [ax0, ax1])
                T.reads(A[v_ax0, v_ax1], B[v_ax0, v_ax1])
                T.writes(T_power[v_ax0, v_ax1])
                T_power[v_ax0, v_ax1] = T.pow(A[v_ax0, v_ax1], B[v_ax0, v_ax1])
`

// TestPowRows checks that T.pow runs on the row kernels' vector math
// (every exponent path of vm/blas.PowScalarF32 and PowF32) and agrees
// with the general path and the reference interpreter.
func TestPowRows(t *testing.T) {
	mod := parseModule(t, powSrc)
	for _, name := range []string{"power", "power1"} {
		f := mod.PrimFunc(name)
		require.NotNil(t, f)
		for _, y := range []float32{2, 0.5, 1, 1.7, -3} {
			args := makeArgs(t, f, nil, rand.New(rand.NewPCG(4, 4)))
			if name == "power" {
				tensorF32(args[1].T)[0] = y
			}
			for i, v := range tensorF32(args[0].T) {
				tensorF32(args[0].T)[i] = v * v * 3 // non-negative: real powers
			}
			k := checkAll(t, f, args)
			require.Equal(t, "elementwise", k.Pattern())
			before := kernel.FastTaken()
			require.NoError(t, k.Call(cloneArgs(args)))
			require.Greater(t, kernel.FastTaken(), before, "%s: fast path taken", name)
		}
	}
}
