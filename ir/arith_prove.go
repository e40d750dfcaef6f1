package ir

import "math"

// Analyzer proves facts about integer expressions from known variable
// bounds. The zero value (and a nil *Analyzer) knows nothing beyond the
// ranges of the variables' types; in particular shape variables are NOT
// assumed non-negative unless AssumeNonNegative or SetBounds says so.
//
// Bounds are closed intervals of int64. math.MinInt64 and math.MaxInt64
// stand for "unbounded": interval arithmetic saturates to them instead of
// overflowing, so every reported bound is sound, if sometimes loose.
type Analyzer struct {
	bounds map[*PrimVar]interval
}

// NewAnalyzer returns an analyzer with no assumptions.
func NewAnalyzer() *Analyzer { return &Analyzer{} }

type interval struct{ lo, hi int64 }

const (
	negInf = math.MinInt64
	posInf = math.MaxInt64
)

var unbounded = interval{negInf, posInf}

// SetBounds records lo ≤ v ≤ hi, replacing what was known about v (for
// example from a function's tir_var_upper_bound attribute).
func (a *Analyzer) SetBounds(v *PrimVar, lo, hi int64) {
	if a.bounds == nil {
		a.bounds = map[*PrimVar]interval{}
	}
	a.bounds[v] = interval{lo, hi}
}

// AssumeNonNegative adds 0 ≤ v to what is known about v.
func (a *Analyzer) AssumeNonNegative(v *PrimVar) {
	iv := a.varInterval(v)
	a.SetBounds(v, max(iv.lo, 0), max(iv.hi, 0))
}

// VarBounds returns the known bounds of v, including its type's range.
func (a *Analyzer) VarBounds(v *PrimVar) (lo, hi int64) {
	iv := a.varInterval(v)
	return iv.lo, iv.hi
}

func (a *Analyzer) varInterval(v *PrimVar) interval {
	iv := typeRange(v.Type)
	if a != nil {
		if b, ok := a.bounds[v]; ok {
			iv = interval{max(iv.lo, b.lo), min(iv.hi, b.hi)}
		}
	}
	return iv
}

// Simplify returns the canonical form of e, using the known bounds to
// decide comparisons, min/max and divisions (min(n, 16) is n when n ≤ 16).
func (a *Analyzer) Simplify(e PrimExpr) PrimExpr {
	if isCanonicalLeaf(e) { // most shape dimensions: no simplifier needed
		return e
	}
	return newSimplifier(a).simplify(e)
}

// isCanonicalLeaf reports whether e is its own canonical form without
// looking further: a variable, or a constant whose value its type can hold
// (the cases simplify returns as is).
func isCanonicalLeaf(e PrimExpr) bool {
	switch x := e.(type) {
	case *PrimVar:
		return true
	case *IntImm:
		return storedInt(x.Type, x.Value) == x.Value
	}
	return false
}

// ConstBounds returns bounds of the integer (or bool) expression e, by
// interval arithmetic over its canonical form intersected with that over
// e as written. ok is false when e is not an integer or bool scalar.
func (a *Analyzer) ConstBounds(e PrimExpr) (lo, hi int64, ok bool) {
	t := e.DType()
	if !(t.IsInteger() || t.IsBool()) || t.Lanes > 1 {
		return 0, 0, false
	}
	s := newSimplifier(a)
	iv := s.exprBounds(e)
	if isPolyType(t) {
		c := s.polyBounds(s.poly(e))
		iv = interval{max(iv.lo, c.lo), min(iv.hi, c.hi)}
	} else {
		c := s.exprBounds(s.simplify(e))
		iv = interval{max(iv.lo, c.lo), min(iv.hi, c.hi)}
	}
	return iv.lo, iv.hi, true
}

// CanProve reports whether the boolean cond is true for every value of its
// variables within the known bounds.
func (a *Analyzer) CanProve(cond PrimExpr) bool {
	c, ok := intConst(a.Simplify(cond))
	return ok && c != 0
}

