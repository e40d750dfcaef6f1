//go:build !amd64 || purego

package blas

var (
	expF32      = expF32Go
	logF32      = logF32Go
	erfF32      = erfF32Go
	tanhF32     = tanhF32Go
	sigmoidF32  = sigmoidF32Go
	geluF32     = geluF32Go
	geluTanhF32 = geluTanhF32Go
	sqrtF32     = sqrtF32Go
	rsqrtF32    = rsqrtF32Go

	narrow256 map[string]unaryLoop // no 512-bit twins here
)

const hasAVX512Math = false

func expSubSumF32(dst, x []float32, m float32) float32 { return expSubSumF32Composed(dst, x, m) }
