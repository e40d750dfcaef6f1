package blas

import (
	"fmt"
	"math"
	"math/rand/v2"
	"testing"

	"github.com/stretchr/testify/require"
)

// vecLengths cover the empty slice, every tail path of the vector loops
// (32-wide, 8-wide, scalar), and one length past the non-temporal
// threshold (2 Mi elements) so the aligned-head and streaming path runs.
var vecLengths = []int{0, 1, 7, 8, 9, 31, 32, 33, 63, 100, 1000, 1<<21 + 37}

// vecInput returns n random values with a few specials (NaN, ±Inf, ±0,
// subnormal) sprinkled in, starting at element offset off of its backing
// array so that the vector loops see unaligned pointers.
func vecInput(rng *rand.Rand, n, off int) []float32 {
	s := make([]float32, n+off)[off:]
	specials := []float32{float32(math.NaN()), float32(math.Inf(1)), float32(math.Inf(-1)), 0, float32(math.Copysign(0, -1)), 1e-40}
	for i := range s {
		if rng.IntN(50) == 0 {
			s[i] = specials[rng.IntN(len(specials))]
		} else {
			s[i] = rng.Float32()*8 - 4
		}
	}
	return s
}

// sameFloat is bitwise equality, except that any NaN matches any NaN and,
// when zeroSign is false, -0 matches +0.
func sameFloat(got, want float32, zeroSign bool) bool {
	if got != got || want != want {
		return got != got && want != want
	}
	if !zeroSign {
		return got == want
	}
	return math.Float32bits(got) == math.Float32bits(want)
}

func requireSameFloats(t *testing.T, label string, got, want []float32, zeroSign bool) {
	t.Helper()
	require.Len(t, got, len(want), label)
	for i := range got {
		if !sameFloat(got[i], want[i], zeroSign) {
			require.Failf(t, "elementwise mismatch", "%s: element %d = %v, want %v", label, i, got[i], want[i])
		}
	}
}

func TestBinaryPrimitivesMatchGoLoops(t *testing.T) {
	type binop struct {
		name     string
		f        func(dst, a, b []float32)
		ref      func(a, b float32) float32
		zeroSign bool
	}
	ops := []binop{
		{"AddF32", AddF32, func(a, b float32) float32 { return a + b }, true},
		{"SubF32", SubF32, func(a, b float32) float32 { return a - b }, true},
		{"MulF32", MulF32, func(a, b float32) float32 { return a * b }, true},
		{"DivF32", DivF32, func(a, b float32) float32 { return a / b }, true},
		// max/min(-0, +0) has an unspecified sign (documented).
		{"MaximumF32", MaximumF32, func(a, b float32) float32 { return max(a, b) }, false},
		{"MinimumF32", MinimumF32, func(a, b float32) float32 { return min(a, b) }, false},
	}
	rng := rand.New(rand.NewPCG(5, 5))
	for _, op := range ops {
		for _, n := range vecLengths {
			for _, off := range []int{0, 3} {
				label := fmt.Sprintf("%s/n=%d/off=%d", op.name, n, off)
				a, b := vecInput(rng, n, off), vecInput(rng, n, 1)
				want := make([]float32, n)
				for i := range want {
					want[i] = op.ref(a[i], b[i])
				}
				dst := vecInput(rng, n, off)
				op.f(dst, a, b)
				requireSameFloats(t, label, dst, want, op.zeroSign)
				op.f(a, a, b) // in place
				requireSameFloats(t, label+"/in-place", a, want, op.zeroSign)
			}
		}
	}
}

func TestScalarPrimitivesMatchGoLoops(t *testing.T) {
	type scalarOp struct {
		name     string
		f        func(dst, a []float32, s float32)
		ref      func(a, s float32) float32
		zeroSign bool
	}
	ops := []scalarOp{
		{"AddScalarF32", AddScalarF32, func(a, s float32) float32 { return a + s }, true},
		{"ScaleF32", ScaleF32, func(a, s float32) float32 { return a * s }, true},
		// max(-0, +0) has an unspecified sign (documented).
		{"MaxScalarF32", MaxScalarF32, func(a, s float32) float32 { return max(a, s) }, false},
	}
	rng := rand.New(rand.NewPCG(6, 6))
	for _, op := range ops {
		for _, n := range vecLengths {
			for _, s := range []float32{0, 1.5, -2.25} {
				label := fmt.Sprintf("%s/n=%d/s=%g", op.name, n, s)
				a := vecInput(rng, n, 1)
				want := make([]float32, n)
				for i := range want {
					want[i] = op.ref(a[i], s)
				}
				dst := make([]float32, n)
				op.f(dst, a, s)
				requireSameFloats(t, label, dst, want, op.zeroSign)
			}
		}
	}
}

func TestRowBroadcast(t *testing.T) {
	rng := rand.New(rand.NewPCG(7, 7))
	for _, shape := range [][2]int{{0, 5}, {1, 1}, {3, 7}, {5, 64}, {17, 33}} {
		rows, cols := shape[0], shape[1]
		a, row := vecInput(rng, rows*cols, 0), vecInput(rng, cols, 0)
		wantAdd, wantMul := make([]float32, rows*cols), make([]float32, rows*cols)
		for i := range rows {
			for j := range cols {
				wantAdd[i*cols+j] = a[i*cols+j] + row[j]
				wantMul[i*cols+j] = a[i*cols+j] * row[j]
			}
		}
		dst := make([]float32, rows*cols)
		AddRowF32(dst, a, row)
		requireSameFloats(t, fmt.Sprint("AddRowF32 ", shape), dst, wantAdd, true)
		MulRowF32(dst, a, row)
		requireSameFloats(t, fmt.Sprint("MulRowF32 ", shape), dst, wantMul, true)
	}
}

func TestPrimitivesRejectMismatchedLengths(t *testing.T) {
	require.PanicsWithValue(t, "blas.AddF32: lengths differ: dst 3, a 3, b 2", func() {
		AddF32(make([]float32, 3), make([]float32, 3), make([]float32, 2))
	})
	require.PanicsWithValue(t, "blas.ScaleF32: lengths differ: dst 3, a 4", func() {
		ScaleF32(make([]float32, 3), make([]float32, 4), 2)
	})
	require.PanicsWithValue(t, "blas.AddRowF32: len(dst)=6, len(a)=6 must be equal and a multiple of len(row)=4", func() {
		AddRowF32(make([]float32, 6), make([]float32, 6), make([]float32, 4))
	})
}

// TestPortableAndAVX2Agree runs the Go fallback loops against the
// dispatched ones (the AVX2 loops on this CPU) on the same inputs.
func TestPortableAndAVX2Agree(t *testing.T) {
	rng := rand.New(rand.NewPCG(8, 8))
	for _, n := range vecLengths {
		a, b := vecInput(rng, n, 0), vecInput(rng, n, 0)
		got, want := make([]float32, n), make([]float32, n)
		for _, pair := range []struct {
			name string
			fast binaryLoop
			slow func(dst, a, b []float32)
		}{{"add", addF32, addF32Go}, {"sub", subF32, subF32Go}, {"mul", mulF32, mulF32Go}, {"div", divF32, divF32Go},
			{"maximum", maximumF32, maximumF32Go}, {"minimum", minimumF32, minimumF32Go}} {
			for _, stream := range []bool{false, true} {
				pair.fast(got, a, b, stream)
				pair.slow(want, a, b)
				zeroSign := pair.name != "maximum" && pair.name != "minimum"
				requireSameFloats(t, fmt.Sprintf("%s/n=%d/stream=%v", pair.name, n, stream), got, want, zeroSign)
			}
		}
	}
}
