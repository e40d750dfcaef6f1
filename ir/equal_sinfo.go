package ir

// Struct info comparison. Inside defining regions (parameter and match_cast
// struct info, FuncInfo parameters) symbolic variables met for the first time
// are paired instead of being treated as free.

func (e *eqState) sinfoMismatch(a, b StructInfo) bool {
	return e.fail(func() string { return FormatStructInfo(a, nil) }, func() string { return FormatStructInfo(b, nil) })
}

func (e *eqState) sinfo(a, b StructInfo) bool {
	if a == nil || b == nil {
		if a == nil && b == nil {
			return true
		}
		return e.sinfoMismatch(a, b)
	}
	switch x := a.(type) {
	case *ObjectInfo:
		if _, ok := b.(*ObjectInfo); !ok {
			return e.sinfoMismatch(a, b)
		}
		return true
	case *PrimInfo:
		y, ok := b.(*PrimInfo)
		if !ok || x.DType != y.DType || (x.Value == nil) != (y.Value == nil) {
			return e.sinfoMismatch(a, b)
		}
		if x.Value != nil && !e.primQuiet(x.Value, y.Value) {
			return e.sinfoMismatch(a, b)
		}
		return true
	case *ShapeInfo:
		y, ok := b.(*ShapeInfo)
		if !ok || x.NDim != y.NDim || x.Known() != y.Known() || !e.primsQuiet(x.Values, y.Values) {
			return e.sinfoMismatch(a, b)
		}
		return true
	case *TensorInfo:
		y, ok := b.(*TensorInfo)
		if !ok || x.DType != y.DType || x.NDim != y.NDim || !sameVDevice(x.VDevice, y.VDevice) {
			return e.sinfoMismatch(a, b)
		}
		return e.tensorShape(x, y)
	case *TupleInfo:
		y, ok := b.(*TupleInfo)
		if !ok || len(x.Fields) != len(y.Fields) {
			return e.sinfoMismatch(a, b)
		}
		e.field("fields")
		for i := range x.Fields {
			e.index(i)
			if !e.sinfo(x.Fields[i], y.Fields[i]) {
				return false
			}
			e.pop()
		}
		e.pop()
		return true
	case *FuncInfo:
		y, ok := b.(*FuncInfo)
		if !ok || x.Opaque != y.Opaque || x.Pure != y.Pure || len(x.Params) != len(y.Params) {
			return e.sinfoMismatch(a, b)
		}
		// A callable's parameters define its symbolic variables.
		saved := e.defining
		e.defining = true
		e.field("params")
		for i := range x.Params {
			e.index(i)
			if !e.sinfo(x.Params[i], y.Params[i]) {
				return false
			}
			e.pop()
		}
		e.pop()
		e.defining = saved
		e.field("ret")
		if !e.sinfo(x.Ret, y.Ret) {
			return false
		}
		e.pop()
		return true
	}
	return e.sinfoMismatch(a, b)
}

// tensorShape compares tensor shapes: absent, ShapeExprs dimensionwise, or
// shape vars as variable uses.
func (e *eqState) tensorShape(a, b *TensorInfo) bool {
	switch x := a.Shape.(type) {
	case nil:
		if b.Shape != nil {
			return e.sinfoMismatch(a, b)
		}
		return true
	case *ShapeExpr:
		y, ok := b.Shape.(*ShapeExpr)
		if !ok || !e.primsQuiet(x.Values, y.Values) {
			return e.sinfoMismatch(a, b)
		}
		return true
	case *Var:
		y, ok := b.Shape.(*Var)
		if !ok {
			return e.sinfoMismatch(a, b)
		}
		e.field("shape")
		if !e.useVar(x, y) {
			return false
		}
		e.pop()
		return true
	}
	e.field("shape")
	if !e.expr(a.Shape, b.Shape) {
		return false
	}
	e.pop()
	return true
}
