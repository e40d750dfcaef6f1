package ir

import (
	"fmt"
	"math"
	"math/rand"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// Short constructors for the tables.
func i64(v int64) PrimExpr { return I64(v) }
func i32(v int64) PrimExpr { return NewInt(Int32, v) }
func bin(op BinaryOp) func(a, b PrimExpr) PrimExpr {
	return func(a, b PrimExpr) PrimExpr { return NewBinary(op, a, b) }
}

var (
	tdiv = bin(OpDiv)
	tmod = bin(OpMod)
	lt   = bin(OpLT)
	le   = bin(OpLE)
	gt   = bin(OpGT)
	ge   = bin(OpGE)
	eq   = bin(OpEQ)
	ne   = bin(OpNE)
	and  = bin(OpAnd)
	or   = bin(OpOr)
)

func TestSimplifyCanonicalForms(t *testing.T) {
	n, m, k := SymVar("n"), SymVar("m"), SymVar("k")
	f32 := NewPrimVar("x", Float32)
	b := NewPrimVar("b", Bool)
	A := NewBuffer("A", []PrimExpr{i64(8)}, Float32)
	I := NewBuffer("I", []PrimExpr{i64(8)}, Int64)
	cases := []struct {
		in   PrimExpr
		want string
	}{
		// constants and folding
		{Add(i64(2), i64(3)), "5"},
		{Mul(i64(-4), i64(3)), "-12"},
		{Sub(i64(2), i64(7)), "-5"},
		{FloorDiv(i64(-7), i64(2)), "-4"},
		{FloorMod(i64(-7), i64(2)), "1"},
		{FloorDiv(i64(7), i64(-2)), "-4"},
		{FloorMod(i64(7), i64(-2)), "-1"},
		{FloorDiv(i64(-7), i64(-2)), "3"},
		{FloorMod(i64(-7), i64(-2)), "-1"},
		{tdiv(i64(-7), i64(2)), "-3"},
		{tmod(i64(-7), i64(2)), "-1"},
		{tdiv(i64(7), i64(-2)), "-3"},
		{tmod(i64(7), i64(-2)), "1"},
		{FloorDiv(i64(7), i64(0)), "7 // 0"},
		{Min(i64(3), i64(-2)), "-2"},
		{Max(i64(3), i64(-2)), "3"},
		{Add(i32(2147483647), i32(1)), "T.int32(-2147483648)"},

		// sums and products
		{Mul(i64(4), Mul(i64(2), n)), "n * 8"},
		{Mul(i64(8), n), "n * 8"},
		{Sub(Add(n, m), n), "m"},
		{Mul(Add(n, i64(1)), Add(n, i64(1))), "n * n + n * 2 + 1"},
		{Mul(Add(n, i64(1)), Add(i64(1), n)), "n * n + n * 2 + 1"},
		{Add(Mul(i64(2), n), i64(1)), "n * 2 + 1"},
		{Add(i64(1), Add(n, n)), "n * 2 + 1"},
		{Sub(n, n), "0"},
		{Mul(n, i64(0)), "0"},
		{Sub(i64(0), n), "0 - n"},
		{Sub(i64(1), n), "1 - n"},
		{Sub(Sub(i64(0), n), i64(1)), "0 - n - 1"},
		{Add(Sub(n, m), i64(5)), "n + 5 - m"},
		{Sub(Add(n, i64(-5)), Mul(m, i64(3))), "n - m * 3 - 5"},
		{Add(m, n), "m + n"},
		{Add(n, m), "m + n"},
		{Mul(n, m), "m * n"},
		{Mul(Mul(n, m), i64(3)), "m * n * 3"},
		{Mul(Add(n, m), Sub(n, m)), "n * n - m * m"},
		{Mul(Mul(n, n), n), "n * n * n"},
		{Add(Mul(m, n), Add(m, Mul(n, n))), "m * n + m + n * n"},
		{Mul(Sub(n, i64(2)), i64(-3)), "6 - n * 3"},
		{Add(Mul(k, i64(2)), Mul(i64(2), k)), "k * 4"},
		{Sub(Mul(n, k), Mul(k, n)), "0"},

		// floordiv / floormod by constants
		{FloorDiv(Mul(i64(4), n), i64(2)), "n * 2"},
		{FloorMod(Add(Mul(i64(4), n), i64(3)), i64(2)), "1"},
		{FloorDiv(Add(Mul(i64(8), n), i64(3)), i64(4)), "n * 2"},
		{FloorMod(Add(Mul(i64(8), n), i64(3)), i64(4)), "3"},
		{FloorDiv(Add(Mul(i64(8), n), i64(5)), i64(4)), "n * 2 + 1"},
		{FloorDiv(Add(n, i64(4)), i64(4)), "n // 4 + 1"},
		{FloorMod(Add(n, i64(4)), i64(4)), "n % 4"},
		{FloorDiv(Sub(n, i64(1)), i64(4)), "(n + 3) // 4 - 1"},
		{FloorDiv(Add(Mul(n, i64(6)), m), i64(3)), "n * 2 + m // 3"},
		{FloorMod(Add(Mul(n, i64(6)), m), i64(3)), "m % 3"},
		{FloorDiv(Mul(n, i64(2)), i64(4)), "n // 2"},
		{FloorMod(Mul(n, i64(2)), i64(4)), "n % 2 * 2"},
		{FloorDiv(FloorDiv(n, i64(2)), i64(3)), "n // 6"},
		{FloorDiv(FloorDiv(Mul(n, i64(2)), i64(4)), i64(3)), "n // 6"},
		{FloorDiv(FloorDiv(Mul(n, i64(3)), i64(2)), i64(3)), "(n + n // 2) // 3"}, // split first, then no nesting
		{FloorMod(FloorMod(n, i64(8)), i64(4)), "n % 4"},
		{FloorMod(FloorMod(n, i64(4)), i64(8)), "n % 4"}, // n % 4 is in [0, 8)
		{FloorMod(FloorMod(n, i64(6)), i64(4)), "n % 6 % 4"},
		{FloorDiv(n, i64(1)), "n"},
		{FloorMod(n, i64(1)), "0"},
		{FloorDiv(n, i64(-2)), "(0 - n) // 2"},
		{FloorMod(n, i64(-2)), "0 - (0 - n) % 2"},
		{FloorDiv(n, m), "n // m"},
		{FloorDiv(Add(n, n), Add(m, i64(0))), "n * 2 // m"},
		{FloorMod(Mul(i64(3), n), i64(3)), "0"},
		{Add(FloorDiv(n, i64(2)), FloorDiv(n, i64(2))), "n // 2 * 2"},
		{Sub(n, Mul(FloorDiv(n, i64(4)), i64(4))), "n - n // 4 * 4"},
		{tdiv(Mul(n, i64(4)), i64(2)), "n * 2"},
		{tmod(Mul(n, i64(4)), i64(2)), "0"},
		{tdiv(Add(n, i64(1)), i64(2)), "T.truncdiv(n + 1, 2)"},
		{tdiv(n, i64(-1)), "0 - n"},

		// min / max
		{Max(Sub(n, m), i64(1)), "T.max(n - m, 1)"},
		{Max(i64(1), Sub(n, m)), "T.max(n - m, 1)"},
		{Min(n, Add(n, i64(1))), "n"},
		{Max(n, Add(n, i64(1))), "n + 1"},
		{Min(Sub(n, i64(3)), n), "n - 3"},
		{Min(n, n), "n"},
		{Min(m, n), "T.min(m, n)"},
		{Min(n, m), "T.min(m, n)"},
		{Min(Min(m, n), m), "T.min(m, n)"},
		{Min(n, Min(i64(4), Min(m, i64(2)))), "T.min(T.min(m, n), 2)"},
		{Max(Max(n, i64(3)), Max(i64(5), n)), "T.max(n, 5)"},
		{Min(Max(n, m), Max(m, n)), "T.max(m, n)"},
		{Add(Max(n, m), Max(m, n)), "T.max(m, n) * 2"},
		{Sub(Min(n, m), Min(m, n)), "0"},

		// comparisons and logic
		{lt(n, Add(n, i64(1))), "True"},
		{ge(n, Add(n, i64(1))), "False"},
		{le(Add(n, i64(1)), n), "False"},
		{gt(Add(n, i64(1)), n), "True"},
		{eq(Add(n, m), Add(m, n)), "True"},
		{ne(Add(n, m), Add(m, n)), "False"},
		{eq(Mul(n, i64(2)), i64(1)), "False"},
		{ne(Mul(n, i64(2)), i64(1)), "True"},
		{lt(n, m), "n < m"},
		{lt(Mul(i64(2), n), Add(m, m)), "n * 2 < m * 2"},
		{lt(i64(3), i64(4)), "True"},
		{lt(NewFloat(Float32, 1), NewFloat(Float32, 0.5)), "False"},
		{&Not{A: lt(n, m)}, "n >= m"},
		{&Not{A: &Not{A: b}}, "b"},
		{&Not{A: NewBool(true)}, "False"},
		{and(b, NewBool(true)), "b"},
		{and(NewBool(false), b), "False"},
		{or(b, NewBool(true)), "True"},
		{or(NewBool(false), b), "b"},
		{and(b, b), "b"},
		{and(lt(n, m), lt(n, Add(n, i64(1)))), "n < m"},

		// select, cast, calls, loads, floats
		{&Select{Cond: NewBool(true), True: n, False: m}, "n"},
		{&Select{Cond: lt(n, Add(n, i64(2))), True: n, False: m}, "n"},
		{&Select{Cond: b, True: Add(n, n), False: Mul(i64(2), n)}, "n * 2"},
		{Add(&Select{Cond: b, True: Add(n, n), False: m}, i64(1)), "T.Select(b, n * 2, m) + 1"},
		{&Cast{Type: Int32, Value: i64(7)}, "T.int32(7)"},
		{&Cast{Type: Int64, Value: Add(n, n)}, "n * 2"},
		{&Cast{Type: Float32, Value: i64(3)}, "T.float32(3.0)"},
		{&Cast{Type: Int32, Value: NewFloat(Float32, -2.5)}, "T.int32(-2)"},
		{&Cast{Type: Int32, Value: Add(n, n)}, `T.Cast("int32", n * 2)`},
		{&Cast{Type: Bool, Value: i64(2)}, "True"},
		{Add(NewFloat(Float32, 1.5), NewFloat(Float32, 2)), "T.float32(3.5)"},
		{Add(f32, NewFloat(Float32, 0)), "x + T.float32(0.0)"},
		{Mul(NewFloat(Float32, 0.1), NewFloat(Float32, 3)), "T.float32(0.30000001192092896)"},
		{&PrimCall{Op: "exp", Args: []PrimExpr{Add(f32, Mul(NewFloat(Float32, 2), NewFloat(Float32, 3)))}, Type: Float32}, "T.exp(x + T.float32(6.0))"},
		{&PrimCall{Op: "if_then_else", Args: []PrimExpr{lt(n, Add(n, i64(1))), Add(n, n), m}, Type: Int64}, "n * 2"},
		{Add(&PrimCall{Op: "if_then_else", Args: []PrimExpr{NewBool(false), m, Add(n, n)}, Type: Int64}, n), "n * 3"},
		{&BufferLoad{Buffer: A, Indices: []PrimExpr{Sub(Add(n, i64(1)), i64(1))}}, "A[n]"},
		{Sub(&BufferLoad{Buffer: I, Indices: []PrimExpr{n}}, &BufferLoad{Buffer: I, Indices: []PrimExpr{Add(n, i64(0))}}), "0"},
		{Add(&BufferLoad{Buffer: I, Indices: []PrimExpr{n}}, n), "n + I[n]"},
	}
	for _, c := range cases {
		assert.Equal(t, c.want, FormatPrim(Simplify(c.in), nil), "Simplify(%s)", FormatPrim(c.in, nil))
	}
}

func TestSimplifyDeterministicAcrossVariableIdentity(t *testing.T) {
	build := func() PrimExpr {
		n, m := SymVar("n"), SymVar("m")
		return Add(Mul(Add(m, i64(1)), Sub(n, m)), FloorDiv(Mul(n, i64(6)), i64(4)))
	}
	a, b := FormatPrim(Simplify(build()), nil), FormatPrim(Simplify(build()), nil)
	require.Equal(t, a, b, "same structure printed differently")
	// Two distinct variables with one name: the first one met sorts first,
	// whichever pointer it is.
	for range 2 {
		x1, x2 := SymVar("x"), SymVar("x")
		e := Add(Mul(x2, i64(3)), x1) // x2 occurs first
		s := newSimplifier(nil)
		p := s.poly(e)
		require.Len(t, p.terms, 2, "tie between same-name variables not broken by first occurrence: %s", FormatPrim(s.toExpr(p), nil))
		require.Equal(t, int64(3), p.terms[0].coef, "tie between same-name variables not broken by first occurrence: %s", FormatPrim(s.toExpr(p), nil))
		require.Equal(t, int64(1), p.terms[1].coef, "tie between same-name variables not broken by first occurrence: %s", FormatPrim(s.toExpr(p), nil))
	}
}

func TestSimplifyKeepsDistinctSameNameVariables(t *testing.T) {
	x1, x2 := SymVar("x"), SymVar("x")
	require.Equal(t, "x - x", FormatPrim(Simplify(Sub(x1, x2)), nil), "x1 - x2, want the difference kept")
	require.False(t, CanProveEqual(x1, x2), "distinct variables named alike proved equal")
}

func TestSimplifyReturnsUnchangedNonIntegerNodes(t *testing.T) {
	x := NewPrimVar("x", Float32)
	e := &PrimCall{Op: "exp", Args: []PrimExpr{x}, Type: Float32}
	require.Same(t, e, Simplify(e), "an already simple call was rebuilt")
	n, c := SymVar("n"), I64(5)
	require.Same(t, n, Simplify(n), "leaves were rebuilt")
	require.Same(t, c, Simplify(c), "leaves were rebuilt")
	require.Equal(t, "T.int8(-56)", FormatTIR(Simplify(NewInt(Int8, 200)), nil), "out-of-range int8 literal not wrapped")
}

// --- differential testing against an evaluator ---

type env map[*PrimVar]int64

// evalInt evaluates an integer/bool expression with int64 semantics; ok is
// false on division by zero.
func evalInt(e PrimExpr, en env) (int64, bool) {
	switch e := e.(type) {
	case *IntImm:
		return e.Value, true
	case *PrimVar:
		return en[e], true
	case *Binary:
		a, ok1 := evalInt(e.A, en)
		b, ok2 := evalInt(e.B, en)
		if !ok1 || !ok2 {
			return 0, false
		}
		return refBinary(e.Op, a, b)
	case *Not:
		a, ok := evalInt(e.A, en)
		return b2i(a == 0), ok
	case *Select:
		c, ok := evalInt(e.Cond, en)
		if !ok {
			return 0, false
		}
		x, ok1 := evalInt(e.True, en)
		y, ok2 := evalInt(e.False, en)
		if !ok1 || !ok2 {
			return 0, false
		}
		if c != 0 {
			return x, true
		}
		return y, true
	}
	panic(fmt.Sprintf("evalInt: unexpected %T", e))
}

// refBinary is an independent reference for the operators on small
// values: division through float64 rounding rather than the code under test.
func refBinary(op BinaryOp, a, b int64) (int64, bool) {
	fa, fb := float64(a), float64(b)
	switch op {
	case OpAdd:
		return a + b, true
	case OpSub:
		return a - b, true
	case OpMul:
		return a * b, true
	case OpFloorDiv, OpFloorMod, OpDiv, OpMod:
		if b == 0 {
			return 0, false
		}
		q := math.Floor(fa / fb)
		if op == OpDiv || op == OpMod {
			q = math.Trunc(fa / fb)
		}
		if op == OpFloorDiv || op == OpDiv {
			return int64(q), true
		}
		return a - b*int64(q), true
	case OpMin:
		return int64(math.Min(fa, fb)), true
	case OpMax:
		return int64(math.Max(fa, fb)), true
	case OpLT:
		return b2i(a < b), true
	case OpLE:
		return b2i(a <= b), true
	case OpGT:
		return b2i(a > b), true
	case OpGE:
		return b2i(a >= b), true
	case OpEQ:
		return b2i(a == b), true
	case OpNE:
		return b2i(a != b), true
	case OpAnd:
		return b2i(a != 0 && b != 0), true
	case OpOr:
		return b2i(a != 0 || b != 0), true
	}
	panic("refBinary: " + op.String())
}

type exprGen struct {
	r    *rand.Rand
	vars []*PrimVar
}

func (g *exprGen) leaf() PrimExpr {
	if g.r.Intn(3) == 0 {
		return i64(int64(g.r.Intn(11) - 5))
	}
	return g.vars[g.r.Intn(len(g.vars))]
}

func (g *exprGen) gen(depth int) PrimExpr {
	if depth == 0 || g.r.Intn(5) == 0 {
		return g.leaf()
	}
	a := g.gen(depth - 1)
	b := g.gen(depth - 1)
	constDiv := func() PrimExpr {
		if g.r.Intn(4) == 0 {
			return g.leaf()
		}
		v := int64(g.r.Intn(8) + 1)
		if g.r.Intn(4) == 0 {
			v = -v
		}
		return i64(v)
	}
	switch g.r.Intn(11) {
	case 0, 1:
		return Add(a, b)
	case 2, 3:
		return Sub(a, b)
	case 4:
		return Mul(a, b)
	case 5:
		return FloorDiv(a, constDiv())
	case 6:
		return FloorMod(a, constDiv())
	case 7:
		if g.r.Intn(2) == 0 {
			return tdiv(a, constDiv())
		}
		return tmod(a, constDiv())
	case 8:
		return Min(a, b)
	case 9:
		return Max(a, b)
	default:
		ops := []BinaryOp{OpLT, OpLE, OpGT, OpGE, OpEQ, OpNE}
		return &Select{Cond: NewBinary(ops[g.r.Intn(len(ops))], a, g.gen(depth-1)), True: b, False: g.leaf()}
	}
}

// checkAgainstEval compares e and its simplification on sample points.
func checkAgainstEval(t *testing.T, e, s PrimExpr, vars []*PrimVar, r *rand.Rand, lo, hi int64) {
	t.Helper()
	for range 30 {
		en := env{}
		for _, v := range vars {
			en[v] = lo + r.Int63n(hi-lo+1)
		}
		want, ok := evalInt(e, en)
		if !ok {
			continue
		}
		got, ok := evalInt(s, en)
		// The messages are formatted only on failure: this loop is hot.
		if !ok {
			require.Failf(t, "the simplified form does not evaluate", "%s\n  simplified to %s\n  at %v: want %d",
				FormatPrim(e, nil), FormatPrim(s, nil), describeEnv(en), want)
		}
		if got != want {
			require.Failf(t, "the simplified form evaluates differently", "%s\n  simplified to %s\n  differs at %v: want %d, got %d",
				FormatPrim(e, nil), FormatPrim(s, nil), describeEnv(en), want, got)
		}
	}
}

func describeEnv(en env) string {
	s := ""
	for v, x := range en {
		s += fmt.Sprintf("%s=%d ", v.Name, x)
	}
	return s
}

func TestSimplifyMatchesEvaluation(t *testing.T) {
	r := rand.New(rand.NewSource(1))
	vars := []*PrimVar{SymVar("n"), SymVar("m"), SymVar("k")}
	g := &exprGen{r: r, vars: vars}
	for range 3000 {
		e := g.gen(4)
		s := Simplify(e)
		checkAgainstEval(t, e, s, vars, r, -20, 20)
		// Idempotent: the canonical form is its own canonical form.
		if a, b := FormatPrim(s, nil), FormatPrim(Simplify(s), nil); a != b {
			require.Failf(t, "Simplify is not idempotent", "on %s: %s then %s", FormatPrim(e, nil), a, b)
		}
		// CanProveEqual agrees with the canonical form.
		if !CanProveEqual(e, s) {
			require.Failf(t, "CanProveEqual disagrees with the canonical form", "CanProveEqual(%s, its canonical form %s) = false", FormatPrim(e, nil), FormatPrim(s, nil))
		}
	}
}

func TestAnalyzerSimplifyMatchesEvaluationWithinBounds(t *testing.T) {
	r := rand.New(rand.NewSource(2))
	n, m, k := SymVar("n"), SymVar("m"), SymVar("k")
	vars := []*PrimVar{n, m, k}
	an := NewAnalyzer()
	for _, v := range vars {
		an.SetBounds(v, 0, 12)
	}
	g := &exprGen{r: r, vars: vars}
	changed := 0
	for range 3000 {
		e := g.gen(4)
		s := an.Simplify(e)
		if FormatPrim(s, nil) != FormatPrim(Simplify(e), nil) {
			changed++
		}
		checkAgainstEval(t, e, s, vars, r, 0, 12)
	}
	require.NotZero(t, changed, "bounds never changed a simplification; the analyzer is not consulted")
}

func BenchmarkSimplifySum100(b *testing.B) {
	vars := make([]*PrimVar, 10)
	for i := range vars {
		vars[i] = SymVar(fmt.Sprintf("v%d", i))
	}
	var e PrimExpr = i64(0)
	for i := range 100 {
		e = Add(e, Mul(i64(int64(i%7+1)), vars[(i*7)%10]))
	}
	b.ReportAllocs()
	for b.Loop() {
		Simplify(e)
	}
}

// Long sums take the accumulator path; they must agree with evaluation and
// cancel like short ones.
func TestSimplifyLongSums(t *testing.T) {
	r := rand.New(rand.NewSource(3))
	vars := []*PrimVar{SymVar("a"), SymVar("b"), SymVar("c")}
	g := &exprGen{r: r, vars: vars}
	for range 200 {
		var e PrimExpr = g.gen(2)
		for range 3 + r.Intn(20) {
			if r.Intn(2) == 0 {
				e = Add(e, g.gen(2))
			} else {
				e = Sub(e, g.gen(2))
			}
		}
		s := Simplify(e)
		checkAgainstEval(t, e, s, vars, r, -9, 9)
		require.True(t, CanProveEqual(Sub(e, s), i64(0)), "%s - its canonical form is not 0", FormatPrim(e, nil))
	}
	a, b := vars[0], vars[1]
	e := Sub(Add(Add(Add(Add(Mul(a, b), a), i64(3)), Mul(b, a)), Mul(i64(2), b)), Add(a, Mul(i64(2), Mul(a, b))))
	require.Equal(t, "b * 2 + 3", FormatPrim(Simplify(e), nil), "long sum")
}
