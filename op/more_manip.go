package op

import (
	"strconv"

	"github.com/phasec/phasec/ir"
)

// More manipulation and linear-algebra ops (TVM's manipulate.py and
// linear_algebra.py): stack, tile, repeat, outer; and the scans cumsum and
// cumprod (statistical.py).

var (
	// Stack is R.stack(tensors, axis=0): the tensors joined along a new axis.
	Stack = Define(newStackOp())
	// Tile is R.tile(data, repeats): data repeated repeats[i] times along
	// each axis (numpy.tile).
	Tile = Define(newTileOp())
	// Repeat is R.repeat(data, repeats, axis=None): each element repeated
	// (of the flattened data when axis is None).
	Repeat = Define(newRepeatOp())
	// Outer is R.outer(x1, x2): the outer product of two vectors.
	Outer = Define(newOuterOp())
	// Cumsum is R.cumsum(data, axis=None, dtype=None, exclusive=False).
	Cumsum = Define(newScanOp("relax.cumsum", "Cumulative sum along axis (of the flattened data when None)."))
	// Cumprod is R.cumprod(data, axis=None, dtype=None, exclusive=False).
	Cumprod = Define(newScanOp("relax.cumprod", "Cumulative product along axis (of the flattened data when None)."))
)

func newStackOp() Def {
	op := &ir.Op{Name: "relax.stack", Doc: "Joins a tuple of same-shaped tensors along a new axis.", Pure: true, Category: ir.CatTensor, Pattern: ir.PatternInjective,
		Params: []ir.Param{{Name: "tensors", Kind: ir.ArgTuple}, {Name: "axis", Kind: ir.AttrInt, Default: int64(0)}}}
	op.Infer = func(_ *ir.InferCtx, call *ir.Call) (ir.StructInfo, error) {
		if err := opCheckArity(op, call); err != nil {
			return nil, err
		}
		infos := argListInfos(call.Args[0])
		if len(infos) == 0 {
			return nil, opErrorf(op, "needs at least one tensor")
		}
		first, ok := infos[0].(*ir.TensorInfo)
		if !ok {
			return nil, opErrorf(op, "tensors[0] must be a tensor, got %s", sinfoKind(infos[0]))
		}
		for i, s := range infos {
			t, ok := s.(*ir.TensorInfo)
			if !ok {
				return nil, opErrorf(op, "tensors[%d] must be a tensor, got %s", i, sinfoKind(s))
			}
			if err := checkTensorMatch(op, t, first, "tensors["+itoa(i)+"]", "tensors[0]"); err != nil {
				return nil, err
			}
		}
		axisV, _, err := opAttrInt(op, call, "axis")
		if err != nil {
			return nil, err
		}
		if first.NDim < 0 {
			return ir.TensorInfoNDim(first.DType, -1), nil
		}
		axis, err := normAxis(op, axisV, first.NDim+1)
		if err != nil {
			return nil, err
		}
		dims, ok := first.Dims()
		if !ok {
			return ir.TensorInfoNDim(first.DType, first.NDim+1), nil
		}
		out := append(append(append([]ir.PrimExpr{}, dims[:axis]...), ir.I64(int64(len(infos)))), dims[axis:]...)
		return newTensor(first.DType, out, true, first.NDim+1), nil
	}
	op.Normalize = func(_ *ir.InferCtx, call *ir.Call) (ir.Expr, error) { return normalizeArgTuple(op, call, 0) }
	eval := func(call *ir.Call, args []Value) (Value, error) {
		xs, err := tupleArrays(op, args, 0)
		if err != nil {
			return nil, err
		}
		if len(xs) == 0 {
			return nil, opErrorf(op, "needs at least one tensor")
		}
		axis, err := axisAttr(op, call, len(xs[0].shape)+1)
		if err != nil {
			return nil, err
		}
		for i, x := range xs {
			if x.dt != xs[0].dt || !sameDims(x.shape, xs[0].shape) {
				return nil, opErrorf(op, "tensors[%d] is %s%v but tensors[0] is %s%v", i, x.dt, x.shape, xs[0].dt, xs[0].shape)
			}
		}
		shape := append(append(append([]int64{}, xs[0].shape[:axis]...), int64(len(xs))), xs[0].shape[axis:]...)
		out := newArray(xs[0].dt, shape)
		idx := make([]int64, len(shape))
		in := make([]int64, len(shape)-1)
		for k := range out.size() {
			unravel(k, shape, idx)
			copy(in, idx[:axis])
			copy(in[axis:], idx[axis+1:])
			out.copyElem(k, xs[idx[axis]], flatIndex(in, xs[0].shape))
		}
		return out.tensor()
	}
	legalize := func(k *Kernel, call *ir.Call) error {
		tup, ok := call.Args[0].(*ir.Tuple)
		if !ok || len(tup.Fields) == 0 {
			return ErrNotLegalizable
		}
		var ins []*ir.Buffer
		for i, f := range tup.Fields {
			b, err := k.Input(f, string(rune('A'+i%26)))
			if err != nil {
				return err
			}
			ins = append(ins, b)
		}
		axis, err := axisAttr(op, call, len(ins[0].Shape)+1)
		if err != nil {
			return err
		}
		out, err := k.Output("T_stack")
		if err != nil {
			return err
		}
		k.Compute("T_stack", out, "ax", func(v []ir.PrimExpr) ir.PrimExpr {
			in := append(append([]ir.PrimExpr{}, v[:axis]...), v[axis+1:]...)
			value := Load(ins[len(ins)-1], in)
			for i := len(ins) - 2; i >= 0; i-- {
				value = intrinsic("if_then_else", out.DType, ir.NewBinary(ir.OpEQ, v[axis], ir.I64(int64(i))), Load(ins[i], in), value)
			}
			return value
		})
		return nil
	}
	return Def{Op: op, Eval: eval, Legalize: legalize, Layout: layoutStack, MixedPrecision: mixedFollow}
}

