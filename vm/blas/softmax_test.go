package blas

import (
	"math"
	"math/rand/v2"
	"testing"

	"github.com/stretchr/testify/require"
)

// TestExpSubSumF32: the exponentials are ExpF32's of the rounded x - m,
// bitwise, on both paths (the 512-bit pass and the composed one, which
// the tails and other CPUs take), in place too; the sum agrees with a
// float64 sum of dst within n float32 roundings.
func TestExpSubSumF32(t *testing.T) {
	rng := rand.New(rand.NewPCG(7, 23))
	for _, n := range []int{0, 1, 7, 15, 16, 17, 31, 128, 130, 1000} {
		x := make([]float32, n)
		for i := range x {
			x[i] = float32(rng.NormFloat64() * 4)
		}
		m := float32(1.5)
		if n > 0 {
			m = x[rng.IntN(n)]
		}
		want := make([]float32, n)
		for i, v := range x {
			want[i] = v - m
		}
		ExpF32(want, want)
		var ref float64
		for _, v := range want {
			ref += float64(v)
		}
		for _, path := range []struct {
			name string
			f    func(dst, x []float32, m float32) float32
		}{{"dispatch", ExpSubSumF32}, {"composed", expSubSumF32Composed}} {
			dst := make([]float32, n)
			s := path.f(dst, x, m)
			require.Equal(t, want, dst, "%s n=%d", path.name, n)
			require.InDelta(t, ref, float64(s), float64(n+1)*6e-8*ref+1e-30, "%s n=%d sum", path.name, n)
			in := make([]float32, n)
			copy(in, x)
			s2 := path.f(in, in, m)
			require.Equal(t, want, in, "%s n=%d in place", path.name, n)
			require.Equal(t, s, s2, "%s n=%d in place sum", path.name, n)
		}
	}
	require.PanicsWithValue(t, "blas.ExpSubSumF32: lengths differ: dst 2, x 3", func() { ExpSubSumF32(make([]float32, 2), make([]float32, 3), 0) })
	// -Inf - m is -Inf, exp 0; a NaN poisons the sum.
	dst := make([]float32, 20)
	x := make([]float32, 20)
	x[3] = float32(math.Inf(-1))
	require.Equal(t, float32(19), ExpSubSumF32(dst, x, 0))
	x[18] = float32(math.NaN())
	require.True(t, math.IsNaN(float64(ExpSubSumF32(dst, x, 0))))
}

// softmaxCase is one input of the row tests: rows of n elements with some
// special rows (a -Inf, all -Inf, a NaN, a +Inf) when special.
func softmaxCase(rng *rand.Rand, rows, n int, special bool) []float32 {
	x := make([]float32, rows*n)
	for i := range x {
		x[i] = float32(rng.NormFloat64() * 6)
	}
	if special && rows >= 5 {
		x[1*n+n/2] = float32(math.Inf(-1))
		for i := range n {
			x[2*n+i] = float32(math.Inf(-1))
		}
		x[3*n+n-1] = float32(math.NaN())
		x[4*n] = float32(math.Inf(1))
	}
	return x
}

// rowRef returns max(init, row) with Go's NaN rule and the float64 sum of
// the float64 exponentials of the rounded x - m.
func rowRef(xr []float32, init float32) (m float32, s float64) {
	m = init
	for _, v := range xr {
		m = max(m, v)
	}
	for _, v := range xr {
		s += math.Exp(float64(v - m))
	}
	return m, s
}

