//go:build !purego

package blas

import "math"

//go:noescape
func dotF32AVX2(a, b *float32, n int) float32

//go:noescape
func axpyF32AVX2(alpha float32, x, y *float32, n int)

//go:noescape
func sumF32AVX2(a *float32, n int) float32

func dotF32(a, b []float32) float32 {
	if !hasAVX2FMA || len(a) == 0 {
		return dotF32Go(a, b)
	}
	if n := len(a) &^ 15; hasAVX512Math && n > 0 {
		d := dotF32AVX512(&a[0], &b[0], n)
		if n < len(a) {
			d += dotF32AVX2(&a[n], &b[n], len(a)-n)
		}
		return d
	}
	return dotF32AVX2(&a[0], &b[0], len(a))
}

func axpyF32(alpha float32, x, y []float32) {
	if !hasAVX2FMA || len(y) == 0 {
		axpyF32Go(alpha, x, y)
		return
	}
	axpyF32AVX2(alpha, &x[0], &y[0], len(y))
}

func sumF32(a []float32) float32 {
	if !hasAVX2FMA || len(a) == 0 {
		return sumF32Go(a)
	}
	if n := len(a) &^ 15; hasAVX512Math && n > 0 {
		s := sumF32AVX512(&a[0], n)
		if n < len(a) {
			s += sumF32AVX2(&a[n], len(a)-n)
		}
		return s
	}
	return sumF32AVX2(&a[0], len(a))
}

//go:noescape
func maxF32AVX2(a *float32, blocks int) (m float32, nan bool)

func maxF32(a []float32) float32 {
	blocks := len(a) / 8
	if !hasAVX2FMA || blocks == 0 {
		return maxF32Go(a)
	}
	m, nan := maxF32AVX2(&a[0], blocks)
	if nan {
		return float32(math.NaN())
	}
	for _, v := range a[8*blocks:] {
		m = max(m, v)
	}
	return m
}
