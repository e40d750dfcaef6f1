package kernel_test

import (
	"fmt"
	"math"
	"math/rand/v2"
	"sort"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/phasec/phasec/barrier"
	"github.com/phasec/phasec/ir"
	"github.com/phasec/phasec/syntax"
	"github.com/phasec/phasec/vm/kernel"
)

// epilogueSrc: GEMMs with the epilogues FuseTIR writes after them, in its
// form (a T.alloc_buffer per intermediate, one nest per op), over a
// symbolic row count: bias + exact and tanh GELU, bias + residual add,
// clip and a 0-d divisor, a per-row (column broadcast) scale with
// sigmoid, a batched GEMM with a scalar divide and a mask broadcast over
// the batch, an in-place update of the output, a cast, and scalar
// arithmetic on a 0-d operand.
const epilogueSrc = `
    @T.prim_func(private=True)
    def bias_gelu(var_A: T.handle, W: T.Buffer((T.int64(40), T.int64(70)), "float32"), b: T.Buffer((T.int64(70),), "float32"), var_O: T.handle):
        n = T.int64()
        A = T.match_buffer(var_A, (n, T.int64(40)), "float32")
        O = T.match_buffer(var_O, (n, T.int64(70)), "float32")
        mm = T.alloc_buffer((n, T.int64(70)))
        t = T.alloc_buffer((n, T.int64(70)))
        for i, j, k in T.grid(n, T.int64(70), T.int64(40)):
            with T.block("matmul"):
                vi, vj, vk = T.axis.remap("SSR", [i, j, k])
                with T.init():
                    mm[vi, vj] = T.float32(0)
                mm[vi, vj] = mm[vi, vj] + A[vi, vk] * W[vk, vj]
        for i, j in T.grid(n, T.int64(70)):
            with T.block("bias"):
                vi, vj = T.axis.remap("SS", [i, j])
                t[vi, vj] = mm[vi, vj] + b[vj]
        for i, j in T.grid(n, T.int64(70)):
            with T.block("gelu"):
                vi, vj = T.axis.remap("SS", [i, j])
                O[vi, vj] = t[vi, vj] * (T.float32(0.5) + T.erf(t[vi, vj] * T.float32(0.70710678118654757)) * T.float32(0.5))

    @T.prim_func(private=True)
    def bias_gelu_tanh(var_A: T.handle, W: T.Buffer((T.int64(33), T.int64(300)), "float32"), b: T.Buffer((T.int64(300),), "float32"), var_O: T.handle):
        n = T.int64()
        A = T.match_buffer(var_A, (n, T.int64(33)), "float32")
        O = T.match_buffer(var_O, (n, T.int64(300)), "float32")
        mm = T.alloc_buffer((n, T.int64(300)))
        t = T.alloc_buffer((n, T.int64(300)))
        for i, j, k in T.grid(n, T.int64(300), T.int64(33)):
            with T.block("matmul"):
                vi, vj, vk = T.axis.remap("SSR", [i, j, k])
                with T.init():
                    mm[vi, vj] = T.float32(0)
                mm[vi, vj] = mm[vi, vj] + A[vi, vk] * W[vk, vj]
        for i, j in T.grid(n, T.int64(300)):
            with T.block("bias"):
                vi, vj = T.axis.remap("SS", [i, j])
                t[vi, vj] = b[vj] + mm[vi, vj]
        for i, j in T.grid(n, T.int64(300)):
            with T.block("gelu"):
                vi, vj = T.axis.remap("SS", [i, j])
                O[vi, vj] = T.float32(0.5) * t[vi, vj] * (T.float32(1) + T.tanh(T.float32(0.79788456080286541) * (t[vi, vj] + T.float32(0.044715) * (t[vi, vj] * t[vi, vj] * t[vi, vj]))))

    @T.prim_func(private=True)
    def bias_residual(var_A: T.handle, W: T.Buffer((T.int64(300), T.int64(20)), "float32"), b: T.Buffer((T.int64(20),), "float32"), var_R: T.handle, var_O: T.handle):
        n = T.int64()
        A = T.match_buffer(var_A, (n, T.int64(300)), "float32")
        R = T.match_buffer(var_R, (n, T.int64(20)), "float32")
        O = T.match_buffer(var_O, (n, T.int64(20)), "float32")
        mm = T.alloc_buffer((n, T.int64(20)))
        t = T.alloc_buffer((n, T.int64(20)))
        for i, j, k in T.grid(n, T.int64(20), T.int64(300)):
            with T.block("matmul"):
                vi, vj, vk = T.axis.remap("SSR", [i, j, k])
                with T.init():
                    mm[vi, vj] = T.float32(0)
                mm[vi, vj] = mm[vi, vj] + A[vi, vk] * W[vk, vj]
        for i, j in T.grid(n, T.int64(20)):
            with T.block("bias"):
                vi, vj = T.axis.remap("SS", [i, j])
                t[vi, vj] = mm[vi, vj] + b[vj]
        for i, j in T.grid(n, T.int64(20)):
            with T.block("residual"):
                vi, vj = T.axis.remap("SS", [i, j])
                O[vi, vj] = R[vi, vj] + t[vi, vj]

    @T.prim_func(private=True)
    def dense_clip_div(var_A: T.handle, W: T.Buffer((T.int64(17), T.int64(12)), "float32"), s: T.Buffer((), "float32"), var_O: T.handle):
        n = T.int64()
        A = T.match_buffer(var_A, (n, T.int64(12)), "float32")
        O = T.match_buffer(var_O, (n, T.int64(17)), "float32")
        mm = T.alloc_buffer((n, T.int64(17)))
        t = T.alloc_buffer((n, T.int64(17)))
        for i, j, k in T.grid(n, T.int64(17), T.int64(12)):
            with T.block("dense"):
                vi, vj, vk = T.axis.remap("SSR", [i, j, k])
                with T.init():
                    mm[vi, vj] = T.float32(0)
                mm[vi, vj] = mm[vi, vj] + A[vi, vk] * W[vj, vk]
        for i, j in T.grid(n, T.int64(17)):
            with T.block("div"):
                vi, vj = T.axis.remap("SS", [i, j])
                t[vi, vj] = mm[vi, vj] / s[()]
        for i, j in T.grid(n, T.int64(17)):
            with T.block("clip"):
                vi, vj = T.axis.remap("SS", [i, j])
                O[vi, vj] = T.max(T.min(t[vi, vj], T.float32(0.5)), T.float32(-0.25))

    @T.prim_func(private=True)
    def row_scale_sigmoid(var_A: T.handle, W: T.Buffer((T.int64(9), T.int64(30)), "float32"), var_r: T.handle, var_O: T.handle):
        n = T.int64()
        A = T.match_buffer(var_A, (n, T.int64(9)), "float32")
        r = T.match_buffer(var_r, (n, T.int64(1)), "float32")
        O = T.match_buffer(var_O, (n, T.int64(30)), "float32")
        mm = T.alloc_buffer((n, T.int64(30)))
        for i, j, k in T.grid(n, T.int64(30), T.int64(9)):
            with T.block("matmul"):
                vi, vj, vk = T.axis.remap("SSR", [i, j, k])
                with T.init():
                    mm[vi, vj] = T.float32(0)
                mm[vi, vj] = mm[vi, vj] + A[vi, vk] * W[vk, vj]
        for i, j in T.grid(n, T.int64(30)):
            with T.block("scale"):
                vi, vj = T.axis.remap("SS", [i, j])
                O[vi, vj] = T.sigmoid(T.float32(1) - mm[vi, vj] * r[vi, T.int64(0)])

    @T.prim_func(private=True)
    def bmm_div_mask(var_Q: T.handle, var_K: T.handle, d: T.Buffer((), "float32"), var_M: T.handle, var_O: T.handle):
        n = T.int64()
        Q = T.match_buffer(var_Q, (T.int64(3), n, T.int64(8)), "float32")
        K = T.match_buffer(var_K, (T.int64(3), T.int64(8), n), "float32")
        M = T.match_buffer(var_M, (T.int64(1), n, n), "float32")
        O = T.match_buffer(var_O, (T.int64(3), n, n), "float32")
        mm = T.alloc_buffer((T.int64(3), n, n))
        t = T.alloc_buffer((T.int64(3), n, n))
        for b, i, j, k in T.grid(T.int64(3), n, n, T.int64(8)):
            with T.block("matmul"):
                vb, vi, vj, vk = T.axis.remap("SSSR", [b, i, j, k])
                with T.init():
                    mm[vb, vi, vj] = T.float32(0)
                mm[vb, vi, vj] = mm[vb, vi, vj] + Q[vb, vi, vk] * K[vb, vk, vj]
        for b, i, j in T.grid(T.int64(3), n, n):
            with T.block("divide"):
                vb, vi, vj = T.axis.remap("SSS", [b, i, j])
                t[vb, vi, vj] = mm[vb, vi, vj] / d[()]
        for b, i, j in T.grid(T.int64(3), n, n):
            with T.block("mask"):
                vb, vi, vj = T.axis.remap("SSS", [b, i, j])
                O[vb, vi, vj] = t[vb, vi, vj] + M[T.int64(0), vi, vj]

    @T.prim_func(private=True)
    def inplace_accumulate(var_A: T.handle, W: T.Buffer((T.int64(6), T.int64(21)), "float32"), var_O: T.handle):
        n = T.int64()
        A = T.match_buffer(var_A, (n, T.int64(6)), "float32")
        O = T.match_buffer(var_O, (n, T.int64(21)), "float32")
        mm = T.alloc_buffer((n, T.int64(21)))
        for i, j, k in T.grid(n, T.int64(21), T.int64(6)):
            with T.block("matmul"):
                vi, vj, vk = T.axis.remap("SSR", [i, j, k])
                with T.init():
                    mm[vi, vj] = T.float32(0)
                mm[vi, vj] = mm[vi, vj] + A[vi, vk] * W[vk, vj]
        for i, j in T.grid(n, T.int64(21)):
            with T.block("acc"):
                vi, vj = T.axis.remap("SS", [i, j])
                O[vi, vj] = O[vi, vj] + mm[vi, vj] * T.float32(2)

    @T.prim_func(private=True)
    def cast_exp_scaled(var_A: T.handle, W: T.Buffer((T.int64(5), T.int64(18)), "float32"), s: T.Buffer((), "float32"), var_O: T.handle):
        n = T.int64()
        A = T.match_buffer(var_A, (n, T.int64(5)), "float32")
        O = T.match_buffer(var_O, (n, T.int64(18)), "float32")
        mm = T.alloc_buffer((n, T.int64(18)))
        for i, j, k in T.grid(n, T.int64(18), T.int64(5)):
            with T.block("matmul"):
                vi, vj, vk = T.axis.remap("SSR", [i, j, k])
                with T.init():
                    mm[vi, vj] = T.float32(0)
                mm[vi, vj] = mm[vi, vj] + A[vi, vk] * W[vk, vj]
        for i, j in T.grid(n, T.int64(18)):
            with T.block("out"):
                vi, vj = T.axis.remap("SS", [i, j])
                O[vi, vj] = T.exp(T.Cast("float32", mm[vi, vj]) * (s[()] * T.float32(0.5)))
`

