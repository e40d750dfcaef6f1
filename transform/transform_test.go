package transform_test

import (
	"fmt"
	"testing"

	"github.com/phasec/phasec/ir"
)

// benchLinear runs one benchmark per module size (10k and 100k bindings):
// setup builds the input of n bindings, run transforms it (and fails when
// nothing changed). It reports cpu-ns/op too: on a shared machine the
// 100k/10k ratio of CPU time measures the pass, where wall time also
// measures the other processes.
func benchLinear[T any](b *testing.B, setup func(n int) T, run func(b *testing.B, in T)) {
	for _, n := range []int{10_000, 100_000} {
		in := setup(n)
		b.Run(fmt.Sprintf("bindings=%d", n), func(b *testing.B) {
			b.ReportAllocs()
			cpu0 := cpuTime()
			defer func() { b.ReportMetric(float64(cpuTime()-cpu0)/float64(b.N), "cpu-ns/op") }()
			for b.Loop() {
				run(b, in)
			}
		})
	}
}

// BenchmarkReferenceWalk is the yardstick for the passes' 100k/10k
// ratios: one walk over the module recording every var use in a map, the
// least any pass here does. Its ratio is what cache and memory effects
// alone give on the machine at hand.
func BenchmarkReferenceWalk(b *testing.B) {
	benchLinear(b, func(n int) *ir.Module { return withDeadBindings(n / 2) }, func(b *testing.B, mod *ir.Module) {
		seen := map[*ir.Var]bool{}
		ir.Inspect(mod.Func("main").Body, func(e ir.Expr) bool {
			if v, ok := e.(*ir.Var); ok {
				seen[v] = true
			}
			return true
		})
		if len(seen) == 0 {
			b.Fatal("no var seen")
		}
	})
}
