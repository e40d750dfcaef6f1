package op

import (
	"slices"

	"github.com/phasec/phasec/ir"
)

// Ops in split layouts. A convolution or pool whose data, kernel or output
// layout splits an axis (NCHW16c, OIHW16i16o) computes what the same op
// computes in the primal layouts (NCHW, OIHW) on its operands re-laid out,
// its result re-laid out into the split output layout, as TVM's struct-info
// inference defines it (src/relax/op/nn/convolution.cc, pooling.cc: through
// BijectiveLayout::ForwardShape to the primal layout and BackwardShape
// back). A block size that does not divide its output axis pads the
// result: the padding holds 0, as R.layout_transform's default pad value.
//
// withSplitLayouts adds this to an op defined for primal layouts, around
// its inference, evaluation and legalization; calls without split layouts
// go to the op's own functions unchanged.
//
// Legalization: TVM leaves a convolution in a split layout alone (topi's
// conv has no such layouts; python/tvm/relax/transform/legalize_ops/nn.py
// returns the call) and legalizes pools through topi.nn.pool2d, which
// indexes split layouts itself. phasec legalizes both the same way: one
// kernel per split operand that re-lays it out into its primal layout, the
// op's own kernel in the primal layouts, and a kernel that re-lays the
// result out into the split output layout.

// layoutRole is a layout attribute of an op: the tensor it describes
// (argument arg, or the result when arg < 0) and the primal layout it must
// be convertible to.
type layoutRole struct {
	attr      string
	arg       int
	canonical string
	// fallback is the attribute an absent one stands for (out_layout:
	// data_layout), "" when it has a default of its own.
	fallback string
}

// convLayoutRoles are a convolution's layout attributes; kernelCanonical
// is OIHW (or IOHW for a transposed one) for the spatial rank.
func convLayoutRoles(spatial int, kernelCanonical string) []layoutRole {
	data, _ := convLayouts(spatial)
	return []layoutRole{{attr: "data_layout", arg: 0, canonical: data},
		{attr: "kernel_layout", arg: 1, canonical: kernelCanonical},
		{attr: "out_layout", arg: -1, canonical: data, fallback: "data_layout"}}
}

// poolLayoutRoles are a pool's layout attributes.
func poolLayoutRoles(spatial int) []layoutRole {
	data, _ := convLayouts(spatial)
	return []layoutRole{{attr: "layout", arg: 0, canonical: data},
		{attr: "out_layout", arg: -1, canonical: data, fallback: "layout"}}
}

// splitLayouts are the layouts of a call with a split layout.
type splitLayouts struct {
	roles   []layoutRole
	layouts []*tensorLayout // per role; nil where the layout is not split
	// primal is the call in the primal layouts (its attributes; the
	// arguments are the call's).
	primal *ir.Call
}

// readSplitLayouts reads call's layout attributes; nil when none splits an
// axis (the op's own functions then read them).
func readSplitLayouts(op *ir.Op, call *ir.Call, roles []layoutRole) (*splitLayouts, error) {
	s := &splitLayouts{roles: roles, layouts: make([]*tensorLayout, len(roles))}
	var attrs ir.Attrs
	for i, r := range roles {
		attr := r.attr
		v, ok := call.Attrs[attr]
		if (!ok || v == nil) && r.fallback != "" {
			attr = r.fallback
		}
		str, ok := opAttr(op, call, attr).(string)
		if !ok {
			return nil, nil // the op's own inference reports it
		}
		l, err := parseLayoutAttr(op, r.attr, str)
		if err != nil {
			return nil, err
		}
		if err := l.checkPrimal(r.canonical); err != nil {
			return nil, opErrorf(op, "%s %q is not convertible to %s: %v", r.attr, str, r.canonical, err)
		}
		if !l.split() {
			continue
		}
		s.layouts[i] = l
		if attrs == nil {
			attrs = cloneAttrs(call.Attrs)
		}
		attrs[r.attr] = l.primal()
	}
	if attrs == nil {
		return nil, nil
	}
	for i, r := range roles { // an absent out_layout is the data's, unsplit
		if _, ok := attrs[r.attr]; !ok && r.fallback != "" {
			if s.layouts[i] = s.layoutOf(r.fallback); s.layouts[i] != nil {
				attrs[r.attr] = s.layouts[i].primal()
			}
		}
	}
	s.primal = withCall(call, attrs, nil)
	s.primal.SetStructInfo(nil)
	return s, nil
}

