//go:build !purego

package blas

import "unsafe"

//go:noescape
func poolStride2AVX2(dst, src *float32, n, taps int, isMax bool)

// poolStride2Vec runs the AVX2 loop on the first multiple of 8 outputs
// whose inputs are all in src and returns how many it did.
func poolStride2Vec(dst, src []float32, taps int, isMax bool) int {
	if !hasAVX2FMA {
		return 0
	}
	// The loop reads up to src[2n+taps-2], one past the last input it
	// uses (an odd element, discarded): within src's capacity it may (a
	// row of a larger tensor always has the room).
	n := min(len(dst), (cap(src)-taps+1)/2) &^ 7
	if n <= 0 {
		return 0
	}
	poolStride2AVX2(unsafe.SliceData(dst), unsafe.SliceData(src), n, taps, isMax)
	return n
}
