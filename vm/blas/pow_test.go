package blas

import (
	"math"
	"math/rand/v2"
	"testing"

	"github.com/stretchr/testify/require"
)

// TestPowF32 compares PowScalarF32 (every exponent path) and PowF32
// against math.Pow over every 2^14-th float32 bit pattern of x (both
// signs, subnormals, ±Inf, NaN), within PowMaxULP of math.Pow's result
// in ULPs of the float32 nearest it; NaN where math.Pow gives NaN.
func TestPowF32(t *testing.T) {
	var xs []float32
	for bits := uint64(0); bits < 1<<32; bits += 1 << 14 {
		xs = append(xs, math.Float32frombits(uint32(bits)))
	}
	xs = append(xs, 0, float32(math.Copysign(0, -1)), 1, -1, float32(math.Inf(1)), float32(math.Inf(-1)), float32(math.NaN()))
	check := func(x, y, got float32) {
		want := math.Pow(float64(x), float64(y))
		if math.IsNaN(want) {
			require.True(t, math.IsNaN(float64(got)), "pow(%v, %v) = %v, want NaN", x, y, got)
			return
		}
		w32 := float32(want)
		if math.IsInf(float64(w32), 0) || w32 == 0 {
			require.Equal(t, w32, got, "pow(%v, %v)", x, y)
			return
		}
		e := math.Abs(float64(got)-want) / ulp32(float64(w32))
		require.LessOrEqual(t, e, PowMaxULP, "pow(%v, %v) = %v, want %v", x, y, got, want)
	}
	dst := make([]float32, len(xs))
	for _, y := range []float32{1, 2, 0.5, 0, -1, 3, -2.5, 1.7, 1e-3, 40} {
		PowScalarF32(dst, xs, y)
		for i, x := range xs {
			check(x, y, dst[i])
		}
	}
	rng := rand.New(rand.NewPCG(3, 4))
	ys := make([]float32, len(xs))
	for i := range ys {
		ys[i] = rng.Float32()*8 - 4
	}
	PowF32(dst, xs, ys)
	for i, x := range xs {
		check(x, ys[i], dst[i])
	}
	require.Panics(t, func() { PowF32(make([]float32, 2), make([]float32, 2), make([]float32, 3)) })
}
