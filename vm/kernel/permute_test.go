package kernel_test

import (
	"math/rand/v2"
	"os"
	"sync"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/phasec/phasec/vm/kernel"
)

// TestDataMovement runs the legalized data-movement ops
// (testdata/tir_data_movement.tvms) on every path and the reference
// interpreter, and checks which dispatch each takes.
func TestDataMovement(t *testing.T) {
	src, err := os.ReadFile("../../testdata/tir_data_movement.tvms")
	require.NoError(t, err)
	mod := parseSource(t, "tir_data_movement.tvms", src)
	want := map[string]string{
		"permute_dims": "permute", "permute_dims1": "permute", "permute_dims2": "permute",
		"permute_dims3": "permute", "reshape": "permute", "broadcast_to": "permute",
		// take: its random indices are out of bounds, so the take path
		// declines and the general path reports them (TestTake covers it).
		"concat": "concat", "concat1": "concat", "take": "take",
	}
	for name, pattern := range want {
		t.Run(name, func(t *testing.T) {
			f := mod.PrimFunc(name)
			require.NotNil(t, f)
			for _, n := range []int64{1, 70} {
				args := makeArgs(t, f, withVars(f, nil, map[string]int64{"n": n}), rand.New(rand.NewPCG(1, uint64(n))))
				k := checkAll(t, f, args)
				require.Equal(t, pattern, k.Pattern())
				if pattern != "elementwise" && pattern != "take" {
					before := kernel.FastTaken()
					require.NoError(t, k.Call(cloneArgs(args)))
					require.Greater(t, kernel.FastTaken(), before, "fast path taken")
				}
			}
		})
	}
}

// bigTranspose is large enough to split across cores, with sides that
// are not multiples of the tile.
const bigTranspose = `
    @T.prim_func(private=True)
    def transpose(A: T.Buffer((T.int64(1031), T.int64(517)), "float32"), T_transpose: T.Buffer((T.int64(517), T.int64(1031)), "float32")):
        T.func_attr({"tir.noalias": True})
        for ax0, ax1 in T.grid(T.int64(517), T.int64(1031)):
            with T.block("T_transpose"):
                v_ax0, v_ax1 = T.axis.remap("SS", [ax0, ax1])
                T_transpose[v_ax0, v_ax1] = A[v_ax1, v_ax0]
`

// TestPermuteConcurrent calls a transpose that splits across cores from
// several goroutines at once (run with -race) and checks each result
// element by element.
func TestPermuteConcurrent(t *testing.T) {
	f := parseFunc(t, bigTranspose, "transpose")
	k, err := kernel.Compile(f, "transpose")
	require.NoError(t, err)
	require.Equal(t, "permute", k.Pattern())
	var wg sync.WaitGroup
	for g := range 4 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			args := makeArgs(t, f, nil, rand.New(rand.NewPCG(uint64(g), 3)))
			if err := k.Call(args); err != nil {
				t.Error(err)
				return
			}
			a, out := tensorF32(args[0].T), tensorF32(args[1].T)
			for i := range 517 {
				for j := range 1031 {
					if out[i*1031+j] != a[j*517+i] {
						t.Errorf("goroutine %d: out[%d,%d] = %v, want %v", g, i, j, out[i*1031+j], a[j*517+i])
						return
					}
				}
			}
		}()
	}
	wg.Wait()
}

// TestBertFusedDispatch runs the exact non-GEMM PrimFuncs FuseTIR writes
// for bench/ort's BERT layer (testdata/tir_bert_fused.tvms) on every path
// and checks that each takes a fast path: the fused reshape/transpose
// chains as copies, softmax and layer norm as row kernels.
func TestBertFusedDispatch(t *testing.T) {
	src, err := os.ReadFile("../../testdata/tir_bert_fused.tvms")
	require.NoError(t, err)
	mod := parseSource(t, "tir_bert_fused.tvms", src)
	want := map[string]string{
		"fused_permute_dims2_reshape1":             "permute",
		"fused_reshape_permute_dims":               "permute",
		"fused_reshape_permute_dims_permute_dims1": "permute",
		"layer_norm": "rows",
		"softmax":    "rows",
	}
	for _, name := range mod.Names() {
		f := mod.PrimFunc(name)
		if f == nil {
			continue
		}
		t.Run(name, func(t *testing.T) {
			pattern, ok := want[name]
			require.True(t, ok, "a PrimFunc the test does not know: %s", name)
			args := makeArgs(t, f, nil, rand.New(rand.NewPCG(5, 6)))
			k := checkAll(t, f, args)
			require.Equal(t, pattern, k.Pattern())
			before := kernel.FastTaken()
			require.NoError(t, k.Call(cloneArgs(args)))
			require.Greater(t, kernel.FastTaken(), before, "fast path taken")
		})
	}
}

