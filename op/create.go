package op

import (
	"math"

	"github.com/phasec/phasec/ir"
)

// Creation ops with scalar operands (TVM's create.py and one_hot from
// manipulate.py; src/relax/op/tensor/create.cc, manipulate.cc): arange,
// eye, one_hot. Their scalar operands are R.prim_value arguments, possibly
// symbolic.

var (
	// Arange is R.arange(start, end=None, step=1, dtype=None): with one
	// argument it is the end and start is 0.
	Arange = Define(newArangeOp())
	// Eye is R.eye(n, m=None, k=0, dtype="float32"): ones on diagonal k.
	Eye = Define(newEyeOp())
	// OneHot is R.one_hot(indices, on_value, off_value, depth, axis=-1).
	OneHot = Define(newOneHotOp())
)

// primArg returns the PrimExpr of argument i, which must be an
// R.prim_value (or a variable of R.Prim struct info with a known value).
func primArg(op *ir.Op, call *ir.Call, i int) (ir.PrimExpr, error) {
	if i >= len(call.Args) {
		return nil, opErrorf(op, "missing argument %s", opArgName(op, i))
	}
	if pv, ok := call.Args[i].(*ir.PrimValue); ok {
		return pv.Value, nil
	}
	if p, ok := argStructInfo(call.Args[i]).(*ir.PrimInfo); ok && p.Value != nil {
		return p.Value, nil
	}
	return nil, opErrorf(op, "%s must be an R.prim_value, got %s", opArgName(op, i), sinfoKind(argStructInfo(call.Args[i])))
}

func primArgValue(op *ir.Op, args []Value, i int) (Prim, error) {
	if i < len(args) {
		if p, ok := args[i].(Prim); ok {
			return p, nil
		}
	}
	return Prim{}, opErrorf(op, "%s must be a scalar", paramName(op, i))
}

// --- arange ---------------------------------------------------------------------

