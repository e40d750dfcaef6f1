package blas

import (
	"math"
	"testing"

	"github.com/stretchr/testify/require"
)

// TestVectorMathWideMatchesNarrow: the 512-bit twins run the 256-bit
// loops' operations in the same order, so on every dense sample (and the
// edge cases denseInputs holds) their results are bitwise equal (NaN for
// NaN); so the ULP bounds TestVectorMathULP measures hold for both.
func TestVectorMathWideMatchesNarrow(t *testing.T) {
	if !hasAVX512Math || len(narrow256) == 0 {
		t.Skip("no AVX-512F/DQ: only the 256-bit loops run")
	}
	xs := denseInputs()
	xs = xs[:len(xs)&^15] // the wide loop covers all of it
	wide, narrow := make([]float32, len(xs)), make([]float32, len(xs))
	for _, f := range mathFuncs {
		nl, ok := narrow256[f.name]
		if !ok {
			continue
		}
		f.vec(wide, xs)
		nl(narrow, xs)
		for i := range xs {
			w, n := wide[i], narrow[i]
			if math.Float32bits(w) != math.Float32bits(n) && !(w != w && n != n) {
				require.Failf(t, "wide and narrow differ", "%s(%v): 512-bit %v, 256-bit %v", f.name, xs[i], w, n)
			}
		}
	}
}

// BenchmarkMathWideSideBySide times the 512-bit twins against the 256-bit
// loops on the same 4096 inputs in [-8, 8), interleaved (32 calls each),
// and reports ns/elem-wide and
// x-wide (256-bit time / 512-bit time, process CPU time):
//
//	go test ./vm/blas -run '^$' -bench MathWideSideBySide -benchtime 2000x
func BenchmarkMathWideSideBySide(b *testing.B) {
	if !hasAVX512Math || len(narrow256) == 0 {
		b.Skip("no AVX-512F/DQ")
	}
	const n, reps = 4096, 32
	x, y := make([]float32, n), make([]float32, n)
	for i := range x {
		x[i] = float32(i)/n*16 - 8
	}
	for _, f := range mathFuncs {
		nl, ok := narrow256[f.name]
		if !ok {
			continue
		}
		b.Run(f.name, func(b *testing.B) {
			var t [2]float64
			for range b.N {
				c0 := processCPUTime()
				for range reps {
					nl(y, x)
				}
				c1 := processCPUTime()
				for range reps {
					f.vec(y, x)
				}
				t[0] += c1 - c0
				t[1] += processCPUTime() - c1
			}
			b.ReportMetric(t[1]/float64(b.N*reps)/n*1e9, "ns/elem-wide")
			b.ReportMetric(t[0]/t[1], "x-wide")
		})
	}
}