func TestGemmEpilogues(t *testing.T) {
	mod := parseModule(t, epilogueSrc)
	names := []string{"bias_gelu", "bias_gelu_tanh", "bias_residual", "dense_clip_div", "row_scale_sigmoid", "bmm_div_mask", "inplace_accumulate", "cast_exp_scaled"}
	for _, name := range names {
		f := mod.PrimFunc(name)
		require.NotNil(t, f, name)
		want := "matmul+epilogue"
		if name == "bmm_div_mask" {
			want = "batch_matmul+epilogue"
		}
		for _, n := range []int64{0, 1, 7, 150} {
			t.Run(fmt.Sprint(name, "/", n), func(t *testing.T) {
				before := kernel.FastTaken()
				args := makeArgs(t, f, withVars(f, nil, map[string]int64{"n": n}), rand.New(rand.NewPCG(uint64(n), 9)))
				if name == "dense_clip_div" || name == "cast_exp_scaled" {
					// The 0-d divisor / scale: away from zero.
					tensorF32(args[2].T)[0] = 1.75
				}
				k := checkAll(t, f, args)
				require.Equal(t, want, k.Pattern())
				if n > 0 {
					require.Greater(t, kernel.FastTaken(), before, "fast path taken")
				}
			})
		}
	}
}

// TestGemmEpilogueThreads runs fused kernels large enough for the GEMM
// to split across two goroutines, by column panels (bias_gelu_tanh) and
// by rows over a shared packed B (bias_residual: 20 columns), against the
// general path (with -race in CI).
func TestGemmEpilogueThreads(t *testing.T) {
	mod := parseModule(t, epilogueSrc)
	for _, name := range []string{"bias_gelu_tanh", "bias_residual"} {
		f := mod.PrimFunc(name)
		args := makeArgs(t, f, withVars(f, nil, map[string]int64{"n": 1500}), rand.New(rand.NewPCG(1, 2)))
		want := cloneArgs(args)
		g, err := kernel.CompileWith(f, name, kernel.Options{General: true})
		require.NoError(t, err)
		require.NoError(t, g.Call(want))
		k, err := kernel.Compile(f, name)
		require.NoError(t, err)
		require.Equal(t, "matmul+epilogue", k.Pattern())
		for range 2 {
			got := cloneArgs(args)
			require.NoError(t, k.Call(got))
			out := len(args) - 1
			compareTensors(t, want[out].T, got[out].T, maxAbs(want[out].T), name)
		}
	}
}

