package ir

import (
	"fmt"
	"strings"
)

// Schema helpers shared by the parser, the printer and the op hooks.
//
// Conventions of every op schema (Op.Params):
//   - Params are in the Python API's positional order (TVM v0.20 argument
//     names), attributes included, so keyword and positional arguments both
//     map through ParamIndex.
//   - Call.Args holds the argument (non-attribute) parameters in schema order;
//     attribute parameters live in Call.Attrs under the parameter name.
//   - At most one parameter is Variadic; it is the last argument parameter and
//     collects the remaining positional arguments. Parameters after it can
//     only be given by keyword (R.print's format).
//   - An argument parameter's Default is an Expr (R.str("global"),
//     R.prim_value(0), ...); NewDefaultArg returns a fresh copy to put in a
//     call. An attribute's Default is the attribute value (int64, []any of
//     int64, bool, float64, string, DataType).
//   - An Optional parameter without a Default may be omitted: an argument is
//     then absent from Call.Args (only trailing ones), an attribute is absent
//     from Call.Attrs, which TVMScript spells None (R.sum(x, axis=None)).
//   - out_sinfo= / sinfo_args= are never Params: Op.SInfoArgs says which
//     keyword carries them and they go to Call.SInfoArgs.

// OpPath is the TVMScript spelling of op: "relax.nn.relu" is "R.nn.relu".
func OpPath(op *Op) string { return "R." + strings.TrimPrefix(op.Name, "relax.") }

// OpByPath looks up an op by its TVMScript spelling ("R.nn.relu").
func OpByPath(path string) (*Op, bool) {
	rest, ok := strings.CutPrefix(path, "R.")
	if !ok {
		return nil, false
	}
	return LookupOp("relax." + rest)
}

// ParamIndex returns the index in op.Params of the parameter called name, or -1.
func (op *Op) ParamIndex(name string) int {
	for i, p := range op.Params {
		if p.Name == name {
			return i
		}
	}
	return -1
}

// ArgParams returns the argument (non-attribute) parameters in Call.Args order.
func (op *Op) ArgParams() []Param {
	var out []Param
	for _, p := range op.Params {
		if !p.Kind.IsAttr() {
			out = append(out, p)
		}
	}
	return out
}

// ArgParamCount is len(op.ArgParams()) without building the list.
func (op *Op) ArgParamCount() int {
	n := 0
	for _, p := range op.Params {
		if !p.Kind.IsAttr() {
			n++
		}
	}
	return n
}

// ArgParam is op.ArgParams()[i] without building the list (ok false when i
// is out of range).
func (op *Op) ArgParam(i int) (Param, bool) {
	if i < 0 {
		return Param{}, false
	}
	for _, p := range op.Params {
		if p.Kind.IsAttr() {
			continue
		}
		if i == 0 {
			return p, true
		}
		i--
	}
	return Param{}, false
}

// ArgPosition returns the position in Call.Args of the argument parameter
// called name, or -1 (unknown name or an attribute).
func (op *Op) ArgPosition(name string) int {
	pos := 0
	for _, p := range op.Params {
		if p.Kind.IsAttr() {
			continue
		}
		if p.Name == name {
			return pos
		}
		pos++
	}
	return -1
}

// ExternCalleeParam names the argument parameter, if any, whose string
// literal form means an ExternFunc ("R.call_packed("f", ...)" passes
// ExternFunc("f"), not R.str("f")). It returns -1 when there is none.
func (op *Op) ExternCalleeParam() int {
	if op.ExternCallee == "" {
		return -1
	}
	return op.ParamIndex(op.ExternCallee)
}

// Required reports whether the parameter must be given.
func (p Param) Required() bool { return p.Default == nil && !p.Optional && !p.Variadic }

// NewDefaultArg returns a fresh copy of an argument parameter's default, or
// nil when it has none (or is an attribute). Defaults are copied so that no
// two calls share a node.
func (p Param) NewDefaultArg() Expr {
	if p.Kind.IsAttr() || p.Default == nil {
		return nil
	}
	e, ok := p.Default.(Expr)
	if !ok {
		return nil
	}
	return copyLeafOrTuple(e)
}

