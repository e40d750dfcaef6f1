package ir

// Reductions over axes: R.sum(x, axis=None, keepdims=False) and friends.
// axis None reduces every axis. OpReduceMax / OpReduceMin are R.max / R.min
// (OpMax / OpMin are PrimExpr operators).

var (
	OpSum       = RegisterOp(newReduceOp("relax.sum", "Sum over axes."))
	OpMean      = RegisterOp(newReduceOp("relax.mean", "Mean over axes."))
	OpReduceMax = RegisterOp(newReduceOp("relax.max", "Maximum over axes."))
	OpReduceMin = RegisterOp(newReduceOp("relax.min", "Minimum over axes."))
	OpProd      = RegisterOp(newReduceOp("relax.prod", "Product over axes."))
)

func newReduceOp(name, doc string) *Op {
	op := &Op{
		Name: name, Doc: doc, Pure: true, Category: CatTensor,
		Params: []Param{
			{Name: "x", Kind: ArgExpr},
			{Name: "axis", Kind: AttrInts, Optional: true},
			{Name: "keepdims", Kind: AttrBool, Default: false},
		},
	}
	op.Infer = func(_ *InferCtx, call *Call) (StructInfo, error) { return inferReduce(op, call) }
	op.Normalize = schemaNormalize(op)
	return op
}

func inferReduce(op *Op, call *Call) (StructInfo, error) {
	t, err := firstTensorArg(op, call)
	if err != nil {
		return nil, err
	}
	axes, hasAxis, err := opAttrInts(op, call, "axis")
	if err != nil {
		return nil, err
	}
	keep, err := opAttrBool(op, call, "keepdims")
	if err != nil {
		return nil, err
	}
	if t.NDim < 0 {
		switch {
		case keep:
			return TensorInfoNDim(t.DType, -1), nil
		case !hasAxis:
			return TensorInfoOf(t.DType), nil
		}
		return TensorInfoNDim(t.DType, -1), nil
	}
	reduced := make([]bool, t.NDim)
	if hasAxis {
		norm, err := normAxes(op, axes, t.NDim)
		if err != nil {
			return nil, err
		}
		for _, a := range norm {
			reduced[a] = true
		}
	} else {
		for i := range reduced {
			reduced[i] = true
		}
	}
	outNDim := 0
	for _, r := range reduced {
		if keep || !r {
			outNDim++
		}
	}
	dims, ok := t.Dims()
	if !ok {
		return TensorInfoNDim(t.DType, outNDim), nil
	}
	out := make([]PrimExpr, 0, outNDim)
	for i, d := range dims {
		switch {
		case !reduced[i]:
			out = append(out, d)
		case keep:
			out = append(out, I64(1))
		}
	}
	return newTensor(t.DType, out, true, outNDim), nil
}
