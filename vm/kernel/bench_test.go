package kernel_test

import (
	"fmt"
	"math"
	"math/rand/v2"
	"os"
	"strings"
	"testing"

	"github.com/phasec/phasec/ir"
	"github.com/phasec/phasec/syntax"
	"github.com/phasec/phasec/tensor"
	"github.com/phasec/phasec/vm/abi"
	"github.com/phasec/phasec/vm/blas"
	"github.com/phasec/phasec/vm/kernel"
)

// Benchmarks run side by side with their baselines; compare ns/op (and
// MB/s where bytes are set) of the pairs.

const broadcastAddSrc = `
    @T.prim_func(private=True)
    def add(var_A: T.handle, B: T.Buffer((T.int64(%[1]d),), "float32"), var_C: T.handle):
        T.func_attr({"tir.noalias": True})
        n = T.int64()
        A = T.match_buffer(var_A, (n, T.int64(%[1]d)), "float32")
        C = T.match_buffer(var_C, (n, T.int64(%[1]d)), "float32")
        for i, j in T.grid(n, T.int64(%[1]d)):
            with T.block("C"):
                vi, vj = T.axis.remap("SS", [i, j])
                C[vi, vj] = A[vi, vj] + B[vj]
`

func randTensor(shape ...int64) *tensor.Tensor {
	t := tensor.New(tensor.Float32, shape...)
	d := tensor.Data[float32](t)
	r := rand.New(rand.NewPCG(1, 1))
	for i := range d {
		d[i] = r.Float32()*2 - 1
	}
	return t
}

func benchBroadcast(b *testing.B, rows, cols int64) {
	f := parseFunc(b, fmt.Sprintf(broadcastAddSrc, cols), "add")
	k, err := kernel.Compile(f, "add")
	if err != nil {
		b.Fatal(err)
	}
	A, B, C := randTensor(rows, cols), randTensor(cols), tensor.New(tensor.Float32, rows, cols)
	args := []abi.Arg{{T: A}, {T: B}, {T: C}}
	b.Run("tir", func(b *testing.B) {
		b.SetBytes(rows * cols * 8) // A read + C written
		b.ReportAllocs()
		for b.Loop() {
			if err := k.Call(args); err != nil {
				b.Fatal(err)
			}
		}
	})
	a, bb, c := tensor.Data[float32](A), tensor.Data[float32](B), tensor.Data[float32](C)
	b.Run("goloop", func(b *testing.B) {
		b.SetBytes(rows * cols * 8)
		for b.Loop() {
			for i := int64(0); i < rows; i++ {
				for j := int64(0); j < cols; j++ {
					c[i*cols+j] = a[i*cols+j] + bb[j]
				}
			}
		}
	})
	b.Run("copy", func(b *testing.B) {
		b.SetBytes(rows * cols * 8) // read + write
		for b.Loop() {
			copy(c, a)
		}
	})
}

// BenchmarkBroadcastAdd16M: goal tir >= 70% of copy's bytes/s.
func BenchmarkBroadcastAdd16M(b *testing.B) { benchBroadcast(b, 4096, 4096) }

// BenchmarkBroadcastAdd64K: goal tir >= 4x goloop.
func BenchmarkBroadcastAdd64K(b *testing.B) { benchBroadcast(b, 256, 256) }

func loadTestdataFunc(b *testing.B, file, name string) *ir.PrimFunc {
	src, err := os.ReadFile("../../testdata/" + file)
	if err != nil {
		b.Fatal(err)
	}
	mod, diags := syntax.Parse(file, src)
	if diags.HasErrors() {
		b.Fatal(diags)
	}
	return mod.PrimFunc(name)
}

