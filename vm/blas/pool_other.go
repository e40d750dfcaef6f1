//go:build !amd64 || purego

package blas

func poolStride2Vec(dst, src []float32, taps int, isMax bool) int { return 0 }

func poolRowsVec(dst, src []float32, rows, n, dstStride, srcStride, kh, hstride, taps int, init float32, isMax bool) int {
	return 0
}
