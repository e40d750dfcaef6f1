package ir

import "sort"

// The simplifier. One simplifier value serves one Simplify call: its atom
// table and identity ids are dense and local, so nothing depends on
// addresses and the output is a function of the input's structure (and of
// the variable names, which only order atoms).
//
// Assumptions, shared with TVM's arithmetic: integer arithmetic does not
// overflow when reasoning about division, min/max and comparisons; floordiv
// and floormod by a non-constant divisor are left alone (the divisor might
// be zero). Polynomial rewriting itself is exact modulo 2^bits.

type simplifier struct {
	an        *Analyzer
	atoms     []atomInfo
	atomIndex map[string]int32
	varIDs    map[*PrimVar]int
	bufIDs    map[*Buffer]int
	varAtoms  map[*PrimVar]int32 // variable atoms, found without key strings
}

// newSimplifier returns an empty simplifier. Its maps are made on first
// write (reads of nil maps are fine): most calls meet a handful of atoms or
// none, and four map headers per call dominated normalization's allocations.
func newSimplifier(an *Analyzer) *simplifier {
	return &simplifier{an: an}
}

// isPolyType reports whether expressions of type t get the polynomial
// canonical form.
func isPolyType(t DataType) bool { return t.IsInteger() && t.Lanes <= 1 }

// isSignedPoly reports whether division and ordering rules apply to t
// (signed integers; unsigned ones only fold constants).
func isSignedPoly(t DataType) bool { return t.IsInt() && t.Lanes <= 1 }

func (s *simplifier) simplify(e PrimExpr) PrimExpr {
	switch x := e.(type) {
	case nil:
		return nil
	case *PrimVar:
		return e // keeps spans and identity of leaves
	case *IntImm:
		if storedInt(x.Type, x.Value) == x.Value {
			return e
		}
	}
	if isPolyType(e.DType()) {
		return s.toExpr(s.poly(e))
	}
	return s.other(e)
}

// poly converts an integer expression into canonical polynomial form.
//
// Operand types are read from the operands' polys rather than from
// Binary.DType, which walks the left spine of Binary literals not built by
// NewBinary, so a long left-nested sum costs linear time either way.
func (s *simplifier) poly(e PrimExpr) *poly {
	switch e := e.(type) {
	case *IntImm:
		return s.constPoly(e.Type, e.Value)
	case *PrimVar:
		return s.atomPoly(e)
	case *Binary:
		switch e.Op {
		case OpAdd, OpSub:
			return s.sumPoly(e)
		case OpMul, OpDiv, OpMod, OpFloorDiv, OpFloorMod:
			a, b := s.poly(e.A), s.poly(e.B)
			if a.dt != b.dt || !isPolyType(a.dt) {
				return s.atomPoly(s.rebuildBinary(e))
			}
			if e.Op != OpMul {
				return s.divMod(e.Op, a, b)
			}
			if p, ok := s.mul(a, b); ok {
				return p
			}
			return s.atomPoly(Mul(s.toExpr(a), s.toExpr(b)))
		case OpMin, OpMax:
			return s.minMax(e)
		}
		return s.atomPoly(s.rebuildBinary(e))
	case *Select:
		cond := s.simplify(e.Cond)
		if c, ok := intConst(cond); ok {
			if c != 0 {
				return s.poly(e.True)
			}
			return s.poly(e.False)
		}
		a, b := s.poly(e.True), s.poly(e.False)
		if s.polyCompare(a, b) == 0 {
			return a
		}
		return s.atomPoly(&Select{Cond: cond, True: s.toExpr(a), False: s.toExpr(b)})
	case *Cast:
		if e.Value.DType() == e.Type {
			return s.poly(e.Value)
		}
		v := s.simplify(e.Value)
		if c, ok := castConst(v, e.Type); ok {
			return s.poly(c)
		}
		return s.atomPoly(&Cast{Type: e.Type, Value: v})
	}
	// Calls, loads and anything else: canonical children, opaque node.
	dt := e.DType()
	r := s.other(e)
	if isPolyType(r.DType()) {
		if c, ok := r.(*IntImm); ok {
			return s.constPoly(r.DType(), wrapInt(r.DType(), c.Value))
		}
		if r != e && r.DType() == dt {
			// A call that folded away (if_then_else with a constant
			// condition) may have produced an arithmetic expression.
			if _, isCall := r.(*PrimCall); !isCall {
				if _, isLoad := r.(*BufferLoad); !isLoad {
					return s.poly(r)
				}
			}
		}
	}
	return s.atomPoly(r)
}