func newArangeOp() Def {
	op := &ir.Op{Name: "relax.arange", Doc: "Evenly spaced values start, start+step, ... below end.", Pure: true, Category: ir.CatTensor, Pattern: ir.PatternOpaque,
		Params: []ir.Param{{Name: "start", Kind: ir.ArgPrimValue}, {Name: "end", Kind: ir.ArgPrimValue, Optional: true},
			{Name: "step", Kind: ir.ArgPrimValue, Optional: true},
			{Name: "dtype", Kind: ir.AttrDType, Optional: true}}}
	op.Normalize = func(_ *ir.InferCtx, call *ir.Call) (ir.Expr, error) {
		c, err := normalizeSchema(op, call)
		if err != nil {
			return nil, err
		}
		args := c.Args
		switch len(args) {
		case 1: // R.arange(end)
			args = []ir.Expr{ir.NewPrimValue(ir.I64(0)), args[0], ir.NewPrimValue(ir.I64(1))}
		case 2:
			args = []ir.Expr{args[0], args[1], ir.NewPrimValue(ir.I64(1))}
		}
		dt, _ := opAttrDType(op, c, "dtype")
		if len(args) == len(c.Args) && !dt.IsVoid() {
			return c, nil
		}
		cp := *c
		cp.SetStructInfo(nil)
		cp.Args = args
		if dt.IsVoid() {
			cp.Attrs = copyAttrsOnce(nil, c.Attrs)
			cp.Attrs["dtype"] = arangeDType(op, &cp)
		}
		return &cp, nil
	}
	norm := op.Normalize
	op.Infer = func(ctx *ir.InferCtx, call *ir.Call) (ir.StructInfo, error) {
		// Inference runs before Normalize: infer the canonical form.
		e, err := norm(ctx, call)
		if err != nil {
			return nil, err
		}
		call = e.(*ir.Call)
		if len(call.Args) != 3 {
			return nil, opErrorf(op, "takes start, end and step, got %d arguments", len(call.Args))
		}
		var v [3]ir.PrimExpr
		for i := range v {
			var err error
			if v[i], err = primArg(op, call, i); err != nil {
				return nil, err
			}
		}
		dt, err := opAttrDType(op, call, "dtype")
		if err != nil {
			return nil, err
		}
		if dt.IsVoid() {
			dt = arangeDType(op, call)
		}
		start, end, step := v[0], v[1], v[2]
		allInt := !start.DType().IsFloat() && !end.DType().IsFloat() && !step.DType().IsFloat()
		if allInt {
			if s, ok := ir.IntValue(step); ok {
				if s == 0 {
					return nil, opErrorf(op, "step must be nonzero")
				}
				a, okA := ir.IntValue(start)
				b, okB := ir.IntValue(end)
				if okA && okB {
					return newTensor(dt, []ir.PrimExpr{ir.I64(arangeCount(float64(a), float64(b), float64(s)))}, true, 1), nil
				}
				if s > 0 { // TVM's floordiv(end - start + step - 1, step)
					return newTensor(dt, []ir.PrimExpr{ir.Simplify(ir.FloorDiv(ir.Add(ir.Sub(end, start), ir.I64(s-1)), ir.I64(s)))}, true, 1), nil
				}
			}
			return ir.TensorInfoNDim(dt, 1), nil
		}
		f := func(e ir.PrimExpr) (float64, bool) {
			switch c := e.(type) {
			case *ir.FloatImm:
				return c.Value, true
			case *ir.IntImm:
				return float64(c.Value), true
			}
			return 0, false
		}
		a, okA := f(start)
		b, okB := f(end)
		s, okS := f(step)
		if okS && s == 0 {
			return nil, opErrorf(op, "step must be nonzero")
		}
		if okA && okB && okS {
			return newTensor(dt, []ir.PrimExpr{ir.I64(arangeCount(a, b, s))}, true, 1), nil
		}
		return ir.TensorInfoNDim(dt, 1), nil
	}
	eval := func(call *ir.Call, args []Value) (Value, error) {
		var p [3]Prim
		for i := range p {
			var err error
			if p[i], err = primArgValue(op, args, i); err != nil {
				return nil, err
			}
		}
		dt, err := opAttrDType(op, call, "dtype")
		if err != nil || dt.IsVoid() {
			return nil, opErrorf(op, "needs a dtype")
		}
		allInt := !p[0].DType.IsFloat() && !p[1].DType.IsFloat() && !p[2].DType.IsFloat()
		if p[2].Float() == 0 {
			return nil, opErrorf(op, "step must be nonzero")
		}
		n := arangeCount(p[0].Float(), p[1].Float(), p[2].Float())
		if allInt {
			n = arangeCount(float64(p[0].I), float64(p[1].I), float64(p[2].I))
		}
		if err := CheckSize([]int64{n}); err != nil {
			return nil, opErrorf(op, "%v", err)
		}
		out := newArray(dt, []int64{n})
		for i := range n {
			if allInt {
				out.setInt(i, p[0].I+i*p[2].I)
			} else {
				out.setFloat(i, p[0].Float()+float64(i)*p[2].Float())
			}
		}
		return out.tensor()
	}
	legalize := func(k *Kernel, call *ir.Call) error {
		var v [3]ir.PrimExpr
		for i := range v {
			pv, ok := call.Args[i].(*ir.PrimValue)
			if !ok {
				return ErrNotLegalizable
			}
			v[i] = k.Dim(pv.Value)
		}
		out, err := k.Output("T_arange")
		if err != nil {
			return err
		}
		ct := ir.Int64
		for _, x := range v {
			if x.DType().IsFloat() {
				ct = ir.Float64
			}
		}
		k.Compute("T_arange", out, "ax", func(i []ir.PrimExpr) ir.PrimExpr {
			return castTo(out.DType, ir.Add(castTo(ct, v[0]), ir.Mul(castTo(ct, v[2]), castTo(ct, i[0]))))
		})
		return nil
	}
	return Def{Op: op, Eval: eval, Legalize: legalize,
		MixedPrecision: mixedFollow}
}

// arangeDType is R.arange's default dtype: int64 when every operand is an
// integer, else float32.
func arangeDType(op *ir.Op, call *ir.Call) ir.DataType {
	for i := range call.Args {
		if v, err := primArg(op, call, i); err == nil && v.DType().IsFloat() {
			return ir.Float32
		}
	}
	return ir.Int64
}

// arangeCount is ceil((end - start) / step), at least 0.
func arangeCount(start, end, step float64) int64 {
	return max(0, int64(math.Ceil((end-start)/step)))
}

// --- eye ---------------------------------------------------------------------------

