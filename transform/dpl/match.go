package dpl

import (
	"fmt"
	"reflect"

	"github.com/phasec/phasec/internal/ptrmap"
	"github.com/phasec/phasec/ir"
)

// Bindings maps the variables a binding block binds to their values: the
// context in which a pattern's operands are followed through variables. A
// nil *Bindings holds none. It is a ptrmap, not a Go map: a rewrite sweep
// records every binding of a block and looks up most of them soon after,
// which a ptrmap's large table keeps in cache (see internal/ptrmap).
type Bindings struct {
	vars ptrmap.Map[ir.Var, ir.Expr]
}

// Set records value as v's.
func (b *Bindings) Set(v *ir.Var, value ir.Expr) { b.vars.Set(v, value) }

// Value returns the value bound to v, if b has it.
func (b *Bindings) Value(v *ir.Var) (ir.Expr, bool) {
	if b == nil {
		return nil, false
	}
	return b.vars.Get(v)
}

// Len is the number of bindings.
func (b *Bindings) Len() int {
	if b == nil {
		return 0
	}
	return b.vars.Len()
}

// Reset forgets every binding.
func (b *Bindings) Reset() { b.vars.Reset() }

// BlockBindings returns the var-to-value map of a block's VarBindings
// (match_casts are not followed: their value is a cast, not the producer).
func BlockBindings(blk *ir.BindingBlock) *Bindings {
	b := &Bindings{}
	b.vars.Reserve(len(blk.Bindings))
	for _, bind := range blk.Bindings {
		if vb, ok := bind.(*ir.VarBinding); ok {
			b.Set(vb.Var, vb.Value)
		}
	}
	return b
}

// Match is the result of a successful match: the expression each pattern
// node of the tree matched (TVM's Map<DFPattern, Expr>). A call, tuple or
// constant pattern maps to the value it matched (the call itself, not the
// variable bound to it); a wildcard maps to the operand as written.
type Match map[Pattern]ir.Expr

// MatchExpr matches p against e, following variables through bindings.
func MatchExpr(p Pattern, e ir.Expr, bindings *Bindings) (Match, bool) {
	m := &matcher{bindings: bindings, got: Match{}}
	if !m.match(p, e) {
		return nil, false
	}
	return m.got, true
}

type matcher struct {
	bindings *Bindings
	got      Match
	trail    []Pattern // patterns recorded, in order, for undo on backtracking
}

// resolve follows a variable to the value bound to it in the block,
// through chains of variable-to-variable bindings (bounded by the block's
// size, so a malformed cycle cannot loop).
func (m *matcher) resolve(e ir.Expr) ir.Expr {
	for range m.bindings.Len() + 1 {
		v, ok := e.(*ir.Var)
		if !ok {
			return e
		}
		val, ok := m.bindings.Value(v)
		if !ok {
			return e
		}
		e = val
	}
	return e
}

func (m *matcher) record(p Pattern, e ir.Expr) bool {
	if prev, ok := m.got[p]; ok {
		return prev == e
	}
	m.got[p] = e
	m.trail = append(m.trail, p)
	return true
}

func (m *matcher) undo(n int) {
	for _, p := range m.trail[n:] {
		delete(m.got, p)
	}
	m.trail = m.trail[:n]
}

func (m *matcher) match(p Pattern, e ir.Expr) bool {
	switch p := p.(type) {
	case *WildcardPattern:
		return m.record(p, e)
	case *ConstantPattern:
		e = m.resolve(e)
		if _, ok := e.(*ir.Constant); !ok {
			return false
		}
		return m.record(p, e)
	case *CallPattern:
		c, ok := m.resolve(e).(*ir.Call)
		if !ok || len(c.Args) != len(p.Args) {
			return false
		}
		if len(p.Ops) > 0 {
			op, ok := c.Op.(*ir.Op)
			if !ok || !containsOp(p.Ops, op) {
				return false
			}
		}
		if prev, ok := m.got[p]; ok {
			return prev == c
		}
		n := len(m.trail)
		for i, a := range p.Args {
			if !m.match(a, c.Args[i]) {
				m.undo(n)
				return false
			}
		}
		return m.record(p, c)
	case *AttrPattern:
		n := len(m.trail)
		if !m.match(p.Pattern, e) {
			return false
		}
		c, ok := m.got[p.Pattern].(*ir.Call)
		if !ok || !attrsInclude(c.Attrs, p.Attrs) {
			m.undo(n)
			return false
		}
		return m.record(p, c)
	case *OrPattern:
		n := len(m.trail)
		for _, alt := range []Pattern{p.Left, p.Right} {
			if m.match(alt, e) {
				if m.record(p, m.got[alt]) {
					return true
				}
			}
			m.undo(n)
		}
		return false
	case *TuplePattern:
		t, ok := m.resolve(e).(*ir.Tuple)
		if !ok || len(t.Fields) != len(p.Fields) {
			return false
		}
		n := len(m.trail)
		for i, f := range p.Fields {
			if !m.match(f, t.Fields[i]) {
				m.undo(n)
				return false
			}
		}
		return m.record(p, t)
	case *TupleGetItemPattern:
		g, ok := m.resolve(e).(*ir.TupleGetItem)
		if !ok || (p.Index >= 0 && g.Index != p.Index) {
			return false
		}
		n := len(m.trail)
		if !m.match(p.Tuple, g.Tuple) || !m.record(p, g) {
			m.undo(n)
			return false
		}
		return true
	case *PredicatePattern:
		n := len(m.trail)
		if !m.match(p.Pattern, e) {
			return false
		}
		if got := m.got[p.Pattern]; !p.Pred(got) || !m.record(p, got) {
			m.undo(n)
			return false
		}
		return true
	}
	panic(fmt.Sprintf("dpl: unknown pattern type %T", p))
}

func containsOp(ops []*ir.Op, op *ir.Op) bool {
	for _, o := range ops {
		if o == op {
			return true
		}
	}
	return false
}

// attrsInclude reports whether every entry of want is in have, comparing
// values by their printed form after normalizing integer lists.
func attrsInclude(have ir.Attrs, want map[string]any) bool {
	for k, w := range want {
		h, ok := have[k]
		if !ok {
			return false
		}
		if hi, ok := ir.AttrAsInts(h); ok {
			if wi, ok := ir.AttrAsInts(w); ok {
				if !reflect.DeepEqual(hi, wi) {
					return false
				}
				continue
			}
		}
		if fmt.Sprint(h) != fmt.Sprint(w) {
			return false
		}
	}
	return true
}
