package ir

import (
	"sort"
	"strconv"
	"strings"
)

// Canonical sum-of-products form for scalar integer expressions.
//
// A poly is Σ coef·monomial + k over *atoms*: variables and every integer
// sub-expression the polynomial algebra cannot see into (floordiv/floormod
// by anything, min/max, selects, casts, loads, calls). Atoms are interned
// per simplification by an identity key (variables by pointer, compound
// atoms by structure over already canonical children), so like terms meet
// and cancel whatever their spelling.
//
// Order (this is what makes the printed form deterministic): atoms sort by
// class (variables before compound atoms), then by printed text (for a
// variable, its Name), then by creation order, which is the order the
// simplifier first meets them in a left-to-right walk of the input. A
// monomial is its atoms in that order, repeated for powers (n*n). Monomials
// sort lexicographically, a monomial sorting before its own proper prefixes
// (n*n before n, m*n before m). The printed form lists the positive terms,
// then a positive constant, then subtracts the negative terms and a negative
// constant, as TVM's canonical simplifier does: `n * 2 + 1`, `n + 5 - m`,
// `0 - n`.

type term struct {
	mono []int32 // atom ids in atom order; never empty
	coef int64   // signed view, never zero
}

type poly struct {
	dt    DataType
	terms []term // sorted by monomial, unique monomials
	k     int64  // constant, signed view
}

// maxProductTerms bounds polynomial multiplication: larger products stay
// opaque so a pathological (a+b)*(c+d)*... cannot blow up.
const maxProductTerms = 4096

type atomInfo struct {
	expr     PrimExpr
	isVar    bool
	text     string
	bounds   interval
	haveBnds bool
}

func (p *poly) isConst() bool { return len(p.terms) == 0 }

func (s *simplifier) constPoly(dt DataType, v int64) *poly {
	return &poly{dt: dt, k: wrapInt(dt, v)}
}

// atomPoly returns 1·atom(e) for a canonical integer expression e.
func (s *simplifier) atomPoly(e PrimExpr) *poly {
	return &poly{dt: e.DType(), terms: []term{{mono: []int32{s.intern(e)}, coef: 1}}}
}

// intern returns the dense id of atom e, creating it on first sight.
// Variables, the common atoms, are found by pointer and named by Name,
// without building a key or printing them.
func (s *simplifier) intern(e PrimExpr) int32 {
	if v, ok := e.(*PrimVar); ok {
		if id, ok := s.varAtoms[v]; ok {
			return id
		}
		id := int32(len(s.atoms))
		s.atoms = append(s.atoms, atomInfo{expr: v, isVar: true, text: v.Name})
		if s.varAtoms == nil {
			s.varAtoms = map[*PrimVar]int32{}
		}
		s.varAtoms[v] = id
		return id
	}
	key := s.key(e)
	if id, ok := s.atomIndex[key]; ok {
		return id
	}
	id := int32(len(s.atoms))
	s.atoms = append(s.atoms, atomInfo{expr: e, text: FormatPrim(e, nil)})
	if s.atomIndex == nil {
		s.atomIndex = map[string]int32{}
	}
	s.atomIndex[key] = id
	return id
}

// atomCompare orders atoms: variables first, then by text, then by first
// sight.
func (s *simplifier) atomCompare(x, y int32) int {
	if x == y {
		return 0
	}
	a, b := &s.atoms[x], &s.atoms[y]
	if a.isVar != b.isVar {
		if a.isVar {
			return -1
		}
		return 1
	}
	if c := strings.Compare(a.text, b.text); c != 0 {
		return c
	}
	if x < y {
		return -1
	}
	return 1
}

func (s *simplifier) monoCompare(x, y []int32) int {
	for i := 0; i < len(x) && i < len(y); i++ {
		if c := s.atomCompare(x[i], y[i]); c != 0 {
			return c
		}
	}
	switch {
	case len(x) > len(y):
		return -1
	case len(x) < len(y):
		return 1
	}
	return 0
}

// polyCompare is a total order on polys (used to sort min/max operands).
func (s *simplifier) polyCompare(a, b *poly) int {
	for i := 0; i < len(a.terms) && i < len(b.terms); i++ {
		if c := s.monoCompare(a.terms[i].mono, b.terms[i].mono); c != 0 {
			return c
		}
		if a.terms[i].coef != b.terms[i].coef {
			if a.terms[i].coef < b.terms[i].coef {
				return -1
			}
			return 1
		}
	}
	switch {
	case len(a.terms) > len(b.terms):
		return -1
	case len(a.terms) < len(b.terms):
		return 1
	case a.k < b.k:
		return -1
	case a.k > b.k:
		return 1
	}
	return 0
}

