package blas

import "fmt"

// PoolStride2F32 accumulates one pooling window tap over a row of outputs
// whose inputs are two elements apart (stride 2 along a contiguous axis,
// as NCHW pooling with stride 2 reads its rows): dst[j] = max(dst[j],
// src[2j]) when isMax, else dst[j] += src[2j]. The max propagates NaN as
// Go's max does. len(src) must be at least 2*len(dst)-1.
func PoolStride2F32(dst, src []float32, isMax bool) {
	if len(dst) == 0 {
		return
	}
	if len(src) < 2*len(dst)-1 {
		panic(fmt.Sprintf("blas: PoolStride2F32: %d inputs for %d outputs", len(src), len(dst)))
	}
	j := poolStride2Vec(dst, src, isMax)
	d, s := dst[j:], src[2*j:]
	if isMax {
		for i := range d {
			d[i] = max(d[i], s[2*i])
		}
		return
	}
	for i := range d {
		d[i] += s[2*i]
	}
}
