package lower

import (
	"fmt"
	"testing"

	"github.com/phasec/phasec/ir/irgen"
)

// BenchmarkLegalizeOps legalizes chains of 10k and 100k high-level ops
// (matmul, add, relu, multiply over a symbolic batch); the time per op
// must not grow with the module (100k/10k time ratio <= 11).
func BenchmarkLegalizeOps(b *testing.B) {
	for _, n := range []int{10_000, 100_000} {
		mod := irgen.MustNormalize(irgen.Chain(n))
		b.Run(fmt.Sprintf("ops=%d", n), func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				out, errs := LegalizeModule(mod, LegalizeOptions{})
				if errs.HasErrors() || out.Len() != 5 {
					b.Fatalf("legalized into %d functions, want main and one PrimFunc per op: %v", out.Len(), errs)
				}
			}
		})
	}
}
