package op

import "github.com/phasec/phasec/ir"

// opAttr returns the attribute name of call, falling back on the schema
// default when the call does not carry it (calls built by passes).
func opAttr(op *ir.Op, call *ir.Call, name string) any {
	if v, ok := call.Attrs[name]; ok {
		return v
	}
	if i := op.ParamIndex(name); i >= 0 {
		return op.Params[i].Default
	}
	return nil
}

func opAttrInt(op *ir.Op, call *ir.Call, name string) (int64, bool, error) {
	v := opAttr(op, call, name)
	if v == nil {
		return 0, false, nil
	}
	i, ok := ir.AttrAsInt(v)
	if !ok {
		return 0, false, opErrorf(op, "attribute %s must be an int, got %v", name, v)
	}
	return i, true, nil
}

// opAttrInts reads a list-of-ints attribute; a single int is a list of one.
// present is false for None.
func opAttrInts(op *ir.Op, call *ir.Call, name string) (list []int64, present bool, err error) {
	v := opAttr(op, call, name)
	if v == nil {
		return nil, false, nil
	}
	if i, ok := ir.AttrAsInt(v); ok {
		return []int64{i}, true, nil
	}
	list, ok := ir.AttrAsInts(v)
	if !ok {
		return nil, false, opErrorf(op, "attribute %s must be a list of ints, got %v", name, v)
	}
	return list, true, nil
}

func opAttrBool(op *ir.Op, call *ir.Call, name string) (bool, error) {
	v := opAttr(op, call, name)
	if v == nil {
		return false, nil
	}
	b, ok := v.(bool)
	if !ok {
		return false, opErrorf(op, "attribute %s must be a bool, got %v", name, v)
	}
	return b, nil
}

func opAttrDType(op *ir.Op, call *ir.Call, name string) (ir.DataType, error) {
	v := opAttr(op, call, name)
	switch x := v.(type) {
	case nil:
		return ir.Void, nil
	case ir.DataType:
		return x, nil
	case string:
		t, err := ir.ParseDataType(x)
		if err != nil {
			return ir.Void, opErrorf(op, "attribute %s: %v", name, err)
		}
		return t, nil
	}
	return ir.Void, opErrorf(op, "attribute %s must be a dtype, got %v", name, v)
}

// opCheckArity checks the number of arguments against the schema: every
// required argument parameter present, no extra ones unless variadic.
func opCheckArity(op *ir.Op, call *ir.Call) error {
	minArgs, maxArgs := 0, 0
	variadic := false
	for _, p := range op.Params {
		if p.Kind.IsAttr() {
			continue
		}
		if p.Variadic {
			variadic = true
			continue
		}
		maxArgs++
		if p.Required() {
			minArgs = maxArgs
		}
	}
	n := len(call.Args)
	switch {
	case n < minArgs:
		return opErrorf(op, "expects at least %d arguments, got %d", minArgs, n)
	case !variadic && n > maxArgs:
		return opErrorf(op, "expects at most %d arguments, got %d", maxArgs, n)
	}
	return nil
}

// normalizeSchema is the generic canonical form of a call: omitted trailing
// arguments with a default are filled in, and attributes are coerced to
// their canonical types with defaults filled in, so that a call built by a
// pass and the same call parsed from text are structurally equal. It returns
// call itself when nothing changes.
func normalizeSchema(op *ir.Op, call *ir.Call) (*ir.Call, error) {
	var newArgs []ir.Expr
	if n := op.ArgParamCount(); len(call.Args) < n {
		for i := len(call.Args); i < n; i++ {
			p, _ := op.ArgParam(i)
			d := p.NewDefaultArg()
			if d == nil {
				break
			}
			if newArgs == nil {
				newArgs = append([]ir.Expr(nil), call.Args...)
			}
			newArgs = append(newArgs, d)
		}
	}
	var newAttrs ir.Attrs
	for _, p := range op.Params {
		if !p.Kind.IsAttr() {
			continue
		}
		v, present := call.Attrs[p.Name]
		switch {
		case present && v == nil && p.Default == nil:
			// None for an attribute whose default is None: one canonical
			// form, the absent key.
			newAttrs = copyAttrsOnce(newAttrs, call.Attrs)
			delete(newAttrs, p.Name)
			continue
		case !present && p.Default == nil:
			continue
		case !present:
			v = p.Default
		}
		cv, err := p.CoerceAttr(v)
		if err != nil {
			return nil, opErrorf(op, "%v", err)
		}
		if present && attrValueEqual(v, cv) {
			continue
		}
		newAttrs = copyAttrsOnce(newAttrs, call.Attrs)
		newAttrs[p.Name] = cv
	}
	if newArgs == nil && newAttrs == nil {
		return call, nil
	}
	out := *call
	out.SetStructInfo(nil)
	if newArgs != nil {
		out.Args = newArgs
	}
	if newAttrs != nil {
		out.Attrs = newAttrs
	}
	return &out, nil
}

// copyAttrsOnce returns dst, or a copy of src when dst is still nil.
func copyAttrsOnce(dst, src ir.Attrs) ir.Attrs {
	if dst != nil {
		return dst
	}
	dst = make(ir.Attrs, len(src)+1)
	for k, x := range src {
		dst[k] = x
	}
	return dst
}

// attrValueEqual compares canonical attribute values (scalars or []any).
func attrValueEqual(a, b any) bool {
	if a == nil || b == nil {
		return a == nil && b == nil
	}
	la, okA := a.([]any)
	lb, okB := b.([]any)
	if okA != okB {
		return false
	}
	if okA {
		if len(la) != len(lb) {
			return false
		}
		for i := range la {
			if !attrValueEqual(la[i], lb[i]) {
				return false
			}
		}
		return true
	}
	switch a.(type) {
	case int64, bool, float64, string, ir.DataType, *ir.IndexMap, ir.PrimExpr:
		return a == b
	}
	return false
}

// schemaNormalize adapts normalizeSchema to the Op.Normalize hook.
func schemaNormalize(op *ir.Op) func(*ir.InferCtx, *ir.Call) (ir.Expr, error) {
	return func(_ *ir.InferCtx, call *ir.Call) (ir.Expr, error) {
		c, err := normalizeSchema(op, call)
		if err != nil {
			return nil, err
		}
		return c, nil
	}
}
