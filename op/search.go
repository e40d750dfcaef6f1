package op

import (
	"math"

	"github.com/phasec/phasec/ir"
)

// Search ops (TVM's python/tvm/relax/op/search.py): where, argmax, argmin.

var (
	// Where is R.where(condition, x1, x2): x1 where condition holds, else
	// x2, all three broadcast together.
	Where = Define(Def{Op: newWhereOp(), Eval: evalWhere, Legalize: legalizeWhere, Layout: layoutWhere})
	// Argmax is R.argmax(x, axis=None, keepdims=False): int64 indices of
	// the first maximum.
	Argmax = Define(Def{Op: newArgOp("relax.argmax", "Index of the first maximum along axis (of the flattened x when None)."),
		Eval:     func(call *ir.Call, args []Value) (Value, error) { return evalArg(opOf(call), call, args, 1) },
		Legalize: func(k *Kernel, call *ir.Call) error { return legalizeArg(k, call, opOf(call), ir.OpGT) },
		Layout:   layoutArgReduce})
	// Argmin is R.argmin(x, axis=None, keepdims=False).
	Argmin = Define(Def{Op: newArgOp("relax.argmin", "Index of the first minimum along axis (of the flattened x when None)."),
		Eval:     func(call *ir.Call, args []Value) (Value, error) { return evalArg(opOf(call), call, args, -1) },
		Legalize: func(k *Kernel, call *ir.Call) error { return legalizeArg(k, call, opOf(call), ir.OpLT) },
		Layout:   layoutArgReduce})
)

func newWhereOp() *ir.Op {
	op := &ir.Op{Name: "relax.where", Doc: "Elementwise condition ? x1 : x2 with broadcasting.", Pure: true, Category: ir.CatTensor, Pattern: ir.PatternBroadcast,
		Params: []ir.Param{{Name: "condition", Kind: ir.ArgExpr}, {Name: "x1", Kind: ir.ArgExpr}, {Name: "x2", Kind: ir.ArgExpr}}}
	op.Infer = func(_ *ir.InferCtx, call *ir.Call) (ir.StructInfo, error) {
		if err := opCheckArity(op, call); err != nil {
			return nil, err
		}
		var ts [3]*ir.TensorInfo
		for i := range ts {
			t, err := tensorArg(op, call, i)
			if err != nil {
				return nil, err
			}
			ts[i] = t
		}
		if dt := ts[0].DType; !dt.IsVoid() && !dt.IsBool() {
			return nil, opErrorf(op, "condition must be a bool tensor, got %s", dt)
		}
		dtype, err := unifyDType(op, ts[1].DType, ts[2].DType)
		if err != nil {
			return nil, err
		}
		ndim := 0
		for _, t := range ts {
			if t.NDim < 0 {
				return ir.TensorInfoNDim(dtype, -1), nil
			}
			ndim = max(ndim, t.NDim)
		}
		dims := []ir.PrimExpr{}
		for _, t := range ts {
			d, ok := t.Dims()
			if !ok {
				return ir.TensorInfoNDim(dtype, ndim), nil
			}
			out, known, err := broadcastDims(op, dims, d, nil)
			if err != nil {
				return nil, err
			}
			if !known {
				return ir.TensorInfoNDim(dtype, ndim), nil
			}
			dims = append([]ir.PrimExpr{}, out...)
		}
		return newTensor(dtype, dims, true, ndim), nil
	}
	return op
}

func newArgOp(name, doc string) *ir.Op {
	op := &ir.Op{Name: name, Doc: doc, Pure: true, Category: ir.CatTensor, Pattern: ir.PatternCommReduce,
		Params: []ir.Param{
			{Name: "x", Kind: ir.ArgExpr},
			{Name: "axis", Kind: ir.AttrInt, Optional: true, PrintNone: true},
			{Name: "keepdims", Kind: ir.AttrBool, Default: false},
		}}
	op.Infer = func(_ *ir.InferCtx, call *ir.Call) (ir.StructInfo, error) {
		t, err := firstTensorArg(op, call)
		if err != nil {
			return nil, err
		}
		axis, has, err := opAttrInt(op, call, "axis")
		if err != nil {
			return nil, err
		}
		keep, err := opAttrBool(op, call, "keepdims")
		if err != nil {
			return nil, err
		}
		if t.NDim < 0 {
			return ir.TensorInfoNDim(ir.Int64, -1), nil
		}
		a := -1
		if has {
			if a, err = normAxis(op, axis, t.NDim); err != nil {
				return nil, err
			}
		}
		dims, ok := t.Dims()
		outNDim := 0
		var out []ir.PrimExpr
		for i := 0; i < t.NDim; i++ {
			switch {
			case a >= 0 && i != a:
				outNDim++
				if ok {
					out = append(out, dims[i])
				}
			case keep:
				outNDim++
				out = append(out, ir.I64(1))
			}
		}
		return newTensor(ir.Int64, out, ok, outNDim), nil
	}
	op.Normalize = schemaNormalize(op)
	return op
}

// --- evaluation -------------------------------------------------------------

