package ir

// Elementwise binary tensor ops with numpy broadcasting. Operands are
// tensors or scalars (R.Prim, treated as rank-0 tensors); both operands
// must have the same dtype when both are known; comparisons yield bool.
//
// The registry names follow R.<name>; OpTensorAdd is R.add because OpAdd is
// the PrimExpr binary operator.

var (
	OpTensorAdd    = RegisterOp(newBinaryOp("relax.add", "Elementwise x1 + x2 with broadcasting.", false))
	OpSubtract     = RegisterOp(newBinaryOp("relax.subtract", "Elementwise x1 - x2 with broadcasting.", false))
	OpMultiply     = RegisterOp(newBinaryOp("relax.multiply", "Elementwise x1 * x2 with broadcasting.", false))
	OpDivide       = RegisterOp(newBinaryOp("relax.divide", "Elementwise x1 / x2 with broadcasting.", false))
	OpFloorDivide  = RegisterOp(newBinaryOp("relax.floor_divide", "Elementwise floor(x1 / x2) with broadcasting.", false))
	OpPower        = RegisterOp(newBinaryOp("relax.power", "Elementwise x1 ** x2 with broadcasting.", false))
	OpMaximum      = RegisterOp(newBinaryOp("relax.maximum", "Elementwise max(x1, x2) with broadcasting.", false))
	OpMinimum      = RegisterOp(newBinaryOp("relax.minimum", "Elementwise min(x1, x2) with broadcasting.", false))
	OpEqual        = RegisterOp(newBinaryOp("relax.equal", "Elementwise x1 == x2 with broadcasting; bool result.", true))
	OpNotEqual     = RegisterOp(newBinaryOp("relax.not_equal", "Elementwise x1 != x2 with broadcasting; bool result.", true))
	OpLess         = RegisterOp(newBinaryOp("relax.less", "Elementwise x1 < x2 with broadcasting; bool result.", true))
	OpLessEqual    = RegisterOp(newBinaryOp("relax.less_equal", "Elementwise x1 <= x2 with broadcasting; bool result.", true))
	OpGreater      = RegisterOp(newBinaryOp("relax.greater", "Elementwise x1 > x2 with broadcasting; bool result.", true))
	OpGreaterEqual = RegisterOp(newBinaryOp("relax.greater_equal", "Elementwise x1 >= x2 with broadcasting; bool result.", true))
)

func newBinaryOp(name, doc string, compare bool) *Op {
	op := &Op{Name: name, Doc: doc, Pure: true, Category: CatTensor,
		Params: []Param{{Name: "x1", Kind: ArgExpr}, {Name: "x2", Kind: ArgExpr}}}
	op.Infer = func(_ *InferCtx, call *Call) (StructInfo, error) { return inferBinary(op, call, compare) }
	return op
}

// binaryOperand returns an operand as a tensor; scalars become rank-0
// tensors and are reported with isPrim.
func binaryOperand(op *Op, call *Call, i int) (t *TensorInfo, isPrim bool, err error) {
	switch s := argStructInfo(call.Args[i]).(type) {
	case *TensorInfo:
		return s, false, nil
	case *PrimInfo:
		return TensorInfoOf(s.DType), true, nil
	default:
		return nil, false, opErrorf(op, "%s must be a tensor or a scalar, got %s", opArgName(op, i), sinfoKind(s))
	}
}

func inferBinary(op *Op, call *Call, compare bool) (StructInfo, error) {
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
		dtype = Bool
	}
	if aPrim && bPrim {
		return NewPrimInfo(dtype), nil
	}
	if a.NDim < 0 || b.NDim < 0 {
		return TensorInfoNDim(dtype, -1), nil
	}
	ndim := max(a.NDim, b.NDim)
	if a.Shape != nil && a.Shape == b.Shape {
		// The same shape value on both sides: keep it, even if symbolic.
		return &TensorInfo{Shape: a.Shape, DType: dtype, NDim: ndim}, nil
	}
	da, okA := a.Dims()
	db, okB := b.Dims()
	if !okA || !okB {
		return TensorInfoNDim(dtype, ndim), nil
	}
	var scratch [4]PrimExpr
	dims, known, err := broadcastDims(op, da, db, scratch[:])
	if err != nil {
		return nil, err
	}
	return newTensor(dtype, dims, known, ndim), nil
}
