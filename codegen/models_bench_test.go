package codegen

import (
	"context"
	"fmt"
	"math/rand/v2"
	"path/filepath"
	"testing"
	"time"

	"github.com/phasec/phasec/tensor"
	"github.com/phasec/phasec/vm"
	"github.com/phasec/phasec/vm/abi"
	"github.com/phasec/phasec/vm/kernel"
)

// kernelsOf compiles the named PrimFuncs of a model file directly, for the
// hand-written baselines.
func kernelsOf(b *testing.B, path string, names ...string) map[string]*kernel.Kernel {
	mod := parseFile(nil, path)
	out := map[string]*kernel.Kernel{}
	for _, n := range names {
		k, err := kernel.Compile(mod.PrimFunc(n), n)
		if err != nil {
			b.Fatal(err)
		}
		out[n] = k
	}
	return out
}

func call(b *testing.B, k *kernel.Kernel, ts ...*tensor.Tensor) {
	args := make([]abi.Arg, len(ts))
	for i, t := range ts {
		args[i] = abi.Arg{T: t}
	}
	if err := k.Call(args); err != nil {
		b.Fatal(err)
	}
}

// BenchmarkMLP compares the MLP on the VM (checks, shape heap, allocation
// through the pooled allocator, kills) with a hand-written Go program that
// calls the same compiled kernels on preallocated tensors.
func BenchmarkMLP(b *testing.B) {
	path := filepath.Join(modelsDir, "mlp_legalized.tvms")
	rng := rand.New(rand.NewPCG(1, 2))
	for _, batch := range []int64{4, 64} {
		x := uniform(rng, 0, 1, batch, 784)
		w0, b0 := uniform(rng, -0.03, 0.03, 784, 128), uniform(rng, -0.1, 0.1, 128)
		w1, b1 := uniform(rng, -0.09, 0.09, 128, 10), uniform(rng, -0.1, 0.1, 10)
		b.Run(fmt.Sprintf("vm/batch=%d", batch), func(b *testing.B) {
			machine := buildModel(b, path)
			args := []vm.Value{vm.TensorValue(x), vm.TensorValue(w0), vm.TensorValue(b0), vm.TensorValue(w1), vm.TensorValue(b1)}
			ctx := context.Background()
			b.ReportAllocs()
			for i := 0; i < b.N; i++ {
				if _, _, err := machine.Call(ctx, "main", args); err != nil {
					b.Fatal(err)
				}
			}
		})
		direct := func(b *testing.B) func() {
			k := kernelsOf(b, path, "matmul", "add", "relu", "matmul1", "add1", "softmax")
			lv, lv1, lv2 := tensor.New(tensor.Float32, batch, 128), tensor.New(tensor.Float32, batch, 128), tensor.New(tensor.Float32, batch, 128)
			lv3, lv4, out := tensor.New(tensor.Float32, batch, 10), tensor.New(tensor.Float32, batch, 10), tensor.New(tensor.Float32, batch, 10)
			return func() {
				call(b, k["matmul"], x, w0, lv)
				call(b, k["add"], lv, b0, lv1)
				call(b, k["relu"], lv1, lv2)
				call(b, k["matmul1"], lv2, w1, lv3)
				call(b, k["add1"], lv3, b1, lv4)
				call(b, k["softmax"], lv4, out)
			}
		}
		b.Run(fmt.Sprintf("go/batch=%d", batch), func(b *testing.B) {
			run := direct(b)
			b.ReportAllocs()
			for i := 0; i < b.N; i++ {
				run()
			}
		})
		b.Run(fmt.Sprintf("interleaved/batch=%d", batch), func(b *testing.B) {
			machine := buildModel(b, path)
			args := []vm.Value{vm.TensorValue(x), vm.TensorValue(w0), vm.TensorValue(b0), vm.TensorValue(w1), vm.TensorValue(b1)}
			interleave(b, func() {
				if _, _, err := machine.Call(context.Background(), "main", args); err != nil {
					b.Fatal(err)
				}
			}, direct(b))
		})
	}
}

