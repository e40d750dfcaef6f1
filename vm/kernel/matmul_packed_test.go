package kernel_test

import (
	"fmt"
	"math/rand/v2"
	"runtime"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/phasec/phasec/tensor"
	"github.com/phasec/phasec/vm/abi"
	"github.com/phasec/phasec/vm/kernel"
)

// packedSrc: matmuls whose weight W is packed once when frozen, in shapes
// off the micro-kernel's panel widths (n x 19 by 19 x 37; k = 300 past the
// k block of 256 with W transposed), a batch matmul whose W is shared by
// every batch, and a dense layer with a bias epilogue.
const packedSrc = `
    @T.prim_func(private=True)
    def nn(var_A: T.handle, W: T.Buffer((T.int64(19), T.int64(37)), "float32"), var_C: T.handle):
        n = T.int64()
        A = T.match_buffer(var_A, (n, T.int64(19)), "float32")
        C = T.match_buffer(var_C, (n, T.int64(37)), "float32")
        for i, j, k in T.grid(n, T.int64(37), T.int64(19)):
            with T.block("matmul"):
                v_i, v_j, v_k = T.axis.remap("SSR", [i, j, k])
                with T.init():
                    C[v_i, v_j] = T.float32(0)
                C[v_i, v_j] = C[v_i, v_j] + A[v_i, v_k] * W[v_k, v_j]

    @T.prim_func(private=True)
    def nt(var_A: T.handle, W: T.Buffer((T.int64(23), T.int64(300)), "float32"), var_C: T.handle):
        n = T.int64()
        A = T.match_buffer(var_A, (n, T.int64(300)), "float32")
        C = T.match_buffer(var_C, (n, T.int64(23)), "float32")
        for i, j, k in T.grid(n, T.int64(23), T.int64(300)):
            with T.block("T_matmul_NT"):
                v_i, v_j, v_k = T.axis.remap("SSR", [i, j, k])
                with T.init():
                    C[v_i, v_j] = T.float32(0)
                C[v_i, v_j] = C[v_i, v_j] + A[v_i, v_k] * W[v_j, v_k]

    @T.prim_func(private=True)
    def bmm(var_A: T.handle, W: T.Buffer((T.int64(1), T.int64(19), T.int64(37)), "float32"), var_C: T.handle):
        n = T.int64()
        A = T.match_buffer(var_A, (T.int64(3), n, T.int64(19)), "float32")
        C = T.match_buffer(var_C, (T.int64(3), n, T.int64(37)), "float32")
        for x, i, j, k in T.grid(T.int64(3), n, T.int64(37), T.int64(19)):
            with T.block("bmm"):
                vb, vi, vj, vk = T.axis.remap("SSSR", [x, i, j, k])
                with T.init():
                    C[vb, vi, vj] = T.float32(0)
                C[vb, vi, vj] = C[vb, vi, vj] + A[vb, vi, vk] * W[T.int64(0), vk, vj]

    @T.prim_func(private=True)
    def dense_bias(var_A: T.handle, W: T.Buffer((T.int64(19), T.int64(37)), "float32"), bias: T.Buffer((T.int64(37),), "float32"), var_O: T.handle):
        n = T.int64()
        A = T.match_buffer(var_A, (n, T.int64(19)), "float32")
        O = T.match_buffer(var_O, (n, T.int64(37)), "float32")
        mm = T.alloc_buffer((n, T.int64(37)), "float32")
        for i, j, k in T.grid(n, T.int64(37), T.int64(19)):
            with T.block("matmul"):
                vi, vj, vk = T.axis.remap("SSR", [i, j, k])
                with T.init():
                    mm[vi, vj] = T.float32(0)
                mm[vi, vj] = mm[vi, vj] + A[vi, vk] * W[vk, vj]
        for i, j in T.grid(n, T.int64(37)):
            with T.block("bias"):
                vi, vj = T.axis.remap("SS", [i, j])
                O[vi, vj] = mm[vi, vj] + bias[vj]
`

// TestMatmulFrozenWeightsMatchUnpacked: with W frozen (packed once and
// kept with its storage) every matmul gives the per-call packing's result
// bit for bit (the same panels and summation order), on one row (the
// GEMV), a few rows and more rows than a row block, and the result agrees
// with the reference interpreter.
func TestMatmulFrozenWeightsMatchUnpacked(t *testing.T) {
	mod := parseModule(t, packedSrc)
	want := map[string]string{"nn": "matmul", "nt": "matmul", "bmm": "batch_matmul", "dense_bias": "matmul+epilogue"}
	for name, pattern := range want {
		for _, n := range []int64{1, 13, 150} {
			t.Run(fmt.Sprintf("%s/n=%d", name, n), func(t *testing.T) {
				f := mod.PrimFunc(name)
				args := makeArgs(t, f, withVars(f, nil, map[string]int64{"n": n}), rand.New(rand.NewPCG(uint64(n), 5)))
				k := checkAll(t, f, args)
				require.Equal(t, pattern, k.Pattern())
				out := len(args) - 1
				unpacked := cloneArgs(args)
				require.NoError(t, k.Call(unpacked))
				frozen := cloneArgs(args)
				require.True(t, frozen[1].T.Storage.Freeze())
				before := kernel.FastTaken()
				for range 2 { // the packing run and a run on the kept packing
					clear(tensor.Data[float32](frozen[out].T))
					require.NoError(t, k.Call(frozen))
					require.Equal(t, tensor.Data[float32](unpacked[out].T), tensor.Data[float32](frozen[out].T))
				}
				require.Equal(t, before+2, kernel.FastTaken(), "fast path taken")
			})
		}
	}
}

