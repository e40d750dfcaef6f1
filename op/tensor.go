package op

import "github.com/phasec/phasec/ir"

// Tensor creation, casting and matmul.

var (
	// Matmul is R.matmul(x1, x2, out_dtype=None): numpy matmul semantics.
	Matmul = ir.RegisterOp(newMatmulOp())
	// AsType is R.astype(x, dtype).
	AsType = ir.RegisterOp(newAsTypeOp())
	// Full is R.full(shape, fill_value, dtype=None).
	Full = ir.RegisterOp(newFullOp())
	// Zeros is R.zeros(shape, dtype).
	Zeros = ir.RegisterOp(newConstFillOp("relax.zeros", "A tensor of zeros of the given shape and dtype."))
	// Ones is R.ones(shape, dtype).
	Ones = ir.RegisterOp(newConstFillOp("relax.ones", "A tensor of ones of the given shape and dtype."))
	// FullLike is R.full_like(x, fill_value, dtype=None).
	FullLike = ir.RegisterOp(newLikeOp("relax.full_like", "A tensor shaped like x filled with fill_value.", true))
	// ZerosLike is R.zeros_like(x, dtype=None).
	ZerosLike = ir.RegisterOp(newLikeOp("relax.zeros_like", "A tensor of zeros shaped like x.", false))
	// OnesLike is R.ones_like(x, dtype=None).
	OnesLike = ir.RegisterOp(newLikeOp("relax.ones_like", "A tensor of ones shaped like x.", false))
)

func newMatmulOp() *ir.Op {
	op := &ir.Op{
		Name: "relax.matmul", Doc: "Matrix product with numpy semantics: batched, broadcasting batch dims, 1-D operands promoted.",
		Pure: true, Category: ir.CatTensor,
		Params: []ir.Param{
			{Name: "x1", Kind: ir.ArgExpr},
			{Name: "x2", Kind: ir.ArgExpr},
			{Name: "out_dtype", Kind: ir.AttrDType, Default: ir.Void},
		},
	}
	op.Infer = func(_ *ir.InferCtx, call *ir.Call) (ir.StructInfo, error) { return inferMatmul(op, call) }
	op.Normalize = schemaNormalize(op)
	return op
}

func inferMatmul(op *ir.Op, call *ir.Call) (ir.StructInfo, error) {
	a, err := firstTensorArg(op, call)
	if err != nil {
		return nil, err
	}
	b, err := tensorArg(op, call, 1)
	if err != nil {
		return nil, err
	}
	outDType, err := opAttrDType(op, call, "out_dtype")
	if err != nil {
		return nil, err
	}
	if outDType.IsVoid() {
		if outDType, err = unifyDType(op, a.DType, b.DType); err != nil {
			return nil, err
		}
	}
	if a.NDim == 0 || b.NDim == 0 {
		return nil, opErrorf(op, "does not accept rank-0 tensors")
	}
	if a.NDim < 0 || b.NDim < 0 {
		return ir.TensorInfoNDim(outDType, -1), nil
	}
	aVec, bVec := a.NDim == 1, b.NDim == 1
	aRank, bRank := max(a.NDim, 2), max(b.NDim, 2)
	outNDim := max(aRank, bRank)
	if aVec {
		outNDim--
	}
	if bVec {
		outNDim--
	}
	da, okA := a.Dims()
	db, okB := b.Dims()
	if !okA || !okB {
		return ir.TensorInfoNDim(outDType, outNDim), nil
	}
	// Promote vectors to matrices: (k) -> (1, k) on the left, (k, 1) on the right.
	if aVec {
		da = []ir.PrimExpr{ir.I64(1), da[0]}
	}
	if bVec {
		db = []ir.PrimExpr{db[0], ir.I64(1)}
	}
	k1, k2 := da[len(da)-1], db[len(db)-2]
	if dimsProvablyDiffer(k1, k2) {
		return nil, opErrorf(op, "reduction dims %s and %s differ", fmtDim(k1), fmtDim(k2))
	}
	var scratch [6]ir.PrimExpr // batch dims and the two matrix dims
	batch, known, err := broadcastDims(op, da[:len(da)-2], db[:len(db)-2], scratch[:])
	if err != nil {
		return nil, err
	}
	if !known {
		return ir.TensorInfoNDim(outDType, outNDim), nil
	}
	dims := batch
	if !aVec {
		dims = append(dims, da[len(da)-2])
	}
	if !bVec {
		dims = append(dims, db[len(db)-1])
	}
	return newTensor(outDType, dims, true, outNDim), nil
}

