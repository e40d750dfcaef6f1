package blas

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"testing"
)

// BenchmarkSgemmWideSideBySide times, interleaved in every iteration, the
// GEMMs of the bench/ort MLP (batch 64) and BERT layer (sequence 128) with
// the 256-bit kernels alone, with the 512-bit 6x32 kernel on packed B, and
// with it reading B in place where Sgemm does (the default), and reports
// the median process CPU time of the first and last (GOMAXPROCS threads)
// as GFLOP/s and the ratios x-wide (256-bit time / default time) and
// x-direct (packed 512-bit time / default time):
//
//	go test ./vm/blas -run '^$' -bench WideSideBySide -benchtime 20x -cpu 1,2
func BenchmarkSgemmWideSideBySide(b *testing.B) {
	if activeKernel.wide == nil {
		b.Skip("no 512-bit kernel on this CPU")
	}
	wide := activeKernel
	narrow, packed := wide, wide
	narrow.wide, narrow.direct = nil, nil
	packed.direct = nil
	rng := rand.New(rand.NewPCG(5, 12))
	for _, s := range [][3]int{{64, 512, 784}, {64, 512, 512}, {128, 768, 768}, {128, 3072, 768}, {128, 768, 3072}, {128, 128, 64}, {256, 1024, 1024}, {512, 512, 512}} {
		m, n, k := s[0], s[1], s[2]
		a, bm, c := randF32(m*k, rng), randF32(k*n, rng), make([]float32, m*n)
		b.Run(fmt.Sprintf("%dx%dx%d", m, n, k), func(b *testing.B) {
			var t [3][]float64
			for range b.N {
				for i, kern := range []kernelChoice{narrow, packed, wide} {
					activeKernel = kern
					c0 := processCPUTime()
					Sgemm(false, false, m, n, k, 1, a, k, bm, n, 0, c, n)
					t[i] = append(t[i], processCPUTime()-c0)
				}
			}
			activeKernel = wide
			for i := range t {
				slices.Sort(t[i])
			}
			flop := 2 * float64(m*n*k)
			b.ReportMetric(flop/t[0][len(t[0])/2]/1e9, "GFLOP/s-narrow")
			b.ReportMetric(flop/t[2][len(t[2])/2]/1e9, "GFLOP/s-wide")
			b.ReportMetric(t[0][len(t[0])/2]/t[2][len(t[2])/2], "x-wide")
			b.ReportMetric(t[1][len(t[1])/2]/t[2][len(t[2])/2], "x-direct")
		})
	}
}
