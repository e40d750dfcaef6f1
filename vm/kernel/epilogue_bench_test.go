package kernel_test

import (
	"math/rand/v2"
	"runtime"
	"slices"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/phasec/phasec/ir"
	"github.com/phasec/phasec/vm/abi"
	"github.com/phasec/phasec/vm/blas"
	"github.com/phasec/phasec/vm/kernel"
)

// BenchmarkGemmEpilogueSideBySide times, interleaved in every iteration,
// each fused GEMM PrimFunc FuseTIR produces for a BERT-base layer at
// sequence length 128 and the 784-512-512-10 MLP at batch 64: with its
// epilogue fused into the GEMM's tiles, on the unfused dispatch (the GEMM
// into the intermediate, then the epilogue nests' row kernels), and the
// bare GEMM of the same shape (blas.Sgemm). It reports the medians
// µs-cpu (fused, process CPU time), unfused/fused and fused/gemm (CPU
// time; wall-time ratios as -wall):
//
//	go test ./vm/kernel -run '^$' -bench GemmEpilogueSideBySide -benchtime 20x -cpu 1,2
func BenchmarkGemmEpilogueSideBySide(b *testing.B) {
	models := map[string]*ir.Module{
		"bert128": optimizeModel(b, "bert", bertLayer(128, 768, 12, 3072)),
		"mlp64":   optimizeModel(b, "mlp", mlp784(64)),
	}
	for _, model := range []string{"bert128", "mlp64"} {
		mod := models[model]
		var names []string
		for name, bf := range mod.Functions() {
			if _, ok := bf.(*ir.PrimFunc); ok && strings.HasPrefix(name, "fused_matmul") {
				names = append(names, name)
			}
		}
		sort.Strings(names)
		for _, name := range names {
			b.Run(model+"/"+name, func(b *testing.B) {
				f := mod.PrimFunc(name)
				fused, err := kernel.Compile(f, name)
				must(b, err)
				old := kernel.SetEpilogueFusion(false)
				unfused, err := kernel.Compile(f, name)
				kernel.SetEpilogueFusion(old)
				must(b, err)
				if !strings.HasSuffix(fused.Pattern(), "+epilogue") || strings.HasSuffix(unfused.Pattern(), "+epilogue") {
					b.Fatalf("patterns %s / %s", fused.Pattern(), unfused.Pattern())
				}
				args := makeArgs(b, f, nil, rand.New(rand.NewPCG(1, 1)))
				batch, m, n, k := gemmShape(f)
				a, w, c := make([]float32, batch*m*k), make([]float32, batch*k*n), make([]float32, batch*m*n)
				runs := []func(){
					func() { must(b, fused.Call(args)) },
					func() { must(b, unfused.Call(args)) },
					func() {
						for i := range batch {
							blas.SgemmThreads(runtime.GOMAXPROCS(0), false, false, m, n, k, 1, a[i*m*k:], k, w[i*k*n:], n, 0, c[i*m*n:], n)
						}
					},
				}
				var wall, cpu [3][]float64
				for range b.N {
					for i, run := range runs {
						c0, t0 := processCPUTime(), time.Now()
						run()
						wall[i] = append(wall[i], float64(time.Since(t0)))
						cpu[i] = append(cpu[i], float64(processCPUTime()-c0))
					}
				}
				med := func(x []float64) float64 {
					x = slices.Clone(x)
					slices.Sort(x)
					return x[len(x)/2]
				}
				b.ReportMetric(med(cpu[0])/1e3, "µs-cpu")
				b.ReportMetric(med(cpu[1])/med(cpu[0]), "unfused/fused")
				b.ReportMetric(med(cpu[0])/med(cpu[2]), "fused/gemm")
				b.ReportMetric(med(wall[1])/med(wall[0]), "unfused/fused-wall")
				b.ReportMetric(med(wall[0])/med(wall[2]), "fused/gemm-wall")
			})
		}
	}
}

// gemmShape reads the GEMM of a fused matmul PrimFunc off its first two
// parameters: A (.., m, k) and B (.., k, n), either possibly transposed
// in the PrimFunc (only the sizes matter here).
func gemmShape(f *ir.PrimFunc) (batch, m, n, k int) {
	dims := func(i int) []int {
		var d []int
		for _, e := range f.BufferMap[f.Params[i]].Shape {
			d = append(d, int(e.(*ir.IntImm).Value))
		}
		return d
	}
	a, bb := dims(0), dims(1)
	out := dims(len(f.Params) - 1)
	batch = 1
	for _, d := range out[:len(out)-2] {
		batch *= d
	}
	m, n = out[len(out)-2], out[len(out)-1]
	k = a[len(a)-1]
	if k == m && len(bb) >= 2 && bb[len(bb)-1] == n {
		k = bb[len(bb)-2]
	}
	return batch, m, n, k
}

var _ = abi.Arg{}
