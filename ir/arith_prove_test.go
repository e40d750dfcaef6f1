package ir

import (
	"math"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestCanProveEqual(t *testing.T) {
	n, m := SymVar("n"), SymVar("m")
	x := NewPrimVar("x", Float32)
	cases := []struct {
		a, b PrimExpr
		want bool
	}{
		{Mul(i64(4), Mul(i64(2), n)), Mul(i64(8), n), true},
		{Mul(Add(n, m), Add(n, m)), Add(Add(Mul(n, n), Mul(i64(2), Mul(n, m))), Mul(m, m)), true},
		{Sub(Add(n, m), n), m, true},
		{FloorDiv(Mul(n, i64(4)), i64(2)), Add(n, n), true},
		{Min(n, m), Min(m, n), true},
		{Add(FloorMod(n, i64(4)), Mul(FloorDiv(n, i64(4)), i64(4))), n, false}, // true, but beyond the canonical form
		{n, m, false},
		{Add(n, i64(1)), n, false},
		{FloorDiv(n, i64(2)), tdiv(n, i64(2)), false},
		{Mul(i64(2), n), Add(n, i64(2)), false},
		{i64(3), i32(3), true},
		{n, i32(3), false},
		{Add(x, NewFloat(Float32, 1)), Add(x, NewFloat(Float32, 1)), true},
		{Add(x, NewFloat(Float32, 1)), Add(NewFloat(Float32, 1), x), false}, // floats are not reordered
		{x, n, false},
	}
	for _, c := range cases {
		assert.Equal(t, c.want, CanProveEqual(c.a, c.b), "CanProveEqual(%s, %s)", c.a, c.b)
		assert.Equal(t, c.want, CanProveEqual(c.b, c.a), "CanProveEqual(%s, %s) (swapped)", c.b, c.a)
	}
}

func TestConstBounds(t *testing.T) {
	n, m := SymVar("n"), SymVar("m")
	s32 := NewPrimVar("s", Int32)
	u8 := NewPrimVar("u", UInt8)
	b := NewPrimVar("b", Bool)
	an := NewAnalyzer()
	an.SetBounds(n, 0, 10)
	an.SetBounds(m, -3, 5)
	const inf, ninf = math.MaxInt64, math.MinInt64
	free := SymVar("f") // no bounds at all
	cases := []struct {
		e      PrimExpr
		lo, hi int64
	}{
		{i64(7), 7, 7},
		{n, 0, 10},
		{free, ninf, inf},
		{s32, math.MinInt32, math.MaxInt32},
		{u8, 0, 255},
		{b, 0, 1},
		{Add(n, m), -3, 15},
		{Sub(n, m), -5, 13},
		{Mul(n, m), -30, 50},
		{Mul(m, m), 0, 25}, // a square is non-negative (via the canonical form)
		{Sub(n, n), 0, 0},  // the canonical form cancels
		{FloorDiv(n, i64(3)), 0, 3},
		{FloorDiv(m, i64(2)), -2, 2},
		{FloorDiv(m, i64(-2)), -3, 1},
		{FloorDiv(n, Add(m, i64(4))), 0, 10}, // divisor in [1, 9]
		{FloorDiv(n, m), ninf, inf},          // divisor may be zero
		{FloorMod(m, i64(4)), 0, 3},
		{FloorMod(n, i64(16)), 0, 10},
		{FloorMod(Add(n, i64(20)), i64(8)), 0, 7},
		{FloorMod(m, i64(-4)), -3, 0},
		{tdiv(m, i64(2)), -1, 2},
		{tmod(m, i64(4)), -3, 3},
		{tmod(n, i64(4)), 0, 3},
		{Min(n, m), -3, 5},
		{Max(n, m), 0, 10},
		{Max(Sub(n, i64(20)), i64(1)), 1, 1},
		{&Select{Cond: b, True: n, False: Add(m, i64(-10))}, -13, 10},
		{&Select{Cond: lt(n, i64(11)), True: n, False: i64(100)}, 0, 10},
		{&Cast{Type: Int32, Value: n}, 0, 10},
		{&Cast{Type: Int32, Value: free}, math.MinInt32, math.MaxInt32},
		{lt(n, i64(11)), 1, 1},
		{lt(n, m), 0, 1},
		{ge(m, i64(6)), 0, 0},
		// saturation instead of overflow
		{Add(free, i64(1)), ninf, inf},
		{Mul(Add(n, i64(1)), i64(math.MaxInt64/2)), math.MaxInt64 / 2, inf},
		{Sub(i64(0), Mul(Add(n, i64(1)), i64(math.MaxInt64/2))), ninf, -(math.MaxInt64 / 2)},
		{Mul(free, free), 0, inf},
		{FloorDiv(free, i64(2)), ninf, inf},
		{FloorMod(free, i64(5)), 0, 4},
	}
	for _, c := range cases {
		lo, hi, ok := an.ConstBounds(c.e)
		assert.True(t, ok, "ConstBounds(%s) ok", c.e)
		assert.Equal(t, c.lo, lo, "ConstBounds(%s) low", c.e)
		assert.Equal(t, c.hi, hi, "ConstBounds(%s) high", c.e)
	}
	_, _, ok := an.ConstBounds(NewPrimVar("x", Float32))
	assert.False(t, ok, "ConstBounds of a float reported ok")
}

// The interval helpers saturate at the extremes rather than wrapping.
func TestSaturatingArithmetic(t *testing.T) {
	const inf, ninf = math.MaxInt64, math.MinInt64
	cases := []struct {
		name      string
		got, want int64
	}{
		{"max+1", satAdd(inf-1, 2, false), inf},
		{"min-1", satAdd(ninf+1, -2, true), ninf},
		{"inf+-inf low", satAdd(inf, ninf, true), ninf},
		{"inf+-inf high", satAdd(inf, ninf, false), inf},
		{"big*big", satMul(1<<40, 1<<40), inf},
		{"big*-big", satMul(1<<40, -(1 << 40)), ninf},
		{"inf*0", satMul(inf, 0), 0},
		{"-inf*-2", satMul(ninf, -2), inf},
		{"neg inf", satNeg(ninf), inf},
		{"6*7", satMul(6, 7), 42},
	}
	for _, c := range cases {
		assert.Equal(t, c.want, c.got, c.name)
	}
}

func TestCanProveWithBounds(t *testing.T) {
	n, m := SymVar("n"), SymVar("m")
	an := NewAnalyzer()
	an.SetBounds(n, 1, 16)
	an.AssumeNonNegative(m)
	cases := []struct {
		cond PrimExpr
		want bool
	}{
		{le(n, i64(16)), true},
		{lt(n, i64(16)), false},
		{gt(n, i64(0)), true},
		{ge(m, i64(0)), true},
		{gt(m, i64(0)), false},
		{ge(Add(n, m), i64(1)), true},
		{ge(Mul(n, m), i64(0)), true},
		{lt(FloorMod(m, i64(4)), i64(4)), true},
		{le(FloorDiv(n, i64(4)), i64(4)), true},
		{lt(FloorDiv(n, i64(4)), i64(4)), false},
		{eq(Min(n, i64(16)), n), true},
		{ne(n, i64(0)), true},
		{ne(n, i64(5)), false},
		{and(gt(n, i64(0)), ge(m, i64(0))), true},
		{and(gt(n, i64(0)), gt(m, i64(0))), false},
		{or(gt(m, i64(0)), lt(n, i64(17))), true},
		{&Not{A: lt(n, i64(1))}, true},
		{lt(m, Add(m, n)), true},
		{n, false}, // not a condition
	}
	for _, c := range cases {
		assert.Equal(t, c.want, an.CanProve(c.cond), "CanProve(%s)", c.cond)
	}
	// Without assumptions, shape variables are not non-negative.
	assert.False(t, NewAnalyzer().CanProve(ge(m, i64(0))), "an empty analyzer assumed m >= 0")
	var nilAn *Analyzer
	assert.True(t, nilAn.CanProve(lt(n, Add(n, i64(1)))), "a nil analyzer cannot prove n < n + 1")
}

func TestAnalyzerSimplifyUsesBounds(t *testing.T) {
	n, m := SymVar("n"), SymVar("m")
	an := NewAnalyzer()
	an.SetBounds(n, 0, 16)
	an.SetBounds(m, 1, 4)
	cases := []struct {
		in         PrimExpr
		withBounds string
		without    string
	}{
		{Min(n, i64(16)), "n", "T.min(n, 16)"},
		{Max(n, i64(0)), "n", "T.max(n, 0)"},
		{Max(n, i64(17)), "17", "T.max(n, 17)"},
		{Min(n, Mul(m, i64(4))), "T.min(m * 4, n)", "T.min(m * 4, n)"}, // undecided: n may exceed m * 4
		{Max(Mul(m, i64(4)), i64(4)), "m * 4", "T.max(m * 4, 4)"},
		{FloorDiv(m, i64(8)), "0", "m // 8"},
		{FloorMod(m, i64(8)), "m", "m % 8"},
		{FloorDiv(Add(n, i64(1)), i64(32)), "0", "(n + 1) // 32"},
		{tdiv(n, i64(4)), "n // 4", "T.truncdiv(n, 4)"},
		{tmod(n, i64(4)), "n % 4", "T.truncmod(n, 4)"},
		{tdiv(Sub(i64(0), n), i64(4)), "0 - n // 4", "T.truncdiv(0 - n, 4)"},
		{lt(n, i64(17)), "True", "n < 17"},
		{&Select{Cond: ge(n, i64(0)), True: n, False: m}, "n", "T.Select(n >= 0, n, m)"},
	}
	for _, c := range cases {
		assert.Equal(t, c.withBounds, FormatPrim(an.Simplify(c.in), nil), "with bounds, Simplify(%s)", c.in)
		assert.Equal(t, c.without, FormatPrim(Simplify(c.in), nil), "without bounds, Simplify(%s)", c.in)
	}
}

func TestSetBoundsReplacesAndAssumeNonNegativeIntersects(t *testing.T) {
	n := SymVar("n")
	an := NewAnalyzer()
	an.SetBounds(n, -5, 3)
	an.AssumeNonNegative(n)
	lo, hi := an.VarBounds(n)
	require.Equal(t, int64(0), lo, "after AssumeNonNegative: low")
	require.Equal(t, int64(3), hi, "after AssumeNonNegative: high")
	an.SetBounds(n, 2, 9)
	lo, hi = an.VarBounds(n)
	require.Equal(t, int64(2), lo, "after SetBounds: low")
	require.Equal(t, int64(9), hi, "after SetBounds: high")
	s := NewPrimVar("s", Int32)
	an.SetBounds(s, math.MinInt64, 1<<40)
	lo, hi = an.VarBounds(s)
	require.Equal(t, int64(math.MinInt32), lo, "int32 bounds not clipped to the type: low")
	require.Equal(t, int64(math.MaxInt32), hi, "int32 bounds not clipped to the type: high")
}

func BenchmarkCanProveEqualShapeDims(b *testing.B) {
	n := SymVar("n")
	x, y := Add(Mul(n, i64(2)), i64(2)), Mul(Add(n, i64(1)), i64(2))
	b.ReportAllocs()
	for b.Loop() {
		if !CanProveEqual(x, y) || CanProveEqual(n, i64(4)) || !CanProveEqual(i64(4), i64(4)) {
			b.Fatal("wrong answer")
		}
	}
}