// TestEpilogueNotFused: an intermediate read after the epilogue, an
// epilogue over another index space and a reduction after the GEMM keep
// the unfused dispatch.
func TestEpilogueNotFused(t *testing.T) {
	mod := parseModule(t, `
    @T.prim_func(private=True)
    def reused(A: T.Buffer((T.int64(4), T.int64(5)), "float32"), W: T.Buffer((T.int64(5), T.int64(6)), "float32"), O: T.Buffer((T.int64(4), T.int64(6)), "float32"), P: T.Buffer((T.int64(4), T.int64(6)), "float32")):
        mm = T.alloc_buffer((T.int64(4), T.int64(6)))
        for i, j, k in T.grid(T.int64(4), T.int64(6), T.int64(5)):
            with T.block("matmul"):
                vi, vj, vk = T.axis.remap("SSR", [i, j, k])
                with T.init():
                    mm[vi, vj] = T.float32(0)
                mm[vi, vj] = mm[vi, vj] + A[vi, vk] * W[vk, vj]
        for i, j in T.grid(T.int64(4), T.int64(6)):
            with T.block("relu"):
                vi, vj = T.axis.remap("SS", [i, j])
                O[vi, vj] = T.max(mm[vi, vj], T.float32(0))
        for i, j in T.grid(T.int64(4), T.int64(6)):
            with T.block("copy"):
                vi, vj = T.axis.remap("SS", [i, j])
                P[vi, vj] = mm[vi, vj] * T.float32(3)

    @T.prim_func(private=True)
    def transposed(A: T.Buffer((T.int64(4), T.int64(5)), "float32"), W: T.Buffer((T.int64(5), T.int64(4)), "float32"), O: T.Buffer((T.int64(4), T.int64(4)), "float32")):
        mm = T.alloc_buffer((T.int64(4), T.int64(4)))
        for i, j, k in T.grid(T.int64(4), T.int64(4), T.int64(5)):
            with T.block("matmul"):
                vi, vj, vk = T.axis.remap("SSR", [i, j, k])
                with T.init():
                    mm[vi, vj] = T.float32(0)
                mm[vi, vj] = mm[vi, vj] + A[vi, vk] * W[vk, vj]
        for i, j in T.grid(T.int64(4), T.int64(4)):
            with T.block("t"):
                vi, vj = T.axis.remap("SS", [i, j])
                O[vi, vj] = mm[vj, vi] + T.float32(1)
`)
	for _, name := range []string{"reused", "transposed"} {
		f := mod.PrimFunc(name)
		k := checkAll(t, f, makeArgs(t, f, nil, rand.New(rand.NewPCG(4, 4))))
		require.NotContains(t, k.Pattern(), "epilogue", name)
		require.Contains(t, k.Pattern(), "matmul", name)
	}
}

