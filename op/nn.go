package op

import (
	"math"

	"github.com/phasec/phasec/ir"
)

// Neural-network ops that keep their input's shape: softmax and the
// normalizations. (The elementwise activations are in unary.go.)

var (
	// Softmax is R.nn.softmax(data, axis=-1).
	Softmax = Define(newSoftmaxOp("relax.nn.softmax", "Softmax along axis.", false))
	// LogSoftmax is R.nn.log_softmax(data, axis=-1).
	LogSoftmax = Define(newSoftmaxOp("relax.nn.log_softmax", "Log of softmax along axis.", true))
	// LayerNorm is R.nn.layer_norm(data, gamma, beta, axes, epsilon=1e-5, center=True, scale=True).
	LayerNorm = Define(newLayerNormOp())
	// RMSNorm is R.nn.rms_norm(data, weight, axes=[-1], epsilon=1e-5).
	RMSNorm = Define(newRMSNormOp())
)

func newSoftmaxOp(name, doc string, logOf bool) Def {
	op := &ir.Op{
		Name: name, Doc: doc, Pure: true, Category: ir.CatTensor, Pattern: ir.PatternOutEWiseFusable,
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
	return Def{Op: op,
		Eval:     func(call *ir.Call, args []Value) (Value, error) { return evalSoftmax(op, call, args, logOf) },
		Legalize: func(k *Kernel, call *ir.Call) error { return legalizeSoftmax(k, call, op, logOf) },
		Layout:   axisRule("axis"),
	}
}

func newLayerNormOp() Def {
	op := &ir.Op{
		Name: "relax.nn.layer_norm", Doc: "Layer normalization over axes with scale gamma and shift beta.",
		Pure: true, Category: ir.CatTensor, Pattern: ir.PatternOutEWiseFusable,
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
	return Def{Op: op,
		Eval:           func(call *ir.Call, args []Value) (Value, error) { return evalLayerNorm(op, call, args) },
		Legalize:       func(k *Kernel, call *ir.Call) error { return legalizeLayerNorm(k, call, op) },
		Layout:         layoutNorm(2, false),
		MixedPrecision: mixedFollow,
	}
}

func newRMSNormOp() Def {
	op := &ir.Op{
		Name: "relax.nn.rms_norm", Doc: "Root-mean-square normalization over axes with scale weight.",
		Pure: true, Category: ir.CatTensor, Pattern: ir.PatternOutEWiseFusable,
		Params: []ir.Param{
			{Name: "data", Kind: ir.ArgExpr},
			{Name: "weight", Kind: ir.ArgExpr},
			{Name: "axes", Kind: ir.AttrInts, Default: []any{int64(-1)}},
			{Name: "epsilon", Kind: ir.AttrFloat, Default: 1e-5},
		},
	}
	op.Infer = func(_ *ir.InferCtx, call *ir.Call) (ir.StructInfo, error) { return inferNorm(op, call, 2) }
	op.Normalize = schemaNormalize(op)
	return Def{Op: op,
		Eval:           func(call *ir.Call, args []Value) (Value, error) { return evalRMSNorm(op, call, args) },
		Legalize:       func(k *Kernel, call *ir.Call) error { return legalizeRMSNorm(k, call, op) },
		Layout:         layoutNorm(1, false),
		MixedPrecision: mixedFollow,
	}
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
func evalLayerNorm(op *ir.Op, call *ir.Call, args []Value) (Value, error) {
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
func evalRMSNorm(op *ir.Op, call *ir.Call, args []Value) (Value, error) {
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

// --- legalization -------------------------------------------------------------

// dropAxis removes dimension axis.
func dropAxis(dims []ir.PrimExpr, axis int) []ir.PrimExpr {
	return append(append([]ir.PrimExpr{}, dims[:axis]...), dims[axis+1:]...)
}

// insertAt is idx with x inserted at position axis.
func insertAt(idx []ir.PrimExpr, axis int, x ir.PrimExpr) []ir.PrimExpr {
	return append(append(append([]ir.PrimExpr{}, idx[:axis]...), x), idx[axis:]...)
}

// legalizeSoftmax follows topi.nn.softmax: T_softmax_maxelem (max along
// axis), T_softmax_exp, T_softmax_expsum, T_softmax_norm; the log form
// ends with T_log_softmax = x - max - log(expsum).
func legalizeSoftmax(k *Kernel, call *ir.Call, op *ir.Op, logOf bool) error {
	a, err := k.Input(call.Args[0], "A")
	if err != nil {
		return err
	}
	axis, err := axisAttr(op, call, len(a.Shape))
	if err != nil {
		return err
	}
	name := "T_softmax_norm"
	if logOf {
		name = "T_log_softmax"
	}
	out, err := k.Output(name)
	if err != nil {
		return err
	}
	dt := a.DType
	rest := dropAxis(a.Shape, axis)
	mx := k.Alloc("T_softmax_maxelem", dt, rest)
	k.Reduce("T_softmax_maxelem", mx, "i", []ir.PrimExpr{a.Shape[axis]}, limitValue(dt, true), func(s, r []ir.PrimExpr, acc ir.PrimExpr) ir.PrimExpr {
		return ir.NewBinary(ir.OpMax, acc, Load(a, insertAt(s, axis, r[0])))
	})
	shifted := func(v []ir.PrimExpr) ir.PrimExpr {
		return ir.NewBinary(ir.OpSub, Load(a, v), Load(mx, dropAxis(v, axis)))
	}
	if logOf {
		sum := k.Alloc("T_softmax_expsum", dt, rest)
		k.Reduce("T_softmax_expsum", sum, "i", []ir.PrimExpr{a.Shape[axis]}, constOf(dt, 0), func(s, r []ir.PrimExpr, acc ir.PrimExpr) ir.PrimExpr {
			return ir.NewBinary(ir.OpAdd, acc, intrinsic("exp", dt, shifted(insertAt(s, axis, r[0]))))
		})
		k.Compute(name, out, "i", func(v []ir.PrimExpr) ir.PrimExpr {
			return ir.NewBinary(ir.OpSub, shifted(v), intrinsic("log", dt, Load(sum, dropAxis(v, axis))))
		})
		return nil
	}
	ex := k.Alloc("T_softmax_exp", dt, a.Shape)
	sum := k.Alloc("T_softmax_expsum", dt, rest)
	k.Compute("T_softmax_exp", ex, "i", func(v []ir.PrimExpr) ir.PrimExpr { return intrinsic("exp", dt, shifted(v)) })
	k.Reduce("T_softmax_expsum", sum, "i", []ir.PrimExpr{a.Shape[axis]}, constOf(dt, 0), func(s, r []ir.PrimExpr, acc ir.PrimExpr) ir.PrimExpr {
		return ir.NewBinary(ir.OpAdd, acc, Load(ex, insertAt(s, axis, r[0])))
	})
	k.Compute(name, out, "i", func(v []ir.PrimExpr) ir.PrimExpr {
		return ir.NewBinary(ir.OpDiv, Load(ex, v), Load(sum, dropAxis(v, axis)))
	})
	return nil
}

// normKernel sets up a normalization: the data, its parameter buffers,
// the normalized axes and the element count per group.
func normKernel(k *Kernel, call *ir.Call, op *ir.Op, nParams int) (a *ir.Buffer, ps []*ir.Buffer, axes []int, reduced []bool, count ir.PrimExpr, err error) {
	if a, err = k.Input(call.Args[0], "A"); err != nil {
		return
	}
	for i := 1; i <= nParams; i++ {
		var p *ir.Buffer
		if p, err = k.Input(call.Args[i], string(rune('A'+i))); err != nil {
			return
		}
		ps = append(ps, p)
	}
	raw, _, err := opAttrInts(op, call, "axes")
	if err != nil {
		return
	}
	reduced = make([]bool, len(a.Shape))
	count = ir.I64(1)
	for _, x := range raw {
		var i int
		if i, err = normAxisEval(op, x, len(a.Shape)); err != nil {
			return
		}
		axes = append(axes, i)
		reduced[i] = true
		count = ir.Simplify(ir.Mul(count, a.Shape[i]))
	}
	return
}

// groupSums emits sum(x) (when withSum) and sum(x*x) over the normalized
// axes into intermediates shaped like the data with unit reduced dims.
func groupSums(k *Kernel, a *ir.Buffer, reduced []bool, prefix string, withSum bool) (sum, sq *ir.Buffer) {
	var extents []ir.PrimExpr
	kept := make([]ir.PrimExpr, len(a.Shape))
	for i, r := range reduced {
		kept[i] = a.Shape[i]
		if r {
			extents = append(extents, a.Shape[i])
			kept[i] = ir.I64(1)
		}
	}
	zero := constOf(a.DType, 0)
	if withSum {
		sum = k.Alloc(prefix+"_sum", a.DType, kept)
		k.Reduce(prefix+"_sum", sum, "ax", extents, zero, func(s, r []ir.PrimExpr, acc ir.PrimExpr) ir.PrimExpr {
			return ir.NewBinary(ir.OpAdd, acc, Load(a, reduceIndex(reduced, true, s, r)))
		})
	}
	sq = k.Alloc(prefix+"_sqsum", a.DType, kept)
	k.Reduce(prefix+"_sqsum", sq, "ax", extents, zero, func(s, r []ir.PrimExpr, acc ir.PrimExpr) ir.PrimExpr {
		x := Load(a, reduceIndex(reduced, true, s, r))
		return ir.NewBinary(ir.OpAdd, acc, ir.NewBinary(ir.OpMul, x, x))
	})
	return sum, sq
}

// groupIndex is the index into a group intermediate of the data element v.
func groupIndex(reduced []bool, v []ir.PrimExpr) []ir.PrimExpr {
	idx := make([]ir.PrimExpr, len(v))
	for i := range v {
		idx[i] = v[i]
		if reduced[i] {
			idx[i] = ir.I64(0)
		}
	}
	return idx
}

func paramIdx(axes []int, v []ir.PrimExpr) []ir.PrimExpr {
	idx := make([]ir.PrimExpr, len(axes))
	for j, ax := range axes {
		idx[j] = v[ax]
	}
	return idx
}

// legalizeLayerNorm computes mean and variance from the sums of x and x²
// (as topi.nn.layer_norm does), then (x - mean) * rsqrt(var + eps) * gamma
// + beta in T_layer_norm.
func legalizeLayerNorm(k *Kernel, call *ir.Call, op *ir.Op) error {
	a, ps, axes, reduced, count, err := normKernel(k, call, op, 2)
	if err != nil {
		return err
	}
	out, err := k.Output("T_layer_norm")
	if err != nil {
		return err
	}
	eps, _ := opAttr(op, call, "epsilon").(float64)
	center, _ := opAttr(op, call, "center").(bool)
	scale, _ := opAttr(op, call, "scale").(bool)
	dt := a.DType
	sum, sq := groupSums(k, a, reduced, "T_layer_norm", true)
	n := castTo(dt, count)
	k.Compute("T_layer_norm", out, "ax", func(v []ir.PrimExpr) ir.PrimExpr {
		g := groupIndex(reduced, v)
		mean := ir.NewBinary(ir.OpDiv, Load(sum, g), n)
		variance := ir.NewBinary(ir.OpSub, ir.NewBinary(ir.OpDiv, Load(sq, g), n), ir.NewBinary(ir.OpMul, mean, mean))
		y := ir.NewBinary(ir.OpMul, ir.NewBinary(ir.OpSub, Load(a, v), mean),
			intrinsic("rsqrt", dt, ir.NewBinary(ir.OpAdd, variance, constOf(dt, eps))))
		if scale {
			y = ir.NewBinary(ir.OpMul, y, Load(ps[0], paramIdx(axes, v)))
		}
		if center {
			y = ir.NewBinary(ir.OpAdd, y, Load(ps[1], paramIdx(axes, v)))
		}
		return y
	})
	return nil
}

// legalizeRMSNorm is x * rsqrt(mean(x²) + eps) * weight (T_rms_norm).
func legalizeRMSNorm(k *Kernel, call *ir.Call, op *ir.Op) error {
	a, ps, axes, reduced, count, err := normKernel(k, call, op, 1)
	if err != nil {
		return err
	}
	out, err := k.Output("T_rms_norm")
	if err != nil {
		return err
	}
	eps, _ := opAttr(op, call, "epsilon").(float64)
	dt := a.DType
	_, sq := groupSums(k, a, reduced, "T_rms_norm", false)
	k.Compute("T_rms_norm", out, "ax", func(v []ir.PrimExpr) ir.PrimExpr {
		ms := ir.NewBinary(ir.OpDiv, Load(sq, groupIndex(reduced, v)), castTo(dt, count))
		y := ir.NewBinary(ir.OpMul, Load(a, v), intrinsic("rsqrt", dt, ir.NewBinary(ir.OpAdd, ms, constOf(dt, eps))))
		return ir.NewBinary(ir.OpMul, y, Load(ps[0], paramIdx(axes, v)))
	})
	return nil
}

// --- prelu -------------------------------------------------------------------------

// PRelu is R.nn.prelu(data, alpha, axis=1): x if x > 0 else alpha[c] * x,
// with c the index along axis.
var PRelu = Define(newPReluOp())

func newPReluOp() Def {
	op := &ir.Op{Name: "relax.nn.prelu", Doc: "Parametric ReLU: x if x > 0 else alpha[c] * x along axis.", Pure: true, Category: ir.CatTensor, Pattern: ir.PatternBroadcast,
		Params: []ir.Param{{Name: "data", Kind: ir.ArgExpr}, {Name: "alpha", Kind: ir.ArgExpr}, {Name: "axis", Kind: ir.AttrInt, Default: int64(1)}}}
	op.Infer = func(_ *ir.InferCtx, call *ir.Call) (ir.StructInfo, error) {
		t, err := firstTensorArg(op, call)
		if err != nil {
			return nil, err
		}
		if err := requireFloat(op, t.DType); err != nil {
			return nil, err
		}
		al, err := tensorArg(op, call, 1)
		if err != nil {
			return nil, err
		}
		if al.NDim >= 0 && al.NDim != 1 {
			return nil, opErrorf(op, "alpha must be a vector, got rank %d", al.NDim)
		}
		axis, _, err := opAttrInt(op, call, "axis")
		if err != nil {
			return nil, err
		}
		if t.NDim >= 0 {
			a, err := normAxis(op, axis, t.NDim)
			if err != nil {
				return nil, err
			}
			dt, ok1 := t.Dims()
			da, ok2 := al.Dims()
			// A one-element alpha broadcasts over the axis, as TVM's
			// topi.nn.prelu (python/tvm/topi/nn/elemwise.py) computes it;
			// TVM's InferStructInfoPRelu checks no alpha shape at all.
			if one, ok := ir.IntValue(da[0]); ok2 && ok && one == 1 {
				return t, nil
			}
			if ok1 && ok2 && dimsProvablyDiffer(dt[a], da[0]) {
				return nil, opErrorf(op, "alpha has %s entries but data dimension %d is %s", fmtDim(da[0]), a, fmtDim(dt[a]))
			}
		}
		return t, nil
	}
	op.Normalize = schemaNormalize(op)
	eval := func(call *ir.Call, args []Value) (Value, error) {
		x, err := argArray(op, args, 0)
		if err != nil {
			return nil, err
		}
		al, err := argArray(op, args, 1)
		if err != nil {
			return nil, err
		}
		if x.f == nil || al.dt != x.dt {
			return nil, opErrorf(op, "data and alpha must be float tensors of one dtype, got %s and %s", x.dt, al.dt)
		}
		axis, err := axisAttr(op, call, len(x.shape))
		if err != nil {
			return nil, err
		}
		if len(al.shape) != 1 || al.shape[0] != x.shape[axis] && al.shape[0] != 1 {
			return nil, opErrorf(op, "alpha has shape %v but data dimension %d is %d", al.shape, axis, x.shape[axis])
		}
		channel := func(c int64) float64 { return al.f[c] }
		if al.shape[0] == 1 {
			channel = func(int64) float64 { return al.f[0] }
		}
		out := newArray(x.dt, x.shape)
		idx := make([]int64, len(x.shape))
		for k := range out.size() {
			unravel(k, x.shape, idx)
			v := x.f[k]
			if v <= 0 {
				v *= channel(idx[axis])
			}
			out.setFloat(k, v)
		}
		return out.tensor()
	}
	legalize := func(k *Kernel, call *ir.Call) error {
		a, err := k.Input(call.Args[0], "A")
		if err != nil {
			return err
		}
		al, err := k.Input(call.Args[1], "B")
		if err != nil {
			return err
		}
		axis, err := axisAttr(op, call, len(a.Shape))
		if err != nil {
			return err
		}
		out, err := k.Output("compute")
		if err != nil {
			return err
		}
		broadcast := false
		if len(al.Shape) == 1 {
			n, ok := ir.IntValue(al.Shape[0])
			broadcast = ok && n == 1
		}
		k.Compute("compute", out, "i", func(v []ir.PrimExpr) ir.PrimExpr {
			x := Load(a, v)
			c := v[axis]
			if broadcast {
				c = ir.NewInt(c.DType(), 0)
			}
			return &ir.Select{Cond: ir.NewBinary(ir.OpGT, x, constOf(a.DType, 0)), True: x,
				False: ir.NewBinary(ir.OpMul, x, Load(al, []ir.PrimExpr{c}))}
		})
		return nil
	}
	return Def{Op: op, Eval: eval, Legalize: legalize, Layout: axisRule("axis")}
}