// interleave alternates the VM and the direct program and reports the
// ratio of their fastest runs (vm/go): on a shared, noisy machine the
// minimum is the run least disturbed by others.
func interleave(b *testing.B, vmRun, goRun func()) {
	var minVM, minGo time.Duration
	for i := 0; i < b.N; i++ {
		t0 := time.Now()
		vmRun()
		t1 := time.Now()
		goRun()
		t2 := time.Now()
		if d := t1.Sub(t0); i == 0 || d < minVM {
			minVM = d
		}
		if d := t2.Sub(t1); i == 0 || d < minGo {
			minGo = d
		}
	}
	b.ReportMetric(float64(minVM.Nanoseconds())/1e3, "vm-min-µs")
	b.ReportMetric(float64(minGo.Nanoseconds())/1e3, "go-min-µs")
	b.ReportMetric(float64(minVM)/float64(minGo), "vm/go")
}

// BenchmarkTransformerBlock is BenchmarkMLP for the transformer block.
func BenchmarkTransformerBlock(b *testing.B) {
	path := filepath.Join(modelsDir, "transformer_block.tvms")
	rng := rand.New(rand.NewPCG(3, 4))
	const seq = 32
	x := uniform(rng, -1, 1, seq, 64)
	g, be := uniform(rng, 0.9, 1.1, 64), uniform(rng, -0.1, 0.1, 64)
	wq, wk, wv, wo := uniform(rng, -0.1, 0.1, 64, 64), uniform(rng, -0.1, 0.1, 64, 64), uniform(rng, -0.1, 0.1, 64, 64), uniform(rng, -0.1, 0.1, 64, 64)
	w1, w2 := uniform(rng, -0.1, 0.1, 64, 256), uniform(rng, -0.06, 0.06, 256, 64)
	b.Run(fmt.Sprintf("vm/seq=%d", seq), func(b *testing.B) {
		machine := buildModel(b, path)
		var args []vm.Value
		for _, t := range []*tensor.Tensor{x, g, be, wq, wk, wv, wo, w1, w2} {
			args = append(args, vm.TensorValue(t))
		}
		ctx := context.Background()
		b.ReportAllocs()
		for i := 0; i < b.N; i++ {
			if _, _, err := machine.Call(ctx, "main", args); err != nil {
				b.Fatal(err)
			}
		}
	})
	direct := func(b *testing.B) func() {
		k := kernelsOf(b, path, "layer_norm", "matmul64", "scores", "softmax", "attend", "add", "matmul_up", "gelu", "matmul_down")
		d := func(n int64) *tensor.Tensor { return tensor.New(tensor.Float32, seq, n) }
		h, q, kk, v, s, p, attn, proj, res, h2, up, act, down, out := d(64), d(64), d(64), d(64), d(seq), d(seq), d(64), d(64), d(64), d(64), d(256), d(256), d(64), d(64)
		return func() {
			call(b, k["layer_norm"], x, g, be, h)
			call(b, k["matmul64"], h, wq, q)
			call(b, k["matmul64"], h, wk, kk)
			call(b, k["matmul64"], h, wv, v)
			call(b, k["scores"], q, kk, s)
			call(b, k["softmax"], s, p)
			call(b, k["attend"], p, v, attn)
			call(b, k["matmul64"], attn, wo, proj)
			call(b, k["add"], x, proj, res)
			call(b, k["layer_norm"], res, g, be, h2)
			call(b, k["matmul_up"], h2, w1, up)
			call(b, k["gelu"], up, act)
			call(b, k["matmul_down"], act, w2, down)
			call(b, k["add"], res, down, out)
		}
	}
	b.Run(fmt.Sprintf("go/seq=%d", seq), func(b *testing.B) {
		run := direct(b)
		b.ReportAllocs()
		for i := 0; i < b.N; i++ {
			run()
		}
	})
	b.Run(fmt.Sprintf("interleaved/seq=%d", seq), func(b *testing.B) {
		machine := buildModel(b, path)
		var args []vm.Value
		for _, t := range []*tensor.Tensor{x, g, be, wq, wk, wv, wo, w1, w2} {
			args = append(args, vm.TensorValue(t))
		}
		interleave(b, func() {
			if _, _, err := machine.Call(context.Background(), "main", args); err != nil {
				b.Fatal(err)
			}
		}, direct(b))
	})
}
