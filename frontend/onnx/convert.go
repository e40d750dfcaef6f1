package onnx

import (
	"encoding/binary"
	"fmt"
	"math"

	"github.com/phasec/phasec/frontend/onnx/onnxpb"
	"github.com/phasec/phasec/ir"
	"github.com/phasec/phasec/op"
	"github.com/phasec/phasec/tensor"
)

// converter converts one node: its results, one per ONNX output (nil for
// an output it does not produce).
type converter func(c *nodeCtx) ([]ir.Expr, error)

// nodeCtx is what a converter sees of its node.
type nodeCtx struct {
	imp   *importer
	node  *onnxpb.NodeProto
	index int
	opset int64
	in    []ir.Expr // nil for an omitted optional input
	attrs map[string]*onnxpb.AttributeProto
	// outSym are the symbolic values of outputs (see importer.symbolic).
	outSym [][]ir.PrimExpr
}

// setSym records output j's symbolic value.
func (c *nodeCtx) setSym(j int, vals []ir.PrimExpr) {
	for len(c.outSym) <= j {
		c.outSym = append(c.outSym, nil)
	}
	c.outSym[j] = vals
}

// symInts returns input i's values as dimension expressions: a
// constant's, or a symbolic shape computation's (see importer.symbolic).
func (c *nodeCtx) symInts(i int) ([]ir.PrimExpr, bool) {
	if a, ok := c.constant(i); ok && !a.DType.IsFloat() {
		out := make([]ir.PrimExpr, a.NumElements())
		for j := range out {
			out[j] = ir.I64(a.Int(j))
		}
		return out, true
	}
	v, ok := c.imp.symbolic[c.inputName(i)]
	return v, ok
}

// one wraps a single result.
func one(e ir.Expr) ([]ir.Expr, error) { return []ir.Expr{e}, nil }

// inputName is input i's tensor name ("" when absent).
func (c *nodeCtx) inputName(i int) string {
	if i < len(c.node.GetInput()) {
		return c.node.GetInput()[i]
	}
	return ""
}

// has reports whether input i is present.
func (c *nodeCtx) has(i int) bool { return i < len(c.in) && c.in[i] != nil }

// arg returns input i, or an error naming it when it is missing.
func (c *nodeCtx) arg(i int) (ir.Expr, error) {
	if !c.has(i) {
		return nil, fmt.Errorf("input %d is required", i)
	}
	return c.in[i], nil
}

// tinfo returns input i's tensor struct info.
func (c *nodeCtx) tinfo(i int) (*ir.TensorInfo, error) {
	e, err := c.arg(i)
	if err != nil {
		return nil, err
	}
	t, ok := e.StructInfo().(*ir.TensorInfo)
	if !ok {
		return nil, fmt.Errorf("input %d (%q) is not a tensor", i, c.inputName(i))
	}
	return t, nil
}

// rank returns input i's rank, which converters that normalize axes need.
// dataAlongAxis reads what the ops working along an "axis" attribute
// share: the data input 0, its dimensions and the axis (default def),
// negative axes counted from the end.
func (c *nodeCtx) dataAlongAxis(def int64) (x ir.Expr, dims []ir.PrimExpr, axis int, err error) {
	if x, err = c.arg(0); err != nil {
		return
	}
	if dims, err = c.dims(0); err != nil {
		return
	}
	axis, err = normAxis(c.attrInt("axis", def), len(dims))
	return
}

func (c *nodeCtx) rank(i int) (int, error) {
	t, err := c.tinfo(i)
	if err != nil {
		return 0, err
	}
	if t.NDim < 0 {
		return 0, unsupported("input %d (%q) has an unknown rank", i, c.inputName(i))
	}
	return t.NDim, nil
}

// dims returns input i's dimensions when its shape is known.
func (c *nodeCtx) dims(i int) ([]ir.PrimExpr, error) {
	t, err := c.tinfo(i)
	if err != nil {
		return nil, err
	}
	d, ok := t.Dims()
	if !ok {
		return nil, unsupported("input %d (%q) has an unknown shape", i, c.inputName(i))
	}
	return d, nil
}

// staticShape returns input i's shape when every dimension is a constant.
func (c *nodeCtx) staticShape(i int) ([]int64, bool) {
	t, err := c.tinfo(i)
	if err != nil {
		return nil, false
	}
	d, ok := t.Dims()
	if !ok {
		return nil, false
	}
	out := make([]int64, len(d))
	for j, e := range d {
		v, ok := ir.IntValue(e)
		if !ok {
			return nil, false
		}
		out[j] = v
	}
	return out, true
}

// constant returns input i's value when it is known at import.
func (c *nodeCtx) constant(i int) (*ir.NDArray, bool) {
	if !c.has(i) {
		return nil, false
	}
	k, ok := c.in[i].(*ir.Constant)
	if !ok {
		return nil, false
	}
	return k.Data, true
}

