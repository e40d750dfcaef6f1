package blas

import (
	"fmt"
	"math"
	"math/rand/v2"
	"testing"

	"github.com/stretchr/testify/require"
)

// reduceLengths hit every loop of the AVX2 reductions: the 32-wide body,
// the 8-wide tail and the scalar tail.
var reduceLengths = []int{0, 1, 5, 8, 13, 32, 39, 64, 71, 1000, 4099}

// requireSumClose compares a reduction with a float64 reference: the
// allowed error is the summation bound (n+1)*2^-23 * sum|terms|, never
// tighter than 1e-5 of it.
func requireSumClose(t *testing.T, label string, n int, got float32, want, mag float64) {
	t.Helper()
	tol := max(1e-5, float64(n+1)*0x1p-23) * mag
	require.InDelta(t, want, float64(got), tol+1e-30, label)
}

func TestDotSumAxpy(t *testing.T) {
	rng := rand.New(rand.NewPCG(9, 9))
	for _, n := range reduceLengths {
		a, b := vecInputFinite(rng, n), vecInputFinite(rng, n)
		var dot, dotMag, sum, sumMag float64
		for i := range n {
			dot += float64(a[i]) * float64(b[i])
			dotMag += math.Abs(float64(a[i]) * float64(b[i]))
			sum += float64(a[i])
			sumMag += math.Abs(float64(a[i]))
		}
		// The exported (dispatched) functions and the portable loops.
		impls := []struct {
			name string
			dot  func(a, b []float32) float32
			sum  func(a []float32) float32
			axpy func(alpha float32, x, y []float32)
		}{{"dispatched", DotF32, SumF32, AxpyF32}, {"go", dotF32Go, sumF32Go, axpyF32Go}}
		for _, im := range impls {
			requireSumClose(t, fmt.Sprintf("%s dot n=%d", im.name, n), n, im.dot(a, b), dot, dotMag)
			requireSumClose(t, fmt.Sprintf("%s sum n=%d", im.name, n), n, im.sum(a), sum, sumMag)
			y := append([]float32(nil), b...)
			im.axpy(-1.25, a, y)
			for i := range n {
				want := float64(b[i]) + -1.25*float64(a[i])
				mag := math.Abs(float64(b[i])) + math.Abs(1.25*float64(a[i]))
				requireSumClose(t, fmt.Sprintf("%s axpy n=%d i=%d", im.name, n, i), 1, y[i], want, mag)
			}
		}
	}
}

func TestReductionsPropagateNaN(t *testing.T) {
	a := make([]float32, 37)
	a[35] = float32(math.NaN())
	require.True(t, math.IsNaN(float64(SumF32(a))))
	require.True(t, math.IsNaN(float64(DotF32(a, a))))
}

func TestReductionsRejectMismatchedLengths(t *testing.T) {
	require.PanicsWithValue(t, "blas.DotF32: lengths differ: a 2, b 3", func() { DotF32(make([]float32, 2), make([]float32, 3)) })
	require.PanicsWithValue(t, "blas.AxpyF32: lengths differ: x 2, y 3", func() { AxpyF32(1, make([]float32, 2), make([]float32, 3)) })
}

func vecInputFinite(rng *rand.Rand, n int) []float32 {
	s := make([]float32, n)
	for i := range s {
		s[i] = rng.Float32()*8 - 4
	}
	return s
}

func TestMaxF32(t *testing.T) {
	rng := rand.New(rand.NewPCG(12, 12))
	for _, n := range reduceLengths[1:] {
		a := vecInputFinite(rng, n)
		want := float32(math.Inf(-1))
		for _, v := range a {
			want = max(want, v)
		}
		require.Equal(t, want, MaxF32(a), "n=%d", n)
		require.Equal(t, want, maxF32Go(a), "go loop n=%d", n)
		for _, pos := range []int{0, n / 2, n - 1} {
			b := append([]float32(nil), a...)
			b[pos] = float32(math.NaN())
			require.True(t, math.IsNaN(float64(MaxF32(b))), "NaN at %d of %d", pos, n)
		}
	}
	require.Panics(t, func() { MaxF32(nil) })
}