// layerNormSrc is testdata/tir_layer_norm.tvms over a symbolic row count
// and 1024 columns: no pattern matches it, it runs on the general path.
const layerNormSrc = `
    @T.prim_func(private=True)
    def layer_norm(var_A: T.handle, gamma: T.Buffer((T.int64(1024),), "float32"), beta: T.Buffer((T.int64(1024),), "float32"), var_O: T.handle):
        T.func_attr({"tir.noalias": True})
        n = T.int64()
        A = T.match_buffer(var_A, (n, T.int64(1024)), "float32")
        T_layer_norm = T.match_buffer(var_O, (n, T.int64(1024)), "float32")
        A_red_temp_v0 = T.alloc_buffer((n,), "float32")
        A_red_temp_v1 = T.alloc_buffer((n,), "float32")
        for ax0, k1 in T.grid(n, T.int64(1024)):
            with T.block("A_red_temp"):
                v_ax0, v_k1 = T.axis.remap("SR", [ax0, k1])
                with T.init():
                    A_red_temp_v0[v_ax0] = T.float32(0)
                    A_red_temp_v1[v_ax0] = T.float32(0)
                A_red_temp_v0[v_ax0] = A_red_temp_v0[v_ax0] + A[v_ax0, v_k1]
                A_red_temp_v1[v_ax0] = A_red_temp_v1[v_ax0] + A[v_ax0, v_k1] * A[v_ax0, v_k1]
        for ax0, ax1 in T.grid(n, T.int64(1024)):
            with T.block("T_layer_norm"):
                v_ax0, v_ax1 = T.axis.remap("SS", [ax0, ax1])
                T_layer_norm[v_ax0, v_ax1] = (A[v_ax0, v_ax1] - A_red_temp_v0[v_ax0] * T.float32(0.0009765625)) * T.rsqrt(A_red_temp_v1[v_ax0] * T.float32(0.0009765625) - A_red_temp_v0[v_ax0] * T.float32(0.0009765625) * (A_red_temp_v0[v_ax0] * T.float32(0.0009765625)) + T.float32(1.0000000000000001e-05)) * gamma[v_ax1] + beta[v_ax1]
`

// layerNormGo is the hand-written equivalent of layerNormSrc.
func layerNormGo(a, gamma, beta, out []float32, rows, cols int) {
	inv := float32(1) / float32(cols)
	for i := range rows {
		row := a[i*cols : (i+1)*cols]
		var s, sq float32
		for _, x := range row {
			s += x
			sq += x * x
		}
		mean := s * inv
		r := float32(1 / math.Sqrt(float64(sq*inv-mean*mean+1e-5)))
		o := out[i*cols : (i+1)*cols]
		g, bt := gamma[:cols], beta[:cols]
		for j, x := range row {
			o[j] = (x-mean)*r*g[j] + bt[j]
		}
	}
}

