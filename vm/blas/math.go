package blas

import "math"

//go:generate go run gen_math.go

// Vector math: float32 transcendental functions over slices, for the
// elementwise and row kernels of vm/kernel (softmax's exp, GELU's erf,
// layer norm's rsqrt, ...).
//
// Each function sets dst[i] = f(x[i]); dst and x have the same length (a
// mismatch panics naming the function) and may be the same slice. On
// amd64 with AVX2 and FMA the loops are assembly (math_amd64.s, generated
// by gen_math.go), 8 lanes at a time; elsewhere, or with the build tag
// purego, the portable functions below run. Where the CPU has AVX-512F
// and DQ, exp, erf, tanh, sigmoid and both GELUs run 16 lanes at a time
// over the multiples of 16 (their 512-bit twins, translated from the
// 256-bit loops instruction by instruction, exp's written natively with
// its constants in registers and VSCALEFPS: bitwise the same results,
// 1.8-2x faster on Zen 5, BenchmarkMathWideSideBySide). Both compute the same
// algorithm with the same constants, so they agree within the stated
// error (the Go code's FMA rounds through float64, so the last bit can
// differ).
//
// Maximum error against Go's math package (the exact result rounded to
// float32 has error <= 0.5 ULP), measured by math_test.go over every
// 2^10-th float32 bit pattern plus the edge cases (±0, subnormals, ±Inf,
// NaN, the overflow and underflow thresholds), for both implementations:
//
//	ExpF32       1 ULP    range reduction by ln 2 in two parts (Cephes expf),
//	                      degree-5 polynomial; overflow to +Inf above
//	                      88.72, subnormal results rounded once, 0 below -103.9
//	LogF32       1 ULP    Cephes logf (mantissa in [sqrt(1/2), sqrt(2))),
//	                      subnormal inputs scaled first; log(0) = -Inf,
//	                      log(x<0) = NaN
//	ErfF32       2 ULP    z·P(z²) on |x| < 1, P(|x|-2.5) of degree 12 on
//	                      [1, 4] (Chebyshev interpolation), 1 beyond
//	TanhF32      2 ULP    Cephes tanhf: odd polynomial below 0.625,
//	                      1 - 2/(exp(2|x|)+1) above
//	SigmoidF32   2 ULP    1/(1+e) or e/(1+e) with e = exp(-|x|), so
//	                      neither tail cancels
//	GeluF32      3 ULP    x/2·(1+erf(x/√2)) (exact GELU); for x < 0 the
//	                      error is in ULPs of x/2, the scale of the
//	                      cancellation in 1+erf (as in the TIR formula)
//	GeluTanhF32  3 ULP    x·sigmoid(2u), u = √(2/π)(x+0.044715x³), which
//	                      is 0.5x(1+tanh u) without its cancellation
//	SqrtF32      0.5 ULP  correctly rounded
//	RsqrtF32     1 ULP    1/sqrt(x), two roundings
//
// NaN inputs give NaN (its payload is not preserved).

// Maximum errors in ULPs, as stated above (math_test.go asserts them).
const (
	ExpMaxULP      = 1.0
	LogMaxULP      = 1.0
	ErfMaxULP      = 2.5
	TanhMaxULP     = 1.5
	SigmoidMaxULP  = 3.0
	GeluMaxULP     = 2.5
	GeluTanhMaxULP = 2.5
	SqrtMaxULP     = 0.5
	RsqrtMaxULP    = 1.5
)

type unaryLoop func(dst, x []float32)

// ExpF32 sets dst[i] = e^x[i].
func ExpF32(dst, x []float32) { checkUnary("ExpF32", dst, x); expF32(dst, x) }

// LogF32 sets dst[i] = ln x[i].
func LogF32(dst, x []float32) { checkUnary("LogF32", dst, x); logF32(dst, x) }

// ErfF32 sets dst[i] = erf(x[i]).
func ErfF32(dst, x []float32) { checkUnary("ErfF32", dst, x); erfF32(dst, x) }

// TanhF32 sets dst[i] = tanh(x[i]).
func TanhF32(dst, x []float32) { checkUnary("TanhF32", dst, x); tanhF32(dst, x) }

// SigmoidF32 sets dst[i] = 1/(1+e^-x[i]).
func SigmoidF32(dst, x []float32) { checkUnary("SigmoidF32", dst, x); sigmoidF32(dst, x) }

// GeluF32 sets dst[i] = x[i]/2 * (1 + erf(x[i]/√2)) (exact GELU).
func GeluF32(dst, x []float32) { checkUnary("GeluF32", dst, x); geluF32(dst, x) }

// GeluTanhF32 sets dst[i] = x[i]/2 * (1 + tanh(√(2/π)(x[i] + 0.044715x[i]³)))
// (GELU's tanh approximation).
func GeluTanhF32(dst, x []float32) { checkUnary("GeluTanhF32", dst, x); geluTanhF32(dst, x) }

// SqrtF32 sets dst[i] = √x[i].
func SqrtF32(dst, x []float32) { checkUnary("SqrtF32", dst, x); sqrtF32(dst, x) }

// RsqrtF32 sets dst[i] = 1/√x[i].
func RsqrtF32(dst, x []float32) { checkUnary("RsqrtF32", dst, x); rsqrtF32(dst, x) }