func newAsTypeOp() *ir.Op {
	op := &ir.Op{
		Name: "relax.astype", Doc: "Casts each element to dtype.", Pure: true, Category: ir.CatTensor,
		Params: []ir.Param{{Name: "x", Kind: ir.ArgExpr}, {Name: "dtype", Kind: ir.AttrDType}},
	}
	op.Infer = func(_ *ir.InferCtx, call *ir.Call) (ir.StructInfo, error) {
		t, err := firstTensorArg(op, call)
		if err != nil {
			return nil, err
		}
		dtype, err := opAttrDType(op, call, "dtype")
		if err != nil {
			return nil, err
		}
		return withDType(t, dtype), nil
	}
	op.Normalize = schemaNormalize(op)
	return op
}

// fillValueArg checks that argument i is a scalar tensor and returns it.
func fillValueArg(op *ir.Op, call *ir.Call, i int) (*ir.TensorInfo, error) {
	v, err := tensorArg(op, call, i)
	if err != nil {
		return nil, err
	}
	if v.NDim > 0 {
		return nil, opErrorf(op, "fill_value must be a scalar tensor, got rank %d", v.NDim)
	}
	return v, nil
}

func newFullOp() *ir.Op {
	op := &ir.Op{
		Name: "relax.full", Doc: "A tensor of the given shape filled with a scalar.", Pure: true, Category: ir.CatTensor,
		Params: []ir.Param{
			{Name: "shape", Kind: ir.ArgShape},
			{Name: "fill_value", Kind: ir.ArgExpr},
			{Name: "dtype", Kind: ir.AttrDType, Default: ir.Void},
		},
	}
	op.Infer = func(_ *ir.InferCtx, call *ir.Call) (ir.StructInfo, error) {
		if err := opCheckArity(op, call); err != nil {
			return nil, err
		}
		dims, ndim, shape, err := shapeArg(op, call, 0)
		if err != nil {
			return nil, err
		}
		v, err := fillValueArg(op, call, 1)
		if err != nil {
			return nil, err
		}
		dtype, err := opAttrDType(op, call, "dtype")
		if err != nil {
			return nil, err
		}
		if dtype.IsVoid() {
			dtype = v.DType
		}
		return tensorFromShape(dtype, dims, ndim, shape), nil
	}
	op.Normalize = schemaNormalize(op)
	return op
}

func newConstFillOp(name, doc string) *ir.Op {
	op := &ir.Op{
		Name: name, Doc: doc, Pure: true, Category: ir.CatTensor,
		Params: []ir.Param{{Name: "shape", Kind: ir.ArgShape}, {Name: "dtype", Kind: ir.AttrDType}},
	}
	op.Infer = func(_ *ir.InferCtx, call *ir.Call) (ir.StructInfo, error) {
		if err := opCheckArity(op, call); err != nil {
			return nil, err
		}
		dims, ndim, shape, err := shapeArg(op, call, 0)
		if err != nil {
			return nil, err
		}
		dtype, err := opAttrDType(op, call, "dtype")
		if err != nil {
			return nil, err
		}
		return tensorFromShape(dtype, dims, ndim, shape), nil
	}
	op.Normalize = schemaNormalize(op)
	return op
}

func newLikeOp(name, doc string, withFill bool) *ir.Op {
	params := []ir.Param{{Name: "x", Kind: ir.ArgExpr}}
	if withFill {
		params = append(params, ir.Param{Name: "fill_value", Kind: ir.ArgExpr})
	}
	params = append(params, ir.Param{Name: "dtype", Kind: ir.AttrDType, Default: ir.Void})
	op := &ir.Op{Name: name, Doc: doc, Pure: true, Category: ir.CatTensor, Params: params}
	op.Infer = func(_ *ir.InferCtx, call *ir.Call) (ir.StructInfo, error) {
		t, err := firstTensorArg(op, call)
		if err != nil {
			return nil, err
		}
		if withFill {
			if _, err := fillValueArg(op, call, 1); err != nil {
				return nil, err
			}
		}
		dtype, err := opAttrDType(op, call, "dtype")
		if err != nil {
			return nil, err
		}
		if dtype.IsVoid() {
			dtype = t.DType
		}
		return withDType(t, dtype), nil
	}
	op.Normalize = schemaNormalize(op)
	return op
}