// cloneAttrs is a copy of a, with room for one more attribute.
func cloneAttrs(a ir.Attrs) ir.Attrs {
	out := make(ir.Attrs, len(a)+1)
	for k, v := range a {
		out[k] = v
	}
	return out
}

// layoutOf is the split layout of the role of attribute attr, nil when
// unsplit.
func (s *splitLayouts) layoutOf(attr string) *tensorLayout {
	for i, r := range s.roles {
		if r.attr == attr {
			return s.layouts[i]
		}
	}
	return nil
}

// out is the split layout of the result, nil when unsplit.
func (s *splitLayouts) out() *tensorLayout {
	for i, r := range s.roles {
		if r.arg < 0 {
			return s.layouts[i]
		}
	}
	return nil
}

// unsplitInfo is the struct info, in the primal layout, of a tensor in the
// split layout l (a non-tensor is returned as it is, for the op to report).
func unsplitInfo(op *ir.Op, attr string, l *tensorLayout, si ir.StructInfo) (ir.StructInfo, error) {
	t, ok := si.(*ir.TensorInfo)
	if !ok {
		return si, nil
	}
	if t.NDim >= 0 && t.NDim != l.rank() {
		return nil, opErrorf(op, "%s %q is for %d-D tensors, got rank %d", attr, l.name, l.rank(), t.NDim)
	}
	dims, known := t.Dims()
	if !known {
		ndim := -1
		if t.NDim >= 0 {
			ndim = len(l.pos)
		}
		out := ir.TensorInfoNDim(t.DType, ndim)
		out.VDevice = t.VDevice
		return out, nil
	}
	pd, err := l.unsplitShape(dims)
	if err != nil {
		return nil, opErrorf(op, "%s: %v", attr, err)
	}
	out := newTensor(t.DType, pd, true, len(pd))
	out.VDevice = t.VDevice
	return out, nil
}

// splitInfo is the struct info in the split layout l of a result of struct
// info si in the primal layout.
func splitInfo(l *tensorLayout, si ir.StructInfo) ir.StructInfo {
	t, ok := si.(*ir.TensorInfo)
	if !ok {
		return si
	}
	dims, known := t.Dims()
	var out *ir.TensorInfo
	if known {
		out = newTensor(t.DType, l.splitShape(dims), true, l.rank())
	} else {
		out = ir.TensorInfoNDim(t.DType, l.rank())
	}
	out.VDevice = t.VDevice
	return out
}

// placeholder is a variable standing, in a call in the primal layouts, for
// argument arg of the call in split layouts, in layout l.
type placeholder struct {
	v   *ir.Var
	arg int
	l   *tensorLayout
}

// primalCall is s.primal with each split argument replaced by a variable of
// its struct info in the primal layout.
func (s *splitLayouts) primalCall(op *ir.Op, call *ir.Call) (pc *ir.Call, placeholders []placeholder, err error) {
	pc = withCall(s.primal, nil, nil)
	pc.Args = slices.Clone(call.Args)
	for i, r := range s.roles {
		l := s.layouts[i]
		if l == nil || r.arg < 0 || r.arg >= len(call.Args) {
			continue
		}
		si, err := unsplitInfo(op, r.attr, l, argStructInfo(call.Args[r.arg]))
		if err != nil {
			return nil, nil, err
		}
		v := ir.NewVar(opArgName(op, r.arg), si)
		pc.Args[r.arg] = v
		placeholders = append(placeholders, placeholder{v, r.arg, l})
	}
	return pc, placeholders, nil
}

