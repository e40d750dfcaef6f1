package kernel_test

import (
	"math/rand/v2"
	"slices"
	"sort"
	"strings"
	"testing"

	"github.com/phasec/phasec/ir"
	"github.com/phasec/phasec/vm/kernel"
)

// BenchmarkModelKernels ranks every PrimFunc of the optimized BERT-base
// layer (sequence 128) and 784-512-512-10 MLP (batch 64), the bench/ort
// models, by time against its roofline: per kernel the dispatched
// pattern, the median process CPU time per call (µs-cpu), and, run
// interleaved in every iteration, copy() of (input + output bytes) / 2
// (copy-frac: copy time / kernel time, the row kernels' roofline) and, for
// GEMMs, GFLOP/s. The profile of a model's run is these times weighted by
// the calls per run (the QKV GEMM three times, the layer norm twice):
//
//	go test ./vm/kernel -run '^$' -bench ModelKernels -benchtime 20x -cpu 1 -v
func BenchmarkModelKernels(b *testing.B) {
	for _, model := range []struct{ name, src string }{
		{"bert128", bertLayer(128, 768, 12, 3072)}, {"mlp64", mlp784(64)},
	} {
		mod := optimizeModel(b, model.name, model.src)
		var names []string
		for name, bf := range mod.Functions() {
			if _, ok := bf.(*ir.PrimFunc); ok {
				names = append(names, name)
			}
		}
		sort.Strings(names)
		for _, name := range names {
			b.Run(model.name+"/"+name, func(b *testing.B) {
				f := mod.PrimFunc(name)
				k, err := kernel.Compile(f, name)
				must(b, err)
				args := makeArgs(b, f, nil, rand.New(rand.NewPCG(1, 1)))
				moved := 0
				for _, a := range args {
					moved += len(a.T.Bytes())
				}
				src, dst := make([]byte, moved/2), make([]byte, moved/2)
				var t [2][]float64
				for range b.N {
					c0 := processCPUTime()
					must(b, k.Call(args))
					c1 := processCPUTime()
					copy(dst, src)
					c2 := processCPUTime()
					t[0] = append(t[0], float64(c1-c0))
					t[1] = append(t[1], float64(c2-c1))
				}
				slices.Sort(t[0])
				slices.Sort(t[1])
				kt, ct := t[0][len(t[0])/2], t[1][len(t[1])/2]
				b.ReportMetric(kt/1e3, "µs-cpu")
				if kt > 0 {
					b.ReportMetric(ct/kt, "copy-frac")
				}
				if strings.Contains(name, "matmul") && kt > 0 {
					batch, m, n, kk := gemmShape(f)
					b.ReportMetric(2*float64(batch*m*n*kk)/kt, "GFLOP/s")
				}
				b.Logf("%s: pattern %s", name, k.Pattern())
			})
		}
	}
}
