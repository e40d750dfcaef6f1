package op

import (
	"github.com/phasec/phasec/ir"
)

// Losses (TVM's nn.py; src/relax/op/nn/nn.cc; legalized as
// legalize_ops/nn.py does through topi): cross_entropy_with_logits and
// nll_loss.

var (
	// CrossEntropyWithLogits is R.nn.cross_entropy_with_logits(predictions,
	// labels): -sum(predictions * labels), divided by the batch size
	// (dimension 0) when predictions has rank > 1.
	CrossEntropyWithLogits = Define(newCrossEntropyOp())
	// NLLLoss is R.nn.nll_loss(predictions, targets, weights=None,
	// reduction="mean", ignore_index=-100).
	NLLLoss = Define(newNLLLossOp())
)

func newCrossEntropyOp() Def {
	op := &ir.Op{Name: "relax.nn.cross_entropy_with_logits", Doc: "Cross entropy of logits and labels, averaged over the batch.",
		Pure: true, Category: ir.CatTensor, Pattern: ir.PatternOpaque,
		Params: []ir.Param{{Name: "predictions", Kind: ir.ArgExpr}, {Name: "labels", Kind: ir.ArgExpr}}}
	op.Infer = func(_ *ir.InferCtx, call *ir.Call) (ir.StructInfo, error) {
		if err := opCheckArity(op, call); err != nil {
			return nil, err
		}
		p, err := firstTensorArg(op, call)
		if err != nil {
			return nil, err
		}
		l, err := tensorArg(op, call, 1)
		if err != nil {
			return nil, err
		}
		dt, err := unifyDType(op, p.DType, l.DType)
		if err != nil {
			return nil, err
		}
		if err := checkTensorMatch(op, l, p, "labels", "predictions"); err != nil {
			return nil, err
		}
		if p.NDim == 0 {
			return nil, opErrorf(op, "predictions must have rank at least 1")
		}
		return newTensor(dt, nil, true, 0), nil
	}
	eval := func(call *ir.Call, args []Value) (Value, error) {
		p, l, err := binaryArgs(op, args)
		if err != nil {
			return nil, err
		}
		if !sameDims(p.shape, l.shape) || len(p.shape) == 0 {
			return nil, opErrorf(op, "predictions %v and labels %v must have one shape of rank >= 1", p.shape, l.shape)
		}
		s := 0.0
		for k := range p.size() {
			s += p.float(k) * l.float(k)
		}
		s = -s
		if len(p.shape) > 1 {
			s /= float64(p.shape[0])
		}
		out := newArray(p.dt, nil)
		out.setFloat(0, s)
		return out.tensor()
	}
	legalize := func(k *Kernel, call *ir.Call) error {
		p, err := k.Input(call.Args[0], "A")
		if err != nil {
			return err
		}
		l, err := k.Input(call.Args[1], "B")
		if err != nil {
			return err
		}
		out, err := k.Output("T_cross_entropy")
		if err != nil {
			return err
		}
		dt := out.DType
		sum := k.Alloc("T_cross_entropy_sum", dt, nil)
		k.Reduce("T_cross_entropy_sum", sum, "ax", p.Shape, constOf(dt, 0), func(_, r []ir.PrimExpr, acc ir.PrimExpr) ir.PrimExpr {
			return ir.NewBinary(ir.OpAdd, acc, ir.NewBinary(ir.OpMul, Load(p, r), Load(l, r)))
		})
		k.Compute("T_cross_entropy", out, "ax", func([]ir.PrimExpr) ir.PrimExpr {
			y := ir.NewBinary(ir.OpSub, constOf(dt, 0), Load(sum, nil))
			if len(p.Shape) > 1 {
				return ir.NewBinary(ir.OpDiv, y, castTo(dt, p.Shape[0]))
			}
			return y
		})
		return nil
	}
	return Def{Op: op, Eval: eval, Legalize: legalize}
}

