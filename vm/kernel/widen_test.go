package kernel_test

import (
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/phasec/phasec/vm/kernel"
)

// ToMixedPrecision's kernels: float16 operands, float32 accumulation, a
// float16 intermediate and a float16 result.
const widenFuncs = `
    @T.prim_func(private=True)
    def dense_f16(A: T.Buffer((T.int64(8), T.int64(16)), "float16"), B: T.Buffer((T.int64(16), T.int64(12)), "float16"), bias: T.Buffer((T.int64(12),), "float32"), O: T.Buffer((T.int64(8), T.int64(12)), "float16")):
        acc = T.alloc_buffer((T.int64(8), T.int64(12)))
        mid = T.alloc_buffer((T.int64(8), T.int64(12)), "float16")
        for i, j, k in T.grid(T.int64(8), T.int64(12), T.int64(16)):
            with T.block("matmul"):
                vi, vj, vk = T.axis.remap("SSR", [i, j, k])
                with T.init():
                    acc[vi, vj] = T.float32(0)
                acc[vi, vj] = acc[vi, vj] + T.Cast("float32", A[vi, vk]) * T.Cast("float32", B[vk, vj])
        for i, j in T.grid(T.int64(8), T.int64(12)):
            with T.block("round"):
                vi, vj = T.axis.remap("SS", [i, j])
                mid[vi, vj] = T.Cast("float16", acc[vi, vj])
        for i, j in T.grid(T.int64(8), T.int64(12)):
            with T.block("bias"):
                vi, vj = T.axis.remap("SS", [i, j])
                O[vi, vj] = T.Cast("float16", T.max(T.Cast("float32", mid[vi, vj]) + bias[vj], T.float32(0)))

    @T.prim_func(private=True)
    def add_relu_f16(A: T.Buffer((T.int64(64), T.int64(33)), "float16"), B: T.Buffer((T.int64(33),), "float16"), O: T.Buffer((T.int64(64), T.int64(33)), "float16")):
        for i, j in T.grid(T.int64(64), T.int64(33)):
            with T.block("add"):
                vi, vj = T.axis.remap("SS", [i, j])
                O[vi, vj] = T.max(A[vi, vj] * B[vj] + A[vi, vj], T.float16(0))

    @T.prim_func(private=True)
    def dense_f16_accumulate(A: T.Buffer((T.int64(8), T.int64(16)), "float16"), B: T.Buffer((T.int64(16), T.int64(12)), "float16"), O: T.Buffer((T.int64(8), T.int64(12)), "float16")):
        for i, j, k in T.grid(T.int64(8), T.int64(12), T.int64(16)):
            with T.block("matmul"):
                vi, vj, vk = T.axis.remap("SSR", [i, j, k])
                with T.init():
                    O[vi, vj] = T.float16(0)
                O[vi, vj] = O[vi, vj] + A[vi, vk] * B[vk, vj]

    @T.prim_func(private=True)
    def cast_f64_f16(A: T.Buffer((T.int64(3), T.int64(5)), "float64"), O: T.Buffer((T.int64(3), T.int64(5)), "float16")):
        for i, j in T.grid(T.int64(3), T.int64(5)):
            with T.block("cast"):
                vi, vj = T.axis.remap("SS", [i, j])
                O[vi, vj] = T.Cast("float16", A[vi, vj])

    @T.prim_func(private=True)
    def cast_f16_f64(A: T.Buffer((T.int64(3), T.int64(5)), "float16"), O: T.Buffer((T.int64(3), T.int64(5)), "float64")):
        for i, j in T.grid(T.int64(3), T.int64(5)):
            with T.block("cast"):
                vi, vj = T.axis.remap("SS", [i, j])
                O[vi, vj] = T.Cast("float64", A[vi, vj])
`

// TestWidenedKernelsAgree: a kernel over float16 buffers whose 16-bit
// values are exact in float32 runs through its float32 twin (a fast
// path) and computes what the general closures compute; one that rounds
// as it accumulates in float16 keeps the general path.
func TestWidenedKernelsAgree(t *testing.T) {
	rng := rand.New(rand.NewPCG(7, 8))
	f := parseFunc(t, widenFuncs, "dense_f16")
	k := checkAll(t, f, makeArgs(t, f, nil, rng))
	assert.True(t, strings.HasSuffix(k.Pattern(), "(float32 twin)"), "pattern %s", k.Pattern())

	// float16 arithmetic: each operation rounds, as the twin's float32
	// operation rounded to float16 does.
	add := parseFunc(t, widenFuncs, "add_relu_f16")
	k = checkAll(t, add, makeArgs(t, add, nil, rng))
	assert.True(t, strings.HasSuffix(k.Pattern(), "(float32 twin)"), "pattern %s", k.Pattern())

	acc := parseFunc(t, widenFuncs, "dense_f16_accumulate")
	k2 := checkAll(t, acc, makeArgs(t, acc, nil, rng))
	assert.NotContains(t, k2.Pattern(), "twin", "a float16 accumulation rounds at each step: no float32 twin")
}

// TestWidenedKernelDoesNotAllocate: the twin's float32 scratch is reused
// from call to call.
func TestWidenedKernelDoesNotAllocate(t *testing.T) {
	if raceEnabled {
		t.Skip("the race detector allocates")
	}
	f := parseFunc(t, widenFuncs, "dense_f16")
	k, err := kernel.Compile(f, "dense_f16")
	require.NoError(t, err)
	args := makeArgs(t, f, nil, rand.New(rand.NewPCG(1, 2)))
	require.NoError(t, k.Call(args))
	allocs := testing.AllocsPerRun(20, func() { _ = k.Call(args) })
	assert.Zero(t, allocs)
}

// TestWidenFloat16CastFromFloat64: a cast between float64 and float16
// (ONNX Cast DOUBLE -> FLOAT16) compiles (its twin stored the float64 value
// into the float32 scratch, and a fast path over float32 data panicked) and
// computes what the reference computes: float64 rounded once to float16,
// not twice through float32.
func TestWidenFloat16CastFromFloat64(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	for _, name := range []string{"cast_f64_f16", "cast_f16_f64"} {
		f := parseFunc(t, widenFuncs, name)
		checkAll(t, f, makeArgs(t, f, nil, rng))
	}
}
