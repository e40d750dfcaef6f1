package op

import "github.com/phasec/phasec/ir"

// Elementwise binary tensor ops with numpy broadcasting. Operands are
// tensors or scalars (R.Prim, treated as rank-0 tensors); both operands
// must have the same dtype when both are known; comparisons yield bool.
//
// The registry names follow R.<name>; Add is R.add because OpAdd is
// the PrimExpr binary operator.

var (
	Add          = ir.RegisterOp(newBinaryOp("relax.add", "Elementwise x1 + x2 with broadcasting.", false))
	Subtract     = ir.RegisterOp(newBinaryOp("relax.subtract", "Elementwise x1 - x2 with broadcasting.", false))
	Multiply     = ir.RegisterOp(newBinaryOp("relax.multiply", "Elementwise x1 * x2 with broadcasting.", false))
	Divide       = ir.RegisterOp(newBinaryOp("relax.divide", "Elementwise x1 / x2 with broadcasting.", false))
	FloorDivide  = ir.RegisterOp(newBinaryOp("relax.floor_divide", "Elementwise floor(x1 / x2) with broadcasting.", false))
	Power        = ir.RegisterOp(newBinaryOp("relax.power", "Elementwise x1 ** x2 with broadcasting.", false))
	Maximum      = ir.RegisterOp(newBinaryOp("relax.maximum", "Elementwise max(x1, x2) with broadcasting.", false))
	Minimum      = ir.RegisterOp(newBinaryOp("relax.minimum", "Elementwise min(x1, x2) with broadcasting.", false))
	Equal        = ir.RegisterOp(newBinaryOp("relax.equal", "Elementwise x1 == x2 with broadcasting; bool result.", true))
	NotEqual     = ir.RegisterOp(newBinaryOp("relax.not_equal", "Elementwise x1 != x2 with broadcasting; bool result.", true))
	Less         = ir.RegisterOp(newBinaryOp("relax.less", "Elementwise x1 < x2 with broadcasting; bool result.", true))
	LessEqual    = ir.RegisterOp(newBinaryOp("relax.less_equal", "Elementwise x1 <= x2 with broadcasting; bool result.", true))
	Greater      = ir.RegisterOp(newBinaryOp("relax.greater", "Elementwise x1 > x2 with broadcasting; bool result.", true))
	GreaterEqual = ir.RegisterOp(newBinaryOp("relax.greater_equal", "Elementwise x1 >= x2 with broadcasting; bool result.", true))
)

func newBinaryOp(name, doc string, compare bool) *ir.Op {
	op := &ir.Op{Name: name, Doc: doc, Pure: true, Category: ir.CatTensor,
		Params: []ir.Param{{Name: "x1", Kind: ir.ArgExpr}, {Name: "x2", Kind: ir.ArgExpr}}}
	op.Infer = func(_ *ir.InferCtx, call *ir.Call) (ir.StructInfo, error) { return inferBinary(op, call, compare) }
	return op
}

// binaryOperand returns an operand as a tensor; scalars become rank-0
// tensors and are reported with isPrim.
func binaryOperand(op *ir.Op, call *ir.Call, i int) (t *ir.TensorInfo, isPrim bool, err error) {
	switch s := argStructInfo(call.Args[i]).(type) {
	case *ir.TensorInfo:
		return s, false, nil
	case *ir.PrimInfo:
		return ir.TensorInfoOf(s.DType), true, nil
	default:
		return nil, false, opErrorf(op, "%s must be a tensor or a scalar, got %s", opArgName(op, i), sinfoKind(s))
	}
}

func inferBinary(op *ir.Op, call *ir.Call, compare bool) (ir.StructInfo, error) {
	if err := opCheckArity(op, call); err != nil {
		return nil, err
	}
	a, aPrim, err := binaryOperand(op, call, 0)
	if err != nil {
		return nil, err
	}
	b, bPrim, err := binaryOperand(op, call, 1)
	if err != nil {
		return nil, err
	}
	dtype, err := unifyDType(op, a.DType, b.DType)
	if err != nil {
		return nil, err
	}
	if compare {
		dtype = ir.Bool
	}
	if aPrim && bPrim {
		return ir.NewPrimInfo(dtype), nil
	}
	if a.NDim < 0 || b.NDim < 0 {
		return ir.TensorInfoNDim(dtype, -1), nil
	}
	ndim := max(a.NDim, b.NDim)
	if a.Shape != nil && a.Shape == b.Shape {
		// The same shape value on both sides: keep it, even if symbolic.
		return &ir.TensorInfo{Shape: a.Shape, DType: dtype, NDim: ndim}, nil
	}
	da, okA := a.Dims()
	db, okB := b.Dims()
	if !okA || !okB {
		return ir.TensorInfoNDim(dtype, ndim), nil
	}
	var scratch [4]ir.PrimExpr
	dims, known, err := broadcastDims(op, da, db, scratch[:])
	if err != nil {
		return nil, err
	}
	return newTensor(dtype, dims, known, ndim), nil
}