// withSplitLayouts returns d taking split layouts in the attributes roles
// names.
func withSplitLayouts(d Def, roles []layoutRole) Def {
	op := d.Op
	infer, eval, legalize := op.Infer, d.Eval, d.Legalize
	if normalize := op.Normalize; normalize != nil {
		// The op's normalization (defaults, window lists) on the call in
		// primal layouts, the split layouts written back.
		op.Normalize = func(ctx *ir.InferCtx, call *ir.Call) (ir.Expr, error) {
			s, err := readSplitLayouts(op, call, roles)
			if err != nil || s == nil {
				if err != nil {
					return nil, err
				}
				return normalize(ctx, call)
			}
			e, err := normalize(ctx, s.primal)
			if err != nil {
				return nil, err
			}
			c, ok := e.(*ir.Call)
			if !ok || c == s.primal {
				return call, nil
			}
			attrs := cloneAttrs(c.Attrs)
			for _, r := range roles {
				attr := r.attr
				if v, ok := call.Attrs[attr]; (!ok || v == nil) && r.fallback != "" {
					attr = r.fallback
				}
				attrs[r.attr] = opAttr(op, call, attr)
			}
			nc := withCall(c, attrs, nil)
			nc.SetStructInfo(nil)
			return nc, nil
		}
	}
	op.Infer = func(ctx *ir.InferCtx, call *ir.Call) (ir.StructInfo, error) {
		s, err := readSplitLayouts(op, call, roles)
		if err != nil || s == nil {
			if err != nil {
				return nil, err
			}
			return infer(ctx, call)
		}
		pc, _, err := s.primalCall(op, call)
		if err != nil {
			return nil, err
		}
		si, err := infer(ctx, pc)
		if err != nil || s.out() == nil {
			return si, err
		}
		return splitInfo(s.out(), si), nil
	}
	if eval != nil {
		d.Eval = func(call *ir.Call, args []Value) (Value, error) {
			s, err := readSplitLayouts(op, call, roles)
			if err != nil || s == nil {
				if err != nil {
					return nil, err
				}
				return eval(call, args)
			}
			primalArgs := slices.Clone(args)
			for i, r := range roles {
				l := s.layouts[i]
				if l == nil || r.arg < 0 {
					continue
				}
				x, err := argArray(op, args, r.arg)
				if err != nil {
					return nil, err
				}
				u, err := unsplitArray(op, r.attr, l, x)
				if err != nil {
					return nil, err
				}
				if primalArgs[r.arg], err = u.tensor(); err != nil {
					return nil, err
				}
			}
			v, err := eval(s.primal, primalArgs)
			if err != nil || s.out() == nil {
				return v, err
			}
			y, err := toArray(v)
			if err != nil {
				return nil, opErrorf(op, "%v", err)
			}
			return splitArray(s.out(), y).tensor()
		}
	}
	if legalize != nil {
		d.Legalize = func(k *Kernel, call *ir.Call) error {
			s, err := readSplitLayouts(op, call, roles)
			if err != nil || s == nil {
				if err != nil {
					return err
				}
				return legalize(k, call)
			}
			return legalizeInSplitLayouts(k, call, s, infer, legalize)
		}
	}
	return d
}

