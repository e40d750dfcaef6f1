package kernel

import (
	"math"
	"math/rand/v2"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/phasec/phasec/ir"
)

// TestVecScalarDivPowerOfTwo checks that a division by a power of two,
// which vecScalar runs as a multiply by the exact reciprocal, gives the
// division's float32 bits for every kind of dividend (normal, subnormal,
// ±0, ±Inf, NaN, results that underflow or overflow), and that other
// divisors keep the division.
func TestVecScalarDivPowerOfTwo(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 7))
	a := []float32{0, float32(math.Copysign(0, -1)), float32(math.Inf(1)), float32(math.Inf(-1)), float32(math.NaN()),
		math.MaxFloat32, -math.MaxFloat32, math.SmallestNonzeroFloat32, 1e-40, -3e-39, 1.17549435e-38, 1, -1}
	for len(a) < rowChunk {
		a = append(a, math.Float32frombits(rng.Uint32()))
	}
	divisors := []float32{8, 0.125, -2, 1, 0x1p127, -0x1p-126, 0x1p-100, 3, 0.1, 1e-40, float32(math.Inf(1)), 0}
	for _, s := range divisors {
		_, fast := exactReciprocal(s)
		frac := math.Float32bits(s) & (1<<23 - 1)
		exp := math.Float32bits(s) >> 23 & 0xff
		require.Equal(t, frac == 0 && exp != 0 && exp != 0xff, fast, "divisor %g", s)
		got := make([]float32, len(a))
		vecScalar(ir.OpDiv, got, a, s, make([]float32, len(a)))
		for i, x := range a {
			want := x / s
			if want != want {
				require.True(t, got[i] != got[i], "%g / %g: got %g, want NaN", x, s, got[i])
				continue
			}
			require.Equal(t, math.Float32bits(want), math.Float32bits(got[i]), "%g / %g", x, s)
		}
	}
}
