package kernel_test

import (
	"context"
	"math/rand/v2"
	"runtime"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/phasec/phasec/barrier"
	"github.com/phasec/phasec/codegen"
	"github.com/phasec/phasec/ir"
	"github.com/phasec/phasec/vm"
	"github.com/phasec/phasec/vm/abi"
	"github.com/phasec/phasec/vm/blas"
	"github.com/phasec/phasec/vm/kernel"
	"github.com/phasec/phasec/vm/loader"
)

// The convolution benchmarks run side by side in one process and report
// ratios (medians over the iterations), as the issue asks:
//
//	go test ./vm/kernel -run '^$' -bench 'ConvKernels|CNNSideBySide' -benchtime 3x
//
// fast/general is the same PrimFunc on the dispatched and on the general
// path; 1core/2cores is the fast path at GOMAXPROCS 1 and 2. GFLOP/s
// compares with the machine's FMA peak per core at the micro-kernel's
// width (measured with vm/blas's BenchmarkFMAPeak, which
// BenchmarkConvSideBySide there interleaves with the same convolutions):
// ~117 GFLOP/s with AVX2 on Zen 4 and Zen 5, ~224 GFLOP/s with AVX-512 on
// Zen 5, whose FMA units are 512 bits wide.

// peakPerCore is the FMA peak of one core at the width of the
// micro-kernel vm/blas runs (see above), in FLOP/s.
func peakPerCore() float64 {
	if strings.HasPrefix(blas.KernelName(), "avx512") {
		return 224e9
	}
	return 117e9
}

func median(d []time.Duration) float64 {
	slices.Sort(d)
	return d[len(d)/2].Seconds()
}

// timeAt runs f at GOMAXPROCS procs and returns its wall time.
func timeAt(procs int, f func()) time.Duration {
	old := runtime.GOMAXPROCS(procs)
	defer runtime.GOMAXPROCS(old)
	start := time.Now()
	f()
	return time.Since(start)
}

func BenchmarkConvKernels(b *testing.B) {
	cases := []struct {
		name string
		tc   windowCase
	}{
		{"3x3_32to32_32x32_b16", windowCase{`R.nn.conv2d(x, w, padding=[1, 1])`, []int64{16, 32, 32, 32}, []int64{32, 32, 3, 3}, "conv2d"}},
		{"3x3_64to64_16x16_b16", windowCase{`R.nn.conv2d(x, w, padding=[1, 1])`, []int64{16, 64, 16, 16}, []int64{64, 64, 3, 3}, "conv2d"}},
		{"1x1_64to64_16x16_b16", windowCase{`R.nn.conv2d(x, w)`, []int64{16, 64, 16, 16}, []int64{64, 64, 1, 1}, "conv2d"}},
	}
	for _, cs := range cases {
		b.Run(cs.name, func(b *testing.B) {
			_, f := legalizedWindow(b, cs.tc)
			fast, err := kernel.Compile(f, "fast")
			require.NoError(b, err)
			general, err := kernel.CompileWith(f, "general", kernel.Options{General: true})
			require.NoError(b, err)
			args := makeArgs(b, f, nil, rand.New(rand.NewPCG(1, 1)))
			w := cs.tc.w
			out := args[2].T.Shape
			flop := 2 * float64(out[0]*out[1]*out[2]*out[3]*w[1]*w[2]*w[3])
			call := func(k *kernel.Kernel) func() {
				return func() { require.NoError(b, k.Call(args)) }
			}
			call(fast)() // packs the weights
			var tFast1, tFast2, tGen []time.Duration
			for range b.N {
				tFast1 = append(tFast1, timeAt(1, call(fast)))
				tFast2 = append(tFast2, timeAt(2, call(fast)))
				tGen = append(tGen, timeAt(1, call(general)))
			}
			b.ReportMetric(flop/median(tFast1)/1e9, "GFLOP/s-1core")
			b.ReportMetric(flop/median(tFast1)/peakPerCore(), "peak-frac-1core")
			b.ReportMetric(median(tGen)/median(tFast1), "general/fast")
			b.ReportMetric(median(tFast1)/median(tFast2), "1core/2cores")
		})
	}
}

// BenchmarkCNNSideBySide runs testdata/models/cnn/cnn_small.tvms at batch 16
// through build and the VM with every kernel on the general path (as
// before issue 23) and with dispatch, on one core and two.
func BenchmarkCNNSideBySide(b *testing.B) {
	mod := loadCNN(b)
	var err error
	for _, step := range []func(*ir.Module) (*ir.Module, error){barrier.Canonicalize, barrier.Lower, barrier.Build} {
		mod, err = step(mod)
		require.NoError(b, err)
	}
	exe, diags := codegen.Build(mod)
	require.Empty(b, diags)
	generalKernels := func(k vm.Kernel) (abi.Kernel, error) {
		f, err := loader.DecodeKernel(&k)
		if err != nil {
			return nil, err
		}
		return kernel.CompileWith(f, k.Name, kernel.Options{General: true})
	}
	fast, err := loader.Load(exe.Marshal(), vm.Options{})
	require.NoError(b, err)
	general, err := loader.Load(exe.Marshal(), vm.Options{CompileKernel: generalKernels})
	require.NoError(b, err)
	var args []any
	for _, t := range cnnInputs(16, 2) {
		args = append(args, t)
	}
	run := func(m *vm.VM) func() {
		return func() {
			_, err := m.Run(context.Background(), "main", args...)
			require.NoError(b, err)
		}
	}
	run(fast)()
	var tFast1, tFast2, tGen []time.Duration
	for range b.N {
		tFast1 = append(tFast1, timeAt(1, run(fast)))
		tFast2 = append(tFast2, timeAt(2, run(fast)))
		tGen = append(tGen, timeAt(1, run(general)))
	}
	b.ReportMetric(median(tFast1)*1e3, "ms-fast-1core")
	b.ReportMetric(median(tFast2)*1e3, "ms-fast-2cores")
	b.ReportMetric(median(tGen)*1e3, "ms-general-1core")
	b.ReportMetric(median(tGen)/median(tFast1), "general/fast")
	b.ReportMetric(median(tFast1)/median(tFast2), "1core/2cores")
}
