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