// constInts returns input i's values as integers; an input that is not a
// constant is unsupported (phasec needs the value at import).
func (c *nodeCtx) constInts(i int) ([]int64, error) {
	a, ok := c.constant(i)
	if !ok {
		return nil, c.notConstant(i)
	}
	n := int(a.NumElements())
	out := make([]int64, n)
	for j := range out {
		if a.DType.IsFloat() {
			out[j] = int64(a.Float(j))
		} else {
			out[j] = a.Int(j)
		}
	}
	return out, nil
}

// notConstant is the error for a value phasec needs at import.
func (c *nodeCtx) notConstant(i int) error {
	return unsupported("input %d (%q) must be a constant (computed from initializers and static shapes, or bound with Options.Bind) for phasec to import it", i, c.inputName(i))
}

// constFloats returns input i's values as floats (see constInts).
func (c *nodeCtx) constFloats(i int) ([]float64, error) {
	a, ok := c.constant(i)
	if !ok {
		return nil, c.notConstant(i)
	}
	out := make([]float64, a.NumElements())
	for j := range out {
		out[j] = a.Float(j)
	}
	return out, nil
}

// Attributes.

func (c *nodeCtx) attrInt(name string, def int64) int64 {
	if a, ok := c.attrs[name]; ok {
		return a.GetI()
	}
	return def
}

func (c *nodeCtx) attrFloat(name string, def float64) float64 {
	if a, ok := c.attrs[name]; ok {
		return float64(a.GetF())
	}
	return def
}

func (c *nodeCtx) attrString(name, def string) string {
	if a, ok := c.attrs[name]; ok {
		return string(a.GetS())
	}
	return def
}

func (c *nodeCtx) attrInts(name string) ([]int64, bool) {
	a, ok := c.attrs[name]
	if !ok {
		return nil, false
	}
	return a.GetInts(), true
}

func (c *nodeCtx) attrFloats(name string) ([]float32, bool) {
	a, ok := c.attrs[name]
	if !ok {
		return nil, false
	}
	return a.GetFloats(), true
}

// Emitting.

// call builds a call of o.
func call(o *ir.Op, attrs ir.Attrs, args ...ir.Expr) *ir.Call {
	return &ir.Call{Op: o, Args: args, Attrs: attrs}
}

// emit binds a call in the dataflow block and returns its variable, or,
// when every argument is a small constant (a shape computation), the
// constant the op computes: TVM's frontend folds such values too.
func (c *nodeCtx) emit(cl *ir.Call) ir.Expr {
	if k := c.imp.tryFold(cl); k != nil {
		return k
	}
	return c.imp.b.Emit(cl, "lv")
}

// emitOp is emit(call(o, attrs, args...)).
func (c *nodeCtx) emitOp(o *ir.Op, attrs ir.Attrs, args ...ir.Expr) ir.Expr {
	return c.emit(call(o, attrs, args...))
}

// tryFold evaluates a call over small constants; nil when it cannot.
func (imp *importer) tryFold(cl *ir.Call) *ir.Constant {
	o, ok := cl.Op.(*ir.Op)
	if !ok || !o.Pure {
		return nil
	}
	d, ok := op.DefOf(o)
	if !ok || d.Eval == nil {
		return nil
	}
	args := make([]op.Value, len(cl.Args))
	var convert func(e ir.Expr) (op.Value, bool)
	convert = func(e ir.Expr) (op.Value, bool) {
		switch a := e.(type) {
		case *ir.Constant:
			if a.Data.NumElements() > foldLimit {
				return nil, false
			}
			t, err := ndarrayTensor(a.Data)
			return t, err == nil
		case *ir.PrimValue:
			switch x := a.Value.(type) {
			case *ir.IntImm:
				return op.PrimInt(x.Type, x.Value), true
			case *ir.FloatImm:
				return op.PrimFloat(x.Type, x.Value), true
			}
		case *ir.ShapeExpr:
			s := make(op.Shape, len(a.Values))
			for j, d := range a.Values {
				n, ok := ir.IntValue(d)
				if !ok {
					return nil, false
				}
				s[j] = n
			}
			return s, true
		case *ir.Tuple:
			tu := make(op.Tuple, len(a.Fields))
			for j, f := range a.Fields {
				v, ok := convert(f)
				if !ok {
					return nil, false
				}
				tu[j] = v
			}
			return tu, true
		case *ir.DataTypeImm:
			return op.DTypeValue(a.Value), true
		}
		return nil, false
	}
	for i, a := range cl.Args {
		v, ok := convert(a)
		if !ok {
			return nil
		}
		args[i] = v
	}
	norm, ok := imp.b.Normalize(cl).(*ir.Call)
	if !ok || norm.StructInfo() == nil {
		return nil
	}
	if _, ok := norm.StructInfo().(*ir.TensorInfo); !ok {
		return nil
	}
	out, err := d.Eval(norm, args)
	if err != nil {
		return nil
	}
	t, ok := out.(*tensor.Tensor)
	if !ok || t.NumElements() > foldLimit {
		return nil
	}
	k := &ir.Constant{Data: &ir.NDArray{DType: op.IRDType(t.DType), Shape: append([]int64{}, t.Shape...), Data: append([]byte(nil), t.Bytes()...)}}
	return imp.b.Normalize(k).(*ir.Constant)
}

