package blas

import (
	"math"
	"slices"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// mathFunc is one vector math function with its float64 reference.
type mathFunc struct {
	name   string
	vec    func(dst, x []float32) // the exported (dispatching) function
	goLoop unaryLoop              // the portable loop
	ref    func(x float64) float64
	maxULP float64
	// scale, when set, is the magnitude whose ULP measures the error
	// (GELU for x < 0: see math.go).
	scale func(x, want float64) float64
}

var mathFuncs = []mathFunc{
	{name: "Exp", vec: ExpF32, goLoop: expF32Go, ref: math.Exp, maxULP: ExpMaxULP},
	{name: "Log", vec: LogF32, goLoop: logF32Go, ref: math.Log, maxULP: LogMaxULP},
	{name: "Erf", vec: ErfF32, goLoop: erfF32Go, ref: math.Erf, maxULP: ErfMaxULP},
	{name: "Tanh", vec: TanhF32, goLoop: tanhF32Go, ref: math.Tanh, maxULP: TanhMaxULP},
	{name: "Sigmoid", vec: SigmoidF32, goLoop: sigmoidF32Go, ref: sigmoidRef, maxULP: SigmoidMaxULP},
	{name: "Gelu", vec: GeluF32, goLoop: geluF32Go, ref: geluRef, maxULP: GeluMaxULP,
		scale: geluScale},
	{name: "GeluTanh", vec: GeluTanhF32, goLoop: geluTanhF32Go, ref: geluTanhRef, maxULP: GeluTanhMaxULP, scale: geluScale},
	{name: "Sqrt", vec: SqrtF32, goLoop: sqrtF32Go, ref: math.Sqrt, maxULP: SqrtMaxULP},
	{name: "Rsqrt", vec: RsqrtF32, goLoop: rsqrtF32Go, ref: func(x float64) float64 { return 1 / math.Sqrt(x) }, maxULP: RsqrtMaxULP},
}

// geluScale measures GELU errors for x < 0 in ULPs of x/2 (see math.go).
func geluScale(x, want float64) float64 {
	if x < 0 {
		return math.Max(math.Abs(want), -x/2)
	}
	return want
}

func sigmoidRef(x float64) float64 {
	if x < 0 {
		e := math.Exp(x)
		return e / (1 + e)
	}
	return 1 / (1 + math.Exp(-x))
}

// geluRef uses erfc for x < 0, where 1+erf(x/√2) cancels.
func geluRef(x float64) float64 {
	if x < 0 {
		return 0.5 * x * math.Erfc(-x/math.Sqrt2)
	}
	return 0.5 * x * (1 + math.Erf(x/math.Sqrt2))
}

func geluTanhRef(x float64) float64 {
	u := math.Sqrt(2/math.Pi) * (x + 0.044715*x*x*x)
	if math.IsInf(x, 0) {
		return x * (1 + math.Tanh(u)) / 2 // NaN at -Inf, as the formula
	}
	return x / (1 + math.Exp(-2*u))
}

// ulp32 is the spacing of float32 values at magnitude |v|.
func ulp32(v float64) float64 {
	a := math.Abs(v)
	if a < 0x1p-126 {
		return 0x1p-149
	}
	_, e := math.Frexp(a)
	return math.Ldexp(1, e-24)
}

// ulpError is |got - want| in ULPs of scale (of want when scale is nil);
// NaN and infinities must match exactly (+Inf when want rounds to it).
func (f mathFunc) ulpError(x float32, got float32) float64 {
	want := f.ref(float64(x))
	g := float64(got)
	switch {
	case math.IsNaN(want) || math.IsNaN(g):
		if math.IsNaN(want) && math.IsNaN(g) {
			return 0
		}
		return math.Inf(1)
	case math.IsInf(float64(float32(want)), 0) || math.IsInf(g, 0):
		if float32(want) == got {
			return 0
		}
		if math.IsInf(g, 0) { // a finite want just below the overflow threshold
			g = math.Copysign(math.MaxFloat32, g)
		}
	}
	s := want
	if f.scale != nil {
		s = f.scale(float64(x), want)
	}
	return math.Abs(g-want) / ulp32(s)
}

// denseInputs are every 2^10-th float32 bit pattern and the edge cases;
// the length is not a multiple of 8, so the tail path runs too.
func denseInputs() []float32 {
	xs := make([]float32, 0, 1<<22+64)
	for b := uint64(0); b < 1<<32; b += 1 << 10 {
		xs = append(xs, math.Float32frombits(uint32(b)+uint32(b>>22))) // vary the low bits too
	}
	edges := []float32{0, float32(math.Copysign(0, -1)), 0x1p-149, -0x1p-149, 0x1p-126, 0x1.fffffcp-127,
		float32(math.Inf(1)), float32(math.Inf(-1)), float32(math.NaN()), math.MaxFloat32, -math.MaxFloat32,
		88.72283, 88.72284, 88.7229, 89, -87.33654, -87.3366, -103.27893, -103.97208, -103.9721, -104, -150,
		0.625, -0.625, 0.62499994, 1, -1, 0.99999994, 4, 3.92, 3.9, -3.9, 9.01, 1e-20, -1e-20, 1e-40, -1e-40,
		0.70710677, 0.7071068, 1.4142135, 2, 0.5}
	return append(xs, edges...)
}

func TestVectorMathULP(t *testing.T) {
	xs := denseInputs()
	require.NotZero(t, len(xs)%8)
	got := make([]float32, len(xs))
	for _, f := range mathFuncs {
		for _, impl := range []struct {
			name string
			run  func(dst, x []float32)
		}{{"dispatch", f.vec}, {"go", f.goLoop}} {
			t.Run(f.name+"/"+impl.name, func(t *testing.T) {
				impl.run(got, xs)
				worst, at := 0.0, float32(0)
				for i, x := range xs {
					if e := f.ulpError(x, got[i]); e > worst || math.IsNaN(e) {
						worst, at = e, x
					}
				}
				t.Logf("%s: max error %.3f ULP at x=%g (%#08x)", impl.name, worst, at, math.Float32bits(at))
				assert.LessOrEqual(t, worst, f.maxULP, "max error at x=%g: got %g, want %g", at,
					got[slices.Index(xs, at)], f.ref(float64(at)))
			})
		}
	}
}

func TestVectorMathTailsAndInPlace(t *testing.T) {
	for _, f := range mathFuncs {
		for n := range 20 {
			x := make([]float32, n+1)[1:] // unaligned
			for i := range x {
				x[i] = float32(i)*0.37 - 3
			}
			want := make([]float32, n)
			f.goLoop(want, x)
			got := make([]float32, n)
			f.vec(got, x)
			for i := range got {
				assert.LessOrEqual(t, f.ulpError(x[i], got[i]), f.maxULP, "%s n=%d i=%d", f.name, n, i)
			}
			f.vec(x, x) // in place
			for i := range x {
				assert.True(t, sameFloat(x[i], got[i], true), "%s in place n=%d i=%d: %v, want %v", f.name, n, i, x[i], got[i])
			}
		}
	}
	assert.PanicsWithValue(t, "blas.ExpF32: lengths differ: dst 2, a 3", func() { ExpF32(make([]float32, 2), make([]float32, 3)) })
}

// TestVectorMathAsmMatchesGo guards the duplicated coefficient tables
// (math.go for Go, gen_math.go for the assembly's constants): the two
// implementations run the same operations, so they may differ only where
// Go's fma32 rounds twice, in a tiny fraction of the inputs; a changed
// coefficient would change most results.
func TestVectorMathAsmMatchesGo(t *testing.T) {
	xs := denseInputs()
	a, b := make([]float32, len(xs)), make([]float32, len(xs))
	for _, f := range mathFuncs {
		f.vec(a, xs)
		f.goLoop(b, xs)
		diff := 0
		for i := range xs {
			if math.Float32bits(a[i]) != math.Float32bits(b[i]) && !(a[i] != a[i] && b[i] != b[i]) {
				diff++
			}
		}
		// Double rounding in Go's fma32 flips a last bit in a tiny fraction.
		assert.LessOrEqual(t, diff, len(xs)/1000, "%s: %d of %d results differ bitwise", f.name, diff, len(xs))
	}
}

// BenchmarkMathSideBySide times each function and a plain Go loop over
// Go's math (float64) on the same 4096 inputs, interleaved, and reports
// the ratio (math loop time / vector time):
//
//	go test ./vm/blas -run '^$' -bench MathSideBySide -benchtime 2000x
func BenchmarkMathSideBySide(b *testing.B) {
	const n = 4096
	x := make([]float32, n)
	for i := range x {
		x[i] = float32(i)/n*16 - 8
	}
	pos := make([]float32, n)
	for i := range pos {
		pos[i] = float32(i+1) / n * 100
	}
	dst := make([]float32, n)
	loops := map[string]func(){
		"Exp":      func() { mathLoop(dst, x, math.Exp) },
		"Log":      func() { mathLoop(dst, pos, math.Log) },
		"Erf":      func() { mathLoop(dst, x, math.Erf) },
		"Tanh":     func() { mathLoop(dst, x, math.Tanh) },
		"Sigmoid":  func() { mathLoop(dst, x, func(v float64) float64 { return 1 / (1 + math.Exp(-v)) }) },
		"Gelu":     func() { mathLoop(dst, x, func(v float64) float64 { return 0.5 * v * (1 + math.Erf(v/math.Sqrt2)) }) },
		"GeluTanh": func() { mathLoop(dst, x, geluTanhRef) },
		"Sqrt":     func() { mathLoop(dst, pos, math.Sqrt) },
		"Rsqrt":    func() { mathLoop(dst, pos, func(v float64) float64 { return 1 / math.Sqrt(v) }) },
	}
	for _, f := range mathFuncs {
		in := x
		if f.name == "Log" || f.name == "Sqrt" || f.name == "Rsqrt" {
			in = pos
		}
		b.Run(f.name, func(b *testing.B) {
			var tv, tm time.Duration
			for range b.N {
				t0 := time.Now()
				f.vec(dst, in)
				t1 := time.Now()
				loops[f.name]()
				tm += time.Since(t1)
				tv += t1.Sub(t0)
			}
			b.ReportMetric(float64(tv.Nanoseconds())/float64(b.N*n), "ns/elem")
			b.ReportMetric(float64(tm)/float64(tv), "x-vs-math")
		})
	}
}

func mathLoop(dst, x []float32, f func(float64) float64) {
	for i, v := range x {
		dst[i] = float32(f(float64(v)))
	}
}