// addScaled returns a + c·b.
func (s *simplifier) addScaled(a, b *poly, c int64) *poly {
	dt := a.dt
	out := &poly{dt: dt, k: wrapInt(dt, a.k+c*b.k)}
	out.terms = make([]term, 0, len(a.terms)+len(b.terms))
	i, j := 0, 0
	for i < len(a.terms) || j < len(b.terms) {
		var cmp int
		switch {
		case i == len(a.terms):
			cmp = 1
		case j == len(b.terms):
			cmp = -1
		default:
			cmp = s.monoCompare(a.terms[i].mono, b.terms[j].mono)
		}
		switch {
		case cmp < 0:
			out.terms = append(out.terms, a.terms[i])
			i++
		case cmp > 0:
			if v := wrapInt(dt, c*b.terms[j].coef); v != 0 {
				out.terms = append(out.terms, term{b.terms[j].mono, v})
			}
			j++
		default:
			if v := wrapInt(dt, a.terms[i].coef+c*b.terms[j].coef); v != 0 {
				out.terms = append(out.terms, term{a.terms[i].mono, v})
			}
			i++
			j++
		}
	}
	return out
}

func (s *simplifier) scale(a *poly, c int64) *poly {
	c = wrapInt(a.dt, c)
	out := &poly{dt: a.dt, k: wrapInt(a.dt, a.k*c)}
	if c == 0 {
		return out
	}
	out.terms = make([]term, 0, len(a.terms))
	for _, t := range a.terms {
		if v := wrapInt(a.dt, t.coef*c); v != 0 {
			out.terms = append(out.terms, term{t.mono, v})
		}
	}
	return out
}

// mul returns a·b, or ok=false when the product would be too large.
func (s *simplifier) mul(a, b *poly) (*poly, bool) {
	if a.isConst() {
		return s.scale(b, a.k), true
	}
	if b.isConst() {
		return s.scale(a, b.k), true
	}
	if (len(a.terms)+1)*(len(b.terms)+1) > maxProductTerms {
		return nil, false
	}
	dt := a.dt
	var terms []term
	add := func(m []int32, c int64) {
		if c = wrapInt(dt, c); c != 0 {
			terms = append(terms, term{m, c})
		}
	}
	for _, x := range a.terms {
		for _, y := range b.terms {
			add(s.monoMul(x.mono, y.mono), x.coef*y.coef)
		}
		add(x.mono, x.coef*b.k)
	}
	for _, y := range b.terms {
		add(y.mono, a.k*y.coef)
	}
	sort.SliceStable(terms, func(i, j int) bool { return s.monoCompare(terms[i].mono, terms[j].mono) < 0 })
	out := &poly{dt: dt, k: wrapInt(dt, a.k*b.k)}
	for _, t := range terms {
		if n := len(out.terms); n > 0 && s.monoCompare(out.terms[n-1].mono, t.mono) == 0 {
			out.terms[n-1].coef = wrapInt(dt, out.terms[n-1].coef+t.coef)
			if out.terms[n-1].coef == 0 {
				out.terms = out.terms[:n-1]
			}
			continue
		}
		out.terms = append(out.terms, t)
	}
	return out, true
}

func (s *simplifier) monoMul(x, y []int32) []int32 {
	out := make([]int32, 0, len(x)+len(y))
	i, j := 0, 0
	for i < len(x) || j < len(y) {
		if j == len(y) || (i < len(x) && s.atomCompare(x[i], y[j]) <= 0) {
			out = append(out, x[i])
			i++
		} else {
			out = append(out, y[j])
			j++
		}
	}
	return out
}

// contentGCD is the gcd of all coefficients and the constant.
func (p *poly) contentGCD() int64 {
	g := p.k
	for _, t := range p.terms {
		g = gcd(g, t.coef)
	}
	return gcd(g, 0)
}

// exactDiv divides every coefficient by c; the caller checked divisibility.
func (s *simplifier) exactDiv(p *poly, c int64) *poly {
	out := &poly{dt: p.dt, k: p.k / c, terms: make([]term, len(p.terms))}
	for i, t := range p.terms {
		out.terms[i] = term{t.mono, t.coef / c}
	}
	return out
}