// convEpilogueSrc: a convolution with bias, residual add and clip (a
// ResNet block's end, relu6), and one whose residual is laid out NHWC
// (not along the pixels: the fused path declines at run time).
const convEpilogueSrc = `
    @T.prim_func(private=True)
    def conv_bias_res_clip(X: T.Buffer((T.int64(2), T.int64(5), T.int64(9), T.int64(8)), "float32"), W: T.Buffer((T.int64(7), T.int64(5), T.int64(3), T.int64(3)), "float32"), b: T.Buffer((T.int64(7), T.int64(1), T.int64(1)), "float32"), R: T.Buffer((T.int64(2), T.int64(7), T.int64(7), T.int64(6)), "float32"), O: T.Buffer((T.int64(2), T.int64(7), T.int64(7), T.int64(6)), "float32")):
        Y = T.alloc_buffer((T.int64(2), T.int64(7), T.int64(7), T.int64(6)))
        t1 = T.alloc_buffer((T.int64(2), T.int64(7), T.int64(7), T.int64(6)))
        t2 = T.alloc_buffer((T.int64(2), T.int64(7), T.int64(7), T.int64(6)))
        for n, o, h, w, c, kh, kw in T.grid(T.int64(2), T.int64(7), T.int64(7), T.int64(6), T.int64(5), T.int64(3), T.int64(3)):
            with T.block("conv"):
                vn, vo, vh, vw, vc, vkh, vkw = T.axis.remap("SSSSRRR", [n, o, h, w, c, kh, kw])
                with T.init():
                    Y[vn, vo, vh, vw] = T.float32(0)
                Y[vn, vo, vh, vw] = Y[vn, vo, vh, vw] + X[vn, vc, vh + vkh, vw + vkw] * W[vo, vc, vkh, vkw]
        for n, o, h, w in T.grid(T.int64(2), T.int64(7), T.int64(7), T.int64(6)):
            with T.block("bias"):
                vn, vo, vh, vw = T.axis.remap("SSSS", [n, o, h, w])
                t1[vn, vo, vh, vw] = Y[vn, vo, vh, vw] + b[vo, T.int64(0), T.int64(0)]
        for n, o, h, w in T.grid(T.int64(2), T.int64(7), T.int64(7), T.int64(6)):
            with T.block("res"):
                vn, vo, vh, vw = T.axis.remap("SSSS", [n, o, h, w])
                t2[vn, vo, vh, vw] = t1[vn, vo, vh, vw] + R[vn, vo, vh, vw]
        for n, o, h, w in T.grid(T.int64(2), T.int64(7), T.int64(7), T.int64(6)):
            with T.block("clip"):
                vn, vo, vh, vw = T.axis.remap("SSSS", [n, o, h, w])
                O[vn, vo, vh, vw] = T.min(T.max(t2[vn, vo, vh, vw], T.float32(0)), T.float32(6))

    @T.prim_func(private=True)
    def conv_res_nhwc(X: T.Buffer((T.int64(1), T.int64(3), T.int64(6), T.int64(6)), "float32"), W: T.Buffer((T.int64(4), T.int64(3), T.int64(3), T.int64(3)), "float32"), R: T.Buffer((T.int64(1), T.int64(4), T.int64(4), T.int64(4)), "float32"), O: T.Buffer((T.int64(1), T.int64(4), T.int64(4), T.int64(4)), "float32")):
        Y = T.alloc_buffer((T.int64(1), T.int64(4), T.int64(4), T.int64(4)))
        for n, o, h, w, c, kh, kw in T.grid(T.int64(1), T.int64(4), T.int64(4), T.int64(4), T.int64(3), T.int64(3), T.int64(3)):
            with T.block("conv"):
                vn, vo, vh, vw, vc, vkh, vkw = T.axis.remap("SSSSRRR", [n, o, h, w, c, kh, kw])
                with T.init():
                    Y[vn, vo, vh, vw] = T.float32(0)
                Y[vn, vo, vh, vw] = Y[vn, vo, vh, vw] + X[vn, vc, vh + vkh, vw + vkw] * W[vo, vc, vkh, vkw]
        for n, o, h, w in T.grid(T.int64(1), T.int64(4), T.int64(4), T.int64(4)):
            with T.block("res"):
                vn, vo, vh, vw = T.axis.remap("SSSS", [n, o, h, w])
                O[vn, vo, vh, vw] = Y[vn, vo, vh, vw] + R[vn, vw, vh, vo]
`