// sumPoly canonicalizes a chain of + and - in one pass: it walks the left
// spine iteratively (sums are the expressions that grow long) and adds all
// summands into one accumulator instead of building a poly per operator.
func (s *simplifier) sumPoly(e *Binary) *poly {
	type part struct {
		x    PrimExpr
		sign int64
	}
	var parts []part
	var cur PrimExpr = e
	for {
		b, ok := cur.(*Binary)
		if !ok || (b.Op != OpAdd && b.Op != OpSub) {
			parts = append(parts, part{cur, 1})
			break
		}
		sign := int64(1)
		if b.Op == OpSub {
			sign = -1
		}
		parts = append(parts, part{b.B, sign})
		cur = b.A
	}
	if len(parts) <= 4 { // short sums: merging sorted polys beats hashing
		first := s.poly(parts[len(parts)-1].x)
		for i := len(parts) - 2; i >= 0; i-- {
			p := s.poly(parts[i].x)
			if p.dt != first.dt || !isPolyType(p.dt) {
				return s.atomPoly(s.rebuildBinary(e))
			}
			first = s.addScaled(first, p, parts[i].sign)
		}
		if !isPolyType(first.dt) {
			return s.atomPoly(s.rebuildBinary(e))
		}
		return first
	}
	acc := polyAcc{s: s}
	for i := len(parts) - 1; i >= 0; i-- { // left to right: atoms are met in source order
		p := s.poly(parts[i].x)
		if i == len(parts)-1 {
			acc.dt = p.dt
		}
		if p.dt != acc.dt || !isPolyType(p.dt) {
			return s.atomPoly(s.rebuildBinary(e))
		}
		acc.add(p, parts[i].sign)
	}
	return acc.result()
}

// polyAcc sums polys with one map lookup per term.
type polyAcc struct {
	s      *simplifier
	dt     DataType
	k      int64
	terms  []term
	single map[int32]int  // one-atom monomial -> index in terms
	multi  map[string]int // longer monomials, keyed by their atom ids
}

func (a *polyAcc) add(p *poly, sign int64) {
	a.k = wrapInt(a.dt, a.k+sign*p.k)
	for _, t := range p.terms {
		var idx int
		var ok bool
		if len(t.mono) == 1 {
			if a.single == nil {
				a.single = map[int32]int{}
			}
			idx, ok = a.single[t.mono[0]]
			if !ok {
				a.single[t.mono[0]] = len(a.terms)
			}
		} else {
			if a.multi == nil {
				a.multi = map[string]int{}
			}
			key := monoKey(t.mono)
			idx, ok = a.multi[key]
			if !ok {
				a.multi[key] = len(a.terms)
			}
		}
		if ok {
			a.terms[idx].coef = wrapInt(a.dt, a.terms[idx].coef+sign*t.coef)
		} else {
			a.terms = append(a.terms, term{t.mono, wrapInt(a.dt, sign*t.coef)})
		}
	}
}

func monoKey(m []int32) string {
	b := make([]byte, 0, 4*len(m))
	for _, id := range m {
		b = append(b, byte(id), byte(id>>8), byte(id>>16), byte(id>>24))
	}
	return string(b)
}

func (a *polyAcc) result() *poly {
	out := &poly{dt: a.dt, k: a.k, terms: a.terms[:0]}
	for _, t := range a.terms {
		if t.coef != 0 {
			out.terms = append(out.terms, t)
		}
	}
	sort.Slice(out.terms, func(i, j int) bool { return a.s.monoCompare(out.terms[i].mono, out.terms[j].mono) < 0 })
	return out
}

// rebuildBinary simplifies both operands of a binary node the polynomial
// algebra does not handle and folds constants.
func (s *simplifier) rebuildBinary(e *Binary) PrimExpr {
	a, b := s.simplify(e.A), s.simplify(e.B)
	if r, ok := foldConstBinary(e.Op, a, b); ok {
		return r
	}
	if a == e.A && b == e.B {
		return e
	}
	return NewBinary(e.Op, a, b)
}