// evalArg finds the first extreme element (sign 1: max, -1: min) along
// axis; NaN counts as the extreme, as numpy does.
func evalArg(op *ir.Op, call *ir.Call, args []Value, sign int) (Value, error) {
	x, err := argArray(op, args, 0)
	if err != nil {
		return nil, err
	}
	axis, has, err := opAttrInt(op, call, "axis")
	if err != nil {
		return nil, err
	}
	keep, err := opAttrBool(op, call, "keepdims")
	if err != nil {
		return nil, err
	}
	var axes []int64
	if has {
		axes = []int64{axis}
	}
	r, err := newReduction(op, x, axes, !has, keep)
	if err != nil {
		return nil, err
	}
	ng := numElems(r.groupShape)
	if r.count == 0 && ng > 0 {
		return nil, opErrorf(op, "attempt to get the extreme of an empty sequence")
	}
	out := newArray(ir.Int64, r.outShape)
	best := make([]int64, ng) // flat index of the best element so far
	seen := make([]bool, ng)
	r.each(func(g, inner, k int64) {
		if !seen[g] {
			seen[g], best[g], out.i[g] = true, k, inner
			return
		}
		b := best[g]
		var c int
		if x.f != nil {
			if math.IsNaN(x.f[b]) {
				return
			}
			if math.IsNaN(x.f[k]) {
				best[g], out.i[g] = k, inner
				return
			}
			c = cmpFloat(x.f[k], x.f[b])
		} else if x.dt.IsUInt() {
			c = cmpUint(uint64(x.i[k]), uint64(x.i[b]))
		} else {
			c = cmpInt(x.i[k], x.i[b])
		}
		if c == sign {
			best[g], out.i[g] = k, inner
		}
	})
	return out.tensor()
}

// --- legalization -------------------------------------------------------------

// legalizeArg finds the extreme value in a first reduction (T_<op>_red)
// and the least index holding it in a second one; NaN inputs are not
// handled as numpy does. With axis None it reduces every axis and the
// index is the flat (row-major) position, as topi.argmax without an axis.
func legalizeArg(k *Kernel, call *ir.Call, op *ir.Op, better ir.BinaryOp) error {
	a, err := k.Input(call.Args[0], "A")
	if err != nil {
		return err
	}
	axis, has, err := opAttrInt(op, call, "axis")
	if err != nil {
		return err
	}
	keep, err := opAttrBool(op, call, "keepdims")
	if err != nil {
		return err
	}
	var axes []int64
	if has {
		axes = []int64{axis}
	}
	reduced, err := reducedAxes(op, axes, !has, len(a.Shape))
	if err != nil {
		return err
	}
	var extents []ir.PrimExpr
	for i, red := range reduced {
		if red {
			extents = append(extents, a.Shape[i])
		}
	}
	out, err := k.Output("T_" + op.Name[len("relax."):])
	if err != nil {
		return err
	}
	if len(extents) == 0 { // a scalar's only element is at index 0
		k.Compute(out.Name, out, "ax", func([]ir.PrimExpr) ir.PrimExpr { return ir.I64(0) })
		return nil
	}
	// position is the index the op reports for reduction variables r.
	position := func(r []ir.PrimExpr) ir.PrimExpr { return ravelIndex(r, extents) }
	extreme := k.Alloc("T_"+op.Name[len("relax."):]+"_red", a.DType, out.Shape)
	init := limitValue(a.DType, better == ir.OpGT)
	k.Reduce(extreme.Name, extreme, "ax", extents, init, func(s, r []ir.PrimExpr, acc ir.PrimExpr) ir.PrimExpr {
		x := Load(a, reduceIndex(reduced, keep, s, r))
		return &ir.Select{Cond: ir.NewBinary(better, x, acc), True: x, False: acc}
	})
	k.Reduce(out.Name, out, "ax", extents, castTo(ir.Int64, ir.Simplify(shapeProduct(extents))), func(s, r []ir.PrimExpr, acc ir.PrimExpr) ir.PrimExpr {
		x := Load(a, reduceIndex(reduced, keep, s, r))
		hit := ir.NewBinary(ir.OpEQ, x, Load(extreme, s))
		return &ir.Select{Cond: hit, True: ir.NewBinary(ir.OpMin, acc, position(r)), False: acc}
	})
	return nil
}

// evalWhere picks x1 where condition holds, else x2, all broadcast together.
func evalWhere(call *ir.Call, args []Value) (Value, error) {
	op := opOf(call)
	var ins []*array
	for i := range 3 {
		a, err := argArray(op, args, i)
		if err != nil {
			return nil, err
		}
		ins = append(ins, a)
	}
	if !ins[0].dt.IsBool() {
		return nil, opErrorf(op, "condition must be a bool tensor, got %s", ins[0].dt)
	}
	if ins[1].dt != ins[2].dt {
		return nil, opErrorf(op, "data types %s and %s must be equal", ins[1].dt, ins[2].dt)
	}
	out, err := elementwise(op, ins[1].dt, ins, func(out *array, k int64, ks []int64) {
		src := 2
		if ins[0].i[ks[0]] != 0 {
			src = 1
		}
		out.copyElem(k, ins[src], ks[src])
	})
	if err != nil {
		return nil, err
	}
	return out.tensor()
}

// legalizeWhere is topi.where (T_where).
func legalizeWhere(k *Kernel, call *ir.Call) error {
	_, outDims, ok := knownTensorInfo(call.StructInfo())
	if !ok {
		return ErrNotLegalizable
	}
	outDims = k.Dims(outDims)
	var fs [3]func([]ir.PrimExpr) ir.PrimExpr
	for i, name := range []string{"A", "B", "C"} {
		f, err := k.Operand(call.Args[i], name, outDims)
		if err != nil {
			return err
		}
		fs[i] = f
	}
	out, err := k.Output("T_where")
	if err != nil {
		return err
	}
	k.Compute("T_where", out, "ax", func(v []ir.PrimExpr) ir.PrimExpr {
		return &ir.Select{Cond: fs[0](v), True: fs[1](v), False: fs[2](v)}
	})
	return nil
}