func newNLLLossOp() Def {
	op := &ir.Op{Name: "relax.nn.nll_loss", Doc: "Negative log likelihood loss of log-probabilities and class targets.",
		Pure: true, Category: ir.CatTensor, Pattern: ir.PatternOutEWiseFusable,
		Params: []ir.Param{{Name: "predictions", Kind: ir.ArgExpr}, {Name: "targets", Kind: ir.ArgExpr}, {Name: "weights", Kind: ir.ArgExpr, Optional: true},
			{Name: "reduction", Kind: ir.AttrStr, Default: "mean"}, {Name: "ignore_index", Kind: ir.AttrInt, Default: int64(-100)}}}
	reduction := func(call *ir.Call) (string, error) {
		r, _ := opAttr(op, call, "reduction").(string)
		if r != "none" && r != "mean" && r != "sum" {
			return "", opErrorf(op, "reduction must be \"none\", \"mean\" or \"sum\", got %q", r)
		}
		return r, nil
	}
	// classAxis is the class dimension of predictions of rank n.
	classAxis := func(n int) int {
		if n == 1 {
			return 0
		}
		return 1
	}
	op.Infer = func(_ *ir.InferCtx, call *ir.Call) (ir.StructInfo, error) {
		if len(call.Args) < 2 || len(call.Args) > 3 {
			return nil, opErrorf(op, "takes predictions, targets and optional weights, got %d arguments", len(call.Args))
		}
		p, err := firstTensorArg(op, call)
		if err != nil {
			return nil, err
		}
		if err := requireFloat(op, p.DType); err != nil {
			return nil, err
		}
		t, err := tensorArg(op, call, 1)
		if err != nil {
			return nil, err
		}
		if !t.DType.IsVoid() && !t.DType.IsInteger() {
			return nil, opErrorf(op, "targets must be an integer tensor, got %s", t.DType)
		}
		red, err := reduction(call)
		if err != nil {
			return nil, err
		}
		if p.NDim == 0 {
			return nil, opErrorf(op, "predictions must have rank at least 1")
		}
		if p.NDim > 0 && t.NDim >= 0 && t.NDim != max(p.NDim-1, 0) {
			return nil, opErrorf(op, "targets must have rank %d (predictions' without the class axis), got %d", p.NDim-1, t.NDim)
		}
		pd, okP := p.Dims()
		td, okT := t.Dims()
		if okP && okT && len(pd) > 1 {
			want := append([]ir.PrimExpr{pd[0]}, pd[2:]...)
			for i := range td {
				if dimsProvablyDiffer(td[i], want[i]) {
					return nil, opErrorf(op, "targets dimension %d is %s but predictions' is %s", i, fmtDim(td[i]), fmtDim(want[i]))
				}
			}
		}
		if len(call.Args) == 3 {
			w, err := tensorArg(op, call, 2)
			if err != nil {
				return nil, err
			}
			if _, err := unifyDType(op, p.DType, w.DType); err != nil {
				return nil, err
			}
			if w.NDim >= 0 && w.NDim != 1 {
				return nil, opErrorf(op, "weights must be 1-D, got rank %d", w.NDim)
			}
			if wd, ok := w.Dims(); ok && okP && dimsProvablyDiffer(wd[0], pd[classAxis(len(pd))]) {
				return nil, opErrorf(op, "weights has %s entries but predictions has %s classes", fmtDim(wd[0]), fmtDim(pd[classAxis(len(pd))]))
			}
		}
		if red != "none" {
			return newTensor(p.DType, nil, true, 0), nil
		}
		return withDType(t, p.DType), nil
	}
	op.Normalize = schemaNormalize(op)
	eval := func(call *ir.Call, args []Value) (Value, error) {
		p, err := argArray(op, args, 0)
		if err != nil {
			return nil, err
		}
		t, err := argArray(op, args, 1)
		if err != nil {
			return nil, err
		}
		red, err := reduction(call)
		if err != nil {
			return nil, err
		}
		ignore, _, err := opAttrInt(op, call, "ignore_index")
		if err != nil {
			return nil, err
		}
		if p.f == nil || t.f != nil || len(p.shape) == 0 || len(t.shape) != len(p.shape)-1 {
			return nil, opErrorf(op, "predictions %s%v and targets %s%v do not fit", p.dt, p.shape, t.dt, t.shape)
		}
		ca := classAxis(len(p.shape))
		c := p.shape[ca]
		var w *array
		if len(args) > 2 && args[2] != nil {
			if w, err = argArray(op, args, 2); err != nil {
				return nil, err
			}
			if len(w.shape) != 1 || w.shape[0] != c {
				return nil, opErrorf(op, "weights %v must have %d entries", w.shape, c)
			}
		}
		loss := newArray(p.dt, t.shape)
		idx := make([]int64, len(t.shape))
		src := make([]int64, len(p.shape))
		var sum, wsum float64
		for k := range t.size() {
			cls := t.i[k]
			if cls == ignore {
				continue
			}
			if cls < 0 || cls >= c {
				return nil, opErrorf(op, "target %d is out of range for %d classes", cls, c)
			}
			unravel(k, t.shape, idx)
			if len(p.shape) > 1 {
				src[0] = idx[0]
				copy(src[2:], idx[1:])
			}
			src[ca] = cls
			wt := 1.0
			if w != nil {
				wt = w.f[cls]
			}
			l := -p.f[flatIndex(src, p.shape)] * wt
			loss.setFloat(k, l)
			sum += l
			wsum += wt
		}
		switch red {
		case "none":
			return loss.tensor()
		case "mean":
			sum /= wsum
		}
		out := newArray(p.dt, nil)
		out.setFloat(0, sum)
		return out.tensor()
	}
	legalize := func(k *Kernel, call *ir.Call) error {
		red, err := reduction(call)
		if err != nil {
			return err
		}
		ignore, _, err := opAttrInt(op, call, "ignore_index")
		if err != nil {
			return err
		}
		p, err := k.Input(call.Args[0], "A")
		if err != nil {
			return err
		}
		t, err := k.Input(call.Args[1], "B")
		if err != nil {
			return err
		}
		var w *ir.Buffer
		if len(call.Args) > 2 {
			if w, err = k.Input(call.Args[2], "C"); err != nil {
				return err
			}
		}
		out, err := k.Output("T_nll_loss")
		if err != nil {
			return err
		}
		dt := p.DType
		valid := func(cls ir.PrimExpr) ir.PrimExpr { return ir.NewBinary(ir.OpNE, cls, ir.I64(ignore)) }
		weight := func(cls ir.PrimExpr) ir.PrimExpr {
			if w == nil {
				return constOf(dt, 1)
			}
			return Load(w, []ir.PrimExpr{cls})
		}
		lossAt := func(v []ir.PrimExpr) ir.PrimExpr {
			cls := castTo(ir.Int64, Load(t, v))
			var src []ir.PrimExpr
			if len(p.Shape) > 1 {
				src = append([]ir.PrimExpr{v[0], cls}, v[1:]...)
			} else {
				src = []ir.PrimExpr{cls}
			}
			l := ir.NewBinary(ir.OpMul, ir.NewBinary(ir.OpSub, constOf(dt, 0), Load(p, src)), weight(cls))
			return intrinsic("if_then_else", dt, valid(cls), l, constOf(dt, 0))
		}
		if red == "none" {
			k.Compute("T_nll_loss", out, "ax", lossAt)
			return nil
		}
		// sumOver emits a scalar block summing f over targets' elements.
		sumOver := func(name string, f func(r []ir.PrimExpr) ir.PrimExpr) *ir.Buffer {
			b := k.Alloc(name, dt, nil)
			if len(t.Shape) == 0 {
				k.Compute(name, b, "ax", func([]ir.PrimExpr) ir.PrimExpr { return f(nil) })
				return b
			}
			k.Reduce(name, b, "ax", t.Shape, constOf(dt, 0), func(_, r []ir.PrimExpr, acc ir.PrimExpr) ir.PrimExpr {
				return ir.NewBinary(ir.OpAdd, acc, f(r))
			})
			return b
		}
		sum := sumOver("T_nll_loss_sum", lossAt)
		if red == "sum" {
			k.Compute("T_nll_loss", out, "ax", func([]ir.PrimExpr) ir.PrimExpr { return Load(sum, nil) })
			return nil
		}
		wsum := sumOver("T_nll_loss_weight_sum", func(r []ir.PrimExpr) ir.PrimExpr {
			cls := castTo(ir.Int64, Load(t, r))
			return intrinsic("if_then_else", dt, valid(cls), weight(cls), constOf(dt, 0))
		})
		k.Compute("T_nll_loss", out, "ax", func([]ir.PrimExpr) ir.PrimExpr {
			return ir.NewBinary(ir.OpDiv, Load(sum, nil), Load(wsum, nil))
		})
		return nil
	}
	return Def{Op: op, Eval: eval, Legalize: legalize}
}
