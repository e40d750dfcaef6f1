//go:build !purego

package blas

import "unsafe"

//go:noescape
func packPix6ContigAVX2(dst, src *float32, koff *int, n int)

//go:noescape
func packPix6Gather(dst, src *float32, koff *int, n int, pix *int)

// packPix6Contig sets dst[6k+j] = src[koff[k]+j] for k < len(koff) and
// j < 6 and reports whether it could (AVX2 present). It writes dst up to
// 6*len(koff)+2 and reads src up to max(koff)+8, which the caller
// guarantees (maxOff >= every koff).
func packPix6Contig(dst, src []float32, koff []int, maxOff int) bool {
	if !hasAVX2FMA || len(koff) == 0 {
		return false
	}
	_ = dst[6*len(koff)+1]
	_ = src[maxOff+7]
	packPix6ContigAVX2(unsafe.SliceData(dst), unsafe.SliceData(src), unsafe.SliceData(koff), len(koff))
	return true
}

// packPix6 sets dst[6k+j] = src[koff[k]+pix[j]] for k < len(koff) and
// j < 6; every koff[k]+pix[j] must lie in [0, len(src)) (the caller
// checks: maxOff >= every koff, pix non-negative and maxPix >= every pix).
func packPix6(dst, src []float32, koff []int, pix *[6]int, maxOff, maxPix int) {
	if len(koff) == 0 {
		return
	}
	_ = dst[6*len(koff)-1]
	_ = src[maxOff+maxPix]
	packPix6Gather(unsafe.SliceData(dst), unsafe.SliceData(src), unsafe.SliceData(koff), len(koff), &pix[0])
}

//go:noescape
func transpose8x8AVX2(dst *float32, ldd int, src *float32, lds int)

// transposeBlock sets dst[i*ldd+j] = src[j*lds+i] for i < cols, j < rows.
func transposeBlock(dst []float32, ldd int, src []float32, lds, rows, cols int) {
	if rows == 0 || cols == 0 {
		return
	}
	_ = dst[(cols-1)*ldd+rows-1]
	_ = src[(rows-1)*lds+cols-1]
	i := 0
	if hasAVX2FMA {
		for ; i+8 <= cols; i += 8 {
			j := 0
			for ; j+8 <= rows; j += 8 {
				transpose8x8AVX2(&dst[i*ldd+j], ldd, &src[j*lds+i], lds)
			}
			for ; j < rows; j++ {
				s := src[j*lds+i : j*lds+i+8]
				for ii, v := range s {
					dst[(i+ii)*ldd+j] = v
				}
			}
		}
	}
	if i < cols {
		transposeGo(dst[i*ldd:], ldd, src[i:], lds, rows, cols-i)
	}
}

//go:noescape
func biasReLUAVX2(dst, src *float32, n int, b float32, relu bool)

// biasReLU sets dst = src + b, then max(0, dst) when relu: AddScalarF32
// and MaxScalarF32 in one pass, with their results.
func biasReLU(dst, src []float32, b float32, relu bool) {
	if !hasAVX2FMA || len(src) == 0 {
		biasReLUGo(dst, src, b, relu)
		return
	}
	_ = dst[len(src)-1]
	biasReLUAVX2(unsafe.SliceData(dst), unsafe.SliceData(src), len(src), b, relu)
}

//go:noescape
func scalarChainAVX2(dst, src *float32, n int, ops *ChainOp, nops int)

// The assembly reads ChainOp as {op byte; 3 bytes; s float32}.
var _ [8]struct{} = [unsafe.Sizeof(ChainOp{})]struct{}{}
var _ [4]struct{} = [unsafe.Offsetof(ChainOp{}.S)]struct{}{}

func scalarChain(dst, src []float32, ops []ChainOp) {
	if !hasAVX2FMA || len(src) == 0 || len(ops) == 0 {
		scalarChainGo(dst, src, ops)
		return
	}
	_ = dst[len(src)-1]
	scalarChainAVX2(unsafe.SliceData(dst), unsafe.SliceData(src), len(src), unsafe.SliceData(ops), len(ops))
}