// CanProveEqual reports whether x and y are provably equal. Integer
// expressions are compared by the canonical form of x - y; others by the
// structure of their simplified forms.
func (a *Analyzer) CanProveEqual(x, y PrimExpr) bool {
	if x == y {
		return true
	}
	// Fast paths for the common shape-dimension comparisons.
	switch xv := x.(type) {
	case *IntImm:
		if yv, ok := y.(*IntImm); ok {
			return xv.Value == yv.Value && (xv.Type == yv.Type || (xv.Type.IsInteger() && yv.Type.IsInteger()))
		}
	case *PrimVar:
		switch y.(type) {
		case *PrimVar, *IntImm:
			return false
		}
	}
	tx, ty := x.DType(), y.DType()
	s := newSimplifier(a)
	if isPolyType(tx) && tx == ty {
		d := s.addScaled(s.poly(x), s.poly(y), -1)
		return d.isConst() && d.k == 0
	}
	if tx.IsInteger() && ty.IsInteger() {
		// Different widths: equal only as constants of equal value.
		cx, ok1 := intConst(s.simplify(x))
		cy, ok2 := intConst(s.simplify(y))
		return ok1 && ok2 && cx == cy
	}
	if tx != ty {
		return false
	}
	return s.key(s.simplify(x)) == s.key(s.simplify(y))
}

// typeRange is the range of values of an integer or bool type; int64 and
// uint64 are unbounded above (and int64 below).
func typeRange(t DataType) interval {
	switch {
	case t.IsBool():
		return interval{0, 1}
	case t.IsInt() && t.Bits > 0 && t.Bits < 64:
		return interval{-1 << (t.Bits - 1), 1<<(t.Bits-1) - 1}
	case t.IsUInt() && t.Bits > 0 && t.Bits < 64:
		return interval{0, 1<<t.Bits - 1}
	case t.IsUInt():
		return interval{0, posInf}
	}
	return unbounded
}

// Saturating arithmetic on bounds. An infinite operand wins; when both
// infinities meet, the result takes the side of the bound being computed.

func satAdd(a, b int64, lowSide bool) int64 {
	aInf, bInf := a == negInf || a == posInf, b == negInf || b == posInf
	if aInf || bInf {
		if lowSide && (a == negInf || b == negInf) {
			return negInf
		}
		if !lowSide && (a == posInf || b == posInf) {
			return posInf
		}
		if a == negInf || b == negInf {
			return negInf
		}
		return posInf
	}
	s := a + b
	switch {
	case b > 0 && s < a:
		return posInf
	case b < 0 && s > a:
		return negInf
	}
	return s
}

func satNeg(a int64) int64 {
	switch a {
	case negInf:
		return posInf
	case posInf:
		return negInf
	}
	return -a
}

func satMul(a, b int64) int64 {
	if a == 0 || b == 0 {
		return 0
	}
	neg := (a < 0) != (b < 0)
	inf := func() int64 {
		if neg {
			return negInf
		}
		return posInf
	}
	if a == negInf || a == posInf || b == negInf || b == posInf {
		return inf()
	}
	p := a * b
	if p/b != a || p == negInf || p == posInf {
		return inf()
	}
	return p
}

func (x interval) add(y interval) interval {
	return interval{satAdd(x.lo, y.lo, true), satAdd(x.hi, y.hi, false)}
}

func (x interval) neg() interval { return interval{satNeg(x.hi), satNeg(x.lo)} }

func (x interval) mul(y interval) interval {
	c := [4]int64{satMul(x.lo, y.lo), satMul(x.lo, y.hi), satMul(x.hi, y.lo), satMul(x.hi, y.hi)}
	return interval{min(c[0], c[1], c[2], c[3]), max(c[0], c[1], c[2], c[3])}
}

func (x interval) union(y interval) interval {
	return interval{min(x.lo, y.lo), max(x.hi, y.hi)}
}

func (x interval) isConst() bool { return x.lo == x.hi && x.lo != negInf && x.lo != posInf }

// pow is x^n for n ≥ 1, exact about signs of even powers.
func (x interval) pow(n int) interval {
	r := x
	for i := 1; i < n; i++ {
		r = r.mul(x)
	}
	if n%2 == 0 && r.lo < 0 {
		r.lo = 0
	}
	return r
}

