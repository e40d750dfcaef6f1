package ir

import (
	"fmt"
	"strconv"
)

// Shared struct-info inference helpers for the op registry.
//
// Inference follows TVM's FInferStructInfo rules: static contradictions
// (constant dimensions that cannot broadcast, mismatched dtypes, axes out of
// range) are errors naming the op; symbolic dimensions that cannot be proven
// compatible are accepted and degrade the result to a rank-only tensor, as a
// runtime check will catch them (the L2 level of the base check).

// opErrorf formats an inference error prefixed with the op's TVMScript name.
func opErrorf(op *Op, format string, args ...any) error {
	return fmt.Errorf("%s: %s", OpPath(op), fmt.Sprintf(format, args...))
}

// argStructInfo is the struct info of a call argument. Literal leaves that
// have not been normalized yet get their obvious info, so hooks also work on
// calls built by hand.
func argStructInfo(e Expr) StructInfo {
	if e == nil {
		return nil
	}
	if s := e.StructInfo(); s != nil {
		return s
	}
	switch e := e.(type) {
	case *ShapeExpr:
		return ShapeInfoOf(e.Values...)
	case *PrimValue:
		return PrimInfoOf(e.Value)
	case *StringImm, *DataTypeImm:
		return Object()
	case *Tuple:
		fields := make([]StructInfo, len(e.Fields))
		for i, f := range e.Fields {
			fields[i] = argStructInfo(f)
			if fields[i] == nil {
				return nil
			}
		}
		return NewTupleInfo(fields...)
	}
	return nil
}

// sinfoKind names the kind of s for error messages.
func sinfoKind(s StructInfo) string {
	switch s := s.(type) {
	case nil:
		return "no struct info"
	case *ObjectInfo:
		return "R.Object"
	case *PrimInfo:
		return "R.Prim"
	case *ShapeInfo:
		return "R.Shape"
	case *TensorInfo:
		if s.NDim >= 0 {
			return fmt.Sprintf("R.Tensor(ndim=%d)", s.NDim)
		}
		return "R.Tensor"
	case *TupleInfo:
		return fmt.Sprintf("R.Tuple of %d fields", len(s.Fields))
	case *FuncInfo:
		return "R.Callable"
	}
	return fmt.Sprintf("%T", s)
}

// fmtDim prints a dimension for an error message.
func fmtDim(e PrimExpr) string {
	switch e := e.(type) {
	case *IntImm:
		return strconv.FormatInt(e.Value, 10)
	case *PrimVar:
		return e.Name
	}
	return FormatPrim(e, nil)
}

// fmtDType prints a dtype for an error message ("void" when unknown).
func fmtDType(t DataType) string {
	if t.IsVoid() {
		return "void"
	}
	return t.String()
}

// opArgName is the schema name of argument position i (for messages).
func opArgName(op *Op, i int) string {
	n := op.argParamCount()
	if p, ok := op.argParam(i); ok {
		return p.Name
	}
	if last, ok := op.argParam(n - 1); ok && last.Variadic {
		return last.Name
	}
	return "argument " + strconv.Itoa(i)
}

// tensorArg returns the TensorInfo of argument i or an error naming it.
func tensorArg(op *Op, call *Call, i int) (*TensorInfo, error) {
	s := argStructInfo(call.Args[i])
	t, ok := s.(*TensorInfo)
	if !ok {
		return nil, opErrorf(op, "%s must be a tensor, got %s", opArgName(op, i), sinfoKind(s))
	}
	return t, nil
}

// firstTensorArg checks the call's arity against op's schema and returns
// the struct info of its first argument, which must be a tensor: the
// preamble of most tensor inference rules.
func firstTensorArg(op *Op, call *Call) (*TensorInfo, error) {
	if err := opCheckArity(op, call); err != nil {
		return nil, err
	}
	return tensorArg(op, call, 0)
}

