package op

import (
	"math"

	"github.com/phasec/phasec/ir"
)

// Batch and group normalization and dropout (TVM's nn.py;
// src/relax/op/nn/nn.cc; legalized as topi.nn.batch_norm and
// topi.nn.group_norm compute them). Statistics use the biased variance.

var (
	// BatchNorm is R.nn.batch_norm(data, gamma, beta, moving_mean,
	// moving_var, axis, epsilon=1e-5, center=True, scale=True,
	// momentum=0.1, training=True): the normalized data and the updated
	// moving mean and variance.
	BatchNorm = Define(newBatchNormOp())
	// GroupNorm is R.nn.group_norm(data, gamma, beta, num_groups,
	// channel_axis, axes, epsilon=1e-5, center=True, scale=True).
	GroupNorm = Define(newGroupNormOp())
	// Dropout is R.nn.dropout(data, rate=0.5): (data, mask). phasec
	// evaluates and legalizes it in inference mode: the data unchanged and
	// a mask of ones.
	Dropout = Define(newDropoutOp())
)

// --- batch_norm ---------------------------------------------------------------------

func newBatchNormOp() Def {
	op := &ir.Op{Name: "relax.nn.batch_norm", Doc: "Batch normalization along axis; also returns the updated moving mean and variance.",
		Pure: true, Category: ir.CatTensor, Pattern: ir.PatternOutEWiseFusable,
		Params: []ir.Param{{Name: "data", Kind: ir.ArgExpr}, {Name: "gamma", Kind: ir.ArgExpr}, {Name: "beta", Kind: ir.ArgExpr},
			{Name: "moving_mean", Kind: ir.ArgExpr}, {Name: "moving_var", Kind: ir.ArgExpr},
			{Name: "axis", Kind: ir.AttrInt}, {Name: "epsilon", Kind: ir.AttrFloat, Default: 1e-5},
			{Name: "center", Kind: ir.AttrBool, Default: true}, {Name: "scale", Kind: ir.AttrBool, Default: true},
			{Name: "momentum", Kind: ir.AttrFloat, Default: 0.1}, {Name: "training", Kind: ir.AttrBool, Default: true}}}
	op.Infer = func(_ *ir.InferCtx, call *ir.Call) (ir.StructInfo, error) {
		if err := opCheckArity(op, call); err != nil {
			return nil, err
		}
		x, err := firstTensorArg(op, call)
		if err != nil {
			return nil, err
		}
		if err := requireFloat(op, x.DType); err != nil {
			return nil, err
		}
		axisV, _, err := opAttrInt(op, call, "axis")
		if err != nil {
			return nil, err
		}
		var channels ir.PrimExpr
		if x.NDim >= 0 {
			axis, err := normAxis(op, axisV, x.NDim)
			if err != nil {
				return nil, err
			}
			if dims, ok := x.Dims(); ok {
				channels = dims[axis]
			}
		}
		fields := []ir.StructInfo{x}
		for i := 1; i <= 4; i++ {
			p, err := tensorArg(op, call, i)
			if err != nil {
				return nil, err
			}
			if _, err := unifyDType(op, x.DType, p.DType); err != nil {
				return nil, err
			}
			if p.NDim >= 0 && p.NDim != 1 {
				return nil, opErrorf(op, "%s must be 1-D, got rank %d", opArgName(op, i), p.NDim)
			}
			if d, ok := p.Dims(); ok && channels != nil && dimsProvablyDiffer(d[0], channels) {
				return nil, opErrorf(op, "%s has %s entries but data has %s along axis %d", opArgName(op, i), fmtDim(d[0]), fmtDim(channels), axisV)
			}
			if i >= 3 {
				fields = append(fields, p)
			}
		}
		return ir.NewTupleInfo(fields...), nil
	}
	op.Normalize = schemaNormalize(op)
	eval := func(call *ir.Call, args []Value) (Value, error) {
		x, err := argArray(op, args, 0)
		if err != nil {
			return nil, err
		}
		if x.f == nil {
			return nil, opErrorf(op, "data must be a float tensor, got %s", x.dt)
		}
		axis, err := axisAttr(op, call, len(x.shape))
		if err != nil {
			return nil, err
		}
		c := x.shape[axis]
		var ps [4]*array
		for i := range ps {
			if ps[i], err = argArray(op, args, i+1); err != nil {
				return nil, err
			}
			if len(ps[i].shape) != 1 || ps[i].shape[0] != c || ps[i].f == nil {
				return nil, opErrorf(op, "%s must be a float vector of %d entries, got %s%v", paramName(op, i+1), c, ps[i].dt, ps[i].shape)
			}
		}
		eps, _ := opAttr(op, call, "epsilon").(float64)
		momentum, _ := opAttr(op, call, "momentum").(float64)
		center, _ := opAttr(op, call, "center").(bool)
		scale, _ := opAttr(op, call, "scale").(bool)
		training, _ := opAttr(op, call, "training").(bool)
		stride := numElems(x.shape[axis+1:])
		mean, variance := append([]float64{}, ps[2].f...), append([]float64{}, ps[3].f...)
		if training {
			n := float64(x.size() / max(c, 1))
			sum, sq := make([]float64, c), make([]float64, c)
			for k, v := range x.f {
				sum[int64(k)/stride%c] += v
			}
			for ch := range sum {
				mean[ch] = sum[ch] / n
			}
			for k, v := range x.f {
				d := v - mean[int64(k)/stride%c]
				sq[int64(k)/stride%c] += d * d
			}
			for ch := range sq {
				variance[ch] = sq[ch] / n
			}
		}
		out := newArray(x.dt, x.shape)
		for k, v := range x.f {
			ch := int64(k) / stride % c
			y := (v - mean[ch]) / math.Sqrt(variance[ch]+eps)
			if scale {
				y *= ps[0].f[ch]
			}
			if center {
				y += ps[1].f[ch]
			}
			out.setFloat(int64(k), y)
		}
		newMean, newVar := newArray(x.dt, []int64{c}), newArray(x.dt, []int64{c})
		for ch := range c {
			m, v := ps[2].f[ch], ps[3].f[ch]
			if training {
				m = (1-momentum)*m + momentum*mean[ch]
				v = (1-momentum)*v + momentum*variance[ch]
			}
			newMean.setFloat(ch, m)
			newVar.setFloat(ch, v)
		}
		var res Tuple
		for _, a := range []*array{out, newMean, newVar} {
			t, err := a.tensor()
			if err != nil {
				return nil, err
			}
			res = append(res, t)
		}
		return res, nil
	}
	legalize := func(k *Kernel, call *ir.Call) error {
		ti, ok := call.StructInfo().(*ir.TupleInfo)
		if !ok || len(ti.Fields) != 3 {
			return ErrNotLegalizable
		}
		a, err := k.Input(call.Args[0], "A")
		if err != nil {
			return err
		}
		var ps [4]*ir.Buffer
		for i := range ps {
			if ps[i], err = k.Input(call.Args[i+1], string(rune('B'+i))); err != nil {
				return err
			}
		}
		axis, err := axisAttr(op, call, len(a.Shape))
		if err != nil {
			return err
		}
		var outs [3]*ir.Buffer
		for i, name := range []string{"T_batch_norm", "T_moving_mean", "T_moving_var"} {
			if outs[i], err = k.OutputOf(name, ti.Fields[i]); err != nil {
				return err
			}
		}
		eps, _ := opAttr(op, call, "epsilon").(float64)
		momentum, _ := opAttr(op, call, "momentum").(float64)
		center, _ := opAttr(op, call, "center").(bool)
		scale, _ := opAttr(op, call, "scale").(bool)
		training, _ := opAttr(op, call, "training").(bool)
		dt := a.DType
		ch := []ir.PrimExpr{a.Shape[axis]}
		mean, variance := ps[2], ps[3]
		if training {
			reduced := make([]bool, len(a.Shape))
			var extents []ir.PrimExpr
			count := ir.PrimExpr(ir.I64(1))
			for i := range reduced {
				if i != axis {
					reduced[i] = true
					extents = append(extents, a.Shape[i])
					count = ir.Mul(count, a.Shape[i])
				}
			}
			n := castTo(dt, ir.Simplify(count))
			sum := k.Alloc("T_batch_norm_sum", dt, ch)
			k.Reduce("T_batch_norm_sum", sum, "ax", extents, constOf(dt, 0), func(s, r []ir.PrimExpr, acc ir.PrimExpr) ir.PrimExpr {
				return ir.NewBinary(ir.OpAdd, acc, Load(a, reduceIndex(reduced, false, s, r)))
			})
			mean = k.Alloc("T_batch_norm_mean", dt, ch)
			k.Compute("T_batch_norm_mean", mean, "ax", func(v []ir.PrimExpr) ir.PrimExpr {
				return ir.NewBinary(ir.OpDiv, Load(sum, v), n)
			})
			sq := k.Alloc("T_batch_norm_sqsum", dt, ch)
			k.Reduce("T_batch_norm_sqsum", sq, "ax", extents, constOf(dt, 0), func(s, r []ir.PrimExpr, acc ir.PrimExpr) ir.PrimExpr {
				d := ir.NewBinary(ir.OpSub, Load(a, reduceIndex(reduced, false, s, r)), Load(mean, s))
				return ir.NewBinary(ir.OpAdd, acc, ir.NewBinary(ir.OpMul, d, d))
			})
			variance = k.Alloc("T_batch_norm_var", dt, ch)
			k.Compute("T_batch_norm_var", variance, "ax", func(v []ir.PrimExpr) ir.PrimExpr {
				return ir.NewBinary(ir.OpDiv, Load(sq, v), n)
			})
		}
		k.Compute("T_batch_norm", outs[0], "ax", func(v []ir.PrimExpr) ir.PrimExpr {
			c := []ir.PrimExpr{v[axis]}
			y := ir.NewBinary(ir.OpDiv, ir.NewBinary(ir.OpSub, Load(a, v), Load(mean, c)),
				intrinsic("sqrt", dt, ir.NewBinary(ir.OpAdd, Load(variance, c), constOf(dt, eps))))
			if scale {
				y = ir.NewBinary(ir.OpMul, y, Load(ps[0], c))
			}
			if center {
				y = ir.NewBinary(ir.OpAdd, y, Load(ps[1], c))
			}
			return y
		})
		for i, src := range []*ir.Buffer{mean, variance} {
			moving := ps[2+i]
			k.Compute(outs[1+i].Name, outs[1+i], "ax", func(v []ir.PrimExpr) ir.PrimExpr {
				if !training {
					return Load(moving, v)
				}
				return ir.NewBinary(ir.OpAdd, ir.NewBinary(ir.OpMul, constOf(dt, 1-momentum), Load(moving, v)),
					ir.NewBinary(ir.OpMul, constOf(dt, momentum), Load(src, v)))
			})
		}
		return nil
	}
	return Def{Op: op, Eval: eval, Legalize: legalize, Layout: layoutBatchNorm}
}

