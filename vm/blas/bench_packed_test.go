package blas

import (
	"fmt"
	"math/rand/v2"
	"runtime"
	"testing"
	"time"
)

// bertShapes are the dense GEMMs of a BERT-base encoder layer at
// sequence lengths 128 and 384 (m = seq): q/k/v/output projections (768 x
// 768), the FFN's 768 -> 3072 and 3072 -> 768, and attention's per-head
// 128x128x64 scores (B transposed) and 128x64x128 context.
var bertShapes = []struct {
	m, n, k int
	transB  bool
}{
	{128, 768, 768, false}, {128, 3072, 768, false}, {128, 768, 3072, false},
	{384, 768, 768, false}, {384, 3072, 768, false}, {384, 768, 3072, false},
	{128, 128, 64, true}, {128, 64, 128, false},
}

// BenchmarkBertGemmsSideBySide interleaves, per iteration and shape, the
// FMA peak loop (the same FLOP count), Sgemm packing B per call and
// SgemmPackedB with B packed once, on GOMAXPROCS threads (-cpu 1,2).
// Reported (medians over iterations): each GEMM's percentage of the peak
// (pct-peak: the single-core peak times the threads) and packed/per-call
// (the time ratio). Run it under SCHED_FIFO (see bench_test.go):
//
//	go test -c ./vm/blas && chrt -f 50 ./blas.test -test.run '^$' -test.bench BertGemms -test.benchtime 20x -test.cpu 1,2
func BenchmarkBertGemmsSideBySide(b *testing.B) {
	if !hasAVX2FMA {
		b.Skip("no AVX2/FMA: no peak loop to compare with")
	}
	threads := runtime.GOMAXPROCS(0)
	rng := rand.New(rand.NewPCG(1, 1))
	for _, s := range bertShapes {
		a, bm, c := make([]float32, s.m*s.k), make([]float32, s.k*s.n), make([]float32, s.m*s.n)
		for i := range a {
			a[i] = rng.Float32() - 0.5
		}
		for i := range bm {
			bm[i] = rng.Float32() - 0.5
		}
		ldb := s.n
		if s.transB {
			ldb = s.k
		}
		pb := PackB(s.transB, s.k, s.n, bm, ldb)
		flop := 2 * float64(s.m*s.n*s.k)
		b.Run(fmt.Sprintf("%dx%dx%d/transB=%v", s.m, s.n, s.k, s.transB), func(b *testing.B) {
			wall := func(f func()) float64 {
				start := time.Now()
				f()
				return time.Since(start).Seconds()
			}
			var peak, perCall, packed, ratio []float64
			for range b.N {
				p := wall(func() { fmaPeak(int(flop / 192)) })
				u := wall(func() { SgemmThreads(threads, false, s.transB, s.m, s.n, s.k, 1, a, s.k, bm, ldb, 0, c, s.n) })
				q := wall(func() { SgemmPackedB(threads, false, s.m, 1, a, s.k, pb, 0, c, s.n, nil) })
				peak = append(peak, flop/p/1e9)
				perCall = append(perCall, 100*p/u/float64(threads))
				packed = append(packed, 100*p/q/float64(threads))
				ratio = append(ratio, q/u)
			}
			b.ReportMetric(median(peak), "peak-GFLOP/s/core")
			b.ReportMetric(median(perCall), "pct-peak-percall")
			b.ReportMetric(median(packed), "pct-peak-packed")
			b.ReportMetric(median(ratio), "packed/percall")
			b.ReportMetric(0, "ns/op")
		})
	}
}