func itoa(i int) string { return strconv.Itoa(i) }

func sameDims(a, b []int64) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}

func newTileOp() Def {
	op := &ir.Op{Name: "relax.tile", Doc: "Repeats data along each axis (numpy.tile).", Pure: true, Category: ir.CatTensor, Pattern: ir.PatternBroadcast,
		Params: []ir.Param{{Name: "data", Kind: ir.ArgExpr}, {Name: "repeats", Kind: ir.AttrInts}}}
	outShape := func(dims []ir.PrimExpr, reps []int64) []ir.PrimExpr {
		n := max(len(dims), len(reps))
		out := make([]ir.PrimExpr, n)
		for i := range out {
			var d ir.PrimExpr = ir.I64(1)
			if j := i - (n - len(dims)); j >= 0 {
				d = dims[j]
			}
			r := int64(1)
			if j := i - (n - len(reps)); j >= 0 {
				r = reps[j]
			}
			out[i] = ir.Simplify(ir.Mul(d, ir.I64(r)))
		}
		return out
	}
	op.Infer = func(_ *ir.InferCtx, call *ir.Call) (ir.StructInfo, error) {
		t, err := firstTensorArg(op, call)
		if err != nil {
			return nil, err
		}
		reps, _, err := opAttrInts(op, call, "repeats")
		if err != nil {
			return nil, err
		}
		for _, r := range reps {
			if r < 0 {
				return nil, opErrorf(op, "repeats must be non-negative, got %v", reps)
			}
		}
		if t.NDim < 0 {
			return ir.TensorInfoNDim(t.DType, -1), nil
		}
		dims, ok := t.Dims()
		if !ok {
			return ir.TensorInfoNDim(t.DType, max(t.NDim, len(reps))), nil
		}
		return newTensor(t.DType, outShape(dims, reps), true, max(t.NDim, len(reps))), nil
	}
	op.Normalize = schemaNormalize(op)
	eval := func(call *ir.Call, args []Value) (Value, error) {
		x, err := argArray(op, args, 0)
		if err != nil {
			return nil, err
		}
		reps, _, err := opAttrInts(op, call, "repeats")
		if err != nil {
			return nil, err
		}
		n := max(len(x.shape), len(reps))
		in := make([]int64, n) // x's shape, padded with leading 1s
		shape := make([]int64, n)
		for i := range shape {
			in[i] = 1
			if j := i - (n - len(x.shape)); j >= 0 {
				in[i] = x.shape[j]
			}
			r := int64(1)
			if j := i - (n - len(reps)); j >= 0 {
				r = reps[j]
			}
			if r < 0 {
				return nil, opErrorf(op, "repeats must be non-negative, got %v", reps)
			}
			shape[i] = in[i] * r
		}
		if err := CheckSize(shape); err != nil {
			return nil, opErrorf(op, "%v", err)
		}
		src := make([]int64, n)
		return gather(x, shape, func(idx []int64) int64 {
			for i := range idx {
				src[i] = idx[i] % in[i]
			}
			return flatIndex(src, in)
		}).tensor()
	}
	legalize := func(k *Kernel, call *ir.Call) error {
		a, err := k.Input(call.Args[0], "A")
		if err != nil {
			return err
		}
		out, err := k.Output("T_tile")
		if err != nil {
			return err
		}
		off := len(out.Shape) - len(a.Shape)
		k.Compute("T_tile", out, "ax", func(v []ir.PrimExpr) ir.PrimExpr {
			idx := make([]ir.PrimExpr, len(a.Shape))
			for i := range idx {
				idx[i] = ir.NewBinary(ir.OpFloorMod, v[off+i], a.Shape[i])
			}
			return Load(a, idx)
		})
		return nil
	}
	return Def{Op: op, Eval: eval, Legalize: legalize, Layout: layoutTile}
}