// TestMatmulFrozenWeightsPackedOnce: weights in frozen storage are packed
// once per kernel and kept with the storage, so later runs do not read
// them again. Writing frozen bytes behind the VM's back (which breaks
// Freeze's promise) shows it: the frozen run keeps the packing of the
// first weights, while unfrozen weights are repacked per call. Steady
// runs on the packed weights allocate nothing.
func TestMatmulFrozenWeightsPackedOnce(t *testing.T) {
	f := parseModule(t, packedSrc).PrimFunc("nt")
	k, err := kernel.Compile(f, "nt")
	require.NoError(t, err)
	require.Equal(t, "matmul", k.Pattern())
	rng := rand.New(rand.NewPCG(3, 4))
	x := randomTensor([]int64{40, 300}, rng)
	w1, w2 := randomTensor([]int64{23, 300}, rng), randomTensor([]int64{23, 300}, rng)
	run := func(w *tensor.Tensor) []float32 {
		y := tensor.New(tensor.Float32, 40, 23)
		require.NoError(t, k.Call([]abi.Arg{{T: x}, {T: w}, {T: y}}))
		return tensor.Data[float32](y)
	}
	want1, want2 := run(w1), run(w2)
	require.NotEqual(t, want1, want2)

	for _, frozen := range []bool{false, true} {
		w := randomTensor([]int64{23, 300}, rng)
		copy(tensor.Data[float32](w), tensor.Data[float32](w1))
		if frozen {
			require.True(t, w.Storage.Freeze())
		}
		require.Equal(t, want1, run(w))
		copy(tensor.Data[float32](w), tensor.Data[float32](w2))
		if frozen {
			require.Equal(t, want1, run(w), "frozen weights are packed once")
			if !raceEnabled {
				y := tensor.New(tensor.Float32, 40, 23)
				args := []abi.Arg{{T: x}, {T: w}, {T: y}}
				require.Zero(t, testing.AllocsPerRun(10, func() { _ = k.Call(args) }))
			}
		} else {
			require.Equal(t, want2, run(w), "unfrozen weights are packed per call")
		}
	}
}

// batchSrc: batched matmuls whose per-batch products are too small to
// split, so the threads run whole batches side by side: plain, and with
// an epilogue reading an operand per batch (each thread's own batch
// offsets) and scaling.
const batchSrc = `
    @T.prim_func(private=True)
    def bmm(var_A: T.handle, var_B: T.handle, var_C: T.handle):
        b = T.int64()
        A = T.match_buffer(var_A, (b, T.int64(13), T.int64(9)), "float32")
        B = T.match_buffer(var_B, (b, T.int64(9), T.int64(21)), "float32")
        C = T.match_buffer(var_C, (b, T.int64(13), T.int64(21)), "float32")
        for x, i, j, k in T.grid(b, T.int64(13), T.int64(21), T.int64(9)):
            with T.block("bmm"):
                vb, vi, vj, vk = T.axis.remap("SSSR", [x, i, j, k])
                with T.init():
                    C[vb, vi, vj] = T.float32(0)
                C[vb, vi, vj] = C[vb, vi, vj] + A[vb, vi, vk] * B[vb, vk, vj]

    @T.prim_func(private=True)
    def bmm_bias(var_A: T.handle, var_B: T.handle, var_bias: T.handle, var_O: T.handle):
        b = T.int64()
        A = T.match_buffer(var_A, (b, T.int64(13), T.int64(9)), "float32")
        B = T.match_buffer(var_B, (b, T.int64(21), T.int64(9)), "float32")
        bias = T.match_buffer(var_bias, (b, T.int64(21)), "float32")
        O = T.match_buffer(var_O, (b, T.int64(13), T.int64(21)), "float32")
        mm = T.alloc_buffer((b, T.int64(13), T.int64(21)), "float32")
        for x, i, j, k in T.grid(b, T.int64(13), T.int64(21), T.int64(9)):
            with T.block("bmm"):
                vb, vi, vj, vk = T.axis.remap("SSSR", [x, i, j, k])
                with T.init():
                    mm[vb, vi, vj] = T.float32(0)
                mm[vb, vi, vj] = mm[vb, vi, vj] + A[vb, vi, vk] * B[vb, vj, vk]
        for x, i, j in T.grid(b, T.int64(13), T.int64(21)):
            with T.block("bias"):
                vb, vi, vj = T.axis.remap("SSS", [x, i, j])
                O[vb, vi, vj] = (mm[vb, vi, vj] + bias[vb, vj]) * T.float32(0.125)
`

// TestBatchedMatmulThreadsRunBatches: on two threads, batches of small
// products run side by side (one product per thread at a time), with and
// without an epilogue, for batch counts that split unevenly; the results
// agree with the reference interpreter and the general path, and steady
// calls allocate nothing.
func TestBatchedMatmulThreadsRunBatches(t *testing.T) {
	saved := runtime.GOMAXPROCS(2)
	t.Cleanup(func() { runtime.GOMAXPROCS(saved) })
	mod := parseModule(t, batchSrc)
	want := map[string]string{"bmm": "batch_matmul", "bmm_bias": "batch_matmul+epilogue"}
	for name, pattern := range want {
		for _, b := range []int64{1, 2, 7} {
			t.Run(fmt.Sprintf("%s/b=%d", name, b), func(t *testing.T) {
				f := mod.PrimFunc(name)
				args := makeArgs(t, f, withVars(f, nil, map[string]int64{"b": b}), rand.New(rand.NewPCG(uint64(b), 9)))
				before := kernel.FastTaken()
				k := checkAll(t, f, args)
				require.Equal(t, pattern, k.Pattern())
				require.Greater(t, kernel.FastTaken(), before, "fast path taken")
				if !raceEnabled {
					require.Zero(t, testing.AllocsPerRun(10, func() { _ = k.Call(args) }))
				}
			})
		}
	}
}
