package op

import (
	"github.com/phasec/phasec/ir"

	"fmt"
	"slices"
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
func opErrorf(op *ir.Op, format string, args ...any) error {
	return fmt.Errorf("%s: %s", ir.OpPath(op), fmt.Sprintf(format, args...))
}

// argStructInfo is the struct info of a call argument. Literal leaves that
// have not been normalized yet get their obvious info, so hooks also work on
// calls built by hand.
func argStructInfo(e ir.Expr) ir.StructInfo {
	if e == nil {
		return nil
	}
	if s := e.StructInfo(); s != nil {
		return s
	}
	switch e := e.(type) {
	case *ir.ShapeExpr:
		return ir.ShapeInfoOf(e.Values...)
	case *ir.PrimValue:
		return ir.PrimInfoOf(e.Value)
	case *ir.StringImm, *ir.DataTypeImm:
		return ir.Object()
	case *ir.Tuple:
		fields := make([]ir.StructInfo, len(e.Fields))
		for i, f := range e.Fields {
			fields[i] = argStructInfo(f)
			if fields[i] == nil {
				return nil
			}
		}
		return ir.NewTupleInfo(fields...)
	}
	return nil
}

// sinfoKind names the kind of s for error messages.
func sinfoKind(s ir.StructInfo) string {
	switch s := s.(type) {
	case nil:
		return "no struct info"
	case *ir.ObjectInfo:
		return "R.Object"
	case *ir.PrimInfo:
		return "R.Prim"
	case *ir.ShapeInfo:
		return "R.Shape"
	case *ir.TensorInfo:
		if s.NDim >= 0 {
			return fmt.Sprintf("R.Tensor(ndim=%d)", s.NDim)
		}
		return "R.Tensor"
	case *ir.TupleInfo:
		return fmt.Sprintf("R.Tuple of %d fields", len(s.Fields))
	case *ir.FuncInfo:
		return "R.Callable"
	}
	return fmt.Sprintf("%T", s)
}

// fmtDim prints a dimension for an error message.
func fmtDim(e ir.PrimExpr) string {
	switch e := e.(type) {
	case *ir.IntImm:
		return strconv.FormatInt(e.Value, 10)
	case *ir.PrimVar:
		return e.Name
	}
	return ir.FormatPrim(e, nil)
}

// fmtDType prints a dtype for an error message ("void" when unknown).
func fmtDType(t ir.DataType) string {
	if t.IsVoid() {
		return "void"
	}
	return t.String()
}

// opArgName is the schema name of argument position i (for messages).
func opArgName(op *ir.Op, i int) string {
	n := op.ArgParamCount()
	if p, ok := op.ArgParam(i); ok {
		return p.Name
	}
	if last, ok := op.ArgParam(n - 1); ok && last.Variadic {
		return last.Name
	}
	return "argument " + strconv.Itoa(i)
}

// tensorArg returns the TensorInfo of argument i or an error naming it.
func tensorArg(op *ir.Op, call *ir.Call, i int) (*ir.TensorInfo, error) {
	s := argStructInfo(call.Args[i])
	t, ok := s.(*ir.TensorInfo)
	if !ok {
		return nil, opErrorf(op, "%s must be a tensor, got %s", opArgName(op, i), sinfoKind(s))
	}
	return t, nil
}

// firstTensorArg checks the call's arity against op's schema and returns
// the struct info of its first argument, which must be a tensor: the
// preamble of most tensor inference rules.
func firstTensorArg(op *ir.Op, call *ir.Call) (*ir.TensorInfo, error) {
	if err := opCheckArity(op, call); err != nil {
		return nil, err
	}
	return tensorArg(op, call, 0)
}

// tensorArgs is firstTensorArg for the first n arguments, all tensors.
func tensorArgs(op *ir.Op, call *ir.Call, n int) ([]*ir.TensorInfo, error) {
	if err := opCheckArity(op, call); err != nil {
		return nil, err
	}
	out := make([]*ir.TensorInfo, n)
	for i := range out {
		t, err := tensorArg(op, call, i)
		if err != nil {
			return nil, err
		}
		out[i] = t
	}
	return out, nil
}

// newTensor builds a result tensor: a known shape when known is true (the
// dims are simplified), else rank-only.
func newTensor(dtype ir.DataType, dims []ir.PrimExpr, known bool, ndim int) *ir.TensorInfo {
	if !known {
		return ir.TensorInfoNDim(dtype, ndim)
	}
	a := &knownTensorAlloc{}
	var out []ir.PrimExpr
	if len(dims) <= len(a.dims) {
		out = a.dims[:len(dims):len(dims)] // non-nil even for rank 0, as TensorInfoOf
	} else {
		out = make([]ir.PrimExpr, len(dims))
	}
	for i, d := range dims {
		out[i] = ir.Simplify(d)
	}
	// What TensorInfoOf(dtype, out...) builds, in one allocation.
	a.sinfo = ir.ShapeInfo{Values: out, NDim: len(out)}
	a.shape.Values = out
	a.shape.SetStructInfo(&a.sinfo)
	a.info = ir.TensorInfo{Shape: &a.shape, DType: dtype, NDim: len(out)}
	return &a.info
}

// sameKnownTensor reports whether t is what newTensor(dtype, dims, true,
// len(dims)) would build: a shape of the same (simplified) dimension
// nodes, the same dtype, no virtual device. Struct info is immutable, so
// an elementwise result then shares its operand's instead of allocating a
// copy: in a chain of elementwise ops, one per binding.
func sameKnownTensor(t *ir.TensorInfo, dtype ir.DataType, dims []ir.PrimExpr) bool {
	s, ok := t.Shape.(*ir.ShapeExpr)
	if !ok || t.DType != dtype || t.NDim != len(dims) || t.VDevice != nil || len(s.Values) != len(dims) {
		return false
	}
	if si, ok := s.StructInfo().(*ir.ShapeInfo); !ok || si.NDim != len(dims) || !slices.Equal(si.Values, s.Values) {
		return false
	}
	for i, d := range dims {
		if s.Values[i] != d || ir.Simplify(d) != d {
			return false
		}
	}
	return true
}

// knownTensorAlloc holds a known-shape inference result: the TensorInfo,
// its ShapeExpr, the ShapeExpr's ShapeInfo and, up to rank 4, the
// dimensions. Inference builds one per call, and as four separate objects
// they were most of normalization's allocations. The parts live and die
// together, so sharing one allocation retains nothing extra.
type knownTensorAlloc struct {
	info  ir.TensorInfo
	shape ir.ShapeExpr
	sinfo ir.ShapeInfo
	dims  [4]ir.PrimExpr
}

// withDType returns t's shape with another dtype.
func withDType(t *ir.TensorInfo, dtype ir.DataType) *ir.TensorInfo {
	if t.DType == dtype {
		return t
	}
	return &ir.TensorInfo{Shape: t.Shape, DType: dtype, NDim: t.NDim}
}

// normAxis maps a possibly negative axis into [0, ndim).
func normAxis(op *ir.Op, axis int64, ndim int) (int, error) {
	if axis < -int64(ndim) || axis >= int64(ndim) {
		return 0, opErrorf(op, "axis %d is out of range for a tensor of rank %d", axis, ndim)
	}
	if axis < 0 {
		axis += int64(ndim)
	}
	return int(axis), nil
}

// normAxes normalizes a list of axes and rejects repeats.
func normAxes(op *ir.Op, axes []int64, ndim int) ([]int, error) {
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
func dimsProvablyDiffer(a, b ir.PrimExpr) bool {
	x, ok1 := ir.IntValue(ir.Simplify(a))
	y, ok2 := ir.IntValue(ir.Simplify(b))
	return ok1 && ok2 && x != y
}

// isOne reports whether a dimension is the constant 1.
func isOne(d ir.PrimExpr) bool {
	v, ok := ir.IntValue(d)
	return ok && v == 1
}

// broadcastDims applies numpy broadcasting to two known shapes. known is
// false when a pair of symbolic dimensions cannot be proven equal (the
// result is then rank-only); a pair of distinct constants (neither 1) is an
// error. The result is written to scratch when it fits (callers pass a
// stack array, newTensor copies the dims out), else to a new slice.
func broadcastDims(op *ir.Op, a, b, scratch []ir.PrimExpr) (out []ir.PrimExpr, known bool, err error) {
	n := max(len(a), len(b))
	if n <= cap(scratch) {
		out = scratch[:n]
	} else {
		out = make([]ir.PrimExpr, n)
	}
	known = true
	for i := 1; i <= n; i++ {
		var da, db ir.PrimExpr
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
		case ir.CanProveEqual(da, db):
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
func shapeProduct(dims []ir.PrimExpr) ir.PrimExpr {
	c := int64(1)
	var sym ir.PrimExpr
	for _, d := range dims {
		if v, ok := ir.IntValue(d); ok {
			c *= v
			continue
		}
		if sym == nil {
			sym = d
		} else {
			sym = ir.Mul(sym, d)
		}
	}
	switch {
	case sym == nil:
		return ir.I64(c)
	case c == 1:
		return ir.Simplify(sym)
	}
	return ir.Simplify(ir.Mul(sym, ir.I64(c)))
}

// addDims and floorDivDims fold constant operands themselves, so static
// shapes stay constant whatever the simplifier does.
func addDims(a, b ir.PrimExpr) ir.PrimExpr {
	x, ok1 := ir.IntValue(a)
	y, ok2 := ir.IntValue(b)
	if ok1 && ok2 {
		return ir.I64(x + y)
	}
	return ir.Simplify(ir.Add(a, b))
}

func floorDivDims(a, b ir.PrimExpr) ir.PrimExpr {
	x, ok1 := ir.IntValue(a)
	y, ok2 := ir.IntValue(b)
	if ok1 && ok2 && y != 0 {
		q := x / y
		if x%y != 0 && (x < 0) != (y < 0) {
			q--
		}
		return ir.I64(q)
	}
	if ok2 && y == 1 {
		return a
	}
	return ir.Simplify(ir.FloorDiv(a, b))
}

// unifyDType is the common dtype of two operands of an arithmetic op; void
// (unknown) when either is unknown.
func unifyDType(op *ir.Op, a, b ir.DataType) (ir.DataType, error) {
	if a.IsVoid() || b.IsVoid() {
		return ir.Void, nil
	}
	if a != b {
		return ir.Void, opErrorf(op, "data types %s and %s must be equal", a, b)
	}
	return a, nil
}

// requireFloat rejects a known non-float dtype.
func requireFloat(op *ir.Op, t ir.DataType) error {
	if !t.IsVoid() && !t.IsFloat() {
		return opErrorf(op, "requires a float tensor, got %s", t)
	}
	return nil
}

// shapeArg reads a shape-valued argument (R.shape([...]) or a shape var):
// the dimension values when known, the rank (-1 unknown), and the shape
// expression a result tensor may use as its Shape.
func shapeArg(op *ir.Op, call *ir.Call, i int) (dims []ir.PrimExpr, ndim int, shape ir.Expr, err error) {
	e := call.Args[i]
	if se, ok := e.(*ir.ShapeExpr); ok {
		return se.Values, len(se.Values), se, nil
	}
	s, ok := argStructInfo(e).(*ir.ShapeInfo)
	if !ok {
		return nil, -1, nil, opErrorf(op, "%s must be a shape, got %s", opArgName(op, i), sinfoKind(argStructInfo(e)))
	}
	if v, isVar := e.(*ir.Var); isVar {
		shape = v
	}
	if s.Known() {
		return s.Values, len(s.Values), shape, nil
	}
	return nil, s.NDim, shape, nil
}

// tensorFromShape builds the result of an op whose output shape is a shape
// argument (alloc_tensor, full, broadcast_to, reshape).
func tensorFromShape(dtype ir.DataType, dims []ir.PrimExpr, ndim int, shape ir.Expr) *ir.TensorInfo {
	if dims != nil {
		return newTensor(dtype, dims, true, len(dims))
	}
	if v, ok := shape.(*ir.Var); ok {
		return &ir.TensorInfo{Shape: v, DType: dtype, NDim: ndim}
	}
	return ir.TensorInfoNDim(dtype, ndim)
}

// dtypeArg reads a DataTypeImm argument; any other expression means the
// dtype is unknown (void).
func dtypeArg(e ir.Expr) ir.DataType {
	if d, ok := e.(*ir.DataTypeImm); ok {
		return d.Value
	}
	return ir.Void
}

// infoBySInfoArgs is the return info of a call whose type comes from its
// explicit sinfo_args: none gives def, one gives itself, several a tuple.
func infoBySInfoArgs(call *ir.Call, def ir.StructInfo) ir.StructInfo {
	switch len(call.SInfoArgs) {
	case 0:
		return def
	case 1:
		return call.SInfoArgs[0]
	}
	return ir.NewTupleInfo(append([]ir.StructInfo(nil), call.SInfoArgs...)...)
}
