package lower

import (
	"github.com/phasec/phasec/ir"
)

// A proof that a kernel's load indices are the row-major unravelling of
// the output position, for symbolic shapes, where the analyzer (which
// bounds variables by constants only) cannot drop a floormod by n. It is
// the part of TVM's iterator-map detection (src/arith/iter_affine_map.cc,
// which HasReshapePattern in src/relax/analysis/tir_op_pattern_kind.cc
// uses through the analyzer) that reshapes need.
//
// Every index expression is normalized into a sum of splits of one fused
// iterator F, the output's row-major position (F = sum v_i * stride_i with
// 0 <= v_i < out_i, so F ranges over [0, P), P the output's element
// count):
//
//	coef * split(L, E)   where split(L, E) = floormod(floordiv(F, L), E)
//
// An output variable v_i is split(stride_i, out_i). The rules below each
// keep the value exactly; any expression they do not cover makes the
// proof fail (the kernel stays a copy), so the check is sound:
//
//	c·E_b·split(L_b·E_b, E_a) + c·split(L_b, E_b) = c·split(L_b, E_a·E_b)
//	floordiv(split(L, d·q), d) = split(L·d, q)
//	floormod(split(L, d·q), d) = split(L, d)
//	floordiv(d·c·x, d) = c·x,  floormod(d·c·x, d) = 0
//	floordiv(hi + lo, d) = hi / d,  floormod(hi + lo, d) = lo
//	  when d divides every coefficient of hi and lo is one split
//	  c·split(L, E) with c·E dividing d (so 0 <= lo < d)
//	split(L, 1) = 0,  a·x + b·x = (a+b)·x
//	x + floordiv(y, d) = floordiv(x·d + y, d)
//
// The last lets a quotient the rules cannot resolve yet wait for the
// terms the simplifier moved out of it (it rewrites floordiv(12·a + b, 4)
// as 3·a + floordiv(b, 4) only when it helps, and floordiv(6·a + b, 4) as
// a + floordiv(2·a + b, 4)).
//
// Coefficients, lower factors and extents are products of shape factors
// (a constant and a multiset of symbolic atoms), so "d divides E" is
// multiset inclusion. The loads' flat position sum idx_j * instride_j must
// normalize to the same sum as the store's (split(1, P) once fused).

// factors is c · atoms[0] · atoms[1] · ...; atoms are shape expressions
// without block variables (usually shape variables).
type factors struct {
	c     int64
	atoms []ir.PrimExpr
}

func constFactors(c int64) factors { return factors{c: c} }

func (f factors) mul(g factors) factors {
	return factors{c: f.c * g.c, atoms: append(append([]ir.PrimExpr{}, f.atoms...), g.atoms...)}
}

// div returns f / g when g divides f exactly (as products of factors).
func (f factors) div(g factors) (factors, bool) {
	if g.c == 0 || f.c%g.c != 0 {
		return factors{}, false
	}
	rest := append([]ir.PrimExpr{}, f.atoms...)
	for _, a := range g.atoms {
		i := indexOfAtom(rest, a)
		if i < 0 {
			return factors{}, false
		}
		rest = append(rest[:i], rest[i+1:]...)
	}
	return factors{c: f.c / g.c, atoms: rest}, true
}

func (f factors) equal(g factors) bool {
	q, ok := f.div(g)
	return ok && q.c == 1 && len(q.atoms) == 0
}

func (f factors) isOne() bool { return f.c == 1 && len(f.atoms) == 0 }

func indexOfAtom(as []ir.PrimExpr, a ir.PrimExpr) int {
	for i, b := range as {
		if b == a || ir.NewAnalyzer().CanProveEqual(b, a) {
			return i
		}
	}
	return -1
}

// factorsOf splits a shape expression (no block variables) into factors.
func factorsOf(e ir.PrimExpr) (factors, bool) {
	if n, ok := ir.IntValue(e); ok {
		return constFactors(n), n > 0
	}
	if b, ok := e.(*ir.Binary); ok && b.Op == ir.OpMul {
		x, ok1 := factorsOf(b.A)
		y, ok2 := factorsOf(b.B)
		return x.mul(y), ok1 && ok2
	}
	return factors{c: 1, atoms: []ir.PrimExpr{e}}, true
}

// split is coef · floormod(floordiv(F, lower), extent).
type split struct{ coef, lower, extent factors }

// splitSum is a sum of splits plus a shape-only part (nil: none), or,
// when den is set (den.c != 0), floordiv of that sum by den.
type splitSum struct {
	terms []split
	shape ir.PrimExpr
	den   factors
}

func (s splitSum) quotient() bool { return s.den.c != 0 }

