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

// BenchmarkPackA times packing alpha*A for a BERT layer's GEMM (the whole
// m x k, in kc-column blocks as the loop nest does), the part of a call
// that B packed once leaves, side by side with the GEMM itself.
func BenchmarkPackA(b *testing.B) {
	for _, s := range [][3]int{{128, 768, 768}, {128, 768, 3072}} {
		m, n, k := s[0], s[1], s[2]
		a, bm, c := make([]float32, m*k), make([]float32, k*n), make([]float32, m*n)
		ap := make([]float32, roundUp(mc, mr)*kc+packSlack)
		pb := PackB(false, k, n, bm, n)
		b.Run(fmt.Sprintf("%dx%dx%d", m, n, k), func(b *testing.B) {
			var ratio []float64
			for range b.N {
				start := time.Now()
				for pc := 0; pc < k; pc += kc {
					for ic := 0; ic < m; ic += mc {
						packA(ap, a, k, false, ic, pc, min(mc, m-ic), min(kc, k-pc), 1)
					}
				}
				p := time.Since(start)
				start = time.Now()
				SgemmPackedB(1, false, m, 1, a, k, pb, 0, c, n, nil)
				ratio = append(ratio, p.Seconds()/time.Since(start).Seconds())
			}
			b.ReportMetric(100*median(ratio), "packA-pct-of-gemm")
		})
	}
}

// BenchmarkSmallGemmTwoThreads measures where a second thread starts to
// pay (minWorkPerThread): per iteration and shape, one thread and two
// threads (the threshold lifted) back to back, B packed per call and
// packed once. Reported: the median time ratio 1T/2T (the speed-up; below
// 1 the second thread loses). Needs GOMAXPROCS >= 2 (-test.cpu 2).
func BenchmarkSmallGemmTwoThreads(b *testing.B) {
	if runtime.GOMAXPROCS(0) < 2 {
		b.Skip("needs GOMAXPROCS >= 2")
	}
	for _, s := range [][4]int{{128, 128, 64, 1}, {128, 64, 128, 0}, {64, 512, 512, 0}, {64, 512, 784, 0}, {128, 768, 64, 0}, {32, 768, 768, 0}, {128, 256, 256, 0}} {
		m, n, k, transB := s[0], s[1], s[2], s[3] == 1
		a, bm, c := make([]float32, m*k), make([]float32, k*n), make([]float32, m*n)
		ldb := n
		if transB {
			ldb = k
		}
		pb := PackB(transB, k, n, bm, ldb)
		b.Run(fmt.Sprintf("%dx%dx%d/transB=%v", m, n, k, transB), func(b *testing.B) {
			saved := minWorkPerThread
			minWorkPerThread = 1
			defer func() { minWorkPerThread = saved }()
			wall := func(f func()) float64 {
				start := time.Now()
				f()
				return time.Since(start).Seconds()
			}
			var perCall, packed []float64
			for range b.N {
				// The second of two back-to-back two-thread calls: the
				// worker is awake, as between a model's GEMMs.
				one := wall(func() { SgemmThreads(1, false, transB, m, n, k, 1, a, k, bm, ldb, 0, c, n) })
				SgemmThreads(2, false, transB, m, n, k, 1, a, k, bm, ldb, 0, c, n)
				two := wall(func() { SgemmThreads(2, false, transB, m, n, k, 1, a, k, bm, ldb, 0, c, n) })
				perCall = append(perCall, one/two)
				one = wall(func() { SgemmPackedB(1, false, m, 1, a, k, pb, 0, c, n, nil) })
				SgemmPackedB(2, false, m, 1, a, k, pb, 0, c, n, nil)
				two = wall(func() { SgemmPackedB(2, false, m, 1, a, k, pb, 0, c, n, nil) })
				packed = append(packed, one/two)
			}
			b.ReportMetric(median(perCall), "1T/2T-percall")
			b.ReportMetric(median(packed), "1T/2T-packed")
			b.ReportMetric(0, "ns/op")
		})
	}
}