// --- group_norm ---------------------------------------------------------------------

func newGroupNormOp() Def {
	op := &ir.Op{Name: "relax.nn.group_norm", Doc: "Group normalization: channels split into num_groups, each normalized over its channels and axes.",
		Pure: true, Category: ir.CatTensor, Pattern: ir.PatternOutEWiseFusable,
		Params: []ir.Param{{Name: "data", Kind: ir.ArgExpr}, {Name: "gamma", Kind: ir.ArgExpr}, {Name: "beta", Kind: ir.ArgExpr},
			{Name: "num_groups", Kind: ir.AttrInt}, {Name: "channel_axis", Kind: ir.AttrInt}, {Name: "axes", Kind: ir.AttrInts},
			{Name: "epsilon", Kind: ir.AttrFloat, Default: 1e-5},
			{Name: "center", Kind: ir.AttrBool, Default: true}, {Name: "scale", Kind: ir.AttrBool, Default: true}}}
	// attrs resolves num_groups, the channel axis and the reduced axes
	// against rank n.
	attrs := func(call *ir.Call, n int) (groups int64, channel int, reduced []bool, err error) {
		groups, _, err = opAttrInt(op, call, "num_groups")
		if err != nil {
			return
		}
		if groups <= 0 {
			return 0, 0, nil, opErrorf(op, "num_groups must be positive, got %d", groups)
		}
		cv, _, err := opAttrInt(op, call, "channel_axis")
		if err != nil {
			return
		}
		if channel, err = normAxis(op, cv, n); err != nil {
			return
		}
		axes, _, err := opAttrInts(op, call, "axes")
		if err != nil {
			return
		}
		reduced = make([]bool, n)
		for _, a := range axes {
			var i int
			if i, err = normAxis(op, a, n); err != nil {
				return
			}
			if i == channel {
				return 0, 0, nil, opErrorf(op, "axes must not contain the channel axis %d", channel)
			}
			if reduced[i] {
				return 0, 0, nil, opErrorf(op, "axis %d appears twice in axes", a)
			}
			reduced[i] = true
		}
		return
	}
	op.Infer = func(_ *ir.InferCtx, call *ir.Call) (ir.StructInfo, error) {
		if err := opCheckArity(op, call); err != nil {
			return nil, err
		}
		x, err := firstTensorArg(op, call)
		if err != nil {
			return nil, err
		}
		if err := requireFloat(op, x.DType); err != nil {
			return nil, err
		}
		if x.NDim < 0 {
			return x, nil
		}
		groups, channel, _, err := attrs(call, x.NDim)
		if err != nil {
			return nil, err
		}
		dims, ok := x.Dims()
		if ok {
			if c, ok := ir.IntValue(dims[channel]); ok && c%groups != 0 {
				return nil, opErrorf(op, "%d channels do not split into num_groups=%d groups", c, groups)
			}
		}
		for i := 1; i <= 2; i++ {
			p, err := tensorArg(op, call, i)
			if err != nil {
				return nil, err
			}
			if _, err := unifyDType(op, x.DType, p.DType); err != nil {
				return nil, err
			}
			if p.NDim >= 0 && p.NDim != 1 {
				return nil, opErrorf(op, "%s must be 1-D, got rank %d", opArgName(op, i), p.NDim)
			}
			if d, okP := p.Dims(); okP && ok && dimsProvablyDiffer(d[0], dims[channel]) {
				return nil, opErrorf(op, "%s has %s entries but data has %s channels", opArgName(op, i), fmtDim(d[0]), fmtDim(dims[channel]))
			}
		}
		return x, nil
	}
	op.Normalize = schemaNormalize(op)
	eval := func(call *ir.Call, args []Value) (Value, error) {
		x, err := argArray(op, args, 0)
		if err != nil {
			return nil, err
		}
		if x.f == nil {
			return nil, opErrorf(op, "data must be a float tensor, got %s", x.dt)
		}
		groups, channel, reduced, err := attrs(call, len(x.shape))
		if err != nil {
			return nil, err
		}
		c := x.shape[channel]
		if c%groups != 0 {
			return nil, opErrorf(op, "%d channels do not split into num_groups=%d groups", c, groups)
		}
		var ps [2]*array
		for i := range ps {
			if ps[i], err = argArray(op, args, i+1); err != nil {
				return nil, err
			}
			if len(ps[i].shape) != 1 || ps[i].shape[0] != c || ps[i].f == nil {
				return nil, opErrorf(op, "%s must be a float vector of %d entries, got %s%v", paramName(op, i+1), c, ps[i].dt, ps[i].shape)
			}
		}
		eps, _ := opAttr(op, call, "epsilon").(float64)
		center, _ := opAttr(op, call, "center").(bool)
		scale, _ := opAttr(op, call, "scale").(bool)
		kept := groupShape(x.shape, channel, groups, reduced)
		per := c / groups
		idx, kidx := make([]int64, len(x.shape)), make([]int64, len(x.shape))
		key := func(k int64) int64 {
			unravel(k, x.shape, idx)
			for i := range idx {
				switch {
				case i == channel:
					kidx[i] = idx[i] / per
				case reduced[i]:
					kidx[i] = 0
				default:
					kidx[i] = idx[i]
				}
			}
			return flatIndex(kidx, kept)
		}
		ng := numElems(kept)
		sum, sq, cnt := make([]float64, ng), make([]float64, ng), make([]float64, ng)
		for k, v := range x.f {
			g := key(int64(k))
			sum[g] += v
			cnt[g]++
		}
		for k, v := range x.f {
			g := key(int64(k))
			d := v - sum[g]/cnt[g]
			sq[g] += d * d
		}
		out := newArray(x.dt, x.shape)
		for k, v := range x.f {
			g := key(int64(k))
			ch := idx[channel]
			y := (v - sum[g]/cnt[g]) / math.Sqrt(sq[g]/cnt[g]+eps)
			if scale {
				y *= ps[0].f[ch]
			}
			if center {
				y += ps[1].f[ch]
			}
			out.setFloat(int64(k), y)
		}
		return out.tensor()
	}
	legalize := func(k *Kernel, call *ir.Call) error {
		a, err := k.Input(call.Args[0], "A")
		if err != nil {
			return err
		}
		gamma, err := k.Input(call.Args[1], "B")
		if err != nil {
			return err
		}
		beta, err := k.Input(call.Args[2], "C")
		if err != nil {
			return err
		}
		groups, channel, reduced, err := attrs(call, len(a.Shape))
		if err != nil {
			return err
		}
		out, err := k.Output("T_group_norm")
		if err != nil {
			return err
		}
		eps, _ := opAttr(op, call, "epsilon").(float64)
		center, _ := opAttr(op, call, "center").(bool)
		scale, _ := opAttr(op, call, "scale").(bool)
		dt := a.DType
		per := ir.Simplify(ir.FloorDiv(a.Shape[channel], ir.I64(groups)))
		kept := make([]ir.PrimExpr, len(a.Shape))
		extents := []ir.PrimExpr{per}
		count := per
		for i, d := range a.Shape {
			switch {
			case i == channel:
				kept[i] = ir.I64(groups)
			case reduced[i]:
				kept[i] = ir.I64(1)
				extents = append(extents, d)
				count = ir.Mul(count, d)
			default:
				kept[i] = d
			}
		}
		n := castTo(dt, ir.Simplify(count))
		// data index of group element (s: group index, r: reduction index).
		at := func(s, r []ir.PrimExpr) []ir.PrimExpr {
			idx := make([]ir.PrimExpr, len(s))
			j := 1
			for i := range s {
				switch {
				case i == channel:
					idx[i] = ir.Add(ir.Mul(s[i], per), r[0])
				case reduced[i]:
					idx[i] = r[j]
					j++
				default:
					idx[i] = s[i]
				}
			}
			return idx
		}
		group := func(v []ir.PrimExpr) []ir.PrimExpr {
			g := make([]ir.PrimExpr, len(v))
			for i := range v {
				switch {
				case i == channel:
					g[i] = ir.FloorDiv(v[i], per)
				case reduced[i]:
					g[i] = ir.I64(0)
				default:
					g[i] = v[i]
				}
			}
			return g
		}
		sum := k.Alloc("T_group_norm_sum", dt, kept)
		k.Reduce("T_group_norm_sum", sum, "ax", extents, constOf(dt, 0), func(s, r []ir.PrimExpr, acc ir.PrimExpr) ir.PrimExpr {
			return ir.NewBinary(ir.OpAdd, acc, Load(a, at(s, r)))
		})
		sq := k.Alloc("T_group_norm_sqsum", dt, kept)
		k.Reduce("T_group_norm_sqsum", sq, "ax", extents, constOf(dt, 0), func(s, r []ir.PrimExpr, acc ir.PrimExpr) ir.PrimExpr {
			d := ir.NewBinary(ir.OpSub, Load(a, at(s, r)), ir.NewBinary(ir.OpDiv, Load(sum, s), n))
			return ir.NewBinary(ir.OpAdd, acc, ir.NewBinary(ir.OpMul, d, d))
		})
		k.Compute("T_group_norm", out, "ax", func(v []ir.PrimExpr) ir.PrimExpr {
			g := group(v)
			c := []ir.PrimExpr{v[channel]}
			y := ir.NewBinary(ir.OpDiv, ir.NewBinary(ir.OpSub, Load(a, v), ir.NewBinary(ir.OpDiv, Load(sum, g), n)),
				intrinsic("sqrt", dt, ir.NewBinary(ir.OpAdd, ir.NewBinary(ir.OpDiv, Load(sq, g), n), constOf(dt, eps))))
			if scale {
				y = ir.NewBinary(ir.OpMul, y, Load(gamma, c))
			}
			if center {
				y = ir.NewBinary(ir.OpAdd, y, Load(beta, c))
			}
			return y
		})
		return nil
	}
	return Def{Op: op, Eval: eval, Legalize: legalize, Layout: layoutNorm(2, true), MixedPrecision: mixedFollow}
}

