package op

import (
	"math"

	"github.com/phasec/phasec/ir"
)

// Reductions over axes: R.sum(x, axis=None, keepdims=False) and friends.
// axis None reduces every axis. Max / Min are R.max / R.min
// (OpMax / OpMin are PrimExpr operators).

var (
	Sum = Define(Def{Op: newReduceOp("relax.sum", "Sum over axes."),
		Eval:     reduceEval(func(acc, x float64) float64 { return acc + x }, func(acc, x int64) int64 { return acc + x }, 0, false),
		Legalize: reduceLegalize(func(dt ir.DataType) ir.PrimExpr { return constOf(dt, 0) }, addPrim, false),
		Layout:   layoutReduce})
	Mean = Define(Def{Op: newReduceOp("relax.mean", "Mean over axes."),
		Eval:     reduceEval(func(acc, x float64) float64 { return acc + x }, func(acc, x int64) int64 { return acc + x }, 0, true),
		Legalize: reduceLegalize(func(dt ir.DataType) ir.PrimExpr { return constOf(dt, 0) }, addPrim, true),
		Layout:   layoutReduce})
	Max = Define(Def{Op: newReduceOp("relax.max", "Maximum over axes."),
		Eval: reduceExtremeEval(1),
		Legalize: reduceLegalize(func(dt ir.DataType) ir.PrimExpr { return limitValue(dt, true) },
			func(acc, x ir.PrimExpr) ir.PrimExpr { return ir.NewBinary(ir.OpMax, acc, x) }, false),
		Layout: layoutReduce})
	Min = Define(Def{Op: newReduceOp("relax.min", "Minimum over axes."),
		Eval: reduceExtremeEval(-1),
		Legalize: reduceLegalize(func(dt ir.DataType) ir.PrimExpr { return limitValue(dt, false) },
			func(acc, x ir.PrimExpr) ir.PrimExpr { return ir.NewBinary(ir.OpMin, acc, x) }, false),
		Layout: layoutReduce})
	Prod = Define(Def{Op: newReduceOp("relax.prod", "Product over axes."),
		Eval: reduceEval(func(acc, x float64) float64 { return acc * x }, func(acc, x int64) int64 { return acc * x }, 1, false),
		Legalize: reduceLegalize(func(dt ir.DataType) ir.PrimExpr { return constOf(dt, 1) },
			func(acc, x ir.PrimExpr) ir.PrimExpr { return ir.NewBinary(ir.OpMul, acc, x) }, false),
		Layout: layoutReduce})
)

func newReduceOp(name, doc string) *ir.Op {
	op := &ir.Op{
		Name: name, Doc: doc, Pure: true, Category: ir.CatTensor, Pattern: ir.PatternCommReduce,
		Params: []ir.Param{
			{Name: "x", Kind: ir.ArgExpr},
			{Name: "axis", Kind: ir.AttrInts, Optional: true, PrintNone: true},
			{Name: "keepdims", Kind: ir.AttrBool, Default: false},
		},
	}
	op.Infer = func(_ *ir.InferCtx, call *ir.Call) (ir.StructInfo, error) { return inferReduce(op, call) }
	op.Normalize = schemaNormalize(op)
	return op
}

func inferReduce(op *ir.Op, call *ir.Call) (ir.StructInfo, error) {
	t, err := firstTensorArg(op, call)
	if err != nil {
		return nil, err
	}
	axes, hasAxis, err := opAttrInts(op, call, "axis")
	if err != nil {
		return nil, err
	}
	keep, err := opAttrBool(op, call, "keepdims")
	if err != nil {
		return nil, err
	}
	if t.NDim < 0 {
		switch {
		case keep:
			return ir.TensorInfoNDim(t.DType, -1), nil
		case !hasAxis:
			return ir.TensorInfoOf(t.DType), nil
		}
		return ir.TensorInfoNDim(t.DType, -1), nil
	}
	reduced := make([]bool, t.NDim)
	if hasAxis {
		norm, err := normAxes(op, axes, t.NDim)
		if err != nil {
			return nil, err
		}
		for _, a := range norm {
			reduced[a] = true
		}
	} else {
		for i := range reduced {
			reduced[i] = true
		}
	}
	outNDim := 0
	for _, r := range reduced {
		if keep || !r {
			outNDim++
		}
	}
	dims, ok := t.Dims()
	if !ok {
		return ir.TensorInfoNDim(t.DType, outNDim), nil
	}
	out := make([]ir.PrimExpr, 0, outNDim)
	for i, d := range dims {
		switch {
		case !reduced[i]:
			out = append(out, d)
		case keep:
			out = append(out, ir.I64(1))
		}
	}
	return newTensor(t.DType, out, true, outNDim), nil
}

