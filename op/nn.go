package op

import "github.com/phasec/phasec/ir"

// Neural-network ops that keep their input's shape: softmax and the
// normalizations. (The elementwise activations are in unary.go.)

var (
	// Softmax is R.nn.softmax(data, axis=-1).
	Softmax = ir.RegisterOp(newSoftmaxOp("relax.nn.softmax", "Softmax along axis."))
	// LogSoftmax is R.nn.log_softmax(data, axis=-1).
	LogSoftmax = ir.RegisterOp(newSoftmaxOp("relax.nn.log_softmax", "Log of softmax along axis."))
	// LayerNorm is R.nn.layer_norm(data, gamma, beta, axes, epsilon=1e-5, center=True, scale=True).
	LayerNorm = ir.RegisterOp(newLayerNormOp())
	// RMSNorm is R.nn.rms_norm(data, weight, axes=[-1], epsilon=1e-5).
	RMSNorm = ir.RegisterOp(newRMSNormOp())
)

func newSoftmaxOp(name, doc string) *ir.Op {
	op := &ir.Op{
		Name: name, Doc: doc, Pure: true, Category: ir.CatTensor,
		Params: []ir.Param{
			{Name: "data", Kind: ir.ArgExpr},
			{Name: "axis", Kind: ir.AttrInt, Default: int64(-1)},
		},
	}
	op.Infer = func(_ *ir.InferCtx, call *ir.Call) (ir.StructInfo, error) {
		t, err := firstTensorArg(op, call)
		if err != nil {
			return nil, err
		}
		if err := requireFloat(op, t.DType); err != nil {
			return nil, err
		}
		axis, _, err := opAttrInt(op, call, "axis")
		if err != nil {
			return nil, err
		}
		if t.NDim >= 0 {
			if _, err := normAxis(op, axis, t.NDim); err != nil {
				return nil, err
			}
		}
		return t, nil
	}
	op.Normalize = schemaNormalize(op)
	return op
}

func newLayerNormOp() *ir.Op {
	op := &ir.Op{
		Name: "relax.nn.layer_norm", Doc: "Layer normalization over axes with scale gamma and shift beta.",
		Pure: true, Category: ir.CatTensor,
		Params: []ir.Param{
			{Name: "data", Kind: ir.ArgExpr},
			{Name: "gamma", Kind: ir.ArgExpr},
			{Name: "beta", Kind: ir.ArgExpr},
			{Name: "axes", Kind: ir.AttrInts},
			{Name: "epsilon", Kind: ir.AttrFloat, Default: 1e-5},
			{Name: "center", Kind: ir.AttrBool, Default: true},
			{Name: "scale", Kind: ir.AttrBool, Default: true},
		},
	}
	op.Infer = func(_ *ir.InferCtx, call *ir.Call) (ir.StructInfo, error) { return inferNorm(op, call, 3) }
	op.Normalize = schemaNormalize(op)
	return op
}

func newRMSNormOp() *ir.Op {
	op := &ir.Op{
		Name: "relax.nn.rms_norm", Doc: "Root-mean-square normalization over axes with scale weight.",
		Pure: true, Category: ir.CatTensor,
		Params: []ir.Param{
			{Name: "data", Kind: ir.ArgExpr},
			{Name: "weight", Kind: ir.ArgExpr},
			{Name: "axes", Kind: ir.AttrInts, Default: []any{int64(-1)}},
			{Name: "epsilon", Kind: ir.AttrFloat, Default: 1e-5},
		},
	}
	op.Infer = func(_ *ir.InferCtx, call *ir.Call) (ir.StructInfo, error) { return inferNorm(op, call, 2) }
	op.Normalize = schemaNormalize(op)
	return op
}

// inferNorm checks a normalization: the data is a float tensor, and each of
// the other nTensors-1 tensors (gamma, beta / weight) has one dimension
// per normalized axis, matching the data's dimension there, and the data's
// dtype. The result has the data's struct info.
func inferNorm(op *ir.Op, call *ir.Call, nTensors int) (ir.StructInfo, error) {
	data, err := firstTensorArg(op, call)
	if err != nil {
		return nil, err
	}
	if err := requireFloat(op, data.DType); err != nil {
		return nil, err
	}
	axes, _, err := opAttrInts(op, call, "axes")
	if err != nil {
		return nil, err
	}
	var norm []int
	if data.NDim >= 0 {
		if norm, err = normAxes(op, axes, data.NDim); err != nil {
			return nil, err
		}
	}
	dataDims, dataKnown := data.Dims()
	for i := 1; i < nTensors; i++ {
		p, err := tensorArg(op, call, i)
		if err != nil {
			return nil, err
		}
		name := opArgName(op, i)
		if !p.DType.IsVoid() && !data.DType.IsVoid() && p.DType != data.DType {
			return nil, opErrorf(op, "%s has dtype %s but data has %s", name, p.DType, data.DType)
		}
		if p.NDim >= 0 && p.NDim != len(axes) {
			return nil, opErrorf(op, "%s must have rank %d (one dimension per axis), got %d", name, len(axes), p.NDim)
		}
		pDims, ok := p.Dims()
		if !ok || !dataKnown || norm == nil {
			continue
		}
		for j, a := range norm {
			if dimsProvablyDiffer(pDims[j], dataDims[a]) {
				return nil, opErrorf(op, "%s dimension %d is %s but data dimension %d is %s",
					name, j, fmtDim(pDims[j]), a, fmtDim(dataDims[a]))
			}
		}
	}
	return data, nil
}
