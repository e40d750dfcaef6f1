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

// The 512-bit row functions exist on amd64 only (hasAVX512Math is false).

func rowsMaxF32AVX512(x, m *float32, rows, n int, init float32)     { panic("unreachable") }
func rowsExpSubSumF32AVX512(dst, x, m, s *float32, rows, n int) int { panic("unreachable") }
func rowsExpSumF32AVX512(x, m, s *float32, rows, n int) int         { panic("unreachable") }
func rowsScaleF32AVX512(dst, s *float32, rows, n int)               { panic("unreachable") }
func logSoftmaxOutF32AVX512(dst, x, m, l *float32, rows, n int)     { panic("unreachable") }

func logSmallF32(dst *[64]float32, x []float32) {
	for i, v := range x {
		dst[i] = log32(v)
	}
}