// Constants.

// scalarConst is a rank-0 constant of dtype dt.
func scalarConst(v float64, dt ir.DataType) *ir.Constant {
	return &ir.Constant{Data: ir.NewScalarArray(dt, v)}
}

// intsConst is a 1-D int64 constant.
func intsConst(vs []int64) *ir.Constant {
	a := &ir.NDArray{DType: ir.Int64, Shape: []int64{int64(len(vs))}, Data: make([]byte, 8*len(vs))}
	for i, v := range vs {
		binary.LittleEndian.PutUint64(a.Data[8*i:], uint64(v))
	}
	return &ir.Constant{Data: a}
}

// shapeExpr is R.shape(dims).
func shapeExpr(dims []ir.PrimExpr) *ir.ShapeExpr { return ir.NewShapeExpr(dims...) }

func i64Dims(vs []int64) []ir.PrimExpr {
	out := make([]ir.PrimExpr, len(vs))
	for i, v := range vs {
		out[i] = ir.I64(v)
	}
	return out
}

// primTuple is a tuple of int64 R.prim_values (strided_slice's operands).
func primTuple(vs []int64) *ir.Tuple {
	f := make([]ir.Expr, len(vs))
	for i, v := range vs {
		f[i] = ir.NewPrimValue(ir.I64(v))
	}
	return ir.NewTuple(f...)
}

// anyInts is an int list attribute.
func anyInts[T int | int64](vs []T) []any {
	out := make([]any, len(vs))
	for i, v := range vs {
		out[i] = int64(v)
	}
	return out
}

// normAxis maps a possibly negative axis into [0, rank).
func normAxis(axis int64, rank int) (int, error) {
	if axis < -int64(rank) || axis >= int64(max(rank, 1)) && !(rank == 0 && axis == 0) {
		return 0, fmt.Errorf("axis %d is out of range for rank %d", axis, rank)
	}
	if axis < 0 {
		axis += int64(rank)
	}
	return int(axis), nil
}

// dtypeOf returns e's element type.
func dtypeOf(e ir.Expr) ir.DataType {
	if t, ok := e.StructInfo().(*ir.TensorInfo); ok {
		return t.DType
	}
	return ir.Void
}

// castTo casts e to dt unless it already is of that type.
func (c *nodeCtx) castTo(e ir.Expr, dt ir.DataType) ir.Expr {
	if dtypeOf(e) == dt {
		return e
	}
	return c.emitOp(op.AsType, ir.Attrs{"dtype": dt}, e)
}

// isFloat reports whether e's elements are floating point.
func isFloat(e ir.Expr) bool { return dtypeOf(e).IsFloat() }

var _ = math.Inf

// symbolicIn reports whether input i carries a symbolic value (not a
// constant: those fold by themselves).
func (c *nodeCtx) symbolicIn(i int) bool {
	_, ok := c.imp.symbolic[c.inputName(i)]
	return ok && c.has(i)
}

// propagateSym gives output 0 input 0's symbolic value (ops that keep
// the values: Identity, Cast, Unsqueeze, Squeeze of shape vectors).
func (c *nodeCtx) propagateSym() {
	if c.symbolicIn(0) {
		c.setSym(0, c.imp.symbolic[c.inputName(0)])
	}
}

// symArith computes an integer binary op over symbolic values (a scalar
// broadcasting), recording output 0's value.
func (c *nodeCtx) symArith(opType string) {
	if !c.symbolicIn(0) && !c.symbolicIn(1) {
		return
	}
	a, okA := c.symInts(0)
	b, okB := c.symInts(1)
	if !okA || !okB || dtypeOf(c.in[0]).IsFloat() {
		return
	}
	n := max(len(a), len(b))
	if (len(a) != n && len(a) != 1) || (len(b) != n && len(b) != 1) {
		return
	}
	out := make([]ir.PrimExpr, n)
	for i := range n {
		x, y := a[min(i, len(a)-1)], b[min(i, len(b)-1)]
		switch opType {
		case "Add":
			out[i] = ir.Add(x, y)
		case "Sub":
			out[i] = ir.Sub(x, y)
		case "Mul":
			out[i] = ir.Mul(x, y)
		case "Div":
			out[i] = ir.FloorDiv(x, y) // dimensions are non-negative: floor is ONNX's truncation
		default:
			return
		}
	}
	c.setSym(0, out)
}