// --- evaluation -------------------------------------------------------------

// reduction describes reducing an array over some axes: out holds one
// element per group, and group / inner map an input multi-index to its
// output element and to its position within the group (row-major over the
// reduced axes, in axis order).
type reduction struct {
	in         *array
	reduced    []bool
	outShape   []int64 // with keepdims applied
	groupShape []int64 // the kept dims
	innerShape []int64 // the reduced dims
	count      int64   // elements per group
}

// newReduction resolves the reduced axes (nil: all of them).
func newReduction(op *ir.Op, x *array, axes []int64, all, keep bool) (*reduction, error) {
	r := &reduction{in: x, reduced: make([]bool, len(x.shape)), count: 1}
	if all {
		for i := range r.reduced {
			r.reduced[i] = true
		}
	}
	for _, a := range axes {
		i, err := normAxisEval(op, a, len(x.shape))
		if err != nil {
			return nil, err
		}
		if r.reduced[i] && !all {
			return nil, opErrorf(op, "axis %d appears twice", a)
		}
		r.reduced[i] = true
	}
	r.outShape, r.groupShape, r.innerShape = []int64{}, []int64{}, []int64{}
	for i, d := range x.shape {
		if r.reduced[i] {
			r.count *= d
			r.innerShape = append(r.innerShape, d)
			if keep {
				r.outShape = append(r.outShape, 1)
			}
			continue
		}
		r.groupShape = append(r.groupShape, d)
		r.outShape = append(r.outShape, d)
	}
	return r, nil
}

// each calls f(group, inner, k) for every input element k.
func (r *reduction) each(f func(group, inner, k int64)) {
	idx := make([]int64, len(r.in.shape))
	n := r.in.size()
	for k := int64(0); k < n; k++ {
		unravel(k, r.in.shape, idx)
		g, in := int64(0), int64(0)
		for i, d := range r.in.shape {
			if r.reduced[i] {
				in = in*d + idx[i]
			} else {
				g = g*d + idx[i]
			}
		}
		f(g, in, k)
	}
}

// reduceAttrs reads axis and keepdims.
func reduceAttrs(op *ir.Op, call *ir.Call) (axes []int64, all, keep bool, err error) {
	axes, has, err := opAttrInts(op, call, "axis")
	if err != nil {
		return nil, false, false, err
	}
	keep, err = opAttrBool(op, call, "keepdims")
	return axes, !has, keep, err
}

// reduceEval evaluates a sum-like reduction; mean divides by the count (in
// the input dtype: integer means truncate, as topi's sum / count does).
func reduceEval(ff func(acc, x float64) float64, fi func(acc, x int64) int64, init float64, mean bool) EvalFunc {
	return func(call *ir.Call, args []Value) (Value, error) {
		op := opOf(call)
		x, err := argArray(op, args, 0)
		if err != nil {
			return nil, err
		}
		axes, all, keep, err := reduceAttrs(op, call)
		if err != nil {
			return nil, err
		}
		r, err := newReduction(op, x, axes, all, keep)
		if err != nil {
			return nil, err
		}
		ng := numElems(r.groupShape)
		accF := make([]float64, ng)
		accI := make([]int64, ng)
		for g := range accF {
			accF[g], accI[g] = init, int64(init)
		}
		r.each(func(g, _, k int64) {
			if x.f != nil {
				accF[g] = ff(accF[g], x.f[k])
			} else {
				accI[g] = fi(accI[g], x.i[k])
			}
		})
		out := newArray(x.dt, r.outShape)
		for g := int64(0); g < ng; g++ {
			switch {
			case x.f != nil && mean:
				out.setFloat(g, accF[g]/float64(r.count))
			case x.f != nil:
				out.setFloat(g, accF[g])
			case mean && r.count == 0:
				return nil, opErrorf(op, "mean of an empty integer tensor")
			case mean:
				q, _ := truncDivI(accI[g], r.count)
				out.setInt(g, q)
			default:
				out.setInt(g, accI[g])
			}
		}
		return out.tensor()
	}
}