// reshapeProver normalizes index expressions over the block variables of
// an output enumeration.
type reshapeProver struct {
	iter map[*ir.PrimVar]split // block variable v_i = split(stride_i, out_i)
}

func newReshapeProver(vars []*ir.PrimVar, outShape []ir.PrimExpr) (*reshapeProver, bool) {
	p := &reshapeProver{iter: map[*ir.PrimVar]split{}}
	stride := constFactors(1)
	for i := len(vars) - 1; i >= 0; i-- {
		ext, ok := factorsOf(outShape[i])
		if !ok {
			return nil, false
		}
		p.iter[vars[i]] = split{coef: constFactors(1), lower: stride, extent: ext}
		stride = stride.mul(ext)
	}
	return p, true
}

func (p *reshapeProver) usesIter(e ir.PrimExpr) bool {
	found := false
	ir.VisitPrimVars(e, func(v *ir.PrimVar) {
		if _, ok := p.iter[v]; ok {
			found = true
		}
	})
	return found
}

// normalize rewrites e as a fused sum of splits; ok is false for anything
// the rules do not cover.
func (p *reshapeProver) normalize(e ir.PrimExpr) (splitSum, bool) {
	if !p.usesIter(e) {
		return splitSum{shape: e}, true
	}
	switch e := e.(type) {
	case *ir.PrimVar:
		return splitSum{terms: []split{p.iter[e]}}, true
	case *ir.Cast:
		if !e.Type.IsInt() || e.Type.Bits < 32 {
			return splitSum{}, false
		}
		return p.normalize(e.Value)
	case *ir.Binary:
		a, ok1 := p.normalize(e.A)
		b, ok2 := p.normalize(e.B)
		if !ok1 || !ok2 {
			return splitSum{}, false
		}
		switch e.Op {
		case ir.OpAdd:
			if a.quotient() {
				a, b = b, a
			}
			if b.quotient() { // a + floordiv(y, d) = floordiv(a·d + y, d)
				if a.quotient() || !a.pure() {
					return splitSum{}, false
				}
				num := b
				num.den = factors{}
				for _, t := range a.terms {
					t.coef = t.coef.mul(b.den)
					num.terms = append(num.terms, t)
				}
				return num.fused().divMod(b.den, false)
			}
			s := splitSum{terms: append(append([]split{}, a.terms...), b.terms...), shape: addShape(a.shape, b.shape)}
			return s.fused(), true
		case ir.OpMul:
			if len(a.terms) == 0 && !a.quotient() {
				a, b = b, a
			}
			if len(b.terms) > 0 || b.quotient() || b.shape == nil || a.quotient() {
				return splitSum{}, false
			}
			return a.scaled(b.shape)
		case ir.OpFloorDiv, ir.OpDiv, ir.OpFloorMod, ir.OpMod:
			// Every split sum is non-negative, so truncating and flooring
			// division agree.
			if len(b.terms) > 0 || b.shape == nil {
				return splitSum{}, false
			}
			d, ok := factorsOf(b.shape)
			if !ok || !a.pure() || a.quotient() || b.quotient() {
				return splitSum{}, false
			}
			return a.divMod(d, e.Op == ir.OpFloorMod || e.Op == ir.OpMod)
		}
	}
	return splitSum{}, false
}

func addShape(a, b ir.PrimExpr) ir.PrimExpr {
	switch {
	case a == nil:
		return b
	case b == nil:
		return a
	}
	return ir.Add(a, b)
}

// pure reports whether the sum has no shape-only part (or a zero one).
func (s splitSum) pure() bool {
	if s.shape == nil {
		return true
	}
	n, ok := ir.IntValue(ir.Simplify(s.shape))
	return ok && n == 0
}

func (s splitSum) scaled(by ir.PrimExpr) (splitSum, bool) {
	if n, ok := ir.IntValue(ir.Simplify(by)); ok && n == 0 {
		return splitSum{shape: ir.I64(0)}, true
	}
	f, ok := factorsOf(by)
	if !ok {
		return splitSum{}, false
	}
	out := splitSum{}
	if s.shape != nil {
		out.shape = ir.Mul(s.shape, by)
	}
	for _, t := range s.terms {
		t.coef = t.coef.mul(f)
		out.terms = append(out.terms, t)
	}
	return out, true
}