// divBound is floor (or truncating) a/b for a finite b ≠ 0 and a bound a
// that may be infinite.
func divBound(a, b int64, floor bool) int64 {
	if a == negInf || a == posInf {
		if (a < 0) != (b < 0) {
			return negInf
		}
		return posInf
	}
	if b == -1 {
		return satNeg(a)
	}
	if floor {
		return floorDivInt(a, b)
	}
	return a / b
}

// divInterval bounds x / y (floor or truncating division).
func divInterval(x, y interval, floor bool) interval {
	if y.lo <= 0 && y.hi >= 0 {
		return unbounded
	}
	if y.hi < 0 { // a / b = (-a) / (-b) for both roundings
		x, y = x.neg(), y.neg()
	}
	// Now y > 0. Extremes are at the corners; an infinite divisor bound
	// gives 0 (or -1 under floor for negative dividends).
	atInf := func(a int64) int64 {
		if floor && a < 0 {
			return -1
		}
		return 0
	}
	var lo, hi int64
	if x.lo >= 0 {
		if y.hi == posInf {
			lo = atInf(x.lo)
		} else {
			lo = divBound(x.lo, y.hi, floor)
		}
	} else {
		lo = divBound(x.lo, y.lo, floor)
	}
	if x.hi >= 0 {
		hi = divBound(x.hi, y.lo, floor)
	} else if y.hi == posInf {
		hi = atInf(x.hi)
	} else {
		hi = divBound(x.hi, y.hi, floor)
	}
	return interval{lo, hi}
}

// floorModInterval bounds floormod(x, y).
func floorModInterval(x, y interval) interval {
	switch {
	case y.lo > 0:
		if y.isConst() && x.lo != negInf && x.hi != posInf &&
			floorDivInt(x.lo, y.lo) == floorDivInt(x.hi, y.lo) {
			return interval{floorModInt(x.lo, y.lo), floorModInt(x.hi, y.lo)}
		}
		hi := satAdd(y.hi, -1, false)
		if x.lo >= 0 {
			hi = min(hi, x.hi)
		}
		return interval{0, hi}
	case y.hi < 0:
		lo := satAdd(y.lo, 1, true)
		if x.hi <= 0 {
			lo = max(lo, x.lo)
		}
		return interval{lo, 0}
	}
	m := max(satNeg(y.lo), y.hi)
	return interval{satNeg(satAdd(m, -1, false)), satAdd(m, -1, false)}
}

// truncModInterval bounds the truncated remainder: sign of x, |r| < |y|.
func truncModInterval(x, y interval) interval {
	m := satAdd(max(satNeg(y.lo), y.hi, satNeg(y.hi), y.lo), -1, false)
	switch {
	case x.lo >= 0:
		return interval{0, min(x.hi, m)}
	case x.hi <= 0:
		return interval{max(x.lo, satNeg(m)), 0}
	}
	return interval{satNeg(m), m}
}

// boolInterval is [0,1] narrowed when the comparison is decided.
func boolInterval(result, decided bool) interval {
	switch {
	case !decided:
		return interval{0, 1}
	case result:
		return interval{1, 1}
	}
	return interval{0, 0}
}

