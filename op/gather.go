package op

import (
	"github.com/phasec/phasec/ir"
)

// gather_nd (TVM's manipulate.py; src/relax/op/tensor/manipulate.cc,
// legalized as topi.gather_nd) and collapse_sum_to / collapse_sum_like
// (the reductions that undo a broadcast, used by gradients; legalized as
// topi.collapse_sum).

var (
	// GatherND is R.gather_nd(data, indices, batch_dims=0): indices' last
	// axis (of length M) indexes data's dimensions batch_dims ..
	// batch_dims+M-1; the output is indices.shape[:-1] +
	// data.shape[batch_dims+M:].
	GatherND = Define(newGatherNDOp())
	// CollapseSumTo is R.collapse_sum_to(data, shape): data summed over
	// the dimensions a broadcast from shape to data's shape would add.
	CollapseSumTo = Define(newCollapseSumOp("relax.collapse_sum_to", "shape", ir.ArgShape))
	// CollapseSumLike is R.collapse_sum_like(data, collapse_target): as
	// collapse_sum_to with the target's shape.
	CollapseSumLike = Define(newCollapseSumOp("relax.collapse_sum_like", "collapse_target", ir.ArgExpr))
)

func newGatherNDOp() Def {
	op := &ir.Op{Name: "relax.gather_nd", Doc: "Gathers slices of data at the multi-indices in indices' last axis.", Pure: true, Category: ir.CatTensor, Pattern: ir.PatternInjective,
		Params: []ir.Param{{Name: "data", Kind: ir.ArgExpr}, {Name: "indices", Kind: ir.ArgExpr}, {Name: "batch_dims", Kind: ir.AttrInt, Default: int64(0)}}}
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
		b, _, err := opAttrInt(op, call, "batch_dims")
		if err != nil {
			return nil, err
		}
		if b < 0 {
			return nil, opErrorf(op, "batch_dims must be non-negative, got %d", b)
		}
		if idx.NDim == 0 {
			return nil, opErrorf(op, "indices must have rank at least 1")
		}
		di, okD := t.Dims()
		ii, okI := idx.Dims()
		if !okI || t.NDim < 0 {
			return ir.TensorInfoNDim(t.DType, -1), nil
		}
		m, ok := ir.IntValue(ii[len(ii)-1])
		if !ok {
			return ir.TensorInfoNDim(t.DType, -1), nil
		}
		if b+m > int64(t.NDim) || b > int64(len(ii)-1) {
			return nil, opErrorf(op, "batch_dims %d plus the index length %d exceed data's rank %d", b, m, t.NDim)
		}
		ndim := len(ii) - 1 + t.NDim - int(b+m)
		if !okD {
			return ir.TensorInfoNDim(t.DType, ndim), nil
		}
		for i := range b {
			if dimsProvablyDiffer(di[i], ii[i]) {
				return nil, opErrorf(op, "batch dimension %d is %s in data but %s in indices", i, fmtDim(di[i]), fmtDim(ii[i]))
			}
		}
		out := append(append([]ir.PrimExpr{}, ii[:len(ii)-1]...), di[b+m:]...)
		return newTensor(t.DType, out, true, ndim), nil
	}
	op.Normalize = schemaNormalize(op)
	eval := func(call *ir.Call, args []Value) (Value, error) {
		x, err := argArray(op, args, 0)
		if err != nil {
			return nil, err
		}
		ix, err := argArray(op, args, 1)
		if err != nil {
			return nil, err
		}
		if ix.f != nil || len(ix.shape) == 0 {
			return nil, opErrorf(op, "indices must be an integer tensor of rank >= 1, got %s%v", ix.dt, ix.shape)
		}
		bv, _, err := opAttrInt(op, call, "batch_dims")
		if err != nil {
			return nil, err
		}
		b := int(bv)
		lead := ix.shape[:len(ix.shape)-1]
		m := int(ix.shape[len(ix.shape)-1])
		if b < 0 || b+m > len(x.shape) || b > len(lead) {
			return nil, opErrorf(op, "batch_dims %d plus the index length %d exceed data's rank %d", b, m, len(x.shape))
		}
		shape := append(append([]int64{}, lead...), x.shape[b+m:]...)
		if err := CheckSize(shape); err != nil {
			return nil, opErrorf(op, "%v", err)
		}
		out := newArray(x.dt, shape)
		idx := make([]int64, len(shape))
		src := make([]int64, len(x.shape))
		in := make([]int64, len(ix.shape))
		for k := range out.size() {
			unravel(k, shape, idx)
			copy(src, idx[:b])
			copy(in, idx[:len(lead)])
			for j := range m {
				in[len(lead)] = int64(j)
				v := ix.i[flatIndex(in, ix.shape)]
				if v < 0 || v >= x.shape[b+j] {
					return nil, opErrorf(op, "index %d is out of range for data dimension %d of extent %d", v, b+j, x.shape[b+j])
				}
				src[b+j] = v
			}
			copy(src[b+m:], idx[len(lead):])
			out.copyElem(k, x, flatIndex(src, x.shape))
		}
		return out.tensor()
	}
	legalize := func(k *Kernel, call *ir.Call) error {
		a, err := k.Input(call.Args[0], "A")
		if err != nil {
			return err
		}
		ix, err := k.Input(call.Args[1], "B")
		if err != nil {
			return err
		}
		bv, _, err := opAttrInt(op, call, "batch_dims")
		if err != nil {
			return err
		}
		m, ok := ir.IntValue(ix.Shape[len(ix.Shape)-1])
		if !ok {
			return ErrNotLegalizable
		}
		b, lead := int(bv), len(ix.Shape)-1
		out, err := k.Output("T_gather_nd")
		if err != nil {
			return err
		}
		k.Compute("T_gather_nd", out, "ax", func(v []ir.PrimExpr) ir.PrimExpr {
			src := append([]ir.PrimExpr{}, v[:b]...)
			for j := range m {
				at := append(append([]ir.PrimExpr{}, v[:lead]...), ir.I64(j))
				src = append(src, castTo(ir.Int64, Load(ix, at)))
			}
			src = append(src, v[lead:]...)
			return Load(a, src)
		})
		return nil
	}
	return Def{Op: op, Eval: eval, Legalize: legalize}
}