// legalizeInSplitLayouts legalizes a call in split layouts: the op's kernel in the
// primal layouts, between kernels that re-lay its split operands and its
// result out. Nothing is emitted unless the op's kernel builds.
func legalizeInSplitLayouts(k *Kernel, call *ir.Call, s *splitLayouts, infer func(*ir.InferCtx, *ir.Call) (ir.StructInfo, error), legalize LegalizeFunc) error {
	op := opOf(call)
	if k.Emit == nil {
		return ErrNotLegalizable
	}
	pc, placeholders, err := s.primalCall(op, call)
	if err != nil {
		return err
	}
	for _, p := range placeholders {
		if _, _, ok := knownTensor(p.v); !ok {
			return ErrNotLegalizable
		}
	}
	si, err := infer(nil, pc)
	if err != nil {
		return err
	}
	pc.SetStructInfo(si)
	primal := NewKernel(pc)
	primal.Name = k.Name
	if err := legalize(primal, pc); err != nil {
		return err
	}
	// The operands, re-laid out into their primal layouts.
	for _, ph := range placeholders {
		v, l := ph.v, ph.l
		sub := NewKernel(call)
		sub.Name = "te_layout_transform"
		in, err := sub.Input(call.Args[ph.arg], "A")
		if err != nil {
			return err
		}
		out, err := sub.OutputOf("te_layout_transform", v.StructInfo())
		if err != nil {
			return err
		}
		sub.Compute("te_layout_transform", out, "ax", func(p []ir.PrimExpr) ir.PrimExpr { return Load(in, l.layoutIndex(p)) })
		ct, err := k.Emit.CallTIR(sub, v.StructInfo())
		if err != nil {
			return err
		}
		lv := k.Emit.Emit(ct, "lv")
		for i, a := range primal.Args {
			if a == v {
				primal.Args[i] = lv
			}
		}
	}
	l := s.out()
	if l == nil {
		emit := k.Emit
		*k = *primal
		k.Emit = emit
		return nil
	}
	ct, err := k.Emit.CallTIR(primal, si)
	if err != nil {
		return err
	}
	y := k.Emit.Emit(ct, "lv")
	// The result, re-laid out into the split output layout, padded with 0.
	k.Name = "te_layout_transform_with_pad"
	in, err := k.Input(y, "A")
	if err != nil {
		return err
	}
	out, err := k.Output("te_layout_transform_with_pad")
	if err != nil {
		return err
	}
	var an ir.Analyzer
	for _, d := range in.Shape {
		for _, v := range FreeVars(d) {
			an.AssumeNonNegative(v)
		}
	}
	k.Compute("te_layout_transform_with_pad", out, "ax", func(v []ir.PrimExpr) ir.PrimExpr {
		p := l.primalIndex(v)
		var cond ir.PrimExpr
		for j := range p {
			if l.sub[j] < 0 || an.CanProve(ir.NewBinary(ir.OpEQ, ir.FloorMod(in.Shape[j], ir.I64(l.factor[j])), ir.I64(0))) {
				continue
			}
			c := ir.NewBinary(ir.OpLT, p[j], in.Shape[j])
			if cond == nil {
				cond = c
			} else {
				cond = ir.NewBinary(ir.OpAnd, cond, c)
			}
		}
		if cond == nil {
			return Load(in, p)
		}
		return intrinsic("if_then_else", in.DType, cond, Load(in, p), constOf(in.DType, 0))
	})
	return nil
}

// unsplitArray is x, in the split layout l, in l's primal layout. Its
// subordinate axes must have their block sizes.
func unsplitArray(op *ir.Op, attr string, l *tensorLayout, x *array) (*array, error) {
	if len(x.shape) != l.rank() {
		return nil, opErrorf(op, "%s %q is for %d-D tensors, got shape %v", attr, l.name, l.rank(), x.shape)
	}
	for j, s := range l.sub {
		if s >= 0 && x.shape[s] != l.factor[j] {
			return nil, opErrorf(op, "%s: axis %d (the block of %c in %s) has extent %d, the layout says %d", attr, s, l.axes[s].letter, l.name, x.shape[s], l.factor[j])
		}
	}
	out := newArray(x.dt, l.unsplitInts(x.shape))
	idx, p := make([]int64, len(x.shape)), make([]int64, len(out.shape))
	for k := range x.size() {
		unravel(k, x.shape, idx)
		l.primalIndexInts(idx, p)
		out.copyElem(flatIndex(p, out.shape), x, k)
	}
	return out, nil
}

// splitArray is y, in l's primal layout, in the split layout l; positions
// past the end of a split axis hold 0.
func splitArray(l *tensorLayout, y *array) *array {
	out := newArray(y.dt, l.splitInts(y.shape))
	p, idx := make([]int64, len(y.shape)), make([]int64, len(out.shape))
	for k := range y.size() {
		unravel(k, y.shape, p)
		for j, pos := range l.pos {
			idx[pos] = p[j]
			if s := l.sub[j]; s >= 0 {
				idx[pos], idx[s] = p[j]/l.factor[j], p[j]%l.factor[j]
			}
		}
		out.copyElem(flatIndex(idx, out.shape), y, k)
	}
	return out
}
