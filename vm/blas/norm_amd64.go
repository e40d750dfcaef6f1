//go:build !purego

package blas

// normF32AVX2 sets dst = ((x - m) * r) * g + h over n elements, n a
// multiple of 8; g and h are required (the wrapper passes ones and zeros
// for the missing ones only on short tails, never on whole rows).
//
//go:noescape
func normF32AVX2(dst, x, scale, shift *float32, n int, m, rs float32)

// normScaleF32AVX2 sets dst = ((x - m) * r) * g (h absent).
//
//go:noescape
func normScaleF32AVX2(dst, x, scale *float32, n int, m, rs float32)

func normF32(dst, x []float32, m, r float32, g, h []float32) {
	n := len(dst) &^ 7
	if !hasAVX2FMA || n == 0 || g == nil {
		normF32Go(dst, x, m, r, g, h)
		return
	}
	w := 0 // the multiples of 16 run 16 lanes wide where the CPU has AVX-512
	if hasAVX512Math {
		w = n &^ 15
	}
	if h != nil {
		if w > 0 {
			normF32AVX512(&dst[0], &x[0], &g[0], &h[0], w, m, r)
		}
		if w < n {
			normF32AVX2(&dst[w], &x[w], &g[w], &h[w], n-w, m, r)
		}
		normF32Go(dst[n:], x[n:], m, r, g[n:], h[n:])
		return
	}
	if w > 0 {
		normScaleF32AVX512(&dst[0], &x[0], &g[0], w, m, r)
	}
	if w < n {
		normScaleF32AVX2(&dst[w], &x[w], &g[w], n-w, m, r)
	}
	normF32Go(dst[n:], x[n:], m, r, g[n:], nil)
}