func TestConvEpilogues(t *testing.T) {
	mod := parseModule(t, convEpilogueSrc)
	for _, tc := range []struct {
		name string
		fast bool
	}{{"conv_bias_res_clip", true}, {"conv_res_nhwc", false}} {
		f := mod.PrimFunc(tc.name)
		before := kernel.FastTaken()
		k := checkAllNormwise(t, f, makeArgs(t, f, nil, rand.New(rand.NewPCG(2, 3))))
		require.Equal(t, "conv2d+epilogue", k.Pattern(), tc.name)
		// The declined run still takes the convolution's own fast path.
		require.Greater(t, kernel.FastTaken(), before, tc.name)
		if !tc.fast {
			continue
		}
		// Exactly one fast run (the fused one) per call of the kernel.
		before = kernel.FastTaken()
		require.NoError(t, k.Call(makeArgs(t, f, nil, rand.New(rand.NewPCG(2, 4)))))
		require.Equal(t, before+1, kernel.FastTaken(), tc.name)
	}
}

// fusedModels are the models whose FuseTIR output the epilogue paths
// must take, at test sizes, written with the same high-level ops as
// bench/ort/gen.py's: a BERT encoder layer (bias on every projection,
// exact GELU, residual adds, post-norm layer norms), the 784-512-512-10
// MLP and the CNN (conv + bias + relu, max pooling).
func fusedModels() map[string]string {
	return map[string]string{"bert": bertLayer(8, 48, 4, 96), "mlp": mlp784(3), "cnn": cnnSmall(), "resnet": resnetStem()}
}