// foldConstBinary folds a binary node over two constants of the same type.
func foldConstBinary(op BinaryOp, a, b PrimExpr) (PrimExpr, bool) {
	if a.DType() != b.DType() {
		return nil, false
	}
	switch x := a.(type) {
	case *IntImm:
		y, ok := b.(*IntImm)
		if !ok || !x.Type.IsScalar() {
			return nil, false
		}
		v, ok := foldIntBinary(op, x.Type, wrapInt(x.Type, x.Value), wrapInt(y.Type, y.Value))
		if !ok {
			return nil, false
		}
		if op.IsCompare() || op.IsLogical() {
			return NewBool(v != 0), true
		}
		return makeInt(x.Type, v), true
	case *FloatImm:
		y, ok := b.(*FloatImm)
		if !ok {
			return nil, false
		}
		return foldFloatBinary(op, x.Type, x.Value, y.Value)
	}
	return nil, false
}

// divMod simplifies a div/mod of two canonical polynomials.
func (s *simplifier) divMod(op BinaryOp, a, b *poly) *poly {
	dt := a.dt
	opaque := func() *poly { return s.atomPoly(NewBinary(op, s.toExpr(a), s.toExpr(b))) }
	if !b.isConst() || b.k == 0 {
		return opaque()
	}
	c := b.k
	if a.isConst() {
		v, ok := foldIntBinary(op, dt, a.k, c)
		if !ok {
			return opaque()
		}
		return s.constPoly(dt, v)
	}
	if !isSignedPoly(dt) || c == minInt64 {
		return opaque()
	}
	switch op {
	case OpFloorDiv:
		if c < 0 { // floor(a / -c) = floor(-a / c)
			return s.floorDivPoly(s.scale(a, -1), -c)
		}
		return s.floorDivPoly(a, c)
	case OpFloorMod:
		if c < 0 { // a mod -c = -((-a) mod c)
			return s.scale(s.floorModPoly(s.scale(a, -1), -c), -1)
		}
		return s.floorModPoly(a, c)
	case OpDiv:
		if c < 0 { // trunc(a / -c) = -trunc(a / c)
			return s.scale(s.truncDivPoly(a, -c), -1)
		}
		return s.truncDivPoly(a, c)
	case OpMod:
		if c < 0 { // the truncated remainder has the sign of a only
			c = -c
		}
		return s.truncModPoly(a, c)
	}
	return opaque()
}

const minInt64 = -1 << 63

// splitByDivisor writes a = c·q + r, where q takes the truncated quotient
// of every coefficient and the floor quotient of the constant, so r's
// coefficients have |coef| < c and its constant is in [0, c).
func (s *simplifier) splitByDivisor(a *poly, c int64) (q, r *poly) {
	q = &poly{dt: a.dt, k: floorDivInt(a.k, c)}
	r = &poly{dt: a.dt, k: floorModInt(a.k, c)}
	for _, t := range a.terms {
		if qc := t.coef / c; qc != 0 {
			q.terms = append(q.terms, term{t.mono, qc})
		}
		if rc := t.coef % c; rc != 0 {
			r.terms = append(r.terms, term{t.mono, rc})
		}
	}
	return q, r
}

// reduceByGCD divides r and c by the gcd of c and r's content.
func (s *simplifier) reduceByGCD(r *poly, c int64) (*poly, int64, int64) {
	g := gcd(r.contentGCD(), c)
	if g <= 1 {
		return r, c, 1
	}
	return s.exactDiv(r, g), c / g, g
}

// inRange reports whether p provably lies in [0, c).
func (s *simplifier) inRange(p *poly, c int64) bool {
	iv := s.polyBounds(p)
	return iv.lo >= 0 && iv.hi < c
}