// TestSoftmaxRowsF32: on row lengths around the vector width (1, 15, 16,
// 17, ...), with the 512-bit path and the portable one, m is the exact row
// maximum (NaN for a row with a NaN), s the sum within 2e-6 relative and
// every output within 3e-6 relative (+1e-37 absolute; serialSumError more
// for both on the portable build) of float64 softmax
// on the rounded x - m: ExpMaxULP per exponential, the sum's roundings
// and the multiply by 1/s; special rows give NaN where the TIR does
// (0/0, Inf-Inf, NaN), 0 for -Inf. In place too.
func TestSoftmaxRowsF32(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 5))
	const init = -math.MaxFloat32
	paths := []struct {
		name string
		f    func(dst, x, m, s []float32)
	}{
		{"dispatch", func(dst, x, m, s []float32) { SoftmaxRowsF32(dst, x, m, s, init) }},
		{"go", func(dst, x, m, s []float32) { softmaxRowsGo(dst, x, m, s, len(m), len(x)/len(m), init) }},
	}
	for _, n := range []int{1, 2, 15, 16, 17, 31, 32, 33, 48, 64, 100, 128, 1000, 5000} {
		for _, rows := range []int{1, 6, 37} {
			x := softmaxCase(rng, rows, n, true)
			for _, p := range paths {
				dst, m, s := make([]float32, len(x)), make([]float32, rows), make([]float32, rows)
				p.f(dst, x, m, s)
				for r := range rows {
					xr := x[r*n : (r+1)*n]
					wm, ws := rowRef(xr, init)
					if wm != wm {
						require.True(t, m[r] != m[r], "%s n=%d r=%d: m %v, want NaN", p.name, n, r, m[r])
					} else {
						require.Equal(t, wm, m[r], "%s n=%d r=%d m", p.name, n, r)
					}
					if ws != ws {
						require.True(t, s[r] != s[r], "%s n=%d r=%d: s %v, want NaN", p.name, n, r, s[r])
					} else {
						require.InEpsilon(t, ws+1e-300, float64(s[r])+1e-300, 2e-6+serialSumError(n), "%s n=%d r=%d s", p.name, n, r)
					}
					for i, v := range xr {
						want := math.Exp(float64(v-wm)) / ws
						got := float64(dst[r*n+i])
						if want != want {
							require.True(t, got != got, "%s n=%d r=%d i=%d: %v, want NaN", p.name, n, r, i, got)
							continue
						}
						require.InDelta(t, want, got, (3e-6+serialSumError(n))*want+1e-37, "%s n=%d r=%d i=%d", p.name, n, r, i)
					}
				}
				in := append([]float32(nil), x...)
				m2, s2 := make([]float32, rows), make([]float32, rows)
				p.f(in, in, m2, s2)
				requireSameBits(t, dst, in, "%s n=%d rows=%d in place", p.name, n, rows)
			}
		}
	}
	require.PanicsWithValue(t, "blas.SoftmaxRowsF32: lengths do not fit: dst 6, x 6, m 4, s 4", func() {
		SoftmaxRowsF32(make([]float32, 6), make([]float32, 6), make([]float32, 4), make([]float32, 4), 0)
	})
	SoftmaxRowsF32(nil, nil, nil, nil, 0) // no rows
}