// groupShape is the shape of the per-group statistics: num_groups along
// the channel axis, 1 along reduced axes, the data's extent elsewhere.
func groupShape(shape []int64, channel int, groups int64, reduced []bool) []int64 {
	kept := make([]int64, len(shape))
	for i, d := range shape {
		switch {
		case i == channel:
			kept[i] = groups
		case reduced[i]:
			kept[i] = 1
		default:
			kept[i] = d
		}
	}
	return kept
}

// --- dropout ------------------------------------------------------------------------------

func newDropoutOp() Def {
	op := &ir.Op{Name: "relax.nn.dropout", Doc: "Dropout: (output, mask); the identity and a mask of ones in inference mode.",
		Pure: true, Category: ir.CatTensor, Pattern: ir.PatternOpaque,
		Params: []ir.Param{{Name: "data", Kind: ir.ArgExpr}, {Name: "rate", Kind: ir.AttrFloat, Default: 0.5}}}
	op.Infer = func(_ *ir.InferCtx, call *ir.Call) (ir.StructInfo, error) {
		x, err := firstTensorArg(op, call)
		if err != nil {
			return nil, err
		}
		if err := requireFloat(op, x.DType); err != nil {
			return nil, err
		}
		if r, _ := opAttr(op, call, "rate").(float64); r < 0 || r >= 1 {
			return nil, opErrorf(op, "rate must be in [0, 1), got %v", r)
		}
		return ir.NewTupleInfo(x, x), nil
	}
	op.Normalize = schemaNormalize(op)
	eval := func(call *ir.Call, args []Value) (Value, error) {
		x, err := argArray(op, args, 0)
		if err != nil {
			return nil, err
		}
		if x.f == nil {
			return nil, opErrorf(op, "data must be a float tensor, got %s", x.dt)
		}
		mask := newArray(x.dt, x.shape)
		for k := range mask.f {
			mask.f[k] = 1
		}
		out, err := x.tensor()
		if err != nil {
			return nil, err
		}
		m, err := mask.tensor()
		if err != nil {
			return nil, err
		}
		return Tuple{out, m}, nil
	}
	legalize := func(k *Kernel, call *ir.Call) error {
		ti, ok := call.StructInfo().(*ir.TupleInfo)
		if !ok || len(ti.Fields) != 2 {
			return ErrNotLegalizable
		}
		a, err := k.Input(call.Args[0], "A")
		if err != nil {
			return err
		}
		out, err := k.OutputOf("T_dropout", ti.Fields[0])
		if err != nil {
			return err
		}
		mask, err := k.OutputOf("T_dropout_mask", ti.Fields[1])
		if err != nil {
			return err
		}
		k.Compute("T_dropout", out, "ax", func(v []ir.PrimExpr) ir.PrimExpr { return Load(a, v) })
		k.Compute("T_dropout_mask", mask, "ax", func([]ir.PrimExpr) ir.PrimExpr { return constOf(mask.DType, 1) })
		return nil
	}
	return Def{Op: op, Eval: eval, Legalize: legalize, Layout: layoutDropout, MixedPrecision: mixedFollow}
}
