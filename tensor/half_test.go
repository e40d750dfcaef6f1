package tensor

import (
	"math"
	"math/rand/v2"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// Expected bit patterns are derived by hand from the binary16 layout
// (sign | 5-bit exponent biased by 15 | 10-bit mantissa).
func TestF16FromFloat32(t *testing.T) {
	p := math.Ldexp
	cases := []struct {
		in   float64
		want F16
		why  string
	}{
		{1, 0x3c00, "1.0: exponent 15, mantissa 0"},
		{-2, 0xc000, "sign, exponent 16"},
		{0.5, 0x3800, "exponent 14"},
		{65504, 0x7bff, "largest finite"},
		{65519, 0x7bff, "below the midpoint to 65536 rounds down"},
		{65520, 0x7c00, "midpoint between 65504 (odd mantissa) and 2^16: ties to even = Inf"},
		{1e6, 0x7c00, "overflow"},
		{-1e6, 0xfc00, "negative overflow"},
		{p(1, -14), 0x0400, "smallest normal"},
		{p(1023, -24), 0x03ff, "largest subnormal"},
		{p(1, -24), 0x0001, "smallest subnormal"},
		{p(1, -25), 0x0000, "half the smallest subnormal ties to even zero"},
		{p(1, -25) * (1 + p(1, -20)), 0x0001, "just above the tie rounds up"},
		{p(3, -25), 0x0002, "1.5 ulp subnormal ties to even 2"},
		{p(5, -25), 0x0002, "2.5 ulp subnormal ties to even 2"},
		{p(1, -30), 0x0000, "far below: zero"},
		{-p(1, -30), 0x8000, "far below keeps the sign"},
		{p(2047, -25), 0x0400, "rounding the largest subnormal up gives the smallest normal"},
		{1 + p(1, -11), 0x3c00, "tie between 0x3c00 and 0x3c01 goes to even"},
		{1 + p(3, -11), 0x3c02, "tie between 0x3c01 and 0x3c02 goes to even"},
		{1 + p(1, -11) + p(1, -20), 0x3c01, "above the tie rounds up"},
		{2 - p(1, -12), 0x4000, "rounding carries into the exponent"},
		{0.1, 0x2e66, "0.1 = 1.6*2^-4: mantissa 0.6*1024 = 614.4 -> 614 = 0x266"},
		{1.0 / 3, 0x3555, "1/3 = 1.333*2^-2: mantissa 341.33 -> 341 = 0x155"},
		{0, 0x0000, "zero"},
		{math.Copysign(0, -1), 0x8000, "negative zero"},
		{math.Inf(1), 0x7c00, "Inf"},
		{math.Inf(-1), 0xfc00, "-Inf"},
		{float64(math.SmallestNonzeroFloat32), 0x0000, "float32 subnormal underflows"},
	}
	for _, c := range cases {
		assert.Equalf(t, c.want, F16FromFloat32(float32(c.in)), "%v: %s", c.in, c.why)
		assert.Equalf(t, c.want, F16FromFloat64(c.in), "float64 %v: %s", c.in, c.why)
	}
	nan := F16FromFloat32(float32(math.NaN()))
	assert.Equal(t, F16(0x7c00), nan&0x7c00, "NaN exponent all ones")
	assert.NotZero(t, nan&0x3ff, "NaN mantissa nonzero")
	// A float32 NaN whose payload sits only in the low bits must not become Inf.
	snan := F16FromFloat32(math.Float32frombits(0x7f800001))
	assert.True(t, math.IsNaN(float64(snan.Float32())), "signalling NaN stays NaN: %#x", snan)
}

func TestF16ToFloat32(t *testing.T) {
	p := math.Ldexp
	cases := map[F16]float64{
		0x3c00: 1, 0xc000: -2, 0x7bff: 65504, 0x0400: p(1, -14), 0x03ff: p(1023, -24),
		0x0001: p(1, -24), 0x3555: 0.333251953125, 0x7c00: math.Inf(1), 0xfc00: math.Inf(-1),
	}
	for h, want := range cases {
		assert.Equalf(t, want, float64(h.Float32()), "%#04x", uint16(h))
	}
	assert.Equal(t, uint32(0x80000000), math.Float32bits(F16(0x8000).Float32()), "negative zero")
	assert.True(t, math.IsNaN(float64(F16(0x7e00).Float32())))
	assert.True(t, math.IsNaN(float64(F16(0xfc01).Float32())))
}

// Every binary16 value converts to float32 and back to itself (NaNs to a NaN).
func TestF16RoundTripAllValues(t *testing.T) {
	for i := 0; i < 1<<16; i++ {
		h := F16(i)
		f := h.Float32()
		if f != f {
			assert.True(t, math.IsNaN(float64(F16FromFloat32(f).Float32())))
			continue
		}
		require.Equal(t, h, F16FromFloat32(f), "%#04x -> %v -> back", i, f)
	}
}

// Rounding against an independent reference: between consecutive binary16
// values lo < hi, every float32 strictly below the midpoint goes to lo, above
// to hi, and the midpoint to the even one.
func TestF16RoundingAgainstNeighbours(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	for range 200000 {
		lo := F16(r.IntN(0x7bff)) // positive finite, not the largest
		hi := lo + 1
		a, b := float64(lo.Float32()), float64(hi.Float32())
		mid := (a + b) / 2
		x := a + r.Float64()*(b-a)
		want := lo
		if x > mid || x == mid && hi&1 == 0 {
			want = hi
		}
		evenMid := lo
		if hi&1 == 0 {
			evenMid = hi
		}
		require.Equal(t, want, F16FromFloat64(x), "x=%v between %#x and %#x", x, uint16(lo), uint16(hi))
		require.Equal(t, want|0x8000, F16FromFloat64(-x), "-x for x=%v between %#x and %#x", x, uint16(lo), uint16(hi))
		require.Equal(t, evenMid, F16FromFloat64(mid), "midpoint %v between %#x and %#x", mid, uint16(lo), uint16(hi))
	}
}

func TestBF16(t *testing.T) {
	cases := []struct {
		in   uint32 // float32 bits
		want BF16
		why  string
	}{
		{0x3f800000, 0x3f80, "1.0 is the top half"},
		{0x3f808000, 0x3f80, "1+2^-8 is the tie between 0x3f80 and 0x3f81: even"},
		{0x3f818000, 0x3f82, "tie between 0x3f81 and 0x3f82: even"},
		{0x3f808001, 0x3f81, "above the tie rounds up"},
		{0x40490fdb, 0x4049, "pi: dropped half 0x0fdb < 0x8000"},
		{0x7f7fffff, 0x7f80, "max float32 rounds to Inf"},
		{0x7f7f7fff, 0x7f7f, "below the tie stays finite"},
		{0x7f800000, 0x7f80, "Inf"},
		{0xff800000, 0xff80, "-Inf"},
		{0x00000001, 0x0000, "smallest float32 subnormal rounds to zero"},
		{0x00008000, 0x0000, "subnormal tie to even zero"},
		{0x00018000, 0x0002, "subnormal tie to even 2"},
		{0x80000000, 0x8000, "negative zero"},
		{0x3fffffff, 0x4000, "carry into the exponent"},
	}
	for _, c := range cases {
		f := math.Float32frombits(c.in)
		assert.Equalf(t, c.want, BF16FromFloat32(f), "%#08x: %s", c.in, c.why)
		assert.Equalf(t, c.want, BF16FromFloat64(float64(f)), "float64 %#08x: %s", c.in, c.why)
	}
	for _, nan := range []uint32{0x7fc00000, 0x7f800001, 0xff800001, 0x7fffffff} {
		b := BF16FromFloat32(math.Float32frombits(nan))
		assert.True(t, math.IsNaN(float64(b.Float32())), "%#x -> %#x must stay NaN", nan, uint16(b))
		assert.Equal(t, nan>>31, uint32(b)>>15, "NaN keeps its sign")
		assert.True(t, math.IsNaN(float64(BF16FromFloat64(float64(math.Float32frombits(nan))).Float32())))
	}
	assert.Equal(t, float32(1), BF16(0x3f80).Float32())
	assert.Equal(t, float32(-2), BF16(0xc000).Float32())
	// Every bfloat16 value round-trips.
	for i := 0; i < 1<<16; i++ {
		b := BF16(i)
		f := b.Float32()
		if f == f {
			require.Equal(t, b, BF16FromFloat32(f), "%#04x -> %v -> back", i, f)
		}
	}
}

// The float32 fast path (bit trick) and the general float64 rounding agree.
func TestBF16PathsAgree(t *testing.T) {
	r := rand.New(rand.NewPCG(3, 4))
	for range 1 << 20 {
		f := math.Float32frombits(r.Uint32())
		a, b := BF16FromFloat32(f), BF16FromFloat64(float64(f))
		if f != f {
			continue
		}
		require.Equal(t, b, a, "%#08x: the float32 path differs from the float64 path", math.Float32bits(f))
	}
}

// The bulk conversions agree with the scalar ones on every 16-bit pattern.
func TestBulkConversions(t *testing.T) {
	h := make([]F16, 1<<16)
	b := make([]BF16, 1<<16)
	for i := range h {
		h[i], b[i] = F16(i), BF16(i)
	}
	f := make([]float32, len(h))
	F16ToFloat32s(f, h)
	back := make([]F16, len(h))
	Float32sToF16(back, f)
	for i := range h {
		require.Equal(t, math.Float32bits(h[i].Float32()), math.Float32bits(f[i]))
		require.Equal(t, F16FromFloat32(f[i]), back[i])
	}
	BF16ToFloat32s(f, b)
	bback := make([]BF16, len(b))
	Float32sToBF16(bback, f)
	for i := range b {
		require.Equal(t, math.Float32bits(b[i].Float32()), math.Float32bits(f[i]))
		require.Equal(t, BF16FromFloat32(f[i]), bback[i])
	}
	assert.Panics(t, func() { F16ToFloat32s(f[:2], h[:3]) })
}
