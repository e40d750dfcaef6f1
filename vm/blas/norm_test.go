package blas

import (
	"math"
	"math/rand/v2"
	"testing"

	"github.com/stretchr/testify/require"
)

// TestNormF32 checks every combination of scale and shift on lengths
// around the vector widths against float64 arithmetic: within 2 float32
// roundings of each product and the sum (the AVX2 loop fuses the last
// multiply-add).
func TestNormF32(t *testing.T) {
	rng := rand.New(rand.NewPCG(4, 5))
	for _, n := range []int{0, 1, 7, 8, 9, 15, 16, 17, 31, 768, 1001} {
		x, g, h := make([]float32, n), make([]float32, n), make([]float32, n)
		for i := range x {
			x[i], g[i], h[i] = rng.Float32()*8-4, rng.Float32()*2-1, rng.Float32()*2-1
		}
		m, r := float32(0.3), float32(1.7)
		for _, c := range []struct{ g, h []float32 }{{g, h}, {g, nil}, {nil, h}, {nil, nil}} {
			dst := make([]float32, n)
			NormF32(dst, x, m, r, c.g, c.h)
			for i := range dst {
				t64 := float64(x[i]-m) * float64(r)
				want, mag := t64, math.Abs(t64)
				if c.g != nil {
					want *= float64(c.g[i])
					mag = math.Abs(want)
				}
				if c.h != nil {
					want += float64(c.h[i])
					mag += math.Abs(float64(c.h[i]))
				}
				require.InDelta(t, want, float64(dst[i]), 4*mag*0x1p-24+1e-30, "n %d i %d g %v h %v", n, i, c.g != nil, c.h != nil)
			}
		}
	}
	require.Panics(t, func() { NormF32(make([]float32, 3), make([]float32, 4), 0, 1, nil, nil) })
}