// resnetStem is bench/ort/gen.py's ResNet-18 stem and first half block
// at test sizes: a 7x7 stride-2 convolution with inference batch norm
// (per-channel sqrt(var + eps), computed once per output row by the
// epilogue), relu, 3x3 stride-2 max pooling with padding, a 3x3
// convolution with batch norm and a residual add.
func resnetStem() string {
	w := tensorType
	bn := func(i int) []string {
		return []string{w(fmt.Sprintf("g%d", i), 8), w(fmt.Sprintf("b%d", i), 8), w(fmt.Sprintf("m%d", i), 8), w(fmt.Sprintf("v%d", i), 8)}
	}
	params := append([]string{w("x", 1, 3, 19, 19), w("w0", 8, 3, 7, 7)}, bn(0)...)
	params = append(params, w("w1", 8, 8, 3, 3))
	params = append(params, bn(1)...)
	return fmt.Sprintf(`@I.ir_module
class Module:
    @R.function
    def main(%s) -> R.Tensor((1, 8, 5, 5), dtype="float32"):
        R.func_attr({"num_input": 1})
        with R.dataflow():
            bn0 = R.nn.batch_norm(R.nn.conv2d(x, w0, strides=[2, 2], padding=[3, 3, 3, 3]), g0, b0, m0, v0, axis=1, epsilon=1e-05, center=True, scale=True, training=False)
            relu0 = R.nn.relu(bn0[0])
            pool = R.nn.max_pool2d(relu0, pool_size=[3, 3], strides=[2, 2], padding=[1, 1, 1, 1])
            bn1 = R.nn.batch_norm(R.nn.conv2d(pool, w1, strides=[1, 1], padding=[1, 1, 1, 1]), g1, b1, m1, v1, axis=1, epsilon=1e-05, center=True, scale=True, training=False)
            gv = R.nn.relu(R.add(bn1[0], pool))
            R.output(gv)
        return gv
`, strings.Join(params, ", "))
}

// bertLayer is bench/ort/gen.py's BERT encoder layer at sequence length
// s, hidden size h, the given heads and FFN size.
func bertLayer(s, h, heads, ffn int) string {
	dh := h / heads
	w := tensorType
	bert := fmt.Sprintf(`@I.ir_module
class Module:
    @R.function
    def main(%s) -> R.Tensor((%d, %d), dtype="float32"):
        R.func_attr({"num_input": 1})
        with R.dataflow():
            mm1 = R.matmul(x, w_q)
            add2 = R.add(mm1, b_q)
            q = R.permute_dims(R.reshape(add2, R.shape([%[2]d, %[4]d, %[5]d])), axes=[1, 0, 2])
            mm6 = R.matmul(x, w_k)
            add7 = R.add(mm6, b_k)
            k = R.permute_dims(R.reshape(add7, R.shape([%[2]d, %[4]d, %[5]d])), axes=[1, 0, 2])
            mm11 = R.matmul(x, w_v)
            add12 = R.add(mm11, b_v)
            v = R.permute_dims(R.reshape(add12, R.shape([%[2]d, %[4]d, %[5]d])), axes=[1, 0, 2])
            kt = R.permute_dims(k, axes=[0, 2, 1])
            mm17 = R.matmul(q, kt)
            div18 = R.divide(mm17, R.const(%[6]g, "float32"))
            sm = R.nn.softmax(div18, axis=-1)
            mm21 = R.matmul(sm, v)
            ctx = R.reshape(R.permute_dims(mm21, axes=[1, 0, 2]), R.shape([%[2]d, %[3]d]))
            mm25 = R.matmul(ctx, w_o)
            add26 = R.add(mm25, b_o)
            add27 = R.add(x, add26)
            ln28 = R.nn.layer_norm(add27, ln1_g, ln1_b, axes=[-1], epsilon=1e-12, center=True, scale=True)
            mm29 = R.matmul(ln28, w_ff1)
            add30 = R.add(mm29, b_ff1)
            gelu31 = R.nn.gelu(add30)
            mm39 = R.matmul(gelu31, w_ff2)
            add40 = R.add(mm39, b_ff2)
            add41 = R.add(ln28, add40)
            gv = R.nn.layer_norm(add41, ln2_g, ln2_b, axes=[-1], epsilon=1e-12, center=True, scale=True)
            R.output(gv)
        return gv
`, strings.Join([]string{w("x", s, h), w("w_q", h, h), w("b_q", h), w("w_k", h, h), w("b_k", h), w("w_v", h, h), w("b_v", h),
		w("w_o", h, h), w("b_o", h), w("ln1_g", h), w("ln1_b", h), w("w_ff1", h, ffn), w("b_ff1", ffn), w("w_ff2", ffn, h), w("b_ff2", h),
		w("ln2_g", h), w("ln2_b", h)}, ", "), s, h, heads, dh, math.Sqrt(float64(dh)))
	return bert
}