// floorDivPoly is floordiv(a, c) for c > 0.
func (s *simplifier) floorDivPoly(a *poly, c int64) *poly {
	if c == 1 {
		return a
	}
	q, r := s.splitByDivisor(a, c)
	r, c, _ = s.reduceByGCD(r, c)
	if c == 1 || (r.isConst() && r.k == 0) || s.inRange(r, c) {
		return q
	}
	// floordiv(floordiv(x, d), c) = floordiv(x, d*c) for d, c > 0.
	if x, d, ok := s.singleAtomDiv(r, OpFloorDiv); ok && d <= (1<<62)/c {
		return s.addScaled(q, s.floorDivPoly(s.poly(x), d*c), 1)
	}
	return s.addScaled(q, s.atomPoly(FloorDiv(s.toExpr(r), makeInt(a.dt, c))), 1)
}

// floorModPoly is floormod(a, c) for c > 0.
func (s *simplifier) floorModPoly(a *poly, c int64) *poly {
	if c == 1 {
		return s.constPoly(a.dt, 0)
	}
	_, r := s.splitByDivisor(a, c)
	rr, cc, g := s.reduceByGCD(r, c)
	if cc == 1 || (rr.isConst() && rr.k == 0) {
		return s.constPoly(a.dt, 0)
	}
	if s.inRange(rr, cc) {
		return r
	}
	// floormod(floormod(x, d), c) = floormod(x, c) when c divides d.
	if x, d, ok := s.singleAtomDiv(rr, OpFloorMod); ok && d%cc == 0 {
		return s.scale(s.floorModPoly(s.poly(x), cc), g)
	}
	return s.scale(s.atomPoly(FloorMod(s.toExpr(rr), makeInt(a.dt, cc))), g)
}

// singleAtomDiv matches p = op(x, d) exactly, with d a positive constant.
func (s *simplifier) singleAtomDiv(p *poly, op BinaryOp) (PrimExpr, int64, bool) {
	if p.k != 0 || len(p.terms) != 1 || p.terms[0].coef != 1 || len(p.terms[0].mono) != 1 {
		return nil, 0, false
	}
	b, ok := s.atoms[p.terms[0].mono[0]].expr.(*Binary)
	if !ok || b.Op != op {
		return nil, 0, false
	}
	d, ok := intConst(b.B)
	if !ok || d <= 0 {
		return nil, 0, false
	}
	return b.A, d, true
}

// truncDivPoly is the truncating a / c for c > 0: floor division when the
// sign of a is known, exact division when every coefficient divides.
func (s *simplifier) truncDivPoly(a *poly, c int64) *poly {
	if c == 1 {
		return a
	}
	iv := s.polyBounds(a)
	switch {
	case iv.lo >= 0:
		return s.floorDivPoly(a, c)
	case iv.hi <= 0:
		return s.scale(s.floorDivPoly(s.scale(a, -1), c), -1)
	case a.contentGCD()%c == 0:
		return s.exactDiv(a, c)
	}
	return s.atomPoly(NewBinary(OpDiv, s.toExpr(a), makeInt(a.dt, c)))
}

// truncModPoly is the truncating a % c for c > 0.
func (s *simplifier) truncModPoly(a *poly, c int64) *poly {
	if c == 1 {
		return s.constPoly(a.dt, 0)
	}
	iv := s.polyBounds(a)
	switch {
	case iv.lo >= 0:
		return s.floorModPoly(a, c)
	case iv.hi <= 0:
		return s.scale(s.floorModPoly(s.scale(a, -1), c), -1)
	case a.contentGCD()%c == 0:
		return s.constPoly(a.dt, 0)
	}
	return s.atomPoly(NewBinary(OpMod, s.toExpr(a), makeInt(a.dt, c)))
}

