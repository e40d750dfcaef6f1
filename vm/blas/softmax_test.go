package blas

import (
	"math"
	"math/rand/v2"
	"testing"

	"github.com/stretchr/testify/require"
)

// TestExpSubSumF32: the exponentials are ExpF32's of the rounded x - m,
// bitwise, on both paths (the 512-bit pass and the composed one, which
// the tails and other CPUs take), in place too; the sum agrees with a
// float64 sum of dst within n float32 roundings.
func TestExpSubSumF32(t *testing.T) {
	rng := rand.New(rand.NewPCG(7, 23))
	for _, n := range []int{0, 1, 7, 15, 16, 17, 31, 128, 130, 1000} {
		x := make([]float32, n)
		for i := range x {
			x[i] = float32(rng.NormFloat64() * 4)
		}
		m := float32(1.5)
		if n > 0 {
			m = x[rng.IntN(n)]
		}
		want := make([]float32, n)
		for i, v := range x {
			want[i] = v - m
		}
		ExpF32(want, want)
		var ref float64
		for _, v := range want {
			ref += float64(v)
		}
		for _, path := range []struct {
			name string
			f    func(dst, x []float32, m float32) float32
		}{{"dispatch", ExpSubSumF32}, {"composed", expSubSumF32Composed}} {
			dst := make([]float32, n)
			s := path.f(dst, x, m)
			require.Equal(t, want, dst, "%s n=%d", path.name, n)
			require.InDelta(t, ref, float64(s), float64(n+1)*6e-8*ref+1e-30, "%s n=%d sum", path.name, n)
			in := make([]float32, n)
			copy(in, x)
			s2 := path.f(in, in, m)
			require.Equal(t, want, in, "%s n=%d in place", path.name, n)
			require.Equal(t, s, s2, "%s n=%d in place sum", path.name, n)
		}
	}
	require.PanicsWithValue(t, "blas.ExpSubSumF32: lengths differ: dst 2, x 3", func() { ExpSubSumF32(make([]float32, 2), make([]float32, 3), 0) })
	// -Inf - m is -Inf, exp 0; a NaN poisons the sum.
	dst := make([]float32, 20)
	x := make([]float32, 20)
	x[3] = float32(math.Inf(-1))
	require.Equal(t, float32(19), ExpSubSumF32(dst, x, 0))
	x[18] = float32(math.NaN())
	require.True(t, math.IsNaN(float64(ExpSubSumF32(dst, x, 0))))
}
