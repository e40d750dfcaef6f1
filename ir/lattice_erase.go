package ir

// EraseToWellDefined coarsens s so it mentions only symbolic variables for
// which primInScope is true and Relax vars for which varInScope is true
// (either callback may be nil, meaning "nothing is in scope").
//
// Coarsening follows TVM: a PrimInfo value mentioning an out-of-scope
// variable drops to its dtype; a shape (of a ShapeInfo or a TensorInfo) with
// any such dimension drops to its rank. A tensor whose shape is an
// out-of-scope shape var keeps the var's known dimensions when those are in
// scope, else only its rank. FuncInfo is returned unchanged: its symbolic
// variables are bound by its own parameters. The result is s itself when
// nothing needed erasing.
func EraseToWellDefined(s StructInfo, primInScope func(*PrimVar) bool, varInScope func(*Var) bool) StructInfo {
	e := eraser{primInScope: primInScope, varInScope: varInScope}
	return e.erase(s)
}

// eraser rewrites struct info, first substituting mapped variables (call
// return derivation), then erasing what is still out of scope.
type eraser struct {
	primMap     map[*PrimVar]PrimExpr
	varMap      map[*Var]Expr
	primInScope func(*PrimVar) bool
	varInScope  func(*Var) bool
}

func (e *eraser) erase(s StructInfo) StructInfo {
	switch x := s.(type) {
	case *PrimInfo:
		if x.Value == nil {
			return x
		}
		v, ok := e.prim(x.Value)
		if !ok {
			return NewPrimInfo(x.DType)
		}
		if v == x.Value {
			return x
		}
		return &PrimInfo{DType: x.DType, Value: v}
	case *ShapeInfo:
		if !x.Known() {
			return x
		}
		vals, changed, ok := e.dims(x.Values)
		if !ok {
			return ShapeInfoNDim(x.NDim)
		}
		if !changed {
			return x
		}
		return ShapeInfoOf(vals...)
	case *TensorInfo:
		return e.tensor(x)
	case *TupleInfo:
		fields, changed := mapList(x.Fields, e.erase)
		if !changed {
			return x
		}
		return NewTupleInfo(fields...)
	}
	// ObjectInfo, FuncInfo, nil.
	return s
}

func (e *eraser) tensor(x *TensorInfo) StructInfo {
	ndimOnly := func() StructInfo { return &TensorInfo{DType: x.DType, NDim: x.NDim, VDevice: x.VDevice} }
	withDims := func(vals []PrimExpr) StructInfo {
		t := TensorInfoOf(x.DType, vals...)
		t.VDevice = x.VDevice
		return t
	}
	switch sh := x.Shape.(type) {
	case nil:
		return x
	case *ShapeExpr:
		vals, changed, ok := e.dims(sh.Values)
		if !ok {
			return ndimOnly()
		}
		if !changed {
			return x
		}
		return withDims(vals)
	case *Var:
		if r, ok := e.varMap[sh]; ok {
			switch r := r.(type) {
			case *Var:
				return &TensorInfo{Shape: r, DType: x.DType, NDim: x.NDim, VDevice: x.VDevice}
			case *ShapeExpr:
				return &TensorInfo{Shape: r, DType: x.DType, NDim: len(r.Values), VDevice: x.VDevice}
			}
			if vals, ok := shapeValues(r); ok {
				return withDims(vals)
			}
			return ndimOnly()
		}
		if e.varInScope != nil && e.varInScope(sh) {
			return x
		}
		if vals, ok := shapeValues(sh); ok {
			if vals, _, ok := e.dims(vals); ok {
				return withDims(vals)
			}
		}
		return ndimOnly()
	}
	return ndimOnly()
}

// dims maps each dimension; ok is false as soon as one is not well defined.
func (e *eraser) dims(vals []PrimExpr) (out []PrimExpr, changed, ok bool) {
	for i, d := range vals {
		n, ok := e.prim(d)
		if !ok {
			return nil, false, false
		}
		if n != d && out == nil {
			out = make([]PrimExpr, len(vals))
			copy(out, vals[:i])
		}
		if out != nil {
			out[i] = n
		}
	}
	if out == nil {
		return vals, false, true
	}
	return out, true, true
}

// prim substitutes mapped variables (simplifying the result) and reports
// whether every remaining variable is in scope.
func (e *eraser) prim(p PrimExpr) (PrimExpr, bool) {
	substitute := false
	undefined := false
	VisitPrimVars(p, func(v *PrimVar) {
		if _, ok := e.primMap[v]; ok {
			substitute = true
		} else if e.primInScope == nil || !e.primInScope(v) {
			undefined = true
		}
	})
	if undefined {
		return nil, false
	}
	if !substitute {
		return p, true
	}
	if v, ok := p.(*PrimVar); ok {
		return e.primMap[v], true
	}
	return Simplify(SubstitutePrim(p, e.primMap)), true
}