// minMax flattens nested min (or max) of one type, drops operands another
// operand provably dominates, sorts the rest (constants last) and rebuilds
// a left-nested chain.
func (s *simplifier) minMax(e *Binary) *poly {
	op := e.Op
	var ops []*poly
	var collect func(x PrimExpr, canonical bool)
	collect = func(x PrimExpr, canonical bool) {
		if b, ok := x.(*Binary); ok && b.Op == op {
			collect(b.A, canonical)
			collect(b.B, canonical)
			return
		}
		p := s.poly(x)
		if !canonical && p.k == 0 && len(p.terms) == 1 && p.terms[0].coef == 1 && len(p.terms[0].mono) == 1 {
			if b, ok := s.atoms[p.terms[0].mono[0]].expr.(*Binary); ok && b.Op == op {
				collect(b, true)
				return
			}
		}
		ops = append(ops, p)
	}
	collect(e, false)
	dt := ops[0].dt
	for _, p := range ops {
		if p.dt != dt || !isPolyType(dt) {
			return s.atomPoly(s.rebuildBinary(e))
		}
	}

	alive := make([]bool, len(ops))
	for i := range alive {
		alive[i] = true
	}
	for i := range ops {
		for j := i + 1; j < len(ops) && alive[i]; j++ {
			if !alive[j] {
				continue
			}
			le, ge := s.compareSign(ops[i], ops[j])
			keepI := (op == OpMin && le) || (op == OpMax && ge)
			keepJ := (op == OpMin && ge) || (op == OpMax && le)
			switch {
			case keepI:
				alive[j] = false
			case keepJ:
				alive[i] = false
			}
		}
	}
	kept := ops[:0]
	for i, p := range ops {
		if alive[i] {
			kept = append(kept, p)
		}
	}
	sort.SliceStable(kept, func(i, j int) bool {
		ci, cj := kept[i].isConst(), kept[j].isConst()
		if ci != cj {
			return cj
		}
		return s.polyCompare(kept[i], kept[j]) < 0
	})
	// Constants fold among themselves even when ordering is not provable
	// (unsigned types): after sorting they are adjacent at the end.
	for n := len(kept); n >= 2 && kept[n-1].isConst() && kept[n-2].isConst(); n = len(kept) {
		v, _ := foldIntBinary(op, dt, kept[n-2].k, kept[n-1].k)
		kept = append(kept[:n-2], s.constPoly(dt, v))
	}
	if len(kept) == 1 {
		return kept[0]
	}
	acc := s.toExpr(kept[0])
	for _, p := range kept[1:] {
		acc = NewBinary(op, acc, s.toExpr(p))
	}
	return s.atomPoly(acc)
}

// compareSign reports whether a ≤ b and whether a ≥ b are provable.
func (s *simplifier) compareSign(a, b *poly) (le, ge bool) {
	if !isSignedPoly(a.dt) {
		if a.isConst() && b.isConst() {
			x, y := unsignedView(a.dt, a.k), unsignedView(a.dt, b.k)
			return x <= y, x >= y
		}
		return s.polyCompare(a, b) == 0, s.polyCompare(a, b) == 0
	}
	iv := s.polyBounds(s.addScaled(a, b, -1))
	return iv.hi <= 0, iv.lo >= 0
}

// other simplifies a non-integer (or vector) expression: canonical
// children, constant folding, boolean identities.
func (s *simplifier) other(e PrimExpr) PrimExpr {
	switch e := e.(type) {
	case *Binary:
		switch {
		case e.Op.IsCompare():
			return s.compare(e)
		case e.Op.IsLogical():
			return s.logical(e)
		}
		return s.rebuildBinary(e)
	case *Not:
		a := s.simplify(e.A)
		if c, ok := intConst(a); ok && a.DType().IsBool() {
			return NewBool(c == 0)
		}
		if n, ok := a.(*Not); ok {
			return n.A
		}
		if b, ok := a.(*Binary); ok && b.Op.IsCompare() && b.A.DType().IsInteger() {
			return NewBinary(negatedCompare[b.Op], b.A, b.B)
		}
		if a == e.A {
			return e
		}
		return &Not{A: a}
	case *Select:
		cond := s.simplify(e.Cond)
		if c, ok := intConst(cond); ok {
			if c != 0 {
				return s.simplify(e.True)
			}
			return s.simplify(e.False)
		}
		a, b := s.simplify(e.True), s.simplify(e.False)
		if s.key(a) == s.key(b) {
			return a
		}
		if cond == e.Cond && a == e.True && b == e.False {
			return e
		}
		return &Select{Cond: cond, True: a, False: b}
	case *Cast:
		v := s.simplify(e.Value)
		if v.DType() == e.Type {
			return v
		}
		if c, ok := castConst(v, e.Type); ok {
			return c
		}
		if v == e.Value {
			return e
		}
		return &Cast{Type: e.Type, Value: v}
	case *PrimCall:
		if e.Op == "if_then_else" && len(e.Args) == 3 {
			cond := s.simplify(e.Args[0])
			if c, ok := intConst(cond); ok {
				if c != 0 {
					return s.simplify(e.Args[1])
				}
				return s.simplify(e.Args[2])
			}
		}
		args, changed := s.simplifyList(e.Args)
		if !changed {
			return e
		}
		return &PrimCall{Op: e.Op, Args: args, Type: e.Type}
	case *BufferLoad:
		idx, changed := s.simplifyList(e.Indices)
		if !changed {
			return e
		}
		return &BufferLoad{Buffer: e.Buffer, Indices: idx}
	}
	return e
}

