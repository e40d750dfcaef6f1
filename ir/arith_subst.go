package ir

// SubstitutePrim replaces variables in e by the mapped expressions. It does
// not simplify the result, and it returns e itself (and shares every
// unchanged subtree) when no mapped variable occurs.
func SubstitutePrim(e PrimExpr, m map[*PrimVar]PrimExpr) PrimExpr {
	if len(m) == 0 || e == nil {
		return e
	}
	return substPrim(e, m)
}

func substPrim(e PrimExpr, m map[*PrimVar]PrimExpr) PrimExpr {
	switch e := e.(type) {
	case *PrimVar:
		if r, ok := m[e]; ok {
			return r
		}
	case *Binary:
		a, b := substPrim(e.A, m), substPrim(e.B, m)
		if a != e.A || b != e.B {
			return NewBinary(e.Op, a, b)
		}
	case *Not:
		if a := substPrim(e.A, m); a != e.A {
			return &Not{A: a}
		}
	case *Select:
		c, a, b := substPrim(e.Cond, m), substPrim(e.True, m), substPrim(e.False, m)
		if c != e.Cond || a != e.True || b != e.False {
			return &Select{Cond: c, True: a, False: b}
		}
	case *Cast:
		if v := substPrim(e.Value, m); v != e.Value {
			return &Cast{Type: e.Type, Value: v}
		}
	case *PrimCall:
		if args, changed := substList(e.Args, m); changed {
			return &PrimCall{Op: e.Op, Args: args, Type: e.Type}
		}
	case *BufferLoad:
		if idx, changed := substList(e.Indices, m); changed {
			return &BufferLoad{Buffer: e.Buffer, Indices: idx}
		}
	}
	return e
}

func substList(xs []PrimExpr, m map[*PrimVar]PrimExpr) ([]PrimExpr, bool) {
	return mapList(xs, func(x PrimExpr) PrimExpr { return substPrim(x, m) })
}

// PrimVarsIn returns the variables e mentions, in first-occurrence order
// (left to right, operands before the operator's later operands), without
// duplicates. A BufferLoad contributes its index variables, not the
// buffer's data handle or shape.
func PrimVarsIn(e PrimExpr) []*PrimVar {
	var out []*PrimVar
	seen := map[*PrimVar]bool{}
	VisitPrimVars(e, func(v *PrimVar) {
		if !seen[v] {
			seen[v] = true
			out = append(out, v)
		}
	})
	return out
}

// VisitPrimVars calls f for every variable occurrence in e, left to right
// (a BufferLoad's index variables, not its buffer's data handle). It is
// InspectPrim specialised to variables: hashing calls it on every
// expression, and a direct walk avoids a callback per node.
func VisitPrimVars(e PrimExpr, f func(*PrimVar)) {
	switch e := e.(type) {
	case *PrimVar:
		f(e)
	case *Binary:
		VisitPrimVars(e.A, f)
		VisitPrimVars(e.B, f)
	case *Not:
		VisitPrimVars(e.A, f)
	case *Select:
		VisitPrimVars(e.Cond, f)
		VisitPrimVars(e.True, f)
		VisitPrimVars(e.False, f)
	case *Cast:
		VisitPrimVars(e.Value, f)
	case *PrimCall:
		for _, a := range e.Args {
			VisitPrimVars(a, f)
		}
	case *BufferLoad:
		for _, a := range e.Indices {
			VisitPrimVars(a, f)
		}
	}
}
