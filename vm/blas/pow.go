package blas

import (
	"fmt"
	"math"
)

// PowF32 sets dst[i] = x[i] ** y[i], and PowScalarF32 dst[i] = x[i] ** y,
// with Go's math.Pow semantics for the special cases (pow(x, ±0) = 1,
// pow(1, y) = 1, negative x with a non-integer y gives NaN, ...).
//
// Maximum error: 0.5 ULP against math.Pow (PowMaxULP): each element is
// math.Pow in float64 rounded once to float32, so within 0.5 float32 ULP
// of math.Pow's float64 result, itself within a few float64 ULPs (2^-29
// of a float32 ULP each) of the exact power. The exponents whose float32
// result is exactly that rounding run as vector operations: y = 1 (a
// copy), y = 2 (x*x: the exact product rounded once), y = 0.5 (SqrtF32,
// correctly rounded, as math.Pow(x, 0.5) = math.Sqrt(x) but for -0 and
// -Inf); the others run
// element by element through float64 (the same code on every
// architecture), so pow costs ~20-40 ns an element there, not the
// vector loops' ~1 ns.
func PowF32(dst, x, y []float32) {
	if len(x) != len(dst) || len(y) != len(dst) {
		panic(fmt.Sprintf("blas.PowF32: lengths differ: dst %d, x %d, y %d", len(dst), len(x), len(y)))
	}
	y = y[:len(x)]
	for i, v := range x {
		dst[i] = float32(math.Pow(float64(v), float64(y[i])))
	}
}

// PowScalarF32 sets dst[i] = x[i] ** y (see PowF32).
func PowScalarF32(dst, x []float32, y float32) {
	checkUnary("PowScalarF32", dst, x)
	switch y {
	case 1:
		copy(dst, x)
	case 2:
		MulF32(dst, x, x)
	case 0.5:
		SqrtF32(dst, x)
		// math.Pow's special cases before its Sqrt: pow(±0, 0.5) = +0,
		// pow(-Inf, 0.5) = +Inf (sqrt gives -0 and NaN).
		for i, v := range x {
			if v == 0 || math.IsInf(float64(v), -1) {
				dst[i] = -v * -v
			}
		}
	default:
		yd := float64(y)
		for i, v := range x {
			dst[i] = float32(math.Pow(float64(v), yd))
		}
	}
}

// PowMaxULP is PowF32's and PowScalarF32's maximum error in ULPs against
// math.Pow rounded to float32 (pow_test.go asserts it).
const PowMaxULP = 0.5
