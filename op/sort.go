package op

import (
	"sort"

	"github.com/phasec/phasec/ir"
)

// Sorting ops (TVM's sort.py; src/relax/op/tensor/sort.cc): sort, argsort,
// topk. All sort stably along one axis: equal elements keep their order.
//
// TVM legalizes them to calls of the sort library (tvm.contrib.sort, an
// extern, not TIR). phasec legalizes them to plain TIR so they run on its
// kernel interpreter: a block T_rank counts, for each element, the
// elements that sort before it (O(n²) along the axis), and the output
// blocks gather the element (or index) of each rank. Quadratic, but
// correct for every shape, and sort axes in the models phasec targets are
// short.

var (
	// Sort is R.sort(x, axis=-1, descending=False).
	Sort = Define(newSortOp("relax.sort", "x", "Sorts x along axis.", sortValues))
	// Argsort is R.argsort(data, axis=-1, descending=False, dtype="int32").
	Argsort = Define(newSortOp("relax.argsort", "data", "The indices that sort data along axis.", sortIndices))
	// TopK is R.topk(data, k=1, axis=-1, ret_type="both", largest=True,
	// dtype="int32"): the k largest (or smallest) values and their indices.
	TopK = Define(newTopKOp())
)

type sortKind uint8

const (
	sortValues sortKind = iota
	sortIndices
)

// stableOrder returns, for each 1-D lane of x along axis, the source
// positions in sorted order, through f(lane base offset, stride, order).
func stableOrder(x *array, axis int, descending bool, f func(base, stride int64, order []int64)) {
	n := x.shape[axis]
	stride := numElems(x.shape[axis+1:])
	outer := numElems(x.shape[:axis])
	order := make([]int64, n)
	for o := range outer {
		for in := range stride {
			base := o*n*stride + in
			for i := range order {
				order[i] = int64(i)
			}
			sort.SliceStable(order, func(i, j int) bool {
				a, b := x.float(base+order[i]*stride), x.float(base+order[j]*stride)
				if x.f == nil {
					ai, bi := x.int(base+order[i]*stride), x.int(base+order[j]*stride)
					if descending {
						return ai > bi
					}
					return ai < bi
				}
				if descending {
					return a > b
				}
				return a < b
			})
			f(base, stride, order)
		}
	}
}