// fused drops splits of extent 1, adds like terms and merges adjacent
// digits until none merge.
func (s splitSum) fused() splitSum {
	var ts []split
	for _, t := range s.terms {
		if t.extent.isOne() {
			continue
		}
		like := false
		for i, u := range ts {
			if u.lower.equal(t.lower) && u.extent.equal(t.extent) && (factors{c: 1, atoms: u.coef.atoms}).equal(factors{c: 1, atoms: t.coef.atoms}) {
				ts[i].coef.c += t.coef.c
				like = true
				break
			}
		}
		if !like {
			ts = append(ts, t)
		}
	}
	for merged := true; merged; {
		merged = false
		for i := 0; i < len(ts) && !merged; i++ {
			for j := 0; j < len(ts) && !merged; j++ {
				hi, lo := ts[i], ts[j]
				if i == j || !hi.coef.equal(lo.coef.mul(lo.extent)) || !hi.lower.equal(lo.lower.mul(lo.extent)) {
					continue
				}
				ts[j] = split{coef: lo.coef, lower: lo.lower, extent: hi.extent.mul(lo.extent)}
				ts = append(ts[:i], ts[i+1:]...)
				merged = true
			}
		}
	}
	return splitSum{terms: ts, shape: s.shape, den: s.den}
}

// divMod is floordiv(s, d) or floormod(s, d); a floordiv the rules do not
// resolve stays a quotient.
func (s splitSum) divMod(d factors, mod bool) (splitSum, bool) {
	r, ok := s.resolveDivMod(d, mod)
	if !ok && !mod {
		return splitSum{terms: s.terms, den: d}, true
	}
	return r, ok
}

func (s splitSum) resolveDivMod(d factors, mod bool) (splitSum, bool) {
	var hi, lo []split
	for _, t := range s.terms {
		if q, ok := t.coef.div(d); ok {
			t.coef = q
			hi = append(hi, t)
		} else {
			lo = append(lo, t)
		}
	}
	switch {
	case len(lo) == 0: // a multiple of d
		if mod {
			return splitSum{}, true
		}
		return splitSum{terms: hi}, true
	case len(lo) > 1:
		if mod {
			if t, ok := s.realigned(d); ok {
				return t.resolveDivMod(d, mod)
			}
		}
		return splitSum{}, false
	}
	t := lo[0]
	if _, ok := d.div(t.coef.mul(t.extent)); ok { // 0 <= lo < d
		if mod {
			return splitSum{terms: lo}, true
		}
		return splitSum{terms: hi}, true
	}
	if len(hi) > 0 || !t.coef.isOne() {
		return splitSum{}, false
	}
	q, ok := t.extent.div(d)
	if !ok {
		return splitSum{}, false
	}
	if mod {
		return splitSum{terms: []split{{coef: t.coef, lower: t.lower, extent: d}}}, true
	}
	return splitSum{terms: []split{{coef: t.coef, lower: t.lower.mul(d), extent: q}}}.fused(), true
}

// realigned adds a multiple of the constant d to one term's coefficient
// so that it becomes the next digit of another term (floormod(x, d) does
// not change): the simplifier drops such multiples, turning
// floormod(6·a + b, 4) into floormod(2·a + b, 4). ok is false when no term
// realigns.
func (s splitSum) realigned(d factors) (splitSum, bool) {
	if len(d.atoms) > 0 {
		return splitSum{}, false
	}
	for i, t := range s.terms {
		for j, u := range s.terms {
			target := u.coef.mul(u.extent)
			if i == j || !t.lower.equal(u.lower.mul(u.extent)) || target.c <= t.coef.c || (target.c-t.coef.c)%d.c != 0 ||
				!(factors{c: 1, atoms: target.atoms}).equal(factors{c: 1, atoms: t.coef.atoms}) {
				continue
			}
			terms := append([]split{}, s.terms...)
			terms[i].coef = target
			return splitSum{terms: terms, shape: s.shape}.fused(), true
		}
	}
	return splitSum{}, false
}

func (s splitSum) equal(o splitSum) bool {
	if len(s.terms) != len(o.terms) || !s.pure() || !o.pure() || s.quotient() || o.quotient() {
		return false
	}
	used := make([]bool, len(o.terms))
	for _, t := range s.terms {
		found := false
		for j, u := range o.terms {
			if !used[j] && t.coef.equal(u.coef) && t.lower.equal(u.lower) && t.extent.equal(u.extent) {
				used[j], found = true, true
				break
			}
		}
		if !found {
			return false
		}
	}
	return true
}

// provesSamePosition reports whether loading in[idx] at every output
// position v (block variables vars over outShape) reads the input element
// at v's row-major position.
func provesSamePosition(vars []*ir.PrimVar, outShape, idx, inShape []ir.PrimExpr) bool {
	p, ok := newReshapeProver(vars, outShape)
	if !ok {
		return false
	}
	flatIn, ok1 := p.normalize(linear(idx, inShape))
	out := make([]ir.PrimExpr, len(vars))
	for i, v := range vars {
		out[i] = v
	}
	flatOut, ok2 := p.normalize(linear(out, outShape))
	return ok1 && ok2 && flatIn.fused().equal(flatOut.fused())
}
