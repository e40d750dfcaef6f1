package blas

import "fmt"

// ExpSubSumF32 sets dst[i] = e^(x[i]-m), the subtraction rounded to
// float32 first (as softmax's legalized TIR computes it), and returns the
// sum of dst: softmax's exp-and-sum pass over one row in one pass. The
// sum's order is unspecified (partial sums per lane), as SumF32's. dst
// and x have the same length (a mismatch panics) and may be the same
// slice. The exponentials are ExpF32's (ExpMaxULP), bitwise.
func ExpSubSumF32(dst, x []float32, m float32) float32 {
	if len(dst) != len(x) {
		panic(fmt.Sprintf("blas.ExpSubSumF32: lengths differ: dst %d, x %d", len(dst), len(x)))
	}
	return expSubSumF32(dst, x, m)
}

// expSubSumF32Composed is ExpSubSumF32 from the slice loops (the portable
// path, and the 256-bit one).
func expSubSumF32Composed(dst, x []float32, m float32) float32 {
	addScalarF32(dst, x, -m, false)
	expF32(dst, dst)
	return sumF32(dst)
}