func newSortOp(name, arg, doc string, kind sortKind) Def {
	params := []ir.Param{{Name: arg, Kind: ir.ArgExpr}, {Name: "axis", Kind: ir.AttrInt, Default: int64(-1)},
		{Name: "descending", Kind: ir.AttrBool, Default: false}}
	if kind == sortIndices {
		params = append(params, ir.Param{Name: "dtype", Kind: ir.AttrDType, Default: ir.Int32})
	}
	op := &ir.Op{Name: name, Doc: doc, Pure: true, Category: ir.CatTensor, Pattern: ir.PatternOpaque, Params: params}
	op.Infer = func(_ *ir.InferCtx, call *ir.Call) (ir.StructInfo, error) {
		t, err := firstTensorArg(op, call)
		if err != nil {
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
		if kind == sortIndices {
			dt, err := opAttrDType(op, call, "dtype")
			if err != nil {
				return nil, err
			}
			if !dt.IsInt() && !dt.IsUInt() {
				return nil, opErrorf(op, "dtype must be an integer type, got %s", dt)
			}
			return withDType(t, dt), nil
		}
		return t, nil
	}
	op.Normalize = schemaNormalize(op)
	eval := func(call *ir.Call, args []Value) (Value, error) {
		x, err := argArray(op, args, 0)
		if err != nil {
			return nil, err
		}
		axis, err := axisAttr(op, call, len(x.shape))
		if err != nil {
			return nil, err
		}
		desc, err := opAttrBool(op, call, "descending")
		if err != nil {
			return nil, err
		}
		dt := x.dt
		if kind == sortIndices {
			if dt, err = opAttrDType(op, call, "dtype"); err != nil {
				return nil, err
			}
		}
		out := newArray(dt, x.shape)
		stableOrder(x, axis, desc, func(base, stride int64, order []int64) {
			for i, src := range order {
				if kind == sortIndices {
					out.setInt(base+int64(i)*stride, src)
				} else {
					out.copyElem(base+int64(i)*stride, x, base+src*stride)
				}
			}
		})
		return out.tensor()
	}
	legalize := func(k *Kernel, call *ir.Call) error {
		a, err := k.Input(call.Args[0], "A")
		if err != nil {
			return err
		}
		axis, err := axisAttr(op, call, len(a.Shape))
		if err != nil {
			return err
		}
		desc, err := opAttrBool(op, call, "descending")
		if err != nil {
			return err
		}
		out, err := k.Output("T_" + k.Name)
		if err != nil {
			return err
		}
		rank := emitRank(k, a, axis, desc)
		emitGatherByRank(k, out, a, rank, axis, kind == sortIndices)
		return nil
	}
	return Def{Op: op, Eval: eval, Legalize: legalize, Layout: axisRule("axis")}
}

// emitRank emits T_rank: for each element, the number of elements of its
// lane that sort strictly before it (stably: equal ones before it in the
// lane count too).
func emitRank(k *Kernel, a *ir.Buffer, axis int, descending bool) *ir.Buffer {
	rank := k.Alloc("T_rank", ir.Int64, a.Shape)
	before := ir.OpLT
	if descending {
		before = ir.OpGT
	}
	k.Reduce("T_rank", rank, "ax", []ir.PrimExpr{a.Shape[axis]}, ir.I64(0), func(s, r []ir.PrimExpr, acc ir.PrimExpr) ir.PrimExpr {
		other := append([]ir.PrimExpr{}, s...)
		other[axis] = r[0]
		xo, xs := Load(a, other), Load(a, s)
		earlier := ir.NewBinary(ir.OpOr, ir.NewBinary(before, xo, xs),
			ir.NewBinary(ir.OpAnd, ir.NewBinary(ir.OpEQ, xo, xs), ir.NewBinary(ir.OpLT, r[0], s[axis])))
		return ir.NewBinary(ir.OpAdd, acc, &ir.Select{Cond: earlier, True: ir.I64(1), False: ir.I64(0)})
	})
	return rank
}

// emitGatherByRank emits the block writing out[..., j, ...] = the element
// of rank j (or its index when indices), for the out positions along axis.
func emitGatherByRank(k *Kernel, out, a, rank *ir.Buffer, axis int, indices bool) {
	dt := out.DType
	k.Reduce(out.Name, out, "ax", []ir.PrimExpr{a.Shape[axis]}, constOf(dt, 0), func(s, r []ir.PrimExpr, acc ir.PrimExpr) ir.PrimExpr {
		src := append([]ir.PrimExpr{}, s...)
		src[axis] = r[0]
		var v ir.PrimExpr = Load(a, src)
		if indices {
			v = castTo(dt, r[0])
		} else {
			v = castTo(dt, v)
		}
		return ir.NewBinary(ir.OpAdd, acc, &ir.Select{Cond: ir.NewBinary(ir.OpEQ, Load(rank, src), s[axis]), True: v, False: constOf(dt, 0)})
	})
}

// --- topk -------------------------------------------------------------------------------

func newTopKOp() Def {
	op := &ir.Op{Name: "relax.topk", Doc: "The k largest (or smallest) elements along axis and their indices.", Pure: true, Category: ir.CatTensor, Pattern: ir.PatternOpaque,
		Params: []ir.Param{{Name: "data", Kind: ir.ArgExpr}, {Name: "k", Kind: ir.AttrInt, Default: int64(1)},
			{Name: "axis", Kind: ir.AttrInt, Default: int64(-1)}, {Name: "ret_type", Kind: ir.AttrStr, Default: "both"},
			{Name: "largest", Kind: ir.AttrBool, Default: true}, {Name: "dtype", Kind: ir.AttrDType, Default: ir.Int32}}}
	attrs := func(call *ir.Call) (kk int64, retType string, largest bool, dt ir.DataType, err error) {
		if kk, _, err = opAttrInt(op, call, "k"); err != nil {
			return
		}
		retType, _ = opAttr(op, call, "ret_type").(string)
		if retType != "both" && retType != "values" && retType != "indices" {
			err = opErrorf(op, "ret_type must be \"both\", \"values\" or \"indices\", got %q", retType)
			return
		}
		if largest, err = opAttrBool(op, call, "largest"); err != nil {
			return
		}
		if dt, err = opAttrDType(op, call, "dtype"); err == nil && !dt.IsInt() && !dt.IsUInt() {
			err = opErrorf(op, "dtype must be an integer type, got %s", dt)
		}
		return
	}
	result := func(values, indices ir.StructInfo, retType string) ir.StructInfo {
		switch retType {
		case "values":
			return values
		case "indices":
			return indices
		}
		return ir.NewTupleInfo(values, indices)
	}
	op.Infer = func(_ *ir.InferCtx, call *ir.Call) (ir.StructInfo, error) {
		t, err := firstTensorArg(op, call)
		if err != nil {
			return nil, err
		}
		kk, retType, _, dt, err := attrs(call)
		if err != nil {
			return nil, err
		}
		axisV, _, err := opAttrInt(op, call, "axis")
		if err != nil {
			return nil, err
		}
		if t.NDim < 0 {
			return result(t, withDType(t, dt), retType), nil
		}
		axis, err := normAxis(op, axisV, t.NDim)
		if err != nil {
			return nil, err
		}
		dims, ok := t.Dims()
		if !ok {
			return result(ir.TensorInfoNDim(t.DType, t.NDim), ir.TensorInfoNDim(dt, t.NDim), retType), nil
		}
		out := append([]ir.PrimExpr{}, dims...)
		if kk >= 1 { // k < 1: the whole axis, as topi.topk
			if n, ok := ir.IntValue(dims[axis]); ok && kk > n {
				return nil, opErrorf(op, "k=%d exceeds the %d elements along axis %d", kk, n, axisV)
			}
			out[axis] = ir.I64(kk)
		}
		return result(newTensor(t.DType, out, true, t.NDim), newTensor(dt, out, true, t.NDim), retType), nil
	}
	op.Normalize = schemaNormalize(op)
	eval := func(call *ir.Call, args []Value) (Value, error) {
		x, err := argArray(op, args, 0)
		if err != nil {
			return nil, err
		}
		kk, retType, largest, dt, err := attrs(call)
		if err != nil {
			return nil, err
		}
		axis, err := axisAttr(op, call, len(x.shape))
		if err != nil {
			return nil, err
		}
		n := x.shape[axis]
		if kk < 1 {
			kk = n
		}
		if kk > n {
			return nil, opErrorf(op, "k=%d exceeds the %d elements along axis %d", kk, n, axis)
		}
		shape := append([]int64{}, x.shape...)
		shape[axis] = kk
		vals, idxs := newArray(x.dt, shape), newArray(dt, shape)
		stride := numElems(x.shape[axis+1:])
		stableOrder(x, axis, largest, func(base, _ int64, order []int64) {
			// base = o*n*stride + in; the output lane starts at o*kk*stride + in.
			ob := base/(n*stride)*kk*stride + base%stride
			if n == 0 {
				return
			}
			for i := range kk {
				vals.copyElem(ob+i*stride, x, base+order[i]*stride)
				idxs.setInt(ob+i*stride, order[i])
			}
		})
		vt, err := vals.tensor()
		if err != nil {
			return nil, err
		}
		it, err := idxs.tensor()
		if err != nil {
			return nil, err
		}
		switch retType {
		case "values":
			return vt, nil
		case "indices":
			return it, nil
		}
		return Tuple{vt, it}, nil
	}
	legalize := func(k *Kernel, call *ir.Call) error {
		_, retType, largest, _, err := attrs(call)
		if err != nil {
			return err
		}
		a, err := k.Input(call.Args[0], "A")
		if err != nil {
			return err
		}
		axis, err := axisAttr(op, call, len(a.Shape))
		if err != nil {
			return err
		}
		var outs []*ir.Buffer
		switch s := call.StructInfo().(type) {
		case *ir.TupleInfo:
			for i, name := range []string{"T_topk_values", "T_topk_indices"} {
				o, err := k.OutputOf(name, s.Fields[i])
				if err != nil {
					return err
				}
				outs = append(outs, o)
			}
		default:
			o, err := k.OutputOf("T_topk_"+retType, s)
			if err != nil {
				return err
			}
			outs = append(outs, o)
		}
		rank := emitRank(k, a, axis, largest)
		for i, o := range outs {
			emitGatherByRank(k, o, a, rank, axis, retType == "indices" || i == 1)
		}
		return nil
	}
	return Def{Op: op, Eval: eval, Legalize: legalize}
}
