package kernel_test

import (
	"fmt"
	"math/rand/v2"
	"os"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/phasec/phasec/syntax"
	"github.com/phasec/phasec/tensor"
	"github.com/phasec/phasec/vm/kernel"
)

// TestPatterns checks which dispatch each kind of kernel takes, that the
// fast path really runs, and (through checkAll) that it agrees with the
// general path and the reference.
func TestPatterns(t *testing.T) {
	cases := []struct {
		name, src, fn string
		vars          map[string]int64
		pattern       string
		fast          bool
	}{
		{"matmul", "tir_matmul_reduction.tvms", "matmul", nil, "matmul", true},
		{"broadcast", "tir_broadcast_add.tvms", "add", nil, "broadcast", true},
		{"elementwise", "tir_elementwise_add.tvms", "add", nil, "elementwise", true},
		{"softmax", "tir_softmax.tvms", "softmax", nil, "rows", true},
		{"layer norm", "tir_layer_norm.tvms", "layer_norm", nil, "reduction+elementwise", true},
		{"row sum", "tir_symbolic_match_buffer.tvms", "row_sum", map[string]int64{"m": 5, "n": 3}, "rows", true},
		{"mlp matmul", "models/mlp_legalized.tvms", "matmul", map[string]int64{"batch": 3}, "matmul", true},
		{"mlp bias", "models/mlp_legalized.tvms", "add", map[string]int64{"batch": 3}, "broadcast", true},
		{"mlp relu", "models/mlp_legalized.tvms", "relu", map[string]int64{"batch": 3}, "elementwise", true},
		{"attention scores", "models/transformer_block.tvms", "scores", map[string]int64{"seq": 5}, "matmul", true},
		{"attention", "models/transformer_block.tvms", "attend", map[string]int64{"seq": 5}, "matmul", true},
		{"gelu", "models/transformer_block.tvms", "gelu", map[string]int64{"seq": 5}, "elementwise", true},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			src, err := os.ReadFile("../../testdata/" + tc.src)
			require.NoError(t, err)
			mod, diags := syntax.Parse(tc.src, src)
			require.False(t, diags.HasErrors(), "%v", diags)
			f := mod.PrimFunc(tc.fn)
			require.NotNil(t, f)
			before := kernel.FastTaken()
			k := checkAll(t, f, makeArgs(t, f, withVars(f, nil, tc.vars), rand.New(rand.NewPCG(5, 6))))
			require.Equal(t, tc.pattern, k.Pattern())
			require.Equal(t, tc.fast, kernel.FastTaken() > before, "fast path taken")
			g, err := kernel.CompileWith(f, tc.fn, kernel.Options{General: true})
			require.NoError(t, err)
			require.Equal(t, "general", g.Pattern())
		})
	}
}