// TestLogSoftmaxRowsF32: m and s as TestSoftmaxRowsF32's; every output
// within 2e-6 relative of |x - m| + |ln s| (the logarithm's LogMaxULP, the
// final rounding) plus 5e-7 (the sum's roundings: ln(s(1+d)) - ln s = d)
// of float64 (x - m) - ln s, over rows long and short
// enough to take one and many rows per block.
func TestLogSoftmaxRowsF32(t *testing.T) {
	rng := rand.New(rand.NewPCG(4, 6))
	const init = -math.MaxFloat32
	paths := []struct {
		name string
		f    func(dst, x, m, s []float32)
	}{
		{"dispatch", func(dst, x, m, s []float32) { LogSoftmaxRowsF32(dst, x, m, s, init) }},
		{"go", func(dst, x, m, s []float32) {
			for lo := 0; lo < len(m); lo += 64 {
				hi := min(lo+64, len(m))
				n := len(x) / len(m)
				logSoftmaxBlockGo(dst[lo*n:hi*n], x[lo*n:hi*n], m[lo:hi], s[lo:hi], new([64]float32), n, init)
			}
		}},
	}
	for _, n := range []int{1, 3, 16, 17, 63, 128, 129, 4096, 5000} {
		for _, rows := range []int{1, 6, 70} {
			x := softmaxCase(rng, rows, n, true)
			for _, p := range paths {
				dst, m, s := make([]float32, len(x)), make([]float32, rows), make([]float32, rows)
				p.f(dst, x, m, s)
				for r := range rows {
					xr := x[r*n : (r+1)*n]
					wm, ws := rowRef(xr, init)
					if wm != wm {
						require.True(t, m[r] != m[r], "%s n=%d r=%d: m %v, want NaN", p.name, n, r, m[r])
					} else {
						require.Equal(t, wm, m[r], "%s n=%d r=%d m", p.name, n, r)
					}
					for i, v := range xr {
						d := float64(v - wm)
						want := d - math.Log(ws)
						got := float64(dst[r*n+i])
						if want != want {
							require.True(t, got != got, "%s n=%d r=%d i=%d: %v, want NaN", p.name, n, r, i, got)
							continue
						}
						if math.IsInf(want, 0) {
							require.Equal(t, want, got, "%s n=%d r=%d i=%d", p.name, n, r, i)
							continue
						}
						require.InDelta(t, want, got, 2e-6*(math.Abs(d)+math.Abs(math.Log(ws)))+5e-7+serialSumError(n), "%s n=%d r=%d i=%d", p.name, n, r, i)
					}
				}
				in := append([]float32(nil), x...)
				m2, s2 := make([]float32, rows), make([]float32, rows)
				p.f(in, in, m2, s2)
				requireSameBits(t, dst, in, "%s n=%d rows=%d in place", p.name, n, rows)
			}
		}
	}
}

// serialSumError is the extra relative error of a row's sum where it is
// accumulated one term after another (the portable build: -tags purego or
// a CPU without AVX2): up to (n-1) roundings of 2^-24 for n positive
// terms. The vector paths keep 8 or 16 partial sums, whose error the
// tests' base tolerances cover.
func serialSumError(n int) float64 {
	if hasAVX2FMA {
		return 0
	}
	return float64(n-1) * 0x1p-24
}

func requireSameBits(t *testing.T, want, got []float32, msg string, args ...any) {
	t.Helper()
	require.Equal(t, len(want), len(got))
	for i := range want {
		if math.Float32bits(want[i]) != math.Float32bits(got[i]) && !(want[i] != want[i] && got[i] != got[i]) {
			require.Failf(t, "values differ", "element %d: %v vs %v: "+msg, append([]any{i, want[i], got[i]}, args...)...)
		}
	}
}

// TestSoftmaxExpULP measures the softmax rows' exponential (exp512Softmax,
// through rowsExpSubSumF32AVX512 with m = 0) against math.Exp over the
// dense non-positive float32 samples (every 2^10-th bit pattern and the
// edge cases; the rows' arguments x - m are never positive): at most
// ExpSoftmaxMaxULP, NaN and the underflow threshold exactly as ExpF32's.
func TestSoftmaxExpULP(t *testing.T) {
	if !hasAVX512Math {
		t.Skip("no AVX-512: the rows run ExpF32")
	}
	var xs []float32
	for _, x := range denseInputs() {
		if !(x > 0) { // NaN too
			xs = append(xs, x)
		}
	}
	got := make([]float32, len(xs))
	m, s := []float32{0}, []float32{0}
	rowsExpSubSumF32AVX512(&got[0], &xs[0], &m[0], &s[0], 1, len(xs))
	exp := mathFunc{name: "ExpSoftmax", ref: math.Exp}
	worst, at := 0.0, float32(0)
	for i, x := range xs {
		if e := exp.ulpError(x, got[i]); e > worst || math.IsNaN(e) {
			worst, at = e, x
		}
	}
	t.Logf("max error %.3f ULP at x=%g", worst, at)
	require.LessOrEqual(t, worst, ExpSoftmaxMaxULP, "max error at x=%g", at)
	ref := make([]float32, len(xs))
	ExpF32(ref, xs)
	for i, x := range xs {
		if x != x || x > 88.73 || x < -103.98 { // NaN, +Inf, 0: as ExpF32
			requireSameBits(t, ref[i:i+1], got[i:i+1], "x=%g", x)
		}
	}
}