// Coefficients (highest degree first). gen_math.go holds the same tables
// for the assembly; math_test.go checks they agree.
var (
	expPoly  = [...]float32{1.9875691500e-4, 1.3981999507e-3, 8.3334519073e-3, 4.1665795894e-2, 1.6666665459e-1, 5.0000001201e-1}
	logPoly  = [...]float32{7.0376836292e-2, -1.1514610310e-1, 1.1676998740e-1, -1.2420140846e-1, 1.4249322787e-1, -1.6668057665e-1, 2.0000714765e-1, -2.4999993993e-1, 3.3333331174e-1}
	tanhPoly = [...]float32{-5.70498872745e-3, 2.06390887954e-2, -5.37397155531e-2, 1.33314422036e-1, -3.33332819422e-1}
	// erf(z)/z as a polynomial in z² on [0, 1], and erf(z) in z-2.5 on
	// [1, 4]: interpolation at Chebyshev nodes in float64, coefficients
	// rounded to float32 (their float32 evaluation is within 2.3 ULP).
	erfSmall = [...]float32{-0.000564806, 0.004921762, -0.026715055, 0.11280317, -0.37612343, 1.1283791}
	erfLarge = [...]float32{-9.210143e-06, 2.1517164e-05, 6.279154e-05, -0.00028156303, 0.00028345632, 0.00057576713, -0.0028137984, 0.0060984734, -0.008618021, 0.008354954, -0.005446062, 0.0021779074, 0.999593}
)

const (
	ln2Hi     = 0.693359375
	ln2Lo     = -2.12194440e-4
	sqrtHalf  = 0.707106781186547524
	geluCubic = 0.044715
)

var geluTwoSqrt2Pi = float32(2 * math.Sqrt(2/math.Pi))

// fma32 is a*b+c rounded once to float64 and then to float32 (a*b is
// exact in float64); the assembly rounds once.
func fma32(a, b, c float32) float32 {
	return float32(math.FMA(float64(a), float64(b), float64(c)))
}

func horner32(c []float32, t float32) float32 {
	p := c[0]
	for _, k := range c[1:] {
		p = fma32(p, t, k)
	}
	return p
}

func exp32(x float32) float32 {
	x = min(x, 89)   // NaN stays NaN (Go's min propagates it)
	x = max(x, -104) // exp(-104) rounds to 0
	if x != x {
		return x
	}
	n := float32(math.RoundToEven(float64(x * float32(math.Log2E))))
	r := fma32(-n, ln2Hi, x)
	r = fma32(-n, ln2Lo, r)
	p := horner32(expPoly[:], r)
	y := fma32(p, r*r, r) + 1
	// 2^n in two normal factors (n in [-150, 128]), so a subnormal result
	// is rounded once.
	ni := int32(n)
	n1 := ni >> 1
	n2 := ni - n1
	y *= math.Float32frombits(uint32(n1+127) << 23)
	return y * math.Float32frombits(uint32(n2+127)<<23)
}

func log32(x float32) float32 {
	switch {
	case x != x || x < 0:
		return float32(math.NaN())
	case x == 0:
		return float32(math.Inf(-1))
	case math.IsInf(float64(x), 1):
		return x
	}
	var adj float32
	if x < 0x1p-126 {
		x *= 1 << 23
		adj = 23
	}
	bits := math.Float32bits(x)
	e := float32(int32(bits>>23)-126) - adj
	m := math.Float32frombits(bits&0x807fffff | 0x3f000000)
	var f float32
	if m < sqrtHalf {
		f = (m - 1) + m
		e--
	} else {
		f = m - 1
	}
	z := f * f
	y := horner32(logPoly[:], f) * f * z
	y = fma32(e, ln2Lo, y)
	y = fma32(-z, 0.5, y)
	return fma32(e, ln2Hi, f+y)
}

func erf32(x float32) float32 {
	z := float32(math.Abs(float64(x)))
	var r float32
	if z < 1 {
		r = z * horner32(erfSmall[:], z*z)
	} else {
		r = min(horner32(erfLarge[:], min(z, 4)-2.5), 1)
	}
	return float32(math.Copysign(float64(r), float64(x)))
}

func tanh32(x float32) float32 {
	z := float32(math.Abs(float64(x)))
	var r float32
	if z > 0.625 {
		r = 1 - 2/(exp32(z+z)+1)
	} else {
		s := z * z
		r = fma32(horner32(tanhPoly[:], s)*s, z, z)
	}
	return float32(math.Copysign(float64(r), float64(x)))
}

func sigmoid32(x float32) float32 {
	e := exp32(-float32(math.Abs(float64(x))))
	s := 1 / (e + 1)
	if math.Signbit(float64(x)) {
		return e * s
	}
	return s
}

func gelu32(x float32) float32 {
	h := x * 0.5
	return fma32(h, erf32(x*sqrtHalf), h)
}

func geluTanh32(x float32) float32 {
	v := fma32(x*x, geluCubic, 1) * x
	return sigmoid32(v*geluTwoSqrt2Pi) * x
}

func sqrt32(x float32) float32  { return float32(math.Sqrt(float64(x))) }
func rsqrt32(x float32) float32 { return 1 / float32(math.Sqrt(float64(x))) }

// mapGo lifts a scalar function to the portable slice loop.
func mapGo(f func(float32) float32) unaryLoop {
	return func(dst, x []float32) {
		x = x[:len(dst)]
		for i := range dst {
			dst[i] = f(x[i])
		}
	}
}

var (
	expF32Go      = mapGo(exp32)
	logF32Go      = mapGo(log32)
	erfF32Go      = mapGo(erf32)
	tanhF32Go     = mapGo(tanh32)
	sigmoidF32Go  = mapGo(sigmoid32)
	geluF32Go     = mapGo(gelu32)
	geluTanhF32Go = mapGo(geluTanh32)
	sqrtF32Go     = mapGo(sqrt32)
	rsqrtF32Go    = mapGo(rsqrt32)
)