func newCollapseSumOp(name, target string, kind ir.ParamKind) Def {
	op := &ir.Op{Name: name, Doc: "Sums data down to a shape that broadcasts to data's.", Pure: true, Category: ir.CatTensor, Pattern: ir.PatternCommReduce,
		Params: []ir.Param{{Name: "data", Kind: ir.ArgExpr}, {Name: target, Kind: kind}}}
	op.Infer = func(_ *ir.InferCtx, call *ir.Call) (ir.StructInfo, error) {
		if err := opCheckArity(op, call); err != nil {
			return nil, err
		}
		t, err := firstTensorArg(op, call)
		if err != nil {
			return nil, err
		}
		var dims []ir.PrimExpr
		var ndim int
		var shape ir.Expr
		if kind == ir.ArgShape {
			if dims, ndim, shape, err = shapeArg(op, call, 1); err != nil {
				return nil, err
			}
		} else {
			tt, err := tensorArg(op, call, 1)
			if err != nil {
				return nil, err
			}
			ndim = tt.NDim
			dims, _ = tt.Dims()
		}
		if t.NDim >= 0 && ndim > t.NDim {
			return nil, opErrorf(op, "%s has rank %d, more than data's %d", target, ndim, t.NDim)
		}
		if dd, ok := t.Dims(); ok && dims != nil {
			off := len(dd) - len(dims)
			for i, d := range dims {
				if !isOne(d) && dimsProvablyDiffer(d, dd[off+i]) {
					return nil, opErrorf(op, "%s dimension %d (%s) does not broadcast to data's %s", target, i, fmtDim(d), fmtDim(dd[off+i]))
				}
			}
		}
		if kind == ir.ArgShape {
			return tensorFromShape(t.DType, dims, ndim, shape), nil
		}
		if dims == nil {
			return ir.TensorInfoNDim(t.DType, ndim), nil
		}
		return newTensor(t.DType, dims, true, ndim), nil
	}
	op.Normalize = schemaNormalize(op)
	eval := func(call *ir.Call, args []Value) (Value, error) {
		x, err := argArray(op, args, 0)
		if err != nil {
			return nil, err
		}
		var to []int64
		if kind == ir.ArgShape {
			if to, err = argShape(op, args, 1); err != nil {
				return nil, err
			}
		} else {
			tt, err := argArray(op, args, 1)
			if err != nil {
				return nil, err
			}
			to = tt.shape
		}
		if len(to) > len(x.shape) {
			return nil, opErrorf(op, "%s %v has more dimensions than data %v", target, to, x.shape)
		}
		off := len(x.shape) - len(to)
		for i, d := range to {
			if d != 1 && d != x.shape[off+i] {
				return nil, opErrorf(op, "%s %v does not broadcast to data %v", target, to, x.shape)
			}
		}
		out := newArray(x.dt, to)
		b := newBroadcaster(to)
		idx := make([]int64, len(x.shape))
		sf, si := make([]float64, out.size()), make([]int64, out.size())
		for k := range x.size() {
			unravel(k, x.shape, idx)
			j := b.index(idx)
			if x.f != nil {
				sf[j] += x.f[k]
			} else {
				si[j] += x.i[k]
			}
		}
		for j := range out.size() {
			if x.f != nil {
				out.setFloat(j, sf[j])
			} else {
				out.setInt(j, si[j])
			}
		}
		return out.tensor()
	}
	legalize := func(k *Kernel, call *ir.Call) error {
		a, err := k.Input(call.Args[0], "A")
		if err != nil {
			return err
		}
		out, err := k.Output("T_collapse_sum")
		if err != nil {
			return err
		}
		off := len(a.Shape) - len(out.Shape)
		// Reduced data dimensions: the leading ones, and those where the
		// target has a 1 and data (provably) does not.
		var extents []ir.PrimExpr
		reduced := make([]bool, len(a.Shape))
		for i, d := range a.Shape {
			if i < off || (isOne(out.Shape[i-off]) && !isOne(d)) {
				if i >= off {
					if _, ok := ir.IntValue(d); !ok {
						return ErrNotLegalizable // d may be 1 at run time
					}
				}
				reduced[i] = true
				extents = append(extents, d)
			}
		}
		if len(extents) == 0 { // nothing collapses: a copy
			k.Compute("T_collapse_sum", out, "ax", func(v []ir.PrimExpr) ir.PrimExpr { return Load(a, v) })
			return nil
		}
		k.Reduce("T_collapse_sum", out, "ax", extents, constOf(out.DType, 0), func(s, r []ir.PrimExpr, acc ir.PrimExpr) ir.PrimExpr {
			idx := make([]ir.PrimExpr, len(a.Shape))
			ri := 0
			for i := range idx {
				if reduced[i] {
					idx[i] = r[ri]
					ri++
				} else {
					idx[i] = s[i-off]
				}
			}
			return ir.NewBinary(ir.OpAdd, acc, Load(a, idx))
		})
		return nil
	}
	return Def{Op: op, Eval: eval, Legalize: legalize}
}

