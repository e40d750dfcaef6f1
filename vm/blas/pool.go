package blas

import "fmt"

// PoolStride2F32 accumulates the taps of pooling windows along a row of
// outputs whose windows start two elements apart (stride 2 along a
// contiguous axis, as NCHW pooling with stride 2 reads its rows), taps
// consecutive elements each: dst[j] = max(dst[j], src[2j], ..,
// src[2j+taps-1]) when isMax, else dst[j] + src[2j] + .. + src[2j+taps-1]
// (added in that order, as the general path does). The max propagates
// NaN as Go's max does. len(src) must be at least 2*(len(dst)-1)+taps;
// it may read (and ignore) one element past len(src) within cap(src).
func PoolStride2F32(dst, src []float32, taps int, isMax bool) {
	if len(dst) == 0 || taps == 0 {
		return
	}
	if taps < 0 || len(src) < 2*(len(dst)-1)+taps {
		panic(fmt.Sprintf("blas: PoolStride2F32: %d inputs for %d outputs of %d taps", len(src), len(dst), taps))
	}
	j := poolStride2Vec(dst, src, taps, isMax)
	if j == len(dst) {
		return
	}
	d, s := dst[j:], src[2*j:]
	for i := range d {
		acc := d[i]
		w := s[2*i : 2*i+taps]
		if isMax {
			for _, v := range w {
				acc = max(acc, v)
			}
		} else {
			for _, v := range w {
				acc += v
			}
		}
		d[i] = acc
	}
}

// PoolRowsF32 computes rows of pooling outputs whose windows start two
// elements apart along a contiguous axis and span kh rows hstride
// elements apart (2-d NCHW pooling with stride 2 along W, a run of output
// rows of one image plane per call): for i < rows and j < n,
//
//	dst[i*dstStride+j] = init op src[i*srcStride + h*hstride + 2j + t]
//
// over h < kh (outer) and t < taps (inner), in that order, op max (Go's,
// NaN propagating) when isMax, else +. It panics if an access would
// leave dst or src; it may read (and ignore) one element past the last
// input within cap(src).
func PoolRowsF32(dst, src []float32, rows, n, dstStride, srcStride, kh, hstride, taps int, init float32, isMax bool) {
	if rows <= 0 || n <= 0 {
		return
	}
	if kh < 1 || taps < 1 || dstStride < 0 || srcStride < 0 || hstride < 0 ||
		(rows-1)*dstStride+n > len(dst) || (rows-1)*srcStride+(kh-1)*hstride+2*(n-1)+taps > len(src) {
		panic(fmt.Sprintf("blas: PoolRowsF32: %d rows of %d outputs (strides %d, %d; %dx%d taps, %d apart) in %d, %d elements",
			rows, n, dstStride, srcStride, kh, taps, hstride, len(dst), len(src)))
	}
	j0 := poolRowsVec(dst, src, rows, n, dstStride, srcStride, kh, hstride, taps, init, isMax)
	if j0 == n {
		return
	}
	for i := range rows {
		d := dst[i*dstStride+j0 : i*dstStride+n]
		for j := range d {
			acc := init
			for h := range kh {
				w := src[i*srcStride+h*hstride+2*(j0+j):][:taps]
				if isMax {
					for _, v := range w {
						acc = max(acc, v)
					}
				} else {
					for _, v := range w {
						acc += v
					}
				}
			}
			d[j] = acc
		}
	}
}
