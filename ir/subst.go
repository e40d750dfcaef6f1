package ir

// Substitution helpers: Relax variables by expressions (Bind), symbolic
// variables by PrimExprs in struct info, expressions and functions (all on
// top of SubstitutePrim).

// Bind replaces every use of a variable in m by its mapped expression
// throughout e (copy-on-write; e itself when no mapped var occurs). When e
// is a *Function, mapped parameters are removed from its parameter list (the
// function is specialized), as TVM's Bind does. Rebuilt nodes carry no
// struct info: normalize the result.
func Bind(e Expr, m map[*Var]Expr) Expr {
	if len(m) == 0 {
		return e
	}
	mut := &Mutator{PostExpr: func(x Expr) Expr {
		if v, ok := x.(*Var); ok {
			if r, ok := m[v]; ok {
				return r
			}
		}
		return x
	}}
	f, ok := e.(*Function)
	if !ok {
		return mut.Expr(e)
	}
	var params []*Var
	for _, p := range f.Params {
		if _, bound := m[p]; !bound {
			params = append(params, p)
		}
	}
	body := mut.Expr(f.Body)
	if len(params) == len(f.Params) && body == f.Body {
		return f
	}
	if len(params) == len(f.Params) {
		params = f.Params
	}
	n := &Function{Params: params, Body: body, Ret: f.Ret, Pure: f.Pure, Attrs: f.Attrs}
	n.span = f.span
	return n
}

// DefinableSymVars returns the symbolic variables s can define when it is
// matched (function parameter or MatchCast target): those standing alone as
// a tensor or shape dimension or as a prim value, in first-occurrence order.
// Composite expressions (n+1) define nothing; neither do function types.
func DefinableSymVars(s StructInfo) []*PrimVar {
	var out []*PrimVar
	add := func(e PrimExpr) {
		if v, ok := e.(*PrimVar); ok {
			for _, w := range out {
				if w == v {
					return
				}
			}
			out = append(out, v)
		}
	}
	var walk func(StructInfo)
	walk = func(s StructInfo) {
		switch s := s.(type) {
		case *PrimInfo:
			if s.Value != nil {
				add(s.Value)
			}
		case *ShapeInfo:
			for _, d := range s.Values {
				add(d)
			}
		case *TensorInfo:
			if se, ok := s.Shape.(*ShapeExpr); ok {
				for _, d := range se.Values {
					add(d)
				}
			}
		case *TupleInfo:
			for _, f := range s.Fields {
				walk(f)
			}
		}
	}
	walk(s)
	return out
}

// SymVarsInStructInfo returns every symbolic variable s mentions, at any
// depth, in first-occurrence order.
func SymVarsInStructInfo(s StructInfo) []*PrimVar {
	var out []*PrimVar
	seen := map[*PrimVar]bool{}
	InspectStructInfoPrims(s, func(e PrimExpr) bool {
		if v, ok := e.(*PrimVar); ok && !seen[v] {
			seen[v] = true
			out = append(out, v)
		}
		return true
	})
	return out
}

// SubstituteSymVarsPrim replaces the mapped symbolic variables in e and
// simplifies the result when anything changed (e itself otherwise).
func SubstituteSymVarsPrim(e PrimExpr, m map[*PrimVar]PrimExpr) PrimExpr {
	if n := SubstitutePrim(e, m); n != e {
		return Simplify(n)
	}
	return e
}

// SubstituteSymVars replaces the mapped symbolic variables throughout s
// (copy-on-write: s itself when none occurs). Changed dimensions are
// simplified; ranks never change.
func SubstituteSymVars(s StructInfo, m map[*PrimVar]PrimExpr) StructInfo {
	if len(m) == 0 || s == nil {
		return s
	}
	return substSInfo(m, s)
}

// substPrims substitutes in a list of dimensions, simplifying those that
// changed (in itself when none did).
func substPrims(m map[*PrimVar]PrimExpr, in []PrimExpr) ([]PrimExpr, bool) {
	out, changed := mapList(in, func(e PrimExpr) PrimExpr { return SubstitutePrim(e, m) })
	if !changed {
		return in, false
	}
	for i := range out {
		if out[i] != in[i] {
			out[i] = Simplify(out[i])
		}
	}
	return out, true
}

func substSInfo(m map[*PrimVar]PrimExpr, s StructInfo) StructInfo {
	sub := func(x StructInfo) StructInfo { return substSInfo(m, x) }
	switch s := s.(type) {
	case *PrimInfo:
		if s.Value == nil {
			return s
		}
		if v := SubstituteSymVarsPrim(s.Value, m); v != s.Value {
			return &PrimInfo{DType: s.DType, Value: v}
		}
	case *ShapeInfo:
		if vals, ch := substPrims(m, s.Values); ch {
			return &ShapeInfo{Values: vals, NDim: s.NDim}
		}
	case *TensorInfo:
		if se, ok := s.Shape.(*ShapeExpr); ok {
			if vals, ch := substPrims(m, se.Values); ch {
				ns := NewShapeExpr(vals...)
				ns.span = se.span
				ns.sinfo = ShapeInfoOf(vals...)
				return &TensorInfo{Shape: ns, DType: s.DType, NDim: s.NDim, VDevice: s.VDevice}
			}
		}
	case *TupleInfo:
		if fields, ch := mapList(s.Fields, sub); ch {
			return &TupleInfo{Fields: fields}
		}
	case *FuncInfo:
		params, pch := mapList(s.Params, sub)
		ret := substSInfo(m, s.Ret)
		if pch || ret != s.Ret {
			n := *s
			n.Params = params
			n.Ret = ret
			return &n
		}
	}
	return s
}

// SubstituteSymVarsInExpr replaces the mapped symbolic variables in the
// PrimExprs of e (ShapeExpr values, PrimValues) and in its annotation struct
// info (sinfo_args, MatchCast targets, function return info). Variables
// whose struct info mentions a mapped symbolic variable are replaced by
// fresh variables with substituted info (uses follow). Copy-on-write; the
// result must be normalized.
func SubstituteSymVarsInExpr(e Expr, m map[*PrimVar]PrimExpr) Expr {
	if len(m) == 0 {
		return e
	}
	sinfo := func(s StructInfo) StructInfo { return substSInfo(m, s) }
	mut := &Mutator{
		StructInfo: sinfo,
		DefVar: func(v *Var) *Var {
			s := v.StructInfo()
			if s == nil {
				return v
			}
			if ns := sinfo(s); ns != s {
				nv := &Var{Name: v.Name, Dataflow: v.Dataflow}
				nv.span = v.span
				nv.sinfo = ns
				return nv
			}
			return v
		},
		PostExpr: func(x Expr) Expr {
			switch x := x.(type) {
			case *ShapeExpr:
				if vals, ch := substPrims(m, x.Values); ch {
					n := NewShapeExpr(vals...)
					n.span = x.span
					return n
				}
			case *PrimValue:
				if v := SubstituteSymVarsPrim(x.Value, m); v != x.Value {
					n := NewPrimValue(v)
					n.span = x.span
					return n
				}
			}
			return x
		},
	}
	return mut.Expr(e)
}