func newRepeatOp() Def {
	op := &ir.Op{Name: "relax.repeat", Doc: "Repeats each element repeats times along axis (of the flattened data when None).",
		Pure: true, Category: ir.CatTensor, Pattern: ir.PatternBroadcast,
		Params: []ir.Param{{Name: "data", Kind: ir.ArgExpr}, {Name: "repeats", Kind: ir.AttrInt}, {Name: "axis", Kind: ir.AttrInt, Optional: true, PrintNone: true}}}
	op.Infer = func(_ *ir.InferCtx, call *ir.Call) (ir.StructInfo, error) {
		t, err := firstTensorArg(op, call)
		if err != nil {
			return nil, err
		}
		r, _, err := opAttrInt(op, call, "repeats")
		if err != nil {
			return nil, err
		}
		if r < 0 {
			return nil, opErrorf(op, "repeats must be non-negative, got %d", r)
		}
		axis, has, err := opAttrInt(op, call, "axis")
		if err != nil {
			return nil, err
		}
		dims, ok := t.Dims()
		if !has {
			if !ok {
				return ir.TensorInfoNDim(t.DType, 1), nil
			}
			return newTensor(t.DType, []ir.PrimExpr{ir.Simplify(ir.Mul(shapeProduct(dims), ir.I64(r)))}, true, 1), nil
		}
		if t.NDim < 0 {
			return ir.TensorInfoNDim(t.DType, -1), nil
		}
		a, err := normAxis(op, axis, t.NDim)
		if err != nil {
			return nil, err
		}
		if !ok {
			return ir.TensorInfoNDim(t.DType, t.NDim), nil
		}
		out := append([]ir.PrimExpr{}, dims...)
		out[a] = ir.Simplify(ir.Mul(dims[a], ir.I64(r)))
		return newTensor(t.DType, out, true, t.NDim), nil
	}
	op.Normalize = schemaNormalize(op)
	eval := func(call *ir.Call, args []Value) (Value, error) {
		x, err := argArray(op, args, 0)
		if err != nil {
			return nil, err
		}
		r, _, err := opAttrInt(op, call, "repeats")
		if err != nil {
			return nil, err
		}
		if r < 0 {
			return nil, opErrorf(op, "repeats must be non-negative, got %d", r)
		}
		axisV, has, err := opAttrInt(op, call, "axis")
		if err != nil {
			return nil, err
		}
		if !has {
			x = &array{dt: x.dt, shape: []int64{x.size()}, f: x.f, i: x.i}
			axisV = 0
		}
		axis, err := normAxisEval(op, axisV, len(x.shape))
		if err != nil {
			return nil, err
		}
		shape := append([]int64{}, x.shape...)
		shape[axis] *= r
		if err := CheckSize(shape); err != nil {
			return nil, opErrorf(op, "%v", err)
		}
		in := make([]int64, len(shape))
		return gather(x, shape, func(idx []int64) int64 {
			copy(in, idx)
			in[axis] = idx[axis] / r
			return flatIndex(in, x.shape)
		}).tensor()
	}
	legalize := func(k *Kernel, call *ir.Call) error {
		axisV, has, err := opAttrInt(op, call, "axis")
		if err != nil {
			return err
		}
		r, _, err := opAttrInt(op, call, "repeats")
		if err != nil {
			return err
		}
		if r <= 0 {
			return ErrNotLegalizable
		}
		a, err := k.Input(call.Args[0], "A")
		if err != nil {
			return err
		}
		if !has { // TVM's te_repeat flattens with topi.reshape first
			a, axisV = k.Flatten(a), 0
		}
		axis, err := normAxisEval(op, axisV, len(a.Shape))
		if err != nil {
			return err
		}
		out, err := k.Output("T_repeat")
		if err != nil {
			return err
		}
		k.Compute("T_repeat", out, "ax", func(v []ir.PrimExpr) ir.PrimExpr {
			idx := append([]ir.PrimExpr{}, v...)
			idx[axis] = ir.NewBinary(ir.OpFloorDiv, v[axis], ir.I64(r))
			return Load(a, idx)
		})
		return nil
	}
	return Def{Op: op, Eval: eval, Legalize: legalize, Layout: layoutRepeat}
}