func newEyeOp() Def {
	op := &ir.Op{Name: "relax.eye", Doc: "A 2-D tensor with ones on diagonal k and zeros elsewhere.", Pure: true, Category: ir.CatTensor, Pattern: ir.PatternElemWise,
		Params: []ir.Param{{Name: "n", Kind: ir.ArgPrimValue}, {Name: "m", Kind: ir.ArgPrimValue, Optional: true},
			{Name: "k", Kind: ir.ArgPrimValue, Optional: true},
			{Name: "dtype", Kind: ir.AttrDType, Default: ir.Float32}}}
	op.Normalize = func(_ *ir.InferCtx, call *ir.Call) (ir.Expr, error) {
		c, err := normalizeSchema(op, call)
		if err != nil || len(c.Args) == 3 || len(c.Args) == 0 {
			return c, err
		}
		cp := *c
		cp.SetStructInfo(nil)
		if len(c.Args) == 1 { // m defaults to n
			m := c.Args[0]
			if pv, ok := m.(*ir.PrimValue); ok {
				m = ir.NewPrimValue(pv.Value)
			}
			cp.Args = append(cp.Args[:1:1], m)
		}
		cp.Args = append(cp.Args[:2:2], ir.NewPrimValue(ir.I64(0)))
		return &cp, nil
	}
	norm := op.Normalize
	op.Infer = func(ctx *ir.InferCtx, call *ir.Call) (ir.StructInfo, error) {
		e, err := norm(ctx, call)
		if err != nil {
			return nil, err
		}
		call = e.(*ir.Call)
		if len(call.Args) != 3 {
			return nil, opErrorf(op, "takes n, m and k, got %d arguments", len(call.Args))
		}
		var v [3]ir.PrimExpr
		for i := range v {
			var err error
			if v[i], err = primArg(op, call, i); err != nil {
				return nil, err
			}
			if !v[i].DType().IsInt() && !v[i].DType().IsUInt() {
				return nil, opErrorf(op, "%s must be an integer, got %s", opArgName(op, i), v[i].DType())
			}
		}
		for i := range 2 {
			if provablyNegative(v[i]) {
				return nil, opErrorf(op, "%s must be non-negative, got %s", opArgName(op, i), fmtDim(v[i]))
			}
		}
		dt, err := opAttrDType(op, call, "dtype")
		if err != nil {
			return nil, err
		}
		return newTensor(dt, []ir.PrimExpr{castTo(ir.Int64, v[0]), castTo(ir.Int64, v[1])}, true, 2), nil
	}
	eval := func(call *ir.Call, args []Value) (Value, error) {
		var p [3]Prim
		for i := range p {
			var err error
			if p[i], err = primArgValue(op, args, i); err != nil {
				return nil, err
			}
		}
		dt, err := opAttrDType(op, call, "dtype")
		if err != nil {
			return nil, err
		}
		shape := []int64{p[0].I, p[1].I}
		if err := CheckSize(shape); err != nil {
			return nil, opErrorf(op, "%v", err)
		}
		out := newArray(dt, shape)
		for i := range shape[0] {
			if j := i + p[2].I; j >= 0 && j < shape[1] {
				out.setInt(i*shape[1]+j, 1)
			}
		}
		return out.tensor()
	}
	legalize := func(k *Kernel, call *ir.Call) error {
		pv, ok := call.Args[2].(*ir.PrimValue)
		if !ok {
			return ErrNotLegalizable
		}
		diag := castTo(ir.Int64, k.Dim(pv.Value))
		out, err := k.Output("T_eye")
		if err != nil {
			return err
		}
		k.Compute("T_eye", out, "ax", func(v []ir.PrimExpr) ir.PrimExpr {
			return intrinsic("if_then_else", out.DType, ir.NewBinary(ir.OpEQ, ir.Add(v[0], diag), v[1]), constOf(out.DType, 1), constOf(out.DType, 0))
		})
		return nil
	}
	return Def{Op: op, Eval: eval, Legalize: legalize,
		MixedPrecision: mixedFollow}
}

// --- one_hot ---------------------------------------------------------------------------