// newTensor builds a result tensor: a known shape when known is true (the
// dims are simplified), else rank-only.
func newTensor(dtype DataType, dims []PrimExpr, known bool, ndim int) *TensorInfo {
	if !known {
		return TensorInfoNDim(dtype, ndim)
	}
	a := &knownTensorAlloc{}
	var out []PrimExpr
	if len(dims) <= len(a.dims) {
		out = a.dims[:len(dims):len(dims)] // non-nil even for rank 0, as TensorInfoOf
	} else {
		out = make([]PrimExpr, len(dims))
	}
	for i, d := range dims {
		out[i] = Simplify(d)
	}
	// What TensorInfoOf(dtype, out...) builds, in one allocation.
	a.sinfo = ShapeInfo{Values: out, NDim: len(out)}
	a.shape.Values = out
	a.shape.SetStructInfo(&a.sinfo)
	a.info = TensorInfo{Shape: &a.shape, DType: dtype, NDim: len(out)}
	return &a.info
}

// knownTensorAlloc holds a known-shape inference result: the TensorInfo,
// its ShapeExpr, the ShapeExpr's ShapeInfo and, up to rank 4, the
// dimensions. Inference builds one per call, and as four separate objects
// they were most of normalization's allocations. The parts live and die
// together, so sharing one allocation retains nothing extra.
type knownTensorAlloc struct {
	info  TensorInfo
	shape ShapeExpr
	sinfo ShapeInfo
	dims  [4]PrimExpr
}

// withDType returns t's shape with another dtype.
func withDType(t *TensorInfo, dtype DataType) *TensorInfo {
	if t.DType == dtype {
		return t
	}
	return &TensorInfo{Shape: t.Shape, DType: dtype, NDim: t.NDim}
}

// normAxis maps a possibly negative axis into [0, ndim).
func normAxis(op *Op, axis int64, ndim int) (int, error) {
	if axis < -int64(ndim) || axis >= int64(ndim) {
		return 0, opErrorf(op, "axis %d is out of range for a tensor of rank %d", axis, ndim)
	}
	if axis < 0 {
		axis += int64(ndim)
	}
	return int(axis), nil
}

// normAxes normalizes a list of axes and rejects repeats.
func normAxes(op *Op, axes []int64, ndim int) ([]int, error) {
	out := make([]int, len(axes))
	seen := make([]bool, ndim)
	for i, a := range axes {
		n, err := normAxis(op, a, ndim)
		if err != nil {
			return nil, err
		}
		if seen[n] {
			return nil, opErrorf(op, "axis %d appears twice", n)
		}
		seen[n] = true
		out[i] = n
	}
	return out, nil
}

// dimsProvablyDiffer reports whether two dimensions are distinct constants.
func dimsProvablyDiffer(a, b PrimExpr) bool {
	x, ok1 := IntValue(Simplify(a))
	y, ok2 := IntValue(Simplify(b))
	return ok1 && ok2 && x != y
}

// isOne reports whether a dimension is the constant 1.
func isOne(d PrimExpr) bool {
	v, ok := IntValue(d)
	return ok && v == 1
}

// broadcastDims applies numpy broadcasting to two known shapes. known is
// false when a pair of symbolic dimensions cannot be proven equal (the
// result is then rank-only); a pair of distinct constants (neither 1) is an
// error. The result is written to scratch when it fits (callers pass a
// stack array, newTensor copies the dims out), else to a new slice.
func broadcastDims(op *Op, a, b, scratch []PrimExpr) (out []PrimExpr, known bool, err error) {
	n := max(len(a), len(b))
	if n <= cap(scratch) {
		out = scratch[:n]
	} else {
		out = make([]PrimExpr, n)
	}
	known = true
	for i := 1; i <= n; i++ {
		var da, db PrimExpr
		if i <= len(a) {
			da = a[len(a)-i]
		}
		if i <= len(b) {
			db = b[len(b)-i]
		}
		switch {
		case da == nil:
			out[n-i] = db
		case db == nil:
			out[n-i] = da
		case isOne(da):
			out[n-i] = db
		case isOne(db):
			out[n-i] = da
		case CanProveEqual(da, db):
			out[n-i] = da
		case dimsProvablyDiffer(da, db):
			return nil, false, opErrorf(op, "cannot broadcast dimension %s with %s", fmtDim(da), fmtDim(db))
		default:
			known = false
		}
	}
	return out, known, nil
}

