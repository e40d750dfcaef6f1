//go:build !purego

package blas

import "unsafe"

//go:noescape
func poolStride2AVX2(dst, src *float32, n, taps int, isMax bool)

//go:noescape
func poolRowsAVX2(dst, src *float32, rows, n, dstStride, srcStride, kh, hstride, taps int, init float32, isMax bool)

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

// poolRowsVec runs the AVX2 loop of PoolRowsF32 on the first multiple of
// 8 outputs of every row and returns how many per row it did (0: none).
// The loop reads one element past the last it uses in the last row's
// last window row: within src's capacity it may.
func poolRowsVec(dst, src []float32, rows, n, dstStride, srcStride, kh, hstride, taps int, init float32, isMax bool) int {
	if !hasAVX2FMA {
		return 0
	}
	nv := n &^ 7
	if nv == 0 {
		return 0
	}
	if (rows-1)*srcStride+(kh-1)*hstride+2*nv+taps-1 >= cap(src) {
		nv -= 8 // the last block would read past src's capacity
		if nv == 0 {
			return 0
		}
	}
	poolRowsAVX2(unsafe.SliceData(dst), unsafe.SliceData(src), rows, nv, dstStride, srcStride, kh, hstride, taps, init, isMax)
	return nv
}