func newOuterOp() Def {
	op := &ir.Op{Name: "relax.outer", Doc: "The outer product of two vectors.", Pure: true, Category: ir.CatTensor, Pattern: ir.PatternBroadcast,
		Params: []ir.Param{{Name: "x1", Kind: ir.ArgExpr}, {Name: "x2", Kind: ir.ArgExpr}}}
	op.Infer = func(_ *ir.InferCtx, call *ir.Call) (ir.StructInfo, error) {
		a, err := firstTensorArg(op, call)
		if err != nil {
			return nil, err
		}
		b, err := tensorArg(op, call, 1)
		if err != nil {
			return nil, err
		}
		dt, err := unifyDType(op, a.DType, b.DType)
		if err != nil {
			return nil, err
		}
		for i, t := range []*ir.TensorInfo{a, b} {
			if t.NDim >= 0 && t.NDim != 1 {
				return nil, opErrorf(op, "%s must be a vector, got rank %d", opArgName(op, i), t.NDim)
			}
		}
		da, ok1 := a.Dims()
		db, ok2 := b.Dims()
		if !ok1 || !ok2 {
			return ir.TensorInfoNDim(dt, 2), nil
		}
		return newTensor(dt, []ir.PrimExpr{da[0], db[0]}, true, 2), nil
	}
	eval := func(call *ir.Call, args []Value) (Value, error) {
		a, b, err := binaryArgs(op, args)
		if err != nil {
			return nil, err
		}
		if len(a.shape) != 1 || len(b.shape) != 1 {
			return nil, opErrorf(op, "x1 and x2 must be vectors, got ranks %d and %d", len(a.shape), len(b.shape))
		}
		shape := []int64{a.shape[0], b.shape[0]}
		if err := CheckSize(shape); err != nil {
			return nil, opErrorf(op, "%v", err)
		}
		out := newArray(a.dt, shape)
		for i := int64(0); i < shape[0]; i++ {
			for j := int64(0); j < shape[1]; j++ {
				if a.f != nil {
					out.setFloat(i*shape[1]+j, a.f[i]*b.f[j])
				} else {
					out.setInt(i*shape[1]+j, a.i[i]*b.i[j])
				}
			}
		}
		return out.tensor()
	}
	legalize := func(k *Kernel, call *ir.Call) error {
		a, err := k.Input(call.Args[0], "A")
		if err != nil {
			return err
		}
		b, err := k.Input(call.Args[1], "B")
		if err != nil {
			return err
		}
		out, err := k.Output("T_outer")
		if err != nil {
			return err
		}
		k.Compute("T_outer", out, "ax", func(v []ir.PrimExpr) ir.PrimExpr {
			return ir.NewBinary(ir.OpMul, Load(a, v[:1]), Load(b, v[1:]))
		})
		return nil
	}
	return Def{Op: op, Eval: eval, Legalize: legalize,
		MixedPrecision: mixedAlways}
}