func (s *simplifier) simplifyList(xs []PrimExpr) ([]PrimExpr, bool) {
	return mapList(xs, s.simplify)
}

var negatedCompare = [...]BinaryOp{
	OpEQ: OpNE, OpNE: OpEQ, OpLT: OpGE, OpGE: OpLT, OpLE: OpGT, OpGT: OpLE,
}

// compare folds a comparison when the sign of a-b is provable.
func (s *simplifier) compare(e *Binary) PrimExpr {
	dt := e.A.DType()
	if !isPolyType(dt) || e.B.DType() != dt {
		return s.rebuildBinary(e)
	}
	pa, pb := s.poly(e.A), s.poly(e.B)
	if pa.isConst() && pb.isConst() {
		v, _ := foldIntBinary(e.Op, dt, pa.k, pb.k)
		return NewBool(v != 0)
	}
	if isSignedPoly(dt) {
		if r, ok := s.decideCompare(e.Op, s.addScaled(pa, pb, -1)); ok {
			return NewBool(r)
		}
	} else if s.polyCompare(pa, pb) == 0 {
		v, _ := foldIntBinary(e.Op, dt, 0, 0)
		return NewBool(v != 0)
	}
	return NewBinary(e.Op, s.toExpr(pa), s.toExpr(pb))
}

// decideCompare decides `d op 0` from d's bounds (and, for equality, from
// divisibility: 2n == 1 is never true).
func (s *simplifier) decideCompare(op BinaryOp, d *poly) (result, ok bool) {
	iv := s.polyBounds(d)
	if op == OpEQ || op == OpNE {
		g := int64(0)
		for _, t := range d.terms {
			g = gcd(g, t.coef)
		}
		if g > 1 && d.k%g != 0 {
			return op == OpNE, true
		}
	}
	switch op {
	case OpEQ:
		if iv.lo == 0 && iv.hi == 0 {
			return true, true
		}
		if iv.lo > 0 || iv.hi < 0 {
			return false, true
		}
	case OpNE:
		if iv.lo == 0 && iv.hi == 0 {
			return false, true
		}
		if iv.lo > 0 || iv.hi < 0 {
			return true, true
		}
	case OpLT:
		if iv.hi < 0 {
			return true, true
		}
		if iv.lo >= 0 {
			return false, true
		}
	case OpLE:
		if iv.hi <= 0 {
			return true, true
		}
		if iv.lo > 0 {
			return false, true
		}
	case OpGT:
		if iv.lo > 0 {
			return true, true
		}
		if iv.hi <= 0 {
			return false, true
		}
	case OpGE:
		if iv.lo >= 0 {
			return true, true
		}
		if iv.hi < 0 {
			return false, true
		}
	}
	return false, false
}

// logical simplifies and/or with constants and identical operands.
func (s *simplifier) logical(e *Binary) PrimExpr {
	a, b := s.simplify(e.A), s.simplify(e.B)
	isAnd := e.Op == OpAnd
	// absorbing: false for and, true for or; identity: the other one.
	for _, pair := range [2][2]PrimExpr{{a, b}, {b, a}} {
		if c, ok := intConst(pair[0]); ok && pair[0].DType().IsScalar() {
			if (c != 0) != isAnd {
				return NewBool(!isAnd)
			}
			return pair[1]
		}
	}
	if s.key(a) == s.key(b) {
		return a
	}
	if a == e.A && b == e.B {
		return e
	}
	return NewBinary(e.Op, a, b)
}