func newOneHotOp() Def {
	op := &ir.Op{Name: "relax.one_hot", Doc: "on_value where indices equals the position along a new axis of length depth, else off_value.",
		Pure: true, Category: ir.CatTensor, Pattern: ir.PatternOutEWiseFusable,
		Params: []ir.Param{{Name: "indices", Kind: ir.ArgExpr}, {Name: "on_value", Kind: ir.ArgPrimValue}, {Name: "off_value", Kind: ir.ArgPrimValue},
			{Name: "depth", Kind: ir.AttrInt}, {Name: "axis", Kind: ir.AttrInt, Default: int64(-1)}}}
	attrs := func(call *ir.Call, ndim int) (depth int64, axis int, err error) {
		depth, _, err = opAttrInt(op, call, "depth")
		if err != nil {
			return
		}
		if depth <= 0 {
			return 0, 0, opErrorf(op, "depth must be positive, got %d", depth)
		}
		a, _, err := opAttrInt(op, call, "axis")
		if err != nil {
			return
		}
		if a == -1 {
			a = int64(ndim)
		}
		if a < 0 || a > int64(ndim) {
			return 0, 0, opErrorf(op, "axis %d is out of range for indices of rank %d", a, ndim)
		}
		return depth, int(a), nil
	}
	op.Infer = func(_ *ir.InferCtx, call *ir.Call) (ir.StructInfo, error) {
		t, err := firstTensorArg(op, call)
		if err != nil {
			return nil, err
		}
		if !t.DType.IsVoid() && !t.DType.IsInt() && !t.DType.IsUInt() {
			return nil, opErrorf(op, "indices must be an integer tensor, got %s", t.DType)
		}
		var dts [2]ir.DataType
		for i := range dts {
			s, ok := argStructInfo(call.Args[1+i]).(*ir.PrimInfo)
			if !ok {
				return nil, opErrorf(op, "%s must be a scalar, got %s", opArgName(op, 1+i), sinfoKind(argStructInfo(call.Args[1+i])))
			}
			dts[i] = s.DType
		}
		if dts[0] != dts[1] {
			return nil, opErrorf(op, "on_value and off_value must have one dtype, got %s and %s", dts[0], dts[1])
		}
		if t.NDim < 0 {
			if _, _, err := opAttrInt(op, call, "depth"); err != nil {
				return nil, err
			}
			return ir.TensorInfoNDim(dts[0], -1), nil
		}
		depth, axis, err := attrs(call, t.NDim)
		if err != nil {
			return nil, err
		}
		dims, ok := t.Dims()
		if !ok {
			return ir.TensorInfoNDim(dts[0], t.NDim+1), nil
		}
		return newTensor(dts[0], insertAt(dims, axis, ir.I64(depth)), true, t.NDim+1), nil
	}
	op.Normalize = schemaNormalize(op)
	eval := func(call *ir.Call, args []Value) (Value, error) {
		x, err := argArray(op, args, 0)
		if err != nil {
			return nil, err
		}
		if x.f != nil {
			return nil, opErrorf(op, "indices must be an integer tensor, got %s", x.dt)
		}
		on, err := primArgValue(op, args, 1)
		if err != nil {
			return nil, err
		}
		off, err := primArgValue(op, args, 2)
		if err != nil {
			return nil, err
		}
		depth, axis, err := attrs(call, len(x.shape))
		if err != nil {
			return nil, err
		}
		shape := append(append(append([]int64{}, x.shape[:axis]...), depth), x.shape[axis:]...)
		if err := CheckSize(shape); err != nil {
			return nil, opErrorf(op, "%v", err)
		}
		onA, offA := newArray(on.DType, nil), newArray(on.DType, nil)
		onA.setFloat(0, on.Float())
		offA.setFloat(0, off.Float())
		if onA.f == nil {
			onA.i[0], offA.i[0] = on.I, off.I
		}
		out := newArray(on.DType, shape)
		idx := make([]int64, len(shape))
		in := make([]int64, len(x.shape))
		for k := range out.size() {
			unravel(k, shape, idx)
			copy(in, idx[:axis])
			copy(in[axis:], idx[axis+1:])
			src := offA
			if x.i[flatIndex(in, x.shape)] == idx[axis] {
				src = onA
			}
			out.copyElem(k, src, 0)
		}
		return out.tensor()
	}
	legalize := func(k *Kernel, call *ir.Call) error {
		a, err := k.Input(call.Args[0], "A")
		if err != nil {
			return err
		}
		_, axis, err := attrs(call, len(a.Shape))
		if err != nil {
			return err
		}
		var vals [2]ir.PrimExpr
		for i := range vals {
			pv, ok := call.Args[1+i].(*ir.PrimValue)
			if !ok {
				return ErrNotLegalizable
			}
			vals[i] = k.Dim(pv.Value)
		}
		out, err := k.Output("T_one_hot")
		if err != nil {
			return err
		}
		k.Compute("T_one_hot", out, "ax", func(v []ir.PrimExpr) ir.PrimExpr {
			in := append(append([]ir.PrimExpr{}, v[:axis]...), v[axis+1:]...)
			eq := ir.NewBinary(ir.OpEQ, castTo(ir.Int64, Load(a, in)), v[axis])
			return intrinsic("if_then_else", out.DType, eq, castTo(out.DType, vals[0]), castTo(out.DType, vals[1]))
		})
		return nil
	}
	return Def{Op: op, Eval: eval, Legalize: legalize}
}
