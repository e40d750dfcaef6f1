package op

import (
	"math"

	"github.com/phasec/phasec/ir"
)

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

// --- evaluation -------------------------------------------------------------

func init() {
	defEval(Softmax, func(call *ir.Call, args []Value) (Value, error) { return evalSoftmax(Softmax, call, args, false) })
	defEval(LogSoftmax, func(call *ir.Call, args []Value) (Value, error) { return evalSoftmax(LogSoftmax, call, args, true) })
	defEval(LayerNorm, evalLayerNorm)
	defEval(RMSNorm, evalRMSNorm)
}

// evalSoftmax computes exp(x - max) / sum(exp(x - max)) along axis (or its
// log, x - max - log(sum(exp(x - max)))), in float64.
func evalSoftmax(op *ir.Op, call *ir.Call, args []Value, logOf bool) (Value, error) {
	x, err := argArray(op, args, 0)
	if err != nil {
		return nil, err
	}
	if x.f == nil {
		return nil, opErrorf(op, "data must be a float tensor, got %s", x.dt)
	}
	axis, _, err := opAttrInt(op, call, "axis")
	if err != nil {
		return nil, err
	}
	r, err := newReduction(op, x, []int64{axis}, false, true)
	if err != nil {
		return nil, err
	}
	ng := numElems(r.groupShape)
	mx := make([]float64, ng)
	for g := range mx {
		mx[g] = math.Inf(-1)
	}
	r.each(func(g, _, k int64) { mx[g] = math.Max(mx[g], x.f[k]) })
	sum := make([]float64, ng)
	r.each(func(g, _, k int64) { sum[g] += math.Exp(x.f[k] - mx[g]) })
	out := newArray(x.dt, x.shape)
	r.each(func(g, _, k int64) {
		if logOf {
			out.setFloat(k, x.f[k]-mx[g]-math.Log(sum[g]))
		} else {
			out.setFloat(k, math.Exp(x.f[k]-mx[g])/sum[g])
		}
	})
	return out.tensor()
}

// normInputs reads the data and the per-axis parameter tensors of a
// normalization, checking the parameters' shapes against the data.
func normInputs(op *ir.Op, call *ir.Call, args []Value, nParams int) (x *array, params []*array, r *reduction, axes []int, err error) {
	if x, err = argArray(op, args, 0); err != nil {
		return
	}
	if x.f == nil {
		err = opErrorf(op, "data must be a float tensor, got %s", x.dt)
		return
	}
	raw, _, err := opAttrInts(op, call, "axes")
	if err != nil {
		return
	}
	for _, a := range raw {
		var i int
		if i, err = normAxisEval(op, a, len(x.shape)); err != nil {
			return
		}
		axes = append(axes, i)
	}
	if r, err = newReduction(op, x, raw, false, true); err != nil {
		return
	}
	for p := 1; p <= nParams; p++ {
		var a *array
		if a, err = argArray(op, args, p); err != nil {
			return
		}
		if len(a.shape) != len(axes) {
			err = opErrorf(op, "%s must have rank %d (one dimension per axis), got %d", paramName(op, p), len(axes), len(a.shape))
			return
		}
		for j, ax := range axes {
			if a.shape[j] != x.shape[ax] {
				err = opErrorf(op, "%s dimension %d is %d but data dimension %d is %d", paramName(op, p), j, a.shape[j], ax, x.shape[ax])
				return
			}
		}
		params = append(params, a)
	}
	return
}

// paramIndex is the flat index into a per-axis parameter of the data
// element at multi-index idx.
func paramIndex(idx []int64, axes []int, pshape []int64) int64 {
	k := int64(0)
	for j, ax := range axes {
		k = k*pshape[j] + idx[ax]
	}
	return k
}

// evalLayerNorm is (x - mean) / sqrt(var + eps) * gamma + beta over axes,
// with the biased variance, as topi.nn.layer_norm.
func evalLayerNorm(call *ir.Call, args []Value) (Value, error) {
	op := LayerNorm
	x, ps, r, axes, err := normInputs(op, call, args, 2)
	if err != nil {
		return nil, err
	}
	eps, _ := opAttr(op, call, "epsilon").(float64)
	center, _ := opAttr(op, call, "center").(bool)
	scale, _ := opAttr(op, call, "scale").(bool)
	ng := numElems(r.groupShape)
	mean, sq := make([]float64, ng), make([]float64, ng)
	r.each(func(g, _, k int64) { mean[g] += x.f[k] })
	for g := range mean {
		mean[g] /= float64(r.count)
	}
	r.each(func(g, _, k int64) { d := x.f[k] - mean[g]; sq[g] += d * d })
	out := newArray(x.dt, x.shape)
	idx := make([]int64, len(x.shape))
	r.each(func(g, _, k int64) {
		unravel(k, x.shape, idx)
		p := paramIndex(idx, axes, ps[0].shape)
		v := (x.f[k] - mean[g]) / math.Sqrt(sq[g]/float64(r.count)+eps)
		if scale {
			v *= ps[0].f[p]
		}
		if center {
			v += ps[1].f[p]
		}
		out.setFloat(k, v)
	})
	return out.tensor()
}

// evalRMSNorm is x / sqrt(mean(x²) + eps) * weight over axes.
func evalRMSNorm(call *ir.Call, args []Value) (Value, error) {
	op := RMSNorm
	x, ps, r, axes, err := normInputs(op, call, args, 1)
	if err != nil {
		return nil, err
	}
	eps, _ := opAttr(op, call, "epsilon").(float64)
	ng := numElems(r.groupShape)
	sq := make([]float64, ng)
	r.each(func(g, _, k int64) { sq[g] += x.f[k] * x.f[k] })
	out := newArray(x.dt, x.shape)
	idx := make([]int64, len(x.shape))
	r.each(func(g, _, k int64) {
		unravel(k, x.shape, idx)
		p := paramIndex(idx, axes, ps[0].shape)
		out.setFloat(k, x.f[k]/math.Sqrt(sq[g]/float64(r.count)+eps)*ps[0].f[p])
	})
	return out.tensor()
}
