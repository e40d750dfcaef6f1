//go:build amd64 && !purego

package blas

import (
	"math"
	"math/rand/v2"
	"testing"

	"github.com/stretchr/testify/require"
)

// TestRows512: with the 512-bit loops, SumF32 and DotF32 agree with a
// float64 sum within n roundings of the magnitudes, and NormF32 is bitwise
// the 256-bit loop's result, on lengths around 16 and 64 and a BERT row.
func TestRows512(t *testing.T) {
	if !hasAVX512Math {
		t.Skip("no AVX-512")
	}
	rng := rand.New(rand.NewPCG(11, 12))
	for _, n := range []int{1, 15, 16, 17, 63, 64, 65, 130, 768, 1001} {
		x, y, g, h := randF32(n, rng), randF32(n, rng), randF32(n, rng), randF32(n, rng)
		var s, d, mag, dmag float64
		for i := range x {
			s += float64(x[i])
			d += float64(x[i]) * float64(y[i])
			mag += math.Abs(float64(x[i]))
			dmag += math.Abs(float64(x[i]) * float64(y[i]))
		}
		tol := float64(n) * 6e-8
		require.InDelta(t, s, float64(SumF32(x)), tol*mag, "sum n=%d", n)
		require.InDelta(t, d, float64(DotF32(x, y)), tol*dmag, "dot n=%d", n)

		m, r := float32(0.25), float32(1.7)
		for _, hh := range [][]float32{h, nil} {
			got, want := make([]float32, n), make([]float32, n)
			NormF32(got, x, m, r, g, hh)
			n8 := n &^ 7
			if n8 > 0 && hh != nil {
				normF32AVX2(&want[0], &x[0], &g[0], &hh[0], n8, m, r)
			} else if n8 > 0 {
				normScaleF32AVX2(&want[0], &x[0], &g[0], n8, m, r)
			}
			var ht []float32
			if hh != nil {
				ht = hh[n8:]
			}
			normF32Go(want[n8:], x[n8:], m, r, g[n8:], ht)
			require.Equal(t, want, got, "norm n=%d shift=%v", n, hh != nil)
		}
	}
}