func newScanOp(name, doc string) Def {
	op := &ir.Op{Name: name, Doc: doc, Pure: true, Category: ir.CatTensor, Pattern: ir.PatternOpaque,
		Params: []ir.Param{
			{Name: "data", Kind: ir.ArgExpr},
			{Name: "axis", Kind: ir.AttrInt, Optional: true, PrintNone: true},
			{Name: "dtype", Kind: ir.AttrDType, Default: ir.Void},
			{Name: "exclusive", Kind: ir.AttrBool, Default: false},
		}}
	prod := name == "relax.cumprod"
	op.Infer = func(_ *ir.InferCtx, call *ir.Call) (ir.StructInfo, error) {
		t, err := firstTensorArg(op, call)
		if err != nil {
			return nil, err
		}
		dt, err := opAttrDType(op, call, "dtype")
		if err != nil {
			return nil, err
		}
		if dt.IsVoid() {
			dt = t.DType
		}
		axis, has, err := opAttrInt(op, call, "axis")
		if err != nil {
			return nil, err
		}
		if !has {
			dims, ok := t.Dims()
			if !ok {
				return ir.TensorInfoNDim(dt, 1), nil
			}
			return newTensor(dt, []ir.PrimExpr{shapeProduct(dims)}, true, 1), nil
		}
		if t.NDim >= 0 {
			if _, err := normAxis(op, axis, t.NDim); err != nil {
				return nil, err
			}
		}
		return withDType(t, dt), nil
	}
	op.Normalize = schemaNormalize(op)
	eval := func(call *ir.Call, args []Value) (Value, error) {
		x, err := argArray(op, args, 0)
		if err != nil {
			return nil, err
		}
		dt, err := opAttrDType(op, call, "dtype")
		if err != nil {
			return nil, err
		}
		if dt.IsVoid() {
			dt = x.dt
		}
		excl, err := opAttrBool(op, call, "exclusive")
		if err != nil {
			return nil, err
		}
		axisV, has, err := opAttrInt(op, call, "axis")
		if err != nil {
			return nil, err
		}
		if !has {
			x = &array{dt: x.dt, shape: []int64{x.size()}, f: x.f, i: x.i}
			axisV = 0
		}
		axis, err := normAxisEval(op, axisV, len(x.shape))
		if err != nil {
			return nil, err
		}
		// Converted to the output dtype first, then accumulated in it.
		conv := newArray(dt, x.shape)
		for k := range conv.size() {
			conv.copyElem(k, x, k)
		}
		out := newArray(dt, x.shape)
		st := strides(x.shape)[axis]
		n := x.shape[axis]
		idx := make([]int64, len(x.shape))
		for k := range out.size() {
			unravel(k, x.shape, idx)
			if idx[axis] != 0 {
				continue
			}
			accF, accI := 0.0, int64(0)
			if prod {
				accF, accI = 1, 1
			}
			for j := int64(0); j < n; j++ {
				e := k + j*st
				if excl {
					if conv.f != nil {
						out.setFloat(e, accF)
					} else {
						out.setInt(e, accI)
					}
				}
				if conv.f != nil {
					if prod {
						accF = roundFloat(dt, accF*conv.f[e])
					} else {
						accF = roundFloat(dt, accF+conv.f[e])
					}
				} else if prod {
					accI = wrapInt(dt, accI*conv.i[e])
				} else {
					accI = wrapInt(dt, accI+conv.i[e])
				}
				if !excl {
					if conv.f != nil {
						out.setFloat(e, accF)
					} else {
						out.setInt(e, accI)
					}
				}
			}
		}
		return out.tensor()
	}
	// A scan as a reduction over the prefix: out[..., i, ...] combines
	// x[..., r, ...] for r <= i (r < i when exclusive) in order r = 0, 1,
	// ..., so it rounds as the sequential scan does.
	legalize := func(k *Kernel, call *ir.Call) error {
		axisV, has, err := opAttrInt(op, call, "axis")
		if err != nil {
			return err
		}
		excl, err := opAttrBool(op, call, "exclusive")
		if err != nil {
			return err
		}
		a, err := k.Input(call.Args[0], "A")
		if err != nil {
			return err
		}
		if !has { // flatten, then scan the one axis (topi's scanop)
			a, axisV = k.Flatten(a), 0
		}
		axis, err := normAxisEval(op, axisV, len(a.Shape))
		if err != nil {
			return err
		}
		block := "T_" + name[len("relax."):]
		out, err := k.Output(block)
		if err != nil {
			return err
		}
		init, combine := constOf(out.DType, 0), ir.OpAdd
		if prod {
			init, combine = constOf(out.DType, 1), ir.OpMul
		}
		cmp := ir.OpLE
		if excl {
			cmp = ir.OpLT
		}
		k.Reduce(block, out, "ax", []ir.PrimExpr{a.Shape[axis]}, init, func(s, r []ir.PrimExpr, acc ir.PrimExpr) ir.PrimExpr {
			idx := append([]ir.PrimExpr{}, s...)
			idx[axis] = r[0]
			x := castTo(out.DType, Load(a, idx))
			return &ir.Select{Cond: ir.NewBinary(cmp, r[0], s[axis]), True: ir.NewBinary(combine, acc, x), False: acc}
		})
		return nil
	}
	return Def{Op: op, Eval: eval, Legalize: legalize, Layout: layoutScan}
}