// toExpr builds the canonical PrimExpr tree of p.
func (s *simplifier) toExpr(p *poly) PrimExpr {
	var res PrimExpr
	for _, t := range p.terms {
		if t.coef > 0 {
			res = s.plus(res, s.termExpr(p.dt, t.mono, t.coef))
		}
	}
	if p.k > 0 {
		res = s.plus(res, makeInt(p.dt, p.k))
	}
	for _, t := range p.terms {
		if t.coef < 0 {
			if res == nil {
				res = makeInt(p.dt, 0)
			}
			res = Sub(res, s.termExpr(p.dt, t.mono, -t.coef))
		}
	}
	if p.k < 0 {
		if res == nil {
			return makeInt(p.dt, p.k)
		}
		res = Sub(res, makeInt(p.dt, -p.k))
	}
	if res == nil {
		return makeInt(p.dt, 0)
	}
	return res
}

func (s *simplifier) plus(acc, e PrimExpr) PrimExpr {
	if acc == nil {
		return e
	}
	return Add(acc, e)
}

// termExpr is a1 * a2 * ... * c, with c omitted when it is 1. A coefficient
// of MinInt64 cannot be negated; it prints as a product with the constant.
func (s *simplifier) termExpr(dt DataType, mono []int32, c int64) PrimExpr {
	e := s.atoms[mono[0]].expr
	for _, id := range mono[1:] {
		e = Mul(e, s.atoms[id].expr)
	}
	if c != 1 {
		e = Mul(e, makeInt(dt, c))
	}
	return e
}

// key is the identity key of a canonical expression: structure plus the
// identity of variables and buffers (by dense id, never by address).
func (s *simplifier) key(e PrimExpr) string {
	var sb strings.Builder
	s.writeKey(&sb, e)
	return sb.String()
}

func (s *simplifier) varID(v *PrimVar) int {
	id, ok := s.varIDs[v]
	if !ok {
		if s.varIDs == nil {
			s.varIDs = map[*PrimVar]int{}
		}
		id = len(s.varIDs)
		s.varIDs[v] = id
	}
	return id
}

func (s *simplifier) writeKey(sb *strings.Builder, e PrimExpr) {
	switch e := e.(type) {
	case *IntImm:
		sb.WriteString("i")
		sb.WriteString(e.Type.String())
		sb.WriteByte(':')
		sb.WriteString(strconv.FormatInt(e.Value, 10))
	case *FloatImm:
		sb.WriteString("f")
		sb.WriteString(e.Type.String())
		sb.WriteByte(':')
		sb.WriteString(strconv.FormatFloat(e.Value, 'g', -1, 64))
	case *PrimStr:
		sb.WriteString("s")
		sb.WriteString(strconv.Quote(e.Value))
	case *PrimVar:
		sb.WriteString("v")
		sb.WriteString(strconv.Itoa(s.varID(e)))
	case *Binary:
		sb.WriteString("(b")
		sb.WriteString(strconv.Itoa(int(e.Op)))
		sb.WriteByte(' ')
		s.writeKey(sb, e.A)
		sb.WriteByte(' ')
		s.writeKey(sb, e.B)
		sb.WriteByte(')')
	case *Not:
		sb.WriteString("(! ")
		s.writeKey(sb, e.A)
		sb.WriteByte(')')
	case *Select:
		sb.WriteString("(? ")
		s.writeKey(sb, e.Cond)
		sb.WriteByte(' ')
		s.writeKey(sb, e.True)
		sb.WriteByte(' ')
		s.writeKey(sb, e.False)
		sb.WriteByte(')')
	case *Cast:
		sb.WriteString("(cast ")
		sb.WriteString(e.Type.String())
		sb.WriteByte(' ')
		s.writeKey(sb, e.Value)
		sb.WriteByte(')')
	case *PrimCall:
		sb.WriteString("(call ")
		sb.WriteString(e.Op)
		sb.WriteByte(' ')
		sb.WriteString(e.Type.String())
		for _, a := range e.Args {
			sb.WriteByte(' ')
			s.writeKey(sb, a)
		}
		sb.WriteByte(')')
	case *BufferLoad:
		id, ok := s.bufIDs[e.Buffer]
		if !ok {
			if s.bufIDs == nil {
				s.bufIDs = map[*Buffer]int{}
			}
			id = len(s.bufIDs)
			s.bufIDs[e.Buffer] = id
		}
		sb.WriteString("(load ")
		sb.WriteString(strconv.Itoa(id))
		for _, a := range e.Indices {
			sb.WriteByte(' ')
			s.writeKey(sb, a)
		}
		sb.WriteByte(')')
	default:
		sb.WriteString("?")
	}
}