// reduceExtremeEval evaluates max (sign 1) or min (sign -1); reducing an
// empty axis is an error, as in numpy. NaN propagates.
func reduceExtremeEval(sign int) EvalFunc {
	return func(call *ir.Call, args []Value) (Value, error) {
		op := opOf(call)
		x, err := argArray(op, args, 0)
		if err != nil {
			return nil, err
		}
		axes, all, keep, err := reduceAttrs(op, call)
		if err != nil {
			return nil, err
		}
		r, err := newReduction(op, x, axes, all, keep)
		if err != nil {
			return nil, err
		}
		ng := numElems(r.groupShape)
		if r.count == 0 && ng > 0 {
			return nil, opErrorf(op, "reduction over an empty axis has no identity")
		}
		out := newArray(x.dt, r.outShape)
		seen := make([]bool, ng)
		r.each(func(g, _, k int64) {
			if x.f != nil {
				v := x.f[k]
				if !seen[g] || math.IsNaN(v) || (!math.IsNaN(out.f[g]) && cmpFloat(v, out.f[g]) == sign) {
					out.f[g] = v
				}
			} else {
				v := x.i[k]
				c := cmpInt(v, out.i[g])
				if x.dt.IsUInt() {
					c = cmpUint(uint64(v), uint64(out.i[g]))
				}
				if !seen[g] || c == sign {
					out.i[g] = v
				}
			}
			seen[g] = true
		})
		return out.tensor()
	}
}

// --- legalization -------------------------------------------------------------

// addPrim is the sum's combiner.
func addPrim(acc, x ir.PrimExpr) ir.PrimExpr { return ir.NewBinary(ir.OpAdd, acc, x) }

// reduceLegalize lowers a reduction to topi's form: one reduction block
// A_red with T.init (sum 0, prod 1, max T.min_value, min T.max_value);
// mean divides the sum by the element count in a second block, T_divide.
func reduceLegalize(init func(ir.DataType) ir.PrimExpr, combine func(acc, x ir.PrimExpr) ir.PrimExpr, mean bool) LegalizeFunc {
	return func(k *Kernel, call *ir.Call) error {
		op := opOf(call)
		a, err := k.Input(call.Args[0], "A")
		if err != nil {
			return err
		}
		axes, all, keep, err := reduceAttrs(op, call)
		if err != nil {
			return err
		}
		reduced, err := reducedAxes(op, axes, all, len(a.Shape))
		if err != nil {
			return err
		}
		var extents []ir.PrimExpr
		count := ir.PrimExpr(ir.I64(1))
		for i, r := range reduced {
			if r {
				extents = append(extents, a.Shape[i])
				count = ir.Simplify(ir.Mul(count, a.Shape[i]))
			}
		}
		red := func(out *ir.Buffer) {
			k.Reduce("A_red", out, "ax", extents, init(a.DType), func(s, r []ir.PrimExpr, acc ir.PrimExpr) ir.PrimExpr {
				return combine(acc, Load(a, reduceIndex(reduced, keep, s, r)))
			})
		}
		if !mean {
			out, err := k.Output("A_red")
			if err != nil {
				return err
			}
			red(out)
			return nil
		}
		out, err := k.Output("T_divide")
		if err != nil {
			return err
		}
		sum := k.Alloc("A_red", a.DType, out.Shape)
		red(sum)
		k.Compute("T_divide", out, "ax", func(v []ir.PrimExpr) ir.PrimExpr {
			return ir.NewBinary(ir.OpDiv, Load(sum, v), castTo(a.DType, count))
		})
		return nil
	}
}

// --- variance and std -----------------------------------------------------------

var (
	// Variance is R.variance(x, axis=None, keepdims=False): the mean of the
	// squared deviations from the mean (biased, as topi.variance).
	Variance = Define(newMomentOp("relax.variance", "Variance over axes (biased).", false))
	// Std is R.std(x, axis=None, keepdims=False): the square root of the variance.
	Std = Define(newMomentOp("relax.std", "Standard deviation over axes (biased).", true))
)