// mlp784 is the 784-512-512-10 MLP at the given batch.
func mlp784(batch int) string {
	w := tensorType
	mlp := fmt.Sprintf(`@I.ir_module
class Module:
    @R.function
    def main(%s) -> R.Tensor((%d, 10), dtype="float32"):
        R.func_attr({"num_input": 1})
        with R.dataflow():
            relu3 = R.nn.relu(R.add(R.matmul(x, w0), b0))
            relu6 = R.nn.relu(R.add(R.matmul(relu3, w1), b1))
            add8 = R.add(R.matmul(relu6, w2), b2)
            gv = R.nn.softmax(add8, axis=-1)
            R.output(gv)
        return gv
`, strings.Join([]string{w("x", batch, 784), w("w0", 784, 512), w("b0", 512), w("w1", 512, 512), w("b1", 512), w("w2", 512, 10), w("b2", 10)}, ", "), batch)
	return mlp
}

// cnnSmall is bench/ort/gen.py's CNN at batch 1 on 16x16 images.
func cnnSmall() string {
	w := tensorType
	cnn := fmt.Sprintf(`@I.ir_module
class Module:
    @R.function
    def main(%s) -> R.Tensor((1, 64), dtype="float32"):
        R.func_attr({"num_input": 1})
        with R.dataflow():
            relu3 = R.nn.relu(R.add(R.nn.conv2d(x, w0, strides=[1, 1], padding=[1, 1, 1, 1]), b0))
            maxpool4 = R.nn.max_pool2d(relu3, pool_size=[2, 2], strides=[2, 2], padding=[0, 0, 0, 0])
            relu7 = R.nn.relu(R.add(R.nn.conv2d(maxpool4, w1, strides=[1, 1], padding=[1, 1, 1, 1]), b1))
            maxpool8 = R.nn.max_pool2d(relu7, pool_size=[2, 2], strides=[2, 2], padding=[0, 0, 0, 0])
            relu11 = R.nn.relu(R.add(R.nn.conv2d(maxpool8, w2, strides=[1, 1], padding=[1, 1, 1, 1]), b2))
            gap12 = R.nn.adaptive_avg_pool2d(relu11, output_size=[1, 1])
            gv = R.reshape(gap12, R.shape([1, 64]))
            R.output(gv)
        return gv
`, strings.Join([]string{w("x", 1, 3, 16, 16), w("w0", 32, 3, 3, 3), w("b0", 32, 1, 1), w("w1", 64, 32, 3, 3), w("b1", 64, 1, 1), w("w2", 64, 64, 3, 3), w("b2", 64, 1, 1)}, ", "))
	return cnn
}

// tensorType is a Relax tensor parameter: name: R.Tensor((d0, d1, ...), "float32").
func tensorType(name string, shape ...int) string {
	parts := make([]string, len(shape))
	for i, d := range shape {
		parts[i] = fmt.Sprint(d)
	}
	return fmt.Sprintf("%s: R.Tensor((%s,), dtype=\"float32\")", name, strings.Join(parts, ", "))
}

// TestFusedModelEpilogues takes each model through the default optimize
// barrier (LegalizeOps, FuseOps, FuseTIR) and checks that every fused
// GEMM and convolution PrimFunc it produces runs on the epilogue path, in
// agreement with the general path and the reference interpreter.
func TestFusedModelEpilogues(t *testing.T) {
	want := map[string]map[string]string{
		"bert": {
			"fused_matmul_add": "matmul+epilogue", "fused_matmul1_divide": "batch_matmul+epilogue",
			"fused_matmul_add_add1": "matmul+epilogue", "fused_matmul3_add2_gelu": "matmul+epilogue",
			"fused_matmul4_add_add1": "matmul+epilogue",
		},
		"mlp":    {"fused_matmul_add_relu": "matmul+epilogue", "fused_matmul1_add_relu": "matmul+epilogue", "fused_matmul2_add1": "matmul+epilogue"},
		"cnn":    {"fused_conv2d_add_relu": "conv2d_padded+epilogue", "fused_conv2d1_add1_relu1": "conv2d_padded+epilogue", "fused_conv2d2_add2_relu2": "conv2d_padded+epilogue"},
		"resnet": {"fused_conv2d_batch_norm": "conv2d_padded+epilogue+permute", "fused_conv2d1_batch_norm1": "conv2d_padded+epilogue+permute"},
	}
	for model, src := range fusedModels() {
		t.Run(model, func(t *testing.T) {
			mod := optimizeModel(t, model, src)
			var fused []string
			for name, bf := range mod.Functions() {
				if _, ok := bf.(*ir.PrimFunc); ok && (strings.HasPrefix(name, "fused_matmul") || strings.HasPrefix(name, "fused_conv")) {
					fused = append(fused, name)
				}
			}
			sort.Strings(fused)
			var wantNames []string
			for name := range want[model] {
				wantNames = append(wantNames, name)
			}
			sort.Strings(wantNames)
			require.Equal(t, wantNames, fused, "FuseTIR's fused GEMM/conv PrimFuncs")
			for _, name := range fused {
				f := mod.PrimFunc(name)
				before := kernel.FastTaken()
				args := makeArgs(t, f, nil, rand.New(rand.NewPCG(5, 5)))
				for i, p := range f.Params {
					// Batch norm's variances (resnetStem's v0, v1) are not negative.
					if b := f.BufferMap[p]; b != nil && len(b.Shape) == 1 && strings.HasPrefix(b.Name, "v") {
						for j := range args[i].T.NumElements() {
							args[i].T.SetFloat64(int(j), math.Abs(args[i].T.Float64At(int(j))))
						}
					}
				}
				k := checkAllNormwise(t, f, args)
				require.Equal(t, want[model][name], k.Pattern(), name)
				require.Greater(t, kernel.FastTaken(), before, name)
			}
		})
	}
}