// TestResnetFusedDispatch runs the exact non-convolution PrimFuncs of the
// default pipeline's ResNet-18 (testdata/tir_resnet_fused.tvms) on every
// path and checks that each takes a fast path: the residual add + relu
// chain over 56-element rows runs flattened, as one long row.
func TestResnetFusedDispatch(t *testing.T) {
	src, err := os.ReadFile("../../testdata/tir_resnet_fused.tvms")
	require.NoError(t, err)
	mod := parseSource(t, "tir_resnet_fused.tvms", src)
	want := map[string]string{
		"fused_add_relu1":     "elementwise",
		"fused_relu":          "elementwise",
		"max_pool2d":          "pad+max_pool",
		"adaptive_avg_pool2d": "adaptive_pool+avg_divide",
	}
	for _, name := range mod.Names() {
		f := mod.PrimFunc(name)
		if f == nil {
			continue
		}
		t.Run(name, func(t *testing.T) {
			pattern, ok := want[name]
			require.True(t, ok, "a PrimFunc the test does not know: %s", name)
			args := makeArgs(t, f, nil, rand.New(rand.NewPCG(7, 8)))
			k := checkAll(t, f, args)
			require.Equal(t, pattern, k.Pattern())
			before := kernel.FastTaken()
			require.NoError(t, k.Call(cloneArgs(args)))
			require.Greater(t, kernel.FastTaken(), before, "fast path taken")
		})
	}
}

// flatChain is an add + relu chain over short rows (7 elements) with a
// unit axis, large enough to split across cores when flattened.
const flatChain = `
    @T.prim_func(private=True)
    def chain(A: T.Buffer((T.int64(1), T.int64(40000), T.int64(7)), "float32"), B: T.Buffer((T.int64(1), T.int64(40000), T.int64(7)), "float32"), C: T.Buffer((T.int64(1), T.int64(40000), T.int64(7)), "float32")):
        T.func_attr({"tir.noalias": True})
        S = T.alloc_buffer((T.int64(1), T.int64(40000), T.int64(7)))
        for ax0, ax1, ax2 in T.grid(T.int64(1), T.int64(40000), T.int64(7)):
            with T.block("T_add"):
                v0, v1, v2 = T.axis.remap("SSS", [ax0, ax1, ax2])
                S[v0, v1, v2] = A[v0, v1, v2] + B[v0, v1, v2]
        for ax0, ax1, ax2 in T.grid(T.int64(1), T.int64(40000), T.int64(7)):
            with T.block("relu"):
                v0, v1, v2 = T.axis.remap("SSS", [ax0, ax1, ax2])
                C[v0, v1, v2] = T.max(S[v0, v1, v2], T.float32(0.0))
`

// TestFlatChainConcurrent runs the flattened chain from several
// goroutines at once (run with -race) against a direct computation.
func TestFlatChainConcurrent(t *testing.T) {
	f := parseFunc(t, flatChain, "chain")
	k, err := kernel.Compile(f, "chain")
	require.NoError(t, err)
	require.Equal(t, "elementwise", k.Pattern())
	var wg sync.WaitGroup
	for g := range 4 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			args := makeArgs(t, f, nil, rand.New(rand.NewPCG(uint64(g), 9)))
			before := kernel.FastTaken()
			if err := k.Call(args); err != nil {
				t.Error(err)
				return
			}
			if kernel.FastTaken() == before {
				t.Error("fast path not taken")
			}
			a, b, c := tensorF32(args[0].T), tensorF32(args[1].T), tensorF32(args[2].T)
			for i := range c {
				if want := max(a[i]+b[i], 0); c[i] != want {
					t.Errorf("goroutine %d: c[%d] = %v, want %v", g, i, c[i], want)
					return
				}
			}
		}()
	}
	wg.Wait()
}