// patternSrc: matmul shapes LegalizeOps and users write: dense (B
// transposed), A transposed, batch matmul with a broadcast batch, and a
// fused dense + bias through an intermediate buffer.
const patternSrc = `
    @T.prim_func(private=True)
    def dense(var_A: T.handle, B: T.Buffer((T.int64(7), T.int64(9)), "float32"), var_C: T.handle):
        n = T.int64()
        A = T.match_buffer(var_A, (n, T.int64(9)), "float32")
        C = T.match_buffer(var_C, (n, T.int64(7)), "float32")
        for i, j, k in T.grid(n, T.int64(7), T.int64(9)):
            with T.block("T_matmul_NT"):
                v_i, v_j, v_k = T.axis.remap("SSR", [i, j, k])
                with T.init():
                    C[v_i, v_j] = T.float32(0)
                C[v_i, v_j] = C[v_i, v_j] + A[v_i, v_k] * B[v_j, v_k]

    @T.prim_func(private=True)
    def matmul_tn(A: T.Buffer((T.int64(5), T.int64(3)), "float32"), B: T.Buffer((T.int64(5), T.int64(4)), "float32"), C: T.Buffer((T.int64(3), T.int64(4)), "float32")):
        for k, i, j in T.grid(T.int64(5), T.int64(3), T.int64(4)):
            with T.block("mm"):
                vk, vi, vj = T.axis.remap("RSS", [k, i, j])
                with T.init():
                    C[vi, vj] = T.float32(0.5)
                C[vi, vj] = B[vk, vj] * A[vk, vi] + C[vi, vj]

    @T.prim_func(private=True)
    def bmm(var_A: T.handle, B: T.Buffer((T.int64(1), T.int64(6), T.int64(5)), "float32"), var_C: T.handle):
        b = T.int64()
        A = T.match_buffer(var_A, (b, T.int64(3), T.int64(6)), "float32")
        C = T.match_buffer(var_C, (b, T.int64(3), T.int64(5)), "float32")
        for x, i, j, k in T.grid(b, T.int64(3), T.int64(5), T.int64(6)):
            with T.block("bmm"):
                vb, vi, vj, vk = T.axis.remap("SSSR", [x, i, j, k])
                with T.init():
                    C[vb, vi, vj] = T.float32(0)
                C[vb, vi, vj] = C[vb, vi, vj] + A[vb, vi, vk] * B[T.int64(0), vk, vj]

    @T.prim_func(private=True)
    def dense_bias(var_A: T.handle, W: T.Buffer((T.int64(8), T.int64(6)), "float32"), bias: T.Buffer((T.int64(6),), "float32"), var_O: T.handle):
        n = T.int64()
        A = T.match_buffer(var_A, (n, T.int64(8)), "float32")
        O = T.match_buffer(var_O, (n, T.int64(6)), "float32")
        mm = T.alloc_buffer((n, T.int64(6)), "float32")
        for i, j, k in T.grid(n, T.int64(6), T.int64(8)):
            with T.block("matmul"):
                vi, vj, vk = T.axis.remap("SSR", [i, j, k])
                with T.init():
                    mm[vi, vj] = T.float32(0)
                mm[vi, vj] = mm[vi, vj] + A[vi, vk] * W[vk, vj]
        for i, j in T.grid(n, T.int64(6)):
            with T.block("bias"):
                vi, vj = T.axis.remap("SS", [i, j])
                O[vi, vj] = mm[vi, vj] + bias[vj]
`

func TestMatmulPatterns(t *testing.T) {
	mod := parseModule(t, patternSrc)
	want := map[string]string{"dense": "matmul", "matmul_tn": "matmul", "bmm": "batch_matmul", "dense_bias": "matmul+epilogue"}
	for _, n := range []int64{0, 1, 4, 9} {
		for name, pattern := range want {
			t.Run(name, func(t *testing.T) {
				f := mod.PrimFunc(name)
				before := kernel.FastTaken()
				vars := map[string]int64{"n": n, "b": n}
				k := checkAll(t, f, makeArgs(t, f, withVars(f, nil, vars), rand.New(rand.NewPCG(uint64(n), 1))))
				require.Equal(t, pattern, k.Pattern())
				require.Greater(t, kernel.FastTaken(), before, "fast path taken")
			})
		}
	}
}

// TestConcurrentCalls runs one kernel from several goroutines on
// different arguments (with -race in CI).
func TestConcurrentCalls(t *testing.T) {
	mod := parseModule(t, patternSrc)
	for _, opts := range []kernel.Options{{}, {General: true}} {
		f := mod.PrimFunc("dense_bias")
		k, err := kernel.CompileWith(f, "dense_bias", opts)
		require.NoError(t, err)
		const workers = 4
		results := make(chan error, workers)
		for w := range workers {
			go func() {
				rng := rand.New(rand.NewPCG(uint64(w), 3))
				n := int64(3 + w)
				args := makeArgs(t, f, withVars(f, nil, map[string]int64{"n": n}), rng)
				want := cloneArgs(args)
				if _, err := runRef(f, want); err != nil {
					results <- err
					return
				}
				for range 20 {
					if err := k.Call(args); err != nil {
						results <- err
						return
					}
				}
				got, exp := tensorF32(args[3].T), tensorF32(want[3].T)
				for i := range got {
					if d := got[i] - exp[i]; d > 1e-4 || d < -1e-4 {
						results <- fmt.Errorf("worker %d: element %d: got %v want %v", w, i, got[i], exp[i])
						return
					}
				}
				results <- nil
			}()
		}
		for range workers {
			require.NoError(t, <-results)
		}
	}
}

func tensorF32(t *tensor.Tensor) []float32 { return tensor.Data[float32](t) }
