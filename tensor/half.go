package tensor

import (
	"fmt"
	"math"
)

// F16 is an IEEE 754 binary16 value (1 sign, 5 exponent, 10 mantissa bits),
// the storage element of Float16 tensors.
type F16 uint16

// BF16 is a bfloat16 value (1 sign, 8 exponent, 7 mantissa bits: the top
// half of a float32), the storage element of BFloat16 tensors.
type BF16 uint16

// Float32 converts h exactly (every binary16 value is a float32).
func (h F16) Float32() float32 {
	sign := uint32(h&0x8000) << 16
	exp := uint32(h>>10) & 0x1f
	mant := uint32(h) & 0x3ff
	switch exp {
	case 0:
		// Zero or subnormal: mant * 2^-24, exact in float32.
		f := float32(mant) * (1.0 / (1 << 24))
		return math.Float32frombits(math.Float32bits(f) | sign)
	case 0x1f:
		// Inf or NaN; the NaN payload moves to the top of the float32 mantissa.
		return math.Float32frombits(sign | 0x7f800000 | mant<<13)
	}
	return math.Float32frombits(sign | (exp+127-15)<<23 | mant<<13)
}

// F16FromFloat32 rounds f to the nearest binary16 value, ties to even;
// overflow gives ±Inf, underflow ±0 or a subnormal, NaN stays NaN (quiet).
func F16FromFloat32(f float32) F16 { return F16FromFloat64(float64(f)) }

// F16FromFloat64 is F16FromFloat32 from a float64, rounded once (no double
// rounding through float32). Because float32 -> float64 is exact,
// F16FromFloat32 shares this code.
func F16FromFloat64(f float64) F16 {
	return F16(roundFloat64(math.Float64bits(f), 5, 10))
}

// Float32 converts b exactly.
func (b BF16) Float32() float32 { return math.Float32frombits(uint32(b) << 16) }

// BF16FromFloat32 rounds f to the nearest bfloat16, ties to even; NaN stays
// NaN (quiet) even when its payload sits only in the low 16 bits.
func BF16FromFloat32(f float32) BF16 {
	bits := math.Float32bits(f)
	if bits&0x7fffffff > 0x7f800000 {
		return BF16(bits>>16 | 0x40)
	}
	// Adding 0x7fff plus the lowest kept bit carries into the kept half
	// exactly when the dropped half is above the tie, or at the tie with an
	// odd kept half; a carry out of the mantissa bumps the exponent, and
	// out of the largest finite exponent gives Inf, as rounding should.
	return BF16((bits + 0x7fff + (bits>>16)&1) >> 16)
}

// BF16FromFloat64 rounds f once to the nearest bfloat16, ties to even.
func BF16FromFloat64(f float64) BF16 {
	return BF16(roundFloat64(math.Float64bits(f), 8, 7))
}

// roundFloat64 rounds the float64 with the given bits to a binary format
// with expBits exponent and mantBits mantissa bits (at most 16 bits in all),
// round-to-nearest-even, and returns its bit pattern.
func roundFloat64(bits uint64, expBits, mantBits uint) uint64 {
	const mant64 = 52
	sign := (bits >> 63) << (expBits + mantBits)
	exp := int((bits >> mant64) & 0x7ff)
	mant := bits & (1<<mant64 - 1)
	maxExp := 1<<expBits - 1
	infBits := sign | uint64(maxExp)<<mantBits
	if exp == 0x7ff {
		if mant == 0 {
			return infBits
		}
		// Quiet NaN keeping the top of the payload.
		return infBits | 1<<(mantBits-1) | mant>>(mant64-mantBits)
	}
	bias := 1<<(expBits-1) - 1
	e := exp - 1023 + bias // biased exponent in the target format
	if e >= maxExp {
		return infBits
	}
	var m uint64 // significand to round, with an implicit bit where needed
	var shift uint
	if e >= 1 {
		m = uint64(e)<<mant64 | mant // the exponent rides above the mantissa so a carry bumps it
		shift = mant64 - mantBits
	} else {
		// Target subnormal: value = m53 * 2^(exp-1075) = r * 2^(1-bias-mantBits).
		if exp == 0 {
			return sign // float64 subnormals are far below every target subnormal
		}
		m = mant | 1<<mant64
		s := mant64 - int(mantBits) + 1 - e
		if s > mant64+1 {
			return sign // below half the smallest subnormal
		}
		shift = uint(s)
	}
	r := m >> shift
	rem := m & (1<<shift - 1)
	half := uint64(1) << (shift - 1)
	if rem > half || rem == half && r&1 == 1 {
		r++ // may carry into the exponent, up to Inf: both are the right answer
	}
	return sign | r
}

// The bulk conversions below convert src into dst elementwise (kernels on
// float16/bfloat16 tensors compute in float32); the lengths must match.

// F16ToFloat32s converts binary16 values to float32, exactly.
func F16ToFloat32s(dst []float32, src []F16) {
	checkLens(len(dst), len(src))
	for i, h := range src {
		dst[i] = h.Float32()
	}
}

// Float32sToF16 rounds float32 values to binary16, ties to even.
func Float32sToF16(dst []F16, src []float32) {
	checkLens(len(dst), len(src))
	for i, f := range src {
		dst[i] = F16FromFloat32(f)
	}
}

// BF16ToFloat32s converts bfloat16 values to float32, exactly.
func BF16ToFloat32s(dst []float32, src []BF16) {
	checkLens(len(dst), len(src))
	for i, b := range src {
		dst[i] = b.Float32()
	}
}

// Float32sToBF16 rounds float32 values to bfloat16, ties to even.
func Float32sToBF16(dst []BF16, src []float32) {
	checkLens(len(dst), len(src))
	for i, f := range src {
		dst[i] = BF16FromFloat32(f)
	}
}

func checkLens(dst, src int) {
	if dst != src {
		panic(fmt.Sprintf("tensor: converting %d elements into %d", src, dst))
	}
}
