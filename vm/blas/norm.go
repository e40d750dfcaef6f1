package blas

import "fmt"

// NormF32 sets dst[i] = (x[i] - m) * r * g[i] + h[i], the normalization
// step of layer norm (m the row mean, r the reciprocal standard deviation,
// g and h the affine weights) and of RMS norm (m = 0), in one pass. g and
// h may be nil (no scale, no shift; h without g is also accepted). The
// AVX2 loop fuses the last multiply and add (one rounding fewer than
// ((x-m)*r)*g + h in float32); x - m and the multiply by r round as
// written. Lengths that differ panic naming the function.
func NormF32(dst, x []float32, m, r float32, g, h []float32) {
	if len(x) != len(dst) || (g != nil && len(g) != len(dst)) || (h != nil && len(h) != len(dst)) {
		panic(fmt.Sprintf("blas.NormF32: lengths differ: dst %d, x %d, g %d, h %d", len(dst), len(x), len(g), len(h)))
	}
	normF32(dst, x, m, r, g, h)
}

func normF32Go(dst, x []float32, m, r float32, g, h []float32) {
	switch {
	case g != nil && h != nil:
		for i, v := range x {
			dst[i] = (v-m)*r*g[i] + h[i]
		}
	case g != nil:
		for i, v := range x {
			dst[i] = (v - m) * r * g[i]
		}
	case h != nil:
		for i, v := range x {
			dst[i] = (v-m)*r + h[i]
		}
	default:
		for i, v := range x {
			dst[i] = (v - m) * r
		}
	}
}