// shapeProduct is the simplified product of dims (1 for a scalar). Constant
// factors are folded here so static element counts are always constants.
func shapeProduct(dims []PrimExpr) PrimExpr {
	c := int64(1)
	var sym PrimExpr
	for _, d := range dims {
		if v, ok := IntValue(d); ok {
			c *= v
			continue
		}
		if sym == nil {
			sym = d
		} else {
			sym = Mul(sym, d)
		}
	}
	switch {
	case sym == nil:
		return I64(c)
	case c == 1:
		return Simplify(sym)
	}
	return Simplify(Mul(sym, I64(c)))
}

// addDims and floorDivDims fold constant operands themselves, so static
// shapes stay constant whatever the simplifier does.
func addDims(a, b PrimExpr) PrimExpr {
	x, ok1 := IntValue(a)
	y, ok2 := IntValue(b)
	if ok1 && ok2 {
		return I64(x + y)
	}
	return Simplify(Add(a, b))
}

func floorDivDims(a, b PrimExpr) PrimExpr {
	x, ok1 := IntValue(a)
	y, ok2 := IntValue(b)
	if ok1 && ok2 && y != 0 {
		q := x / y
		if x%y != 0 && (x < 0) != (y < 0) {
			q--
		}
		return I64(q)
	}
	if ok2 && y == 1 {
		return a
	}
	return Simplify(FloorDiv(a, b))
}

// unifyDType is the common dtype of two operands of an arithmetic op; void
// (unknown) when either is unknown.
func unifyDType(op *Op, a, b DataType) (DataType, error) {
	if a.IsVoid() || b.IsVoid() {
		return Void, nil
	}
	if a != b {
		return Void, opErrorf(op, "data types %s and %s must be equal", a, b)
	}
	return a, nil
}

// requireFloat rejects a known non-float dtype.
func requireFloat(op *Op, t DataType) error {
	if !t.IsVoid() && !t.IsFloat() {
		return opErrorf(op, "requires a float tensor, got %s", t)
	}
	return nil
}

// shapeArg reads a shape-valued argument (R.shape([...]) or a shape var):
// the dimension values when known, the rank (-1 unknown), and the shape
// expression a result tensor may use as its Shape.
func shapeArg(op *Op, call *Call, i int) (dims []PrimExpr, ndim int, shape Expr, err error) {
	e := call.Args[i]
	if se, ok := e.(*ShapeExpr); ok {
		return se.Values, len(se.Values), se, nil
	}
	s, ok := argStructInfo(e).(*ShapeInfo)
	if !ok {
		return nil, -1, nil, opErrorf(op, "%s must be a shape, got %s", opArgName(op, i), sinfoKind(argStructInfo(e)))
	}
	if v, isVar := e.(*Var); isVar {
		shape = v
	}
	if s.Known() {
		return s.Values, len(s.Values), shape, nil
	}
	return nil, s.NDim, shape, nil
}

// tensorFromShape builds the result of an op whose output shape is a shape
// argument (alloc_tensor, full, broadcast_to, reshape).
func tensorFromShape(dtype DataType, dims []PrimExpr, ndim int, shape Expr) *TensorInfo {
	if dims != nil {
		return newTensor(dtype, dims, true, len(dims))
	}
	if v, ok := shape.(*Var); ok {
		return &TensorInfo{Shape: v, DType: dtype, NDim: ndim}
	}
	return TensorInfoNDim(dtype, ndim)
}

// dtypeArg reads a DataTypeImm argument; any other expression means the
// dtype is unknown (void).
func dtypeArg(e Expr) DataType {
	if d, ok := e.(*DataTypeImm); ok {
		return d.Value
	}
	return Void
}

// infoBySInfoArgs is the return info of a call whose type comes from its
// explicit sinfo_args: none gives def, one gives itself, several a tuple.
func infoBySInfoArgs(call *Call, def StructInfo) StructInfo {
	switch len(call.SInfoArgs) {
	case 0:
		return def
	case 1:
		return call.SInfoArgs[0]
	}
	return NewTupleInfo(append([]StructInfo(nil), call.SInfoArgs...)...)
}
