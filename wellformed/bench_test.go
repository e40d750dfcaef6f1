package wellformed

import (
	"fmt"
	"testing"

	"github.com/phasec/phasec/ir/irgen"
	"github.com/phasec/phasec/phase"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestGeneratedChainIsIngest: a normalized module built through the real
// builder and ops satisfies Ingest, and Infer agrees.
func TestGeneratedChainIsIngest(t *testing.T) {
	mod := irgen.MustNormalize(irgen.Chain(40))
	got := Check(mod, phase.Optimize)
	require.Empty(t, got, "generated chain violates optimize:\n%s", got.Error())
	inferred := Infer(mod)
	assert.True(t, inferred.Contains(phase.Optimize.Invariants()), "Infer = %v, want at least %v", inferred, phase.Optimize.Invariants())
	for _, p := range []phase.Property{phase.Legalized, phase.NoDataflow, phase.PurityRelaxed} {
		assert.False(t, inferred.Has(p), "Infer = %v includes %v; the chain has tensor ops in a dataflow block of a pure function", inferred, p)
	}
	multi := irgen.MustNormalize(irgen.MultiFunc(5, 20))
	got = Check(multi, phase.Ingest)
	require.Empty(t, got, "generated multi-function module violates ingest:\n%s", got.Error())
}

// BenchmarkCheck measures one check over a chain of n bindings; ns/binding
// should stay flat from 1k to 100k (the walk is linear).
func BenchmarkCheck(b *testing.B) {
	for _, n := range []int{1_000, 10_000, 100_000} {
		mod := irgen.MustNormalize(irgen.Chain(n))
		b.Run(fmt.Sprintf("bindings=%d", n), func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				if l := Check(mod, phase.Optimize); len(l) != 0 {
					b.Fatal(l.Error())
				}
			}
			b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/float64(n), "ns/binding")
		})
	}
}

// BenchmarkInfer is the same walk collecting properties instead of reporting.
func BenchmarkInfer(b *testing.B) {
	for _, n := range []int{1_000, 10_000, 100_000} {
		mod := irgen.MustNormalize(irgen.Chain(n))
		b.Run(fmt.Sprintf("bindings=%d", n), func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				Infer(mod)
			}
			b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/float64(n), "ns/binding")
		})
	}
}

// BenchmarkWalk is the check without op hooks and call re-derivation: the
// cost of the walk itself (scoping, dataflow, purity, phase rules).
func BenchmarkWalk(b *testing.B) {
	for _, n := range []int{1_000, 10_000, 100_000} {
		mod := irgen.MustNormalize(irgen.Chain(n))
		b.Run(fmt.Sprintf("bindings=%d", n), func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				c := newChecker(mod, phase.Optimize.Invariants(), phase.Optimize, false)
				c.noHooks = true
				c.run()
				if len(c.diags) != 0 {
					b.Fatal(c.diags.Error())
				}
			}
			b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/float64(n), "ns/binding")
		})
	}
}