// exprBounds is interval arithmetic over e as written.
func (s *simplifier) exprBounds(e PrimExpr) interval {
	t := e.DType()
	switch e := e.(type) {
	case *IntImm:
		if t.IsUInt() {
			u := unsignedView(t, e.Value)
			if u > posInf {
				return interval{posInf, posInf}
			}
			return interval{int64(u), int64(u)}
		}
		v := wrapInt(t, e.Value)
		return interval{v, v}
	case *PrimVar:
		return s.an.varInterval(e)
	case *Binary:
		if !(t.IsInteger() || t.IsBool()) {
			return typeRange(t)
		}
		if e.Op.IsCompare() {
			if !e.A.DType().IsInteger() && !e.A.DType().IsBool() {
				return interval{0, 1}
			}
			x, y := s.exprBounds(e.A), s.exprBounds(e.B)
			return compareInterval(e.Op, x, y)
		}
		x, y := s.exprBounds(e.A), s.exprBounds(e.B)
		switch e.Op {
		case OpAdd:
			return x.add(y)
		case OpSub:
			return x.add(y.neg())
		case OpMul:
			return x.mul(y)
		case OpFloorDiv:
			return divInterval(x, y, true)
		case OpDiv:
			return divInterval(x, y, false)
		case OpFloorMod:
			return floorModInterval(x, y)
		case OpMod:
			return truncModInterval(x, y)
		case OpMin:
			return interval{min(x.lo, y.lo), min(x.hi, y.hi)}
		case OpMax:
			return interval{max(x.lo, y.lo), max(x.hi, y.hi)}
		case OpAnd:
			return interval{min(x.lo, y.lo, 1), min(x.hi, y.hi, 1)}
		case OpOr:
			return interval{min(max(x.lo, y.lo), 1), min(max(x.hi, y.hi), 1)}
		}
	case *Not:
		x := s.exprBounds(e.A)
		return interval{1 - min(x.hi, 1), 1 - min(x.lo, 1)}
	case *Select:
		c := s.exprBounds(e.Cond)
		switch {
		case c.lo > 0:
			return s.exprBounds(e.True)
		case c.hi == 0:
			return s.exprBounds(e.False)
		}
		return s.exprBounds(e.True).union(s.exprBounds(e.False))
	case *Cast:
		r := typeRange(t)
		vt := e.Value.DType()
		if (vt.IsInteger() || vt.IsBool()) && (t.IsInteger() || t.IsBool()) {
			v := s.exprBounds(e.Value)
			if t.IsBool() {
				switch {
				case v.lo > 0 || v.hi < 0:
					return interval{1, 1}
				case v.lo == 0 && v.hi == 0:
					return interval{0, 0}
				}
				return interval{0, 1}
			}
			if v.lo >= r.lo && v.hi <= r.hi {
				return v
			}
		}
		return r
	case *PrimCall:
		if e.Op == "if_then_else" && len(e.Args) == 3 {
			return s.exprBounds(&Select{Cond: e.Args[0], True: e.Args[1], False: e.Args[2]})
		}
	}
	return typeRange(t)
}

// compareInterval decides x op y from intervals where possible.
func compareInterval(op BinaryOp, x, y interval) interval {
	switch op {
	case OpLT:
		return boolInterval(x.hi < y.lo, x.hi < y.lo || x.lo >= y.hi)
	case OpLE:
		return boolInterval(x.hi <= y.lo, x.hi <= y.lo || x.lo > y.hi)
	case OpGT:
		return boolInterval(x.lo > y.hi, x.lo > y.hi || x.hi <= y.lo)
	case OpGE:
		return boolInterval(x.lo >= y.hi, x.lo >= y.hi || x.hi < y.lo)
	case OpEQ:
		disjoint := x.hi < y.lo || y.hi < x.lo
		same := x.isConst() && y.isConst() && x.lo == y.lo
		return boolInterval(same, same || disjoint)
	case OpNE:
		disjoint := x.hi < y.lo || y.hi < x.lo
		same := x.isConst() && y.isConst() && x.lo == y.lo
		return boolInterval(disjoint, same || disjoint)
	}
	return interval{0, 1}
}

// polyBounds bounds a canonical polynomial term by term, raising repeated
// atoms to powers so that n*n is known to be non-negative.
func (s *simplifier) polyBounds(p *poly) interval {
	iv := interval{p.k, p.k}
	for _, t := range p.terms {
		m := interval{1, 1}
		for i := 0; i < len(t.mono); {
			j := i
			for j < len(t.mono) && t.mono[j] == t.mono[i] {
				j++
			}
			m = m.mul(s.atomBounds(t.mono[i]).pow(j - i))
			i = j
		}
		iv = iv.add(m.mul(interval{t.coef, t.coef}))
	}
	return iv
}

func (s *simplifier) atomBounds(id int32) interval {
	if !s.atoms[id].haveBnds {
		iv := s.exprBounds(s.atoms[id].expr)
		s.atoms[id].bounds, s.atoms[id].haveBnds = iv, true
	}
	return s.atoms[id].bounds
}