// GatherElements is R.gather_elements(data, indices, axis=0):
// out[i...] = data[i... with index[i...] along axis] (numpy.take_along_axis).
var GatherElements = Define(newGatherElementsOp())

func newGatherElementsOp() Def {
	op := &ir.Op{Name: "relax.gather_elements", Doc: "Gathers data along axis at the positions indices gives (take_along_axis).",
		Pure: true, Category: ir.CatTensor, Pattern: ir.PatternInjective,
		Params: []ir.Param{{Name: "data", Kind: ir.ArgExpr}, {Name: "indices", Kind: ir.ArgExpr}, {Name: "axis", Kind: ir.AttrInt, Default: int64(0)}}}
	op.Infer = func(_ *ir.InferCtx, call *ir.Call) (ir.StructInfo, error) {
		t, err := firstTensorArg(op, call)
		if err != nil {
			return nil, err
		}
		idx, err := tensorArg(op, call, 1)
		if err != nil {
			return nil, err
		}
		if !idx.DType.IsVoid() && !idx.DType.IsInteger() {
			return nil, opErrorf(op, "indices must be an integer tensor, got %s", idx.DType)
		}
		if t.NDim >= 0 && idx.NDim >= 0 && t.NDim != idx.NDim {
			return nil, opErrorf(op, "indices has rank %d but data has %d", idx.NDim, t.NDim)
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
		return withDType(idx, t.DType), nil
	}
	op.Normalize = schemaNormalize(op)
	eval := func(call *ir.Call, args []Value) (Value, error) {
		x, err := argArray(op, args, 0)
		if err != nil {
			return nil, err
		}
		ind, err := argArray(op, args, 1)
		if err != nil {
			return nil, err
		}
		if ind.f != nil || ind.dt.IsBool() || len(ind.shape) != len(x.shape) {
			return nil, opErrorf(op, "indices must be an integer tensor of data's rank, got %s%v", ind.dt, ind.shape)
		}
		axis, err := axisAttr(op, call, len(x.shape))
		if err != nil {
			return nil, err
		}
		for d := range x.shape {
			if d != axis && ind.shape[d] > x.shape[d] {
				return nil, opErrorf(op, "indices dimension %d is %d, more than data's %d", d, ind.shape[d], x.shape[d])
			}
		}
		n := x.shape[axis]
		var bad error
		in := make([]int64, len(x.shape))
		out := gather(x, ind.shape, func(idx []int64) int64 {
			j := ind.i[flatIndex(idx, ind.shape)]
			if j < 0 {
				j += n
			}
			if j < 0 || j >= n {
				if bad == nil {
					bad = opErrorf(op, "index %d is out of range for axis %d of length %d", ind.i[flatIndex(idx, ind.shape)], axis, n)
				}
				j = 0 // reported; keep reading in bounds
			}
			copy(in, idx)
			in[axis] = j
			return flatIndex(in, x.shape)
		})
		if bad != nil {
			return nil, bad
		}
		return out.tensor()
	}
	legalize := func(k *Kernel, call *ir.Call) error {
		a, err := k.Input(call.Args[0], "A")
		if err != nil {
			return err
		}
		b, err := k.Input(call.Args[1], "B")
		if err != nil {
			return err
		}
		axis, err := axisAttr(op, call, len(a.Shape))
		if err != nil {
			return err
		}
		out, err := k.Output("T_gather_elements")
		if err != nil {
			return err
		}
		k.Compute("T_gather_elements", out, "ax", func(v []ir.PrimExpr) ir.PrimExpr {
			j := castTo(ir.Int64, Load(b, v))
			// Negative indices count from the end, as in numpy.
			j = &ir.Select{Cond: ir.NewBinary(ir.OpLT, j, ir.I64(0)), True: ir.Add(j, a.Shape[axis]), False: j}
			idx := append([]ir.PrimExpr{}, v...)
			idx[axis] = j
			return Load(a, idx)
		})
		return nil
	}
	return Def{Op: op, Eval: eval, Legalize: legalize, Layout: layoutGatherElements}
}