// BenchmarkLayerNorm: goal tir <= 2x handwritten.
func BenchmarkLayerNorm(b *testing.B) {
	const rows, cols = 256, 1024
	f := parseFunc(b, layerNormSrc, "layer_norm")
	k, err := kernel.Compile(f, "layer_norm")
	if err != nil {
		b.Fatal(err)
	}
	A, G, Bt, O := randTensor(rows, cols), randTensor(cols), randTensor(cols), tensor.New(tensor.Float32, rows, cols)
	args := []abi.Arg{{T: A}, {T: G}, {T: Bt}, {T: O}}
	b.Run("tir", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			if err := k.Call(args); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("handwritten", func(b *testing.B) {
		for b.Loop() {
			layerNormGo(tensor.Data[float32](A), tensor.Data[float32](G), tensor.Data[float32](Bt), tensor.Data[float32](O), rows, cols)
		}
	})
}

// BenchmarkCompileMatmul: goal <= 50us per compile of a 3-loop kernel.
func BenchmarkCompileMatmul(b *testing.B) {
	f := loadTestdataFunc(b, "tir_matmul_reduction.tvms", "matmul")
	b.ReportAllocs()
	for b.Loop() {
		if _, err := kernel.Compile(f, "matmul"); err != nil {
			b.Fatal(err)
		}
	}
}

// softmaxSrc is testdata/tir_softmax.tvms over (n, 1024): four nests,
// none with a fast path (they run on the vector path).
const softmaxSrc = `
    @T.prim_func(private=True)
    def softmax(var_A: T.handle, var_O: T.handle):
        T.func_attr({"tir.noalias": True})
        n = T.int64()
        A = T.match_buffer(var_A, (n, T.int64(1024)), "float32")
        T_softmax_norm = T.match_buffer(var_O, (n, T.int64(1024)), "float32")
        T_softmax_maxelem = T.alloc_buffer((n,), "float32")
        T_softmax_exp = T.alloc_buffer((n, T.int64(1024)), "float32")
        T_softmax_expsum = T.alloc_buffer((n,), "float32")
        for i0, k in T.grid(n, T.int64(1024)):
            with T.block("T_softmax_maxelem"):
                v_i0, v_k = T.axis.remap("SR", [i0, k])
                with T.init():
                    T_softmax_maxelem[v_i0] = T.float32(-3.4028234663852886e+38)
                T_softmax_maxelem[v_i0] = T.max(T_softmax_maxelem[v_i0], A[v_i0, v_k])
        for i0, i1 in T.grid(n, T.int64(1024)):
            with T.block("T_softmax_exp"):
                v_i0, v_i1 = T.axis.remap("SS", [i0, i1])
                T_softmax_exp[v_i0, v_i1] = T.exp(A[v_i0, v_i1] - T_softmax_maxelem[v_i0])
        for i0, k in T.grid(n, T.int64(1024)):
            with T.block("T_softmax_expsum"):
                v_i0, v_k = T.axis.remap("SR", [i0, k])
                with T.init():
                    T_softmax_expsum[v_i0] = T.float32(0)
                T_softmax_expsum[v_i0] = T_softmax_expsum[v_i0] + T_softmax_exp[v_i0, v_k]
        for i0, i1 in T.grid(n, T.int64(1024)):
            with T.block("T_softmax_norm"):
                v_i0, v_i1 = T.axis.remap("SS", [i0, i1])
                T_softmax_norm[v_i0, v_i1] = T_softmax_exp[v_i0, v_i1] / T_softmax_expsum[v_i0]
`

// softmaxGo is the hand-written equivalent of softmaxSrc.
func softmaxGo(a, out []float32, rows, cols int) {
	for i := range rows {
		row, o := a[i*cols:(i+1)*cols], out[i*cols:(i+1)*cols]
		m := float32(-math.MaxFloat32)
		for _, x := range row {
			m = max(m, x)
		}
		var s float32
		for j, x := range row {
			e := float32(math.Exp(float64(x - m)))
			o[j] = e
			s += e
		}
		for j := range o {
			o[j] /= s
		}
	}
}

// BenchmarkSoftmax: goal tir <= 2x handwritten.
func BenchmarkSoftmax(b *testing.B) {
	const rows, cols = 256, 1024
	k, err := kernel.Compile(parseFunc(b, softmaxSrc, "softmax"), "softmax")
	if err != nil {
		b.Fatal(err)
	}
	A, O := randTensor(rows, cols), tensor.New(tensor.Float32, rows, cols)
	args := []abi.Arg{{T: A}, {T: O}}
	b.Run("tir", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			if err := k.Call(args); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("handwritten", func(b *testing.B) {
		for b.Loop() {
			softmaxGo(tensor.Data[float32](A), tensor.Data[float32](O), rows, cols)
		}
	})
}

// BenchmarkMatmul256: the dispatched kernel against calling Sgemm
// directly (dispatch overhead) and against the general path.
func BenchmarkMatmul256(b *testing.B) {
	const n = 256
	src := strings.ReplaceAll(strings.ReplaceAll(strings.ReplaceAll(`
    @T.prim_func(private=True)
    def mm(A: T.Buffer((N, N), "float32"), B: T.Buffer((N, N), "float32"), C: T.Buffer((N, N), "float32")):
        for i, j, k in T.grid(N, N, N):
            with T.block("mm"):
                vi, vj, vk = T.axis.remap("SSR", [i, j, k])
                with T.init():
                    C[vi, vj] = T.float32(0)
                C[vi, vj] = C[vi, vj] + A[vi, vk] * B[vk, vj]
`, "N", "T.int64(256)"), "T.int64(256), T.int64(256)", "T.int64(256), T.int64(256)"), "grid(T.int64(256), T.int64(256), T.int64(256))", "grid(T.int64(256), T.int64(256), T.int64(256))")
	f := parseFunc(b, src, "mm")
	A, B, C := randTensor(n, n), randTensor(n, n), tensor.New(tensor.Float32, n, n)
	args := []abi.Arg{{T: A}, {T: B}, {T: C}}
	for _, mode := range []struct {
		name string
		opts kernel.Options
	}{{"dispatch", kernel.Options{}}, {"general", kernel.Options{General: true}}} {
		k, err := kernel.CompileWith(f, "mm", mode.opts)
		if err != nil {
			b.Fatal(err)
		}
		b.Run(mode.name, func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				if err := k.Call(args); err != nil {
					b.Fatal(err)
				}
			}
			b.ReportMetric(2*n*n*n/b.Elapsed().Seconds()*float64(b.N)/1e9, "GFLOP/s")
		})
	}
	b.Run("sgemm", func(b *testing.B) {
		for b.Loop() {
			blas.Sgemm(false, false, n, n, n, 1, tensor.Data[float32](A), n, tensor.Data[float32](B), n, 0, tensor.Data[float32](C), n)
		}
		b.ReportMetric(2*n*n*n/b.Elapsed().Seconds()*float64(b.N)/1e9, "GFLOP/s")
	})
}