// newMomentOp is variance or (sqrt) std: a float reduction of the squared
// deviations from the mean.
func newMomentOp(name, doc string, sqrt bool) Def {
	op := newReduceOp(name, doc)
	infer := op.Infer
	op.Infer = func(ctx *ir.InferCtx, call *ir.Call) (ir.StructInfo, error) {
		s, err := infer(ctx, call)
		if err != nil {
			return nil, err
		}
		if t, ok := s.(*ir.TensorInfo); ok {
			if err := requireFloat(op, t.DType); err != nil {
				return nil, err
			}
		}
		return s, nil
	}
	eval := func(call *ir.Call, args []Value) (Value, error) {
		x, err := argArray(op, args, 0)
		if err != nil {
			return nil, err
		}
		if x.f == nil {
			return nil, opErrorf(op, "x must be a float tensor, got %s", x.dt)
		}
		axes, all, keep, err := reduceAttrs(op, call)
		if err != nil {
			return nil, err
		}
		r, err := newReduction(op, x, axes, all, keep)
		if err != nil {
			return nil, err
		}
		ng := numElems(r.groupShape)
		mean, sq := make([]float64, ng), make([]float64, ng)
		r.each(func(g, _, k int64) { mean[g] += x.f[k] })
		for g := range mean {
			mean[g] /= float64(r.count)
		}
		r.each(func(g, _, k int64) { d := x.f[k] - mean[g]; sq[g] += d * d })
		out := newArray(x.dt, r.outShape)
		for g := int64(0); g < ng; g++ {
			v := sq[g] / float64(r.count)
			if sqrt {
				v = math.Sqrt(v)
			}
			out.setFloat(g, v)
		}
		return out.tensor()
	}
	legalize := func(k *Kernel, call *ir.Call) error {
		a, err := k.Input(call.Args[0], "A")
		if err != nil {
			return err
		}
		axes, all, keep, err := reduceAttrs(op, call)
		if err != nil {
			return err
		}
		reduced, err := reducedAxes(op, axes, all, len(a.Shape))
		if err != nil {
			return err
		}
		var extents []ir.PrimExpr
		kept := make([]ir.PrimExpr, len(a.Shape))
		count := ir.PrimExpr(ir.I64(1))
		for i, r := range reduced {
			kept[i] = a.Shape[i]
			if r {
				extents = append(extents, a.Shape[i])
				kept[i] = ir.I64(1)
				count = ir.Simplify(ir.Mul(count, a.Shape[i]))
			}
		}
		name := "T_" + op.Name[len("relax."):]
		out, err := k.Output(name)
		if err != nil {
			return err
		}
		dt := a.DType
		n := castTo(dt, count)
		sum := k.Alloc(name+"_sum", dt, kept)
		k.Reduce(sum.Name, sum, "ax", extents, constOf(dt, 0), func(s, r []ir.PrimExpr, acc ir.PrimExpr) ir.PrimExpr {
			return ir.NewBinary(ir.OpAdd, acc, Load(a, reduceIndex(reduced, true, s, r)))
		})
		dev := k.Alloc(name+"_dev", dt, out.Shape)
		k.Reduce(dev.Name, dev, "ax", extents, constOf(dt, 0), func(s, r []ir.PrimExpr, acc ir.PrimExpr) ir.PrimExpr {
			full := reduceIndex(reduced, keep, s, r)
			d := ir.NewBinary(ir.OpSub, Load(a, full), ir.NewBinary(ir.OpDiv, Load(sum, groupIndex(reduced, full)), n))
			return ir.NewBinary(ir.OpAdd, acc, ir.NewBinary(ir.OpMul, d, d))
		})
		k.Compute(name, out, "ax", func(v []ir.PrimExpr) ir.PrimExpr {
			var e ir.PrimExpr = ir.NewBinary(ir.OpDiv, Load(dev, v), n)
			if sqrt {
				e = intrinsic("sqrt", dt, e)
			}
			return e
		})
		return nil
	}
	return Def{Op: op, Eval: eval, Legalize: legalize, Layout: layoutReduce}
}
