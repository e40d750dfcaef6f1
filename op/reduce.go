package op

import "github.com/phasec/phasec/ir"

// Reductions over axes: R.sum(x, axis=None, keepdims=False) and friends.
// axis None reduces every axis. Max / Min are R.max / R.min
// (OpMax / OpMin are PrimExpr operators).

var (
	Sum  = ir.RegisterOp(newReduceOp("relax.sum", "Sum over axes."))
	Mean = ir.RegisterOp(newReduceOp("relax.mean", "Mean over axes."))
	Max  = ir.RegisterOp(newReduceOp("relax.max", "Maximum over axes."))
	Min  = ir.RegisterOp(newReduceOp("relax.min", "Minimum over axes."))
	Prod = ir.RegisterOp(newReduceOp("relax.prod", "Product over axes."))
)

func newReduceOp(name, doc string) *ir.Op {
	op := &ir.Op{
		Name: name, Doc: doc, Pure: true, Category: ir.CatTensor,
		Params: []ir.Param{
			{Name: "x", Kind: ir.ArgExpr},
			{Name: "axis", Kind: ir.AttrInts, Optional: true},
			{Name: "keepdims", Kind: ir.AttrBool, Default: false},
		},
	}
	op.Infer = func(_ *ir.InferCtx, call *ir.Call) (ir.StructInfo, error) { return inferReduce(op, call) }
	op.Normalize = schemaNormalize(op)
	return op
}

func inferReduce(op *ir.Op, call *ir.Call) (ir.StructInfo, error) {
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
			return ir.TensorInfoNDim(t.DType, -1), nil
		case !hasAxis:
			return ir.TensorInfoOf(t.DType), nil
		}
		return ir.TensorInfoNDim(t.DType, -1), nil
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
		return ir.TensorInfoNDim(t.DType, outNDim), nil
	}
	out := make([]ir.PrimExpr, 0, outNDim)
	for i, d := range dims {
		switch {
		case !reduced[i]:
			out = append(out, d)
		case keep:
			out = append(out, ir.I64(1))
		}
	}
	return newTensor(t.DType, out, true, outNDim), nil
}
