package ir_test

import (
	"fmt"
	"runtime"
	"testing"
	"time"

	"github.com/phasec/phasec/ir"
	"github.com/phasec/phasec/ir/irgen"
)

var benchSizes = []int{1_000, 10_000, 100_000}

// BenchmarkNormalize normalizes a freshly generated n-binding chain (no
// struct info on bound vars or calls) per iteration.
func BenchmarkNormalize(b *testing.B) {
	for _, n := range benchSizes {
		b.Run(fmt.Sprint(n), func(b *testing.B) {
			b.ReportAllocs()
			var total time.Duration
			for i := 0; i < b.N; i++ {
				b.StopTimer()
				mod := irgen.Chain(n)
				b.StartTimer()
				start := time.Now()
				if _, diags := ir.NormalizeModule(mod); len(diags) > 0 {
					b.Fatal(diags[0])
				}
				total += time.Since(start)
			}
			b.ReportMetric(float64(total.Nanoseconds())/float64(b.N)/float64(n), "ns/binding")
		})
	}
}

// BenchmarkRenormalize re-normalizes an already normalized chain: the fast
// path every pass output goes through.
func BenchmarkRenormalize(b *testing.B) {
	for _, n := range benchSizes {
		b.Run(fmt.Sprint(n), func(b *testing.B) {
			f := irgen.MustNormalize(irgen.Chain(n)).Func("main")
			b.ReportAllocs()
			b.ResetTimer()
			for i := 0; i < b.N; i++ {
				if nf, _ := ir.NormalizeFunction(nil, f); nf != f {
					b.Fatal("re-normalization changed the function")
				}
			}
			b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/float64(n), "ns/binding")
		})
	}
}

// BenchmarkMutatorNoop runs a Mutator whose hooks change nothing: it must
// return the same function and allocate nothing.
func BenchmarkMutatorNoop(b *testing.B) {
	for _, n := range benchSizes {
		b.Run(fmt.Sprint(n), func(b *testing.B) {
			f := irgen.MustNormalize(irgen.Chain(n)).Func("main")
			m := &ir.Mutator{PostExpr: func(e ir.Expr) ir.Expr { return e }}
			b.ReportAllocs()
			b.ResetTimer()
			for i := 0; i < b.N; i++ {
				if m.Function(f) != f {
					b.Fatal("no-op mutator changed the function")
				}
			}
			b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/float64(n), "ns/binding")
		})
	}
}

// BenchmarkInspect counts calls with the read-only visitor.
func BenchmarkInspect(b *testing.B) {
	for _, n := range benchSizes {
		b.Run(fmt.Sprint(n), func(b *testing.B) {
			f := irgen.MustNormalize(irgen.Chain(n)).Func("main")
			b.ReportAllocs()
			b.ResetTimer()
			for i := 0; i < b.N; i++ {
				calls := 0
				ir.Inspect(f, func(e ir.Expr) bool {
					if _, ok := e.(*ir.Call); ok {
						calls++
					}
					return true
				})
				if calls != n {
					b.Fatalf("saw %d calls", calls)
				}
			}
			b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/float64(n), "ns/binding")
		})
	}
}

// BenchmarkNormalizeScaling reports time(100k)/time(10k) for normalizing a
// fresh chain (linear scaling gives 10; the goal is at most 12).
func BenchmarkNormalizeScaling(b *testing.B) {
	var small, large time.Duration
	for i := 0; i < b.N; i++ {
		for _, n := range []int{10_000, 100_000} {
			mod := irgen.Chain(n)
			runtime.GC() // do not charge one size for the other's garbage
			start := time.Now()
			ir.NormalizeModule(mod)
			if n == 10_000 {
				small += time.Since(start)
			} else {
				large += time.Since(start)
			}
		}
	}
	b.ReportMetric(float64(large)/float64(small), "ratio_100k/10k")
}