// ScatterElements is R.scatter_elements(data, indices, updates, axis=0,
// reduction="update"): data with updates[p] combined into the element
// indices[p] picks along axis (ONNX ScatterElements; negative indices
// count from the end). Duplicate positions apply in C order. "mean" is
// the average of the original element and every update scattered to it
// (PyTorch's scatter_reduce mean with include_self, which TVM's frontends
// map to it); integer averages round down (floor), as PyTorch's do.
var ScatterElements = Define(newScatterElementsOp())

func newScatterElementsOp() Def {
	op := &ir.Op{Name: "relax.scatter_elements", Doc: "Scatters updates into a copy of data at the positions indices gives along axis.",
		Pure: true, Category: ir.CatTensor, Pattern: ir.PatternOpaque,
		Params: []ir.Param{{Name: "data", Kind: ir.ArgExpr}, {Name: "indices", Kind: ir.ArgExpr}, {Name: "updates", Kind: ir.ArgExpr},
			{Name: "axis", Kind: ir.AttrInt, Default: int64(0)}, {Name: "reduction", Kind: ir.AttrStr, Default: "update"}}}
	reduction := func(call *ir.Call) (string, error) {
		r, _ := opAttr(op, call, "reduction").(string)
		switch r {
		case "update", "add", "mul", "mean", "max", "min":
			return r, nil
		}
		return "", opErrorf(op, "reduction must be one of update, add, mul, mean, max, min; got %q", r)
	}
	op.Infer = func(_ *ir.InferCtx, call *ir.Call) (ir.StructInfo, error) {
		if err := opCheckArity(op, call); err != nil {
			return nil, err
		}
		t, err := firstTensorArg(op, call)
		if err != nil {
			return nil, err
		}
		idx, err := tensorArg(op, call, 1)
		if err != nil {
			return nil, err
		}
		upd, err := tensorArg(op, call, 2)
		if err != nil {
			return nil, err
		}
		if !idx.DType.IsVoid() && !idx.DType.IsInteger() {
			return nil, opErrorf(op, "indices must be an integer tensor, got %s", idx.DType)
		}
		if _, err := unifyDType(op, t.DType, upd.DType); err != nil {
			return nil, err
		}
		red, err := reduction(call)
		if err != nil {
			return nil, err
		}
		if red == "mean" && t.DType.IsBool() {
			return nil, opErrorf(op, "reduction \"mean\" needs a numeric data type, got bool")
		}
		for _, o := range []*ir.TensorInfo{idx, upd} {
			if t.NDim >= 0 && o.NDim >= 0 && o.NDim != t.NDim {
				return nil, opErrorf(op, "indices and updates must have data's rank %d, got %d", t.NDim, o.NDim)
			}
		}
		if di, ok := idx.Dims(); ok {
			if du, ok := upd.Dims(); ok && len(du) == len(di) {
				for i := range di {
					if dimsProvablyDiffer(di[i], du[i]) {
						return nil, opErrorf(op, "indices and updates differ in dimension %d: %s vs %s", i, fmtDim(di[i]), fmtDim(du[i]))
					}
				}
			}
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
	eval := func(call *ir.Call, args []Value) (Value, error) {
		x, err := argArray(op, args, 0)
		if err != nil {
			return nil, err
		}
		ix, err := argArray(op, args, 1)
		if err != nil {
			return nil, err
		}
		up, err := argArray(op, args, 2)
		if err != nil {
			return nil, err
		}
		red, err := reduction(call)
		if err != nil {
			return nil, err
		}
		if red == "mean" && x.dt.IsBool() {
			return nil, opErrorf(op, "reduction \"mean\" needs a numeric data type, got bool")
		}
		axis, err := axisAttr(op, call, len(x.shape))
		if err != nil {
			return nil, err
		}
		if ix.f != nil || !sameDims(ix.shape, up.shape) || len(ix.shape) != len(x.shape) {
			return nil, opErrorf(op, "indices %s%v and updates %v must be integer and updates-shaped, of data's rank", ix.dt, ix.shape, up.shape)
		}
		out := newArray(x.dt, x.shape)
		for k := range out.size() {
			out.copyElem(k, x, k)
		}
		// mean sums into out and counts the updates of each element.
		var count []int64
		if red == "mean" {
			count = make([]int64, out.size())
		}
		idx := make([]int64, len(ix.shape))
		for p := range ix.size() {
			unravel(p, ix.shape, idx)
			for d := range idx {
				if d != axis && idx[d] >= x.shape[d] {
					return nil, opErrorf(op, "indices position %v is outside data %v", idx, x.shape)
				}
			}
			v := ix.i[p]
			if v < 0 {
				v += x.shape[axis]
			}
			if v < 0 || v >= x.shape[axis] {
				return nil, opErrorf(op, "index %d is out of range for axis %d of extent %d", ix.i[p], axis, x.shape[axis])
			}
			idx[axis] = v
			j := flatIndex(idx, x.shape)
			if count != nil {
				count[j]++
			}
			if out.f != nil {
				out.setFloat(j, scatterCombine(red, out.f[j], up.float(p)))
				continue
			}
			out.setInt(j, scatterCombine(red, out.i[j], up.int(p)))
		}
		for j, c := range count {
			if out.f != nil {
				out.setFloat(int64(j), out.f[j]/float64(c+1))
			} else {
				out.setInt(int64(j), floorDivInt(out.i[j], c+1))
			}
		}
		return out.tensor()
	}
	legalize := func(k *Kernel, call *ir.Call) error {
		red, err := reduction(call)
		if err != nil {
			return err
		}
		a, err := k.Input(call.Args[0], "A")
		if err != nil {
			return err
		}
		ix, err := k.Input(call.Args[1], "B")
		if err != nil {
			return err
		}
		up, err := k.Input(call.Args[2], "C")
		if err != nil {
			return err
		}
		axis, err := axisAttr(op, call, len(a.Shape))
		if err != nil {
			return err
		}
		out, err := k.Output("T_scatter_elements")
		if err != nil {
			return err
		}
		dt := a.DType
		// The update position p of output element s with p[axis] = j, and
		// whether it exists in indices' (possibly smaller) shape.
		pos := func(s []ir.PrimExpr, j ir.PrimExpr) ([]ir.PrimExpr, ir.PrimExpr) {
			p := append([]ir.PrimExpr{}, s...)
			p[axis] = j
			var in ir.PrimExpr = ir.NewBool(true)
			for d := range s {
				if d != axis {
					in = ir.NewBinary(ir.OpAnd, in, ir.NewBinary(ir.OpLT, s[d], ix.Shape[d]))
				}
			}
			return p, in
		}
		hits := func(s, p []ir.PrimExpr) ir.PrimExpr {
			i := castTo(ir.Int64, Load(ix, p))
			i = &ir.Select{Cond: ir.NewBinary(ir.OpLT, i, ir.I64(0)), True: ir.Add(i, a.Shape[axis]), False: i}
			return ir.NewBinary(ir.OpEQ, i, s[axis])
		}
		ext := []ir.PrimExpr{ix.Shape[axis]}
		if red == "update" {
			last := k.Alloc("T_scatter_last", ir.Int64, a.Shape)
			k.Reduce("T_scatter_last", last, "ax", ext, ir.I64(-1), func(s, r []ir.PrimExpr, acc ir.PrimExpr) ir.PrimExpr {
				p, in := pos(s, r[0])
				return intrinsic("if_then_else", ir.Int64, in, intrinsic("if_then_else", ir.Int64, hits(s, p), ir.Max(acc, r[0]), acc), acc)
			})
			k.Compute("T_scatter_elements", out, "ax", func(v []ir.PrimExpr) ir.PrimExpr {
				j := Load(last, v)
				p := append([]ir.PrimExpr{}, v...)
				p[axis] = j
				return intrinsic("if_then_else", dt, ir.NewBinary(ir.OpGE, j, ir.I64(0)), Load(up, p), Load(a, v))
			})
			return nil
		}
		var init ir.PrimExpr
		var combine func(x, y ir.PrimExpr) ir.PrimExpr
		switch red {
		case "add", "mean":
			init, combine = constOf(dt, 0), func(x, y ir.PrimExpr) ir.PrimExpr { return ir.NewBinary(ir.OpAdd, x, y) }
		case "mul":
			init, combine = constOf(dt, 1), func(x, y ir.PrimExpr) ir.PrimExpr { return ir.NewBinary(ir.OpMul, x, y) }
		case "max":
			init, combine = limitValue(dt, true), func(x, y ir.PrimExpr) ir.PrimExpr { return ir.NewBinary(ir.OpMax, x, y) }
		default:
			init, combine = limitValue(dt, false), func(x, y ir.PrimExpr) ir.PrimExpr { return ir.NewBinary(ir.OpMin, x, y) }
		}
		acc := k.Alloc("T_scatter_acc", dt, a.Shape)
		k.Reduce("T_scatter_acc", acc, "ax", ext, init, func(s, r []ir.PrimExpr, cur ir.PrimExpr) ir.PrimExpr {
			p, in := pos(s, r[0])
			return intrinsic("if_then_else", dt, in, intrinsic("if_then_else", dt, hits(s, p), combine(cur, Load(up, p)), cur), cur)
		})
		if red != "mean" {
			k.Compute("T_scatter_elements", out, "ax", func(v []ir.PrimExpr) ir.PrimExpr { return combine(Load(a, v), Load(acc, v)) })
			return nil
		}
		// mean: the sum of the original and its updates over their number.
		count := k.Alloc("T_scatter_count", ir.Int64, a.Shape)
		k.Reduce("T_scatter_count", count, "ax", ext, ir.I64(0), func(s, r []ir.PrimExpr, cur ir.PrimExpr) ir.PrimExpr {
			p, in := pos(s, r[0])
			return intrinsic("if_then_else", ir.Int64, in, intrinsic("if_then_else", ir.Int64, hits(s, p), ir.Add(cur, ir.I64(1)), cur), cur)
		})
		div := ir.OpDiv
		if !dt.IsFloat() {
			div = ir.OpFloorDiv
		}
		k.Compute("T_scatter_elements", out, "ax", func(v []ir.PrimExpr) ir.PrimExpr {
			n := castTo(dt, ir.Add(Load(count, v), ir.I64(1)))
			return ir.NewBinary(div, combine(Load(a, v), Load(acc, v)), n)
		})
		return nil
	}
	return Def{Op: op, Eval: eval, Legalize: legalize, Layout: layoutScatterElements}
}

// DynamicStridedSlice is R.dynamic_strided_slice(x, begin, end, strides):
// strided_slice with the bounds given as 1-D int64 tensors, one entry per
// axis of x, read at run time (numpy slicing: negative positions count
// from the end, bounds clamp). The result's shape is unknown until then;
// its rank is x's. It legalizes as TVM's legalize_ops/index.py does: a
// PrimFunc computing the output shape as an int64 tensor, R.tensor_to_shape
// of it, a match_cast binding fresh shape variables, and the slice kernel
// whose output buffer has those dimensions.
var DynamicStridedSlice = Define(newDynamicStridedSliceOp())

func newDynamicStridedSliceOp() Def {
	op := &ir.Op{Name: "relax.dynamic_strided_slice", Doc: "Strided slice with run-time begin, end and strides tensors.", Pure: true, Category: ir.CatTensor, Pattern: ir.PatternInjective,
		Params: []ir.Param{{Name: "x", Kind: ir.ArgExpr}, {Name: "begin", Kind: ir.ArgExpr}, {Name: "end", Kind: ir.ArgExpr}, {Name: "strides", Kind: ir.ArgExpr}}}
	op.Infer = func(_ *ir.InferCtx, call *ir.Call) (ir.StructInfo, error) {
		if err := opCheckArity(op, call); err != nil {
			return nil, err
		}
		t, err := firstTensorArg(op, call)
		if err != nil {
			return nil, err
		}
		for i := 1; i <= 3; i++ {
			b, err := tensorArg(op, call, i)
			if err != nil {
				return nil, err
			}
			if !b.DType.IsVoid() && b.DType != ir.Int64 {
				return nil, opErrorf(op, "%s must be an int64 tensor, got %s", opArgName(op, i), b.DType)
			}
			if b.NDim >= 0 && b.NDim != 1 {
				return nil, opErrorf(op, "%s must be 1-D, got rank %d", opArgName(op, i), b.NDim)
			}
			if d, ok := b.Dims(); ok && t.NDim >= 0 {
				if n, ok := ir.IntValue(d[0]); ok && n != int64(t.NDim) {
					return nil, opErrorf(op, "%s has %d entries but x has rank %d", opArgName(op, i), n, t.NDim)
				}
			}
		}
		return ir.TensorInfoNDim(t.DType, t.NDim), nil
	}
	eval := func(call *ir.Call, args []Value) (Value, error) {
		x, err := argArray(op, args, 0)
		if err != nil {
			return nil, err
		}
		var bs [3]*array
		for i := range bs {
			if bs[i], err = argArray(op, args, i+1); err != nil {
				return nil, err
			}
			if bs[i].f != nil || len(bs[i].shape) != 1 || bs[i].shape[0] != int64(len(x.shape)) {
				return nil, opErrorf(op, "%s must be an integer vector of %d entries, got %s%v", paramName(op, i+1), len(x.shape), bs[i].dt, bs[i].shape)
			}
		}
		n := len(x.shape)
		begin, step := make([]int64, n), make([]int64, n)
		shape := make([]int64, n)
		for i, d := range x.shape {
			b, e, s := bs[0].i[i], bs[1].i[i], bs[2].i[i]
			if s == 0 {
				return nil, opErrorf(op, "strides[%d] is 0", i)
			}
			norm := func(v int64) int64 {
				if v < 0 {
					v += d
				}
				if s > 0 {
					return min(max(v, 0), d)
				}
				return min(max(v, -1), d-1)
			}
			b, e = norm(b), norm(e)
			cnt := int64(0)
			if s > 0 && e > b {
				cnt = (e - b + s - 1) / s
			} else if s < 0 && b > e {
				cnt = (b - e + -s - 1) / -s
			}
			begin[i], step[i], shape[i] = b, s, cnt
		}
		src := make([]int64, n)
		return gather(x, shape, func(idx []int64) int64 {
			for i := range idx {
				src[i] = begin[i] + idx[i]*step[i]
			}
			return flatIndex(src, x.shape)
		}).tensor()
	}
	return Def{Op: op, Eval: eval, Legalize: legalizeDynamicStridedSlice,
		MixedPrecision: mixedFollow}
}

// legalizeDynamicStridedSlice emits the shape function and the match_cast
// of its result, then builds the slice kernel (the call that replaces the
// op) with an output of the matched shape.
func legalizeDynamicStridedSlice(k *Kernel, call *ir.Call) error {
	t, dims, ok := knownTensor(call.Args[0])
	if !ok || k.Emit == nil {
		return ErrNotLegalizable
	}
	for _, b := range call.Args[1:] {
		if _, _, ok := knownTensor(b); !ok {
			return ErrNotLegalizable
		}
	}
	n := len(dims)
	// The shape function: out[i] = the slice length along axis i.
	sf := NewKernel(call)
	sf.Name = "shape_func"
	ins, err := dynamicSliceInputs(sf, call)
	if err != nil {
		return err
	}
	lens, err := sf.OutputOf("T_shape_func_strided_slice_dynamic", ir.TensorInfoOf(ir.Int64, ir.I64(int64(n))))
	if err != nil {
		return err
	}
	sf.Compute("T_shape_func_strided_slice_dynamic", lens, "i", func(v []ir.PrimExpr) ir.PrimExpr {
		// The extent of axis v[0]: x's dimensions as a select chain.
		var extent ir.PrimExpr = ir.I64(0)
		for i := n - 1; i >= 0; i-- {
			extent = &ir.Select{Cond: ir.NewBinary(ir.OpEQ, v[0], ir.I64(int64(i))), True: ins[0].Shape[i], False: extent}
		}
		_, length := sliceBounds(Load(ins[1], v), Load(ins[2], v), Load(ins[3], v), extent)
		return length
	})
	shapeCall, err := k.Emit.CallTIR(sf, ir.TensorInfoOf(ir.Int64, ir.I64(int64(n))))
	if err != nil {
		return err
	}
	lensVar := k.Emit.Emit(shapeCall, "lv")
	shapeVar := k.Emit.Emit(ir.NewCall(TensorToShape, lensVar), "lv")
	outDims := make([]ir.PrimExpr, n)
	for i := range outDims {
		outDims[i] = ir.SymVar("s")
	}
	k.Emit.EmitMatchCast(shapeVar, ir.ShapeInfoOf(outDims...), "lv")
	// The slice: out[v] = x[begin'[i] + v[i] * strides[i]...].
	in, err := dynamicSliceInputs(k, call)
	if err != nil {
		return err
	}
	k.Result = ir.TensorInfoOf(t.DType, outDims...)
	out, err := k.OutputOf("T_dynamic_strided_slice", k.Result)
	if err != nil {
		return err
	}
	k.Compute("T_dynamic_strided_slice", out, "ax", func(v []ir.PrimExpr) ir.PrimExpr {
		src := make([]ir.PrimExpr, n)
		for i := range src {
			at := []ir.PrimExpr{ir.I64(int64(i))}
			step := Load(in[3], at)
			begin, _ := sliceBounds(Load(in[1], at), Load(in[2], at), step, in[0].Shape[i])
			src[i] = ir.Add(begin, ir.Mul(v[i], step))
		}
		return Load(in[0], src)
	})
	return nil
}

// dynamicSliceInputs adds x, begin, end and strides as k's buffers.
func dynamicSliceInputs(k *Kernel, call *ir.Call) ([]*ir.Buffer, error) {
	out := make([]*ir.Buffer, 4)
	for i, name := range []string{"data", "begin", "end", "strides"} {
		b, err := k.Input(call.Args[i], name)
		if err != nil {
			return nil, err
		}
		out[i] = b
	}
	return out, nil
}

// sliceBounds is numpy's slice arithmetic in TIR (topi's
// canonicalize_index and get_length in dynamic_strided_slice): begin
// clamped into the axis, and the number of elements taken, at least 0.
func sliceBounds(begin, end, stride, extent ir.PrimExpr) (ir.PrimExpr, ir.PrimExpr) {
	neg := ir.NewBinary(ir.OpLT, stride, ir.I64(0))
	canon := func(i ir.PrimExpr) ir.PrimExpr {
		lo := &ir.Select{Cond: neg, True: ir.I64(-1), False: ir.I64(0)}
		hi := &ir.Select{Cond: neg, True: ir.Sub(extent, ir.I64(1)), False: extent}
		i = &ir.Select{Cond: ir.NewBinary(ir.OpLT, i, ir.I64(0)), True: ir.Add(i, extent), False: i}
		return ir.Min(ir.Max(i, lo), hi)
	}
	b, e := canon(begin), canon(end)
	// ceildiv(e - b, s) for either sign of s: floordiv(e - b + s - sign(s), s).
	sign := &ir.Select{Cond: neg, True: ir.I64(-1), False: ir.I64(1)}
	length := ir.FloorDiv(ir.Sub(ir.Add(ir.Sub(e, b), stride), sign), stride)
	return b, ir.Max(length, ir.I64(0))
}
