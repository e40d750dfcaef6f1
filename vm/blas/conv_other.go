//go:build !amd64 || purego

package blas

func packPix6Contig(dst, src []float32, koff []int, maxOff int) bool { return false }

// packPix6 sets dst[6k+j] = src[koff[k]+pix[j]] for k < len(koff) and
// j < 6.
func packPix6(dst, src []float32, koff []int, pix *[6]int, maxOff, maxPix int) {
	for k, ko := range koff {
		s := src[ko:]
		d := (*[6]float32)(dst[6*k:])
		d[0], d[1], d[2], d[3], d[4], d[5] = s[pix[0]], s[pix[1]], s[pix[2]], s[pix[3]], s[pix[4]], s[pix[5]]
	}
}

// transposeBlock sets dst[i*ldd+j] = src[j*lds+i] for i < cols, j < rows.
func transposeBlock(dst []float32, ldd int, src []float32, lds, rows, cols int) {
	transposeGo(dst, ldd, src, lds, rows, cols)
}

func biasReLU(dst, src []float32, b float32, relu bool) { biasReLUGo(dst, src, b, relu) }

func scalarChain(dst, src []float32, ops []ChainOp) { scalarChainGo(dst, src, ops) }
