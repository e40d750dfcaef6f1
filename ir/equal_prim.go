package ir

import "math"

// PrimExpr comparison. Expressions are first compared as written; integer
// expressions that differ are compared again in Simplify's canonical form.
// Variable pairs made by a failed first attempt are undone before the
// second.

// prim compares and records a mismatch.
func (e *eqState) prim(a, b PrimExpr) bool {
	if e.primQuiet(a, b) {
		return true
	}
	return e.fail(func() string { return FormatPrim(a, nil) }, func() string { return FormatPrim(b, nil) })
}

// primQuiet compares without recording a mismatch (the caller reports the
// enclosing node, which reads better than a lone dimension).
func (e *eqState) primQuiet(a, b PrimExpr) bool {
	if a == nil || b == nil {
		return a == nil && b == nil
	}
	mark := len(e.primLog)
	wasLogging := e.logging
	e.logging = true
	ok := e.primRaw(a, b)
	if !ok {
		e.undoPrims(mark)
		if canonicalizable(a) && canonicalizable(b) && a.DType() == b.DType() {
			sa, sb := Simplify(a), Simplify(b)
			if sa != a || sb != b {
				ok = e.primRaw(sa, sb)
				if !ok {
					e.undoPrims(mark)
				}
			}
		}
	}
	e.logging = wasLogging
	if !wasLogging {
		e.primLog = e.primLog[:0]
	}
	return ok
}

// primsQuiet compares two dimension lists quietly: equal lengths and
// pairwise primQuiet.
func (e *eqState) primsQuiet(a, b []PrimExpr) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if !e.primQuiet(a[i], b[i]) {
			return false
		}
	}
	return true
}

func (e *eqState) undoPrims(mark int) {
	for _, v := range e.primLog[mark:] {
		e.prims.unpair(v)
	}
	e.primLog = e.primLog[:mark]
}

// canonicalizable reports whether p is a compound integer expression, the
// kind Simplify puts in canonical form.
func canonicalizable(p PrimExpr) bool {
	switch p.(type) {
	case *IntImm, *PrimVar, *FloatImm, *PrimStr:
		return false
	}
	t := p.DType()
	return t.IsInteger() && t.IsScalar()
}

// primVar compares two variable occurrences: paired, defined here (inside
// a defining region or when mapping free variables), or the same free var.
func (e *eqState) primVar(a, b *PrimVar) bool {
	if m, ok := e.prims.l.Get(a); ok {
		return m == b
	}
	if _, ok := e.prims.r.Get(b); ok {
		return false
	}
	if a.Type != b.Type {
		return false
	}
	if !e.defining && !e.opts.MapFreeVars && a != b {
		return false
	}
	e.pairPrim(a, b)
	return true
}

func (e *eqState) pairPrim(a, b *PrimVar) bool {
	if !e.prims.pair(a, b) {
		return false
	}
	if e.logging {
		e.primLog = append(e.primLog, a)
	}
	return true
}

// definePrim pairs variables at a TIR definition site (loop, let, iter,
// parameter, buffer data).
func (e *eqState) definePrim(a, b *PrimVar) bool {
	if a == nil || b == nil {
		return a == nil && b == nil
	}
	return a.Type == b.Type && e.pairPrim(a, b)
}

func (e *eqState) primRaw(a, b PrimExpr) bool {
	switch x := a.(type) {
	case *IntImm:
		y, ok := b.(*IntImm)
		return ok && x.Type == y.Type && x.Value == y.Value
	case *FloatImm:
		y, ok := b.(*FloatImm)
		return ok && x.Type == y.Type && math.Float64bits(x.Value) == math.Float64bits(y.Value)
	case *PrimStr:
		y, ok := b.(*PrimStr)
		return ok && x.Value == y.Value
	case *PrimVar:
		y, ok := b.(*PrimVar)
		return ok && e.primVar(x, y)
	case *Binary:
		y, ok := b.(*Binary)
		return ok && x.Op == y.Op && e.primRaw(x.A, y.A) && e.primRaw(x.B, y.B)
	case *Not:
		y, ok := b.(*Not)
		return ok && e.primRaw(x.A, y.A)
	case *Select:
		y, ok := b.(*Select)
		return ok && e.primRaw(x.Cond, y.Cond) && e.primRaw(x.True, y.True) && e.primRaw(x.False, y.False)
	case *Cast:
		y, ok := b.(*Cast)
		return ok && x.Type == y.Type && e.primRaw(x.Value, y.Value)
	case *PrimCall:
		y, ok := b.(*PrimCall)
		if !ok || x.Op != y.Op || x.Type != y.Type || len(x.Args) != len(y.Args) {
			return false
		}
		for i := range x.Args {
			if !e.primRaw(x.Args[i], y.Args[i]) {
				return false
			}
		}
		return true
	case *BufferLoad:
		y, ok := b.(*BufferLoad)
		if !ok || len(x.Indices) != len(y.Indices) || !e.useBufferQuiet(x.Buffer, y.Buffer) {
			return false
		}
		for i := range x.Indices {
			if !e.primRaw(x.Indices[i], y.Indices[i]) {
				return false
			}
		}
		return true
	case nil:
		return b == nil
	}
	return false
}