// copyLeafOrTuple copies the literal leaves defaults are made of.
func copyLeafOrTuple(e Expr) Expr {
	switch e := e.(type) {
	case *StringImm:
		return NewStringImm(e.Value)
	case *PrimValue:
		return NewPrimValue(e.Value)
	case *DataTypeImm:
		return NewDataTypeImm(e.Value)
	case *ShapeExpr:
		return NewShapeExpr(append([]PrimExpr(nil), e.Values...)...)
	case *Tuple:
		fields := make([]Expr, len(e.Fields))
		for i, f := range e.Fields {
			fields[i] = copyLeafOrTuple(f)
		}
		return NewTuple(fields...)
	}
	return e
}

// CoerceAttr converts a parsed attribute value to the canonical Go type of
// the parameter's kind: int64 for AttrInt, []any of int64 for AttrInts (a
// single integer becomes a one-element list), bool, float64 (integers are
// accepted), string, DataType (a dtype string is parsed). nil stays nil
// (None). AttrAny values are returned with integers widened to int64.
//
// A value that already has the canonical type is returned as is (the same
// interface value): normalization and the well-formedness checker coerce
// every attribute of every call, and re-boxing a DataType, string or int64
// would allocate each time.
func (p Param) CoerceAttr(v any) (any, error) {
	if v == nil {
		return nil, nil
	}
	switch v.(type) {
	case int64:
		if p.Kind == AttrInt || p.Kind == AttrAny {
			return v, nil
		}
	case bool:
		if p.Kind == AttrBool {
			return v, nil
		}
	case float64:
		if p.Kind == AttrFloat {
			return v, nil
		}
	case string:
		if p.Kind == AttrStr {
			return v, nil
		}
	case DataType:
		if p.Kind == AttrDType {
			return v, nil
		}
	}
	bad := func() (any, error) {
		return nil, fmt.Errorf("attribute %s: %v (%T) is not %s", p.Name, v, v, attrKindNames[p.Kind-AttrInt])
	}
	switch p.Kind {
	case AttrInt:
		if i, ok := AttrAsInt(v); ok {
			return i, nil
		}
		return bad()
	case AttrInts:
		if i, ok := AttrAsInt(v); ok {
			return []any{i}, nil
		}
		list, ok := AttrAsInts(v)
		if !ok {
			return bad()
		}
		out := make([]any, len(list))
		for i, x := range list {
			out[i] = x
		}
		return out, nil
	case AttrBool:
		if b, ok := v.(bool); ok {
			return b, nil
		}
		return bad()
	case AttrFloat:
		switch x := v.(type) {
		case float64:
			return x, nil
		case float32:
			return float64(x), nil
		}
		if i, ok := AttrAsInt(v); ok {
			return float64(i), nil
		}
		return bad()
	case AttrStr:
		if s, ok := v.(string); ok {
			return s, nil
		}
		return bad()
	case AttrDType:
		switch x := v.(type) {
		case DataType:
			return x, nil
		case string:
			t, err := ParseDataType(x)
			if err != nil {
				return nil, fmt.Errorf("attribute %s: %v", p.Name, err)
			}
			return t, nil
		}
		return bad()
	case AttrAny:
		if i, ok := AttrAsInt(v); ok {
			return i, nil
		}
		if list, ok := AttrAsInts(v); ok {
			out := make([]any, len(list))
			for i, x := range list {
				out[i] = x
			}
			return out, nil
		}
		return v, nil
	}
	return nil, fmt.Errorf("parameter %s is not an attribute", p.Name)
}

var attrKindNames = [...]string{"an int", "a list of ints", "a bool", "a float", "a string", "a dtype", "a value"}

func AttrAsInt(v any) (int64, bool) {
	switch x := v.(type) {
	case int64:
		return x, true
	case int:
		return int64(x), true
	case int32:
		return int64(x), true
	case *IntImm:
		if !x.Type.IsBool() {
			return x.Value, true
		}
	}
	return 0, false
}

func AttrAsInts(v any) ([]int64, bool) {
	switch x := v.(type) {
	case []int64:
		return x, true
	case []int:
		out := make([]int64, len(x))
		for i, e := range x {
			out[i] = int64(e)
		}
		return out, true
	case []any:
		out := make([]int64, len(x))
		for i, e := range x {
			n, ok := AttrAsInt(e)
			if !ok {
				return nil, false
			}
			out[i] = n
		}
		return out, true
	}
	return nil, false
}