// TestEpilogueCallDoesNotAllocate: after a warm-up call, the fused GEMM
// (on several goroutines when GOMAXPROCS allows), batched GEMM and
// convolution epilogues allocate nothing per call.
func TestEpilogueCallDoesNotAllocate(t *testing.T) {
	if raceEnabled {
		t.Skip("the race detector allocates")
	}
	gemms := parseModule(t, epilogueSrc)
	convs := parseModule(t, convEpilogueSrc)
	for _, tc := range []struct {
		f *ir.PrimFunc
		n int64
	}{{gemms.PrimFunc("bias_gelu_tanh"), 400}, {gemms.PrimFunc("bmm_div_mask"), 40}, {gemms.PrimFunc("inplace_accumulate"), 9}, {convs.PrimFunc("conv_bias_res_clip"), 0}} {
		k, err := kernel.Compile(tc.f, "fused")
		require.NoError(t, err)
		args := makeArgs(t, tc.f, withVars(tc.f, nil, map[string]int64{"n": tc.n}), rand.New(rand.NewPCG(1, 1)))
		require.NoError(t, k.Call(args))
		before := kernel.FastTaken()
		require.Zero(t, testing.AllocsPerRun(20, func() { _ = k.Call(args) }), k.Pattern())
		require.Greater(t, kernel.FastTaken(), before)
	}
}

// optimizeModel parses a Relax module and takes it through the
// canonicalize and optimize barriers (at -O2: LegalizeOps, FuseOps,
// FuseTIR).
func optimizeModel(t testing.TB, name, src string) *ir.Module {
	t.Helper()
	mod, diags := syntax.Parse(name+".tvms", []byte("# from tvm.script import ir as I\n# from tvm.script import tir as T\n# from tvm.script import relax as R\n"+src))
	require.False(t, diags.HasErrors(), "%v", diags)
	mod, err := barrier.Canonicalize(mod)
	require.NoError(t, err)
	mod, err = barrier.Optimize(mod)
	require.NoError(t, err)
	return mod
}

// TestReshapeIndicesSimplified: the fused reshape + transpose PrimFuncs
// FuseTIR writes for the BERT layer index the reshape's input with
// floordiv/floormod expressions that the loop ranges make affine
// (index_simplify.go): after simplification the reshapes of a row into
// heads read their input without a division, and every fused reshape
// agrees with the reference.
func TestReshapeIndicesSimplified(t *testing.T) {
	mod := optimizeModel(t, "bert", bertLayer(8, 48, 4, 96))
	// divisions counts the divisions in stored values (the loads' indices).
	divisions := func(f *ir.PrimFunc) int {
		n := 0
		ir.WalkStmt(f.Body, &ir.StmtVisitor{Stmt: func(s ir.Stmt) bool {
			if st, ok := s.(*ir.BufferStore); ok {
				ir.InspectPrim(st.Value, func(e ir.PrimExpr) bool {
					if b, ok := e.(*ir.Binary); ok && (b.Op == ir.OpFloorDiv || b.Op == ir.OpFloorMod) {
						n++
					}
					return true
				})
			}
			return true
		}})
		return n
	}
	n := 0
	for name, bf := range mod.Functions() {
		f, ok := bf.(*ir.PrimFunc)
		if !ok || !strings.Contains(name, "reshape") {
			continue
		}
		n++
		checkAll(t, f, makeArgs(t, f, nil, rand.New(rand.NewPCG(6, 6))))
		if strings.HasPrefix(name, "fused_reshape_permute_dims") {
			require.Positive(t, divisions(f), name)
			require.Zero(t, divisions(kernel.SimplifyIndices(f)), name)
		}
	}
	require.Equal(t, 3, n, "the BERT layer's fused reshapes")
}
