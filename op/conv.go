package op

import (
	"strings"

	"github.com/phasec/phasec/ir"
)

// Convolution, pooling and padding (TVM's nn.py: src/relax/op/nn/
// convolution.cc, pooling.cc, nn.cc; legalized as
// python/tvm/relax/transform/legalize_ops/nn.py does, through topi's
// nn.pad, nn.conv2d_nchw / group_conv2d_nchw and nn.pool2d).
//
// Layouts may be any permutation of the canonical ones (NCHW data, OIHW
// weight: NHWC, HWIO, ...; out_layout None is data_layout), and may split
// axes (NCHW16c, OIHW16i16o): a call in split layouts computes in its
// primal layouts (op/layout_split_ops.go). TVM legalizes fewer (topi's
// conv2d covers NCHW, NHWC and HWCN, and no split layout); phasec's gather
// reads any permutation.
// Window attributes are kept in TVM's canonical form after normalization:
// strides and dilation one entry per spatial axis, padding as the
// (before..., after...) pairs of the spatial axes (top, left, bottom, right
// for 2-D).

var (
	// Pad is R.nn.pad(data, pad_width, pad_mode="constant", pad_value=0.0).
	Pad = Define(newPadOp())
	// Conv2D is R.nn.conv2d(data, weight, strides, padding, dilation,
	// groups, data_layout, kernel_layout, out_layout, out_dtype).
	Conv2D = Define(newConvOp(2))
	// Conv1D is R.nn.conv1d (NCW data, OIW weight), as conv2d.
	Conv1D = Define(newConvOp(1))
	// Conv3D is R.nn.conv3d (NCDHW data, OIDHW weight), as conv2d.
	Conv3D = Define(newConvOp(3))
)

// --- shared window helpers ----------------------------------------------------

// expandInts expands a 1-entry list to n entries; other lengths must be n.
func expandInts(op *ir.Op, name string, v []int64, n int) ([]int64, error) {
	if len(v) == 1 && n > 1 {
		out := make([]int64, n)
		for i := range out {
			out[i] = v[0]
		}
		return out, nil
	}
	if len(v) != n {
		return nil, opErrorf(op, "%s must have 1 or %d entries, got %v", name, n, v)
	}
	return v, nil
}

// completePadding is TVM's GetCompletePadding: 1 entry for every side, one
// per spatial axis (before = after), or (before..., after...).
func completePadding(op *ir.Op, v []int64, spatial int) ([]int64, error) {
	switch len(v) {
	case 1:
		return expandInts(op, "padding", v, 2*spatial)
	case spatial:
		return append(append([]int64{}, v...), v...), nil
	case 2 * spatial:
		return v, nil
	}
	if spatial == 1 {
		return nil, opErrorf(op, "padding must have 1 or 2 entries, got %v", v)
	}
	return nil, opErrorf(op, "padding must have 1, %d or %d entries, got %v", spatial, 2*spatial, v)
}

// window holds the canonical window attributes of a call.
type window struct {
	kernel, strides, dilation, padding []int64 // padding: before..., after...
}

func windowAttrs(op *ir.Op, call *ir.Call, spatial int, kernelAttr string) (window, error) {
	var w window
	read := func(name string) ([]int64, error) {
		v, _, err := opAttrInts(op, call, name)
		if err != nil {
			return nil, err
		}
		for _, x := range v {
			if x < 0 || (x == 0 && name != "padding") {
				return nil, opErrorf(op, "%s must be positive, got %v", name, v)
			}
		}
		if name == "padding" {
			return completePadding(op, v, spatial)
		}
		return expandInts(op, name, v, spatial)
	}
	var err error
	if kernelAttr != "" {
		if w.kernel, err = read(kernelAttr); err != nil {
			return w, err
		}
	}
	if w.strides, err = read("strides"); err != nil {
		return w, err
	}
	if w.dilation, err = read("dilation"); err != nil {
		return w, err
	}
	w.padding, err = read("padding")
	return w, err
}

// normalizeWindow fills defaults and rewrites the window attributes into
// their canonical lengths, so that parsed and built calls compare equal.
func normalizeWindow(op *ir.Op, spatial int, kernelAttr string) func(*ir.InferCtx, *ir.Call) (ir.Expr, error) {
	return func(_ *ir.InferCtx, call *ir.Call) (ir.Expr, error) {
		c, err := normalizeSchema(op, call)
		if err != nil {
			return nil, err
		}
		w, err := windowAttrs(op, c, spatial, kernelAttr)
		if err != nil {
			return nil, err
		}
		lists := map[string][]int64{"strides": w.strides, "dilation": w.dilation, "padding": w.padding}
		if kernelAttr != "" {
			lists[kernelAttr] = w.kernel
		}
		return withIntLists(op, c, lists), nil
	}
}

// withIntLists returns c with the given list attributes, or c itself when
// it already carries them.
func withIntLists(op *ir.Op, c *ir.Call, lists map[string][]int64) *ir.Call {
	var attrs ir.Attrs
	for name, v := range lists {
		cur, _, _ := opAttrInts(op, c, name)
		if sameDims(cur, v) {
			continue
		}
		attrs = copyAttrsOnce(attrs, c.Attrs)
		list := make([]any, len(v))
		for i, x := range v {
			list[i] = x
		}
		attrs[name] = list
	}
	if attrs == nil {
		return c
	}
	out := *c
	out.SetStructInfo(nil)
	out.Attrs = attrs
	return &out
}

// windowOutDim is floor((in + before + after - dilation*(k-1) - 1 [+ stride - 1 in
// ceil mode]) / stride) + 1, TVM's output extent of a sliding window.
func windowOutDim(in, k ir.PrimExpr, stride, dilation, before, after int64, ceil bool) ir.PrimExpr {
	num := ir.Sub(ir.Add(in, ir.I64(before+after)), ir.Add(ir.Mul(ir.I64(dilation), ir.Sub(k, ir.I64(1))), ir.I64(1)))
	if ceil {
		num = ir.Add(num, ir.I64(stride-1))
	}
	return ir.Simplify(ir.Add(ir.FloorDiv(num, ir.I64(stride)), ir.I64(1)))
}

func windowOutInt(in, k, stride, dilation, before, after int64, ceil bool) int64 {
	num := in + before + after - dilation*(k-1) - 1
	if ceil {
		num += stride - 1
	}
	return floorDivInt(num, stride) + 1
}

func floorDivInt(a, b int64) int64 {
	q := a / b
	if (a%b != 0) && ((a < 0) != (b < 0)) {
		q--
	}
	return q
}

// provablyNegative reports a dimension that is a negative constant.
func provablyNegative(d ir.PrimExpr) bool {
	n, ok := ir.IntValue(d)
	return ok && n < 0
}

// --- nn.pad ---------------------------------------------------------------------

func newPadOp() Def {
	op := &ir.Op{Name: "relax.nn.pad", Doc: "Pads each axis of data by pad_width (before, after pairs).", Pure: true, Category: ir.CatTensor, Pattern: ir.PatternInjective,
		Params: []ir.Param{{Name: "data", Kind: ir.ArgExpr}, {Name: "pad_width", Kind: ir.AttrInts},
			{Name: "pad_mode", Kind: ir.AttrStr, Default: "constant"}, {Name: "pad_value", Kind: ir.AttrFloat, Default: 0.0}}}
	padAttrs := func(call *ir.Call, ndim int) ([]int64, string, error) {
		pw, _, err := opAttrInts(op, call, "pad_width")
		if err != nil {
			return nil, "", err
		}
		if len(pw) != 2*ndim {
			return nil, "", opErrorf(op, "pad_width must have 2 entries per axis of data (%d), got %d", 2*ndim, len(pw))
		}
		mode, _ := opAttr(op, call, "pad_mode").(string)
		switch mode {
		case "constant", "edge", "reflect":
		default:
			return nil, "", opErrorf(op, "pad_mode must be \"constant\", \"edge\" or \"reflect\", got %q", mode)
		}
		return pw, mode, nil
	}
	op.Infer = func(_ *ir.InferCtx, call *ir.Call) (ir.StructInfo, error) {
		t, err := firstTensorArg(op, call)
		if err != nil {
			return nil, err
		}
		if t.NDim < 0 {
			return ir.TensorInfoNDim(t.DType, -1), nil
		}
		pw, _, err := padAttrs(call, t.NDim)
		if err != nil {
			return nil, err
		}
		dims, ok := t.Dims()
		if !ok {
			return ir.TensorInfoNDim(t.DType, t.NDim), nil
		}
		out := make([]ir.PrimExpr, len(dims))
		for i, d := range dims {
			out[i] = ir.Simplify(ir.Add(d, ir.I64(pw[2*i]+pw[2*i+1])))
			if provablyNegative(out[i]) {
				return nil, opErrorf(op, "padding axis %d of extent %s by %d, %d leaves a negative extent", i, fmtDim(d), pw[2*i], pw[2*i+1])
			}
		}
		return newTensor(t.DType, out, true, t.NDim), nil
	}
	op.Normalize = schemaNormalize(op)
	eval := func(call *ir.Call, args []Value) (Value, error) {
		x, err := argArray(op, args, 0)
		if err != nil {
			return nil, err
		}
		pw, mode, err := padAttrs(call, len(x.shape))
		if err != nil {
			return nil, err
		}
		value, _ := opAttr(op, call, "pad_value").(float64)
		shape := make([]int64, len(x.shape))
		for i, d := range x.shape {
			shape[i] = d + pw[2*i] + pw[2*i+1]
			if mode != "constant" && x.shape[i] == 0 && shape[i] > 0 {
				return nil, opErrorf(op, "%s padding of an empty axis %d", mode, i)
			}
			if mode == "reflect" && (pw[2*i] >= d || pw[2*i+1] >= d) && shape[i] > d {
				return nil, opErrorf(op, "reflect padding of axis %d by %d, %d needs fewer than %d", i, pw[2*i], pw[2*i+1], d)
			}
		}
		if err := CheckSize(shape); err != nil {
			return nil, opErrorf(op, "%v", err)
		}
		out := newArray(x.dt, shape)
		idx := make([]int64, len(shape))
		src := make([]int64, len(shape))
		for k := range out.size() {
			unravel(k, shape, idx)
			inside := true
			for i := range idx {
				j := idx[i] - pw[2*i]
				n := x.shape[i]
				switch {
				case j >= 0 && j < n:
				case mode == "edge":
					j = min(max(j, 0), n-1)
				case mode == "reflect":
					if j < 0 {
						j = -j
					} else {
						j = 2*(n-1) - j
					}
				default:
					inside = false
				}
				src[i] = j
			}
			if !inside {
				out.setFloat(k, value)
				continue
			}
			out.copyElem(k, x, flatIndex(src, x.shape))
		}
		return out.tensor()
	}
	legalize := func(k *Kernel, call *ir.Call) error {
		a, err := k.Input(call.Args[0], "A")
		if err != nil {
			return err
		}
		pw, mode, err := padAttrs(call, len(a.Shape))
		if err != nil {
			return err
		}
		value, _ := opAttr(op, call, "pad_value").(float64)
		out, err := k.Output("PadInput")
		if err != nil {
			return err
		}
		k.Compute("PadInput", out, "i", func(v []ir.PrimExpr) ir.PrimExpr {
			idx := make([]ir.PrimExpr, len(v))
			var cond ir.PrimExpr
			for i := range v {
				if pw[2*i] == 0 && pw[2*i+1] == 0 {
					idx[i] = v[i]
					continue
				}
				j := ir.Sub(v[i], ir.I64(pw[2*i]))
				n := a.Shape[i]
				switch mode {
				case "edge":
					idx[i] = ir.Min(ir.Max(j, ir.I64(0)), ir.Sub(n, ir.I64(1)))
				case "reflect":
					// j < 0: -j; j >= n: 2(n-1) - j.
					idx[i] = &ir.Select{Cond: ir.NewBinary(ir.OpLT, j, ir.I64(0)), True: ir.Sub(ir.I64(0), j),
						False: ir.Min(j, ir.Sub(ir.Mul(ir.I64(2), ir.Sub(n, ir.I64(1))), j))}
				default:
					idx[i] = j
					in := ir.NewBinary(ir.OpAnd, ir.NewBinary(ir.OpGE, v[i], ir.I64(pw[2*i])),
						ir.NewBinary(ir.OpLT, v[i], ir.Simplify(ir.Add(n, ir.I64(pw[2*i])))))
					if cond == nil {
						cond = in
					} else {
						cond = ir.NewBinary(ir.OpAnd, cond, in)
					}
				}
			}
			if cond == nil {
				return Load(a, idx)
			}
			return intrinsic("if_then_else", out.DType, cond, Load(a, idx), constOf(out.DType, value))
		})
		return nil
	}
	return Def{Op: op, Eval: eval, Legalize: legalize}
}

// --- nn.conv2d ---------------------------------------------------------------------

// convLayouts names the layouts of a convolution with the given number
// of spatial axes: data (NCW, NCHW, NCDHW) and kernel (OIW, OIHW, OIDHW).
func convLayouts(spatial int) (data, kernel string) {
	axes := []string{"W", "HW", "DHW"}[spatial-1]
	return "NC" + axes, "OI" + axes
}

// ones is a default window list of n ones (n zeros when zero).
func ones(n int, zero bool) []any {
	out := make([]any, n)
	for i := range out {
		out[i] = int64(1)
		if zero {
			out[i] = int64(0)
		}
	}
	return out
}

// convParams is the parameter list of R.nn.conv*d and, when transposed,
// of R.nn.conv*d_transpose, in TVM's positional order. out_layout has no
// fixed default: None stands for data_layout until Normalize writes it.
func convParams(spatial int, dataLayout, kernelLayout string, transposed bool) []ir.Param {
	ps := []ir.Param{{Name: "data", Kind: ir.ArgExpr}, {Name: "weight", Kind: ir.ArgExpr},
		{Name: "strides", Kind: ir.AttrInts, Default: ones(spatial, false)},
		{Name: "padding", Kind: ir.AttrInts, Default: ones(spatial, true)}}
	if transposed {
		ps = append(ps, ir.Param{Name: "output_padding", Kind: ir.AttrInts, Default: ones(spatial, true)})
	}
	return append(ps,
		ir.Param{Name: "dilation", Kind: ir.AttrInts, Default: ones(spatial, false)},
		ir.Param{Name: "groups", Kind: ir.AttrInt, Default: int64(1)},
		ir.Param{Name: "data_layout", Kind: ir.AttrStr, Default: dataLayout},
		ir.Param{Name: "kernel_layout", Kind: ir.AttrStr, Default: kernelLayout},
		ir.Param{Name: "out_layout", Kind: ir.AttrStr, Optional: true},
		ir.Param{Name: "out_dtype", Kind: ir.AttrDType, Default: ir.Void})
}

// convAttrs are the attributes of a convolution or a transposed one in
// canonical form, the layouts as permutations: canonical axis j (N, C,
// spatial... for data and output; O, I, kernel... or I, O, kernel... for
// the weight) is axis perm[j] of the tensor.
type convAttrs struct {
	win                   window
	groups                int64
	data, kernel, out     []int
	outDType              ir.DataType
	dataLayout, outLayout string
}

// readConvAttrs reads a convolution's attributes; kernelLayout is the
// canonical weight layout (OIHW, or IOHW when transposed).
func readConvAttrs(op *ir.Op, call *ir.Call, spatial int, kernelLayout string) (a convAttrs, err error) {
	if a.win, err = windowAttrs(op, call, spatial, ""); err != nil {
		return a, err
	}
	if a.groups, _, err = opAttrInt(op, call, "groups"); err != nil {
		return a, err
	}
	if a.groups < 1 {
		return a, opErrorf(op, "groups must be positive, got %d", a.groups)
	}
	canonical, _ := convLayouts(spatial)
	a.dataLayout, _ = opAttr(op, call, "data_layout").(string)
	kl, _ := opAttr(op, call, "kernel_layout").(string)
	a.outLayout = a.dataLayout
	if v, ok := call.Attrs["out_layout"].(string); ok {
		a.outLayout = v
	}
	if a.data, err = layoutPerm(op, "data_layout", a.dataLayout, canonical); err != nil {
		return a, err
	}
	if a.kernel, err = layoutPerm(op, "kernel_layout", kl, kernelLayout); err != nil {
		return a, err
	}
	if a.out, err = layoutPerm(op, "out_layout", a.outLayout, canonical); err != nil {
		return a, err
	}
	a.outDType, err = opAttrDType(op, call, "out_dtype")
	return a, err
}

// normalizeConv sets an absent out_layout to data_layout (as TVM's conv
// builders do) and rewrites the window attributes into canonical form.
func normalizeConv(op *ir.Op, spatial int) func(*ir.InferCtx, *ir.Call) (ir.Expr, error) {
	window := normalizeWindow(op, spatial, "")
	return func(ctx *ir.InferCtx, call *ir.Call) (ir.Expr, error) {
		return window(ctx, withOutLayout(op, call, "data_layout"))
	}
}

// withOutLayout returns call with an absent (or None) out_layout set to
// the layout attribute from, as TVM's builders default it; call itself
// when it has one.
func withOutLayout(op *ir.Op, call *ir.Call, from string) *ir.Call {
	if v, has := call.Attrs["out_layout"]; has && v != nil {
		return call
	}
	c := *call
	c.SetStructInfo(nil)
	c.Attrs = copyAttrsOnce(nil, call.Attrs)
	c.Attrs["out_layout"] = opAttr(op, call, from)
	return &c
}

// layoutPerm maps the axes of canonical to their positions in layout, a
// permutation of them. A split layout (NCHW16c) never reaches it: the ops
// that take one compute in its primal layout (op/layout_split_ops.go).
func layoutPerm(op *ir.Op, attr, layout, canonical string) ([]int, error) {
	l, err := parseLayoutAttr(op, attr, layout)
	if err != nil {
		return nil, err
	}
	if err := l.checkPrimal(canonical); err != nil {
		return nil, opErrorf(op, "%s %q is not convertible to %s: %v", attr, layout, canonical, err)
	}
	if l.split() {
		return nil, opErrorf(op, "%s %q splits an axis, which this call cannot take (its primal layout is %s)", attr, layout, l.primal())
	}
	perm := make([]int, len(canonical))
	for j := range canonical {
		perm[j] = strings.IndexByte(layout, canonical[j])
	}
	return perm, nil
}

// toCanonical reorders the dims (or indices) of a tensor in a layout into
// canonical order.
func toCanonical[T any](dims []T, perm []int) []T {
	out := make([]T, len(perm))
	for j, p := range perm {
		out[j] = dims[p]
	}
	return out
}

// fromCanonical reorders canonical dims (or indices) into a layout's order.
func fromCanonical[T any](dims []T, perm []int) []T {
	out := make([]T, len(perm))
	for j, p := range perm {
		out[p] = dims[j]
	}
	return out
}

// layoutFlat is the flat index, in a tensor of the given shape and
// layout, of the element at canonical index ci (scratch holds the
// layout's index).
func layoutFlat(ci []int64, perm []int, shape, scratch []int64) int64 {
	for j, p := range perm {
		scratch[p] = ci[j]
	}
	return flatIndex(scratch, shape)
}

// newConvOp is R.nn.conv1d, conv2d or conv3d: the data (N, C, spatial...)
// convolved with the weight (O, C/groups, kernel...), in any permutation
// layouts (NHWC, HWIO, ...).
func newConvOp(spatial int) Def {
	dataLayout, kernelLayout := convLayouts(spatial)
	name := "relax.nn.conv" + itoa(spatial) + "d"
	op := &ir.Op{Name: name, Doc: itoa(spatial) + "-D convolution (" + dataLayout + " data, " + kernelLayout + " weight).", Pure: true, Category: ir.CatTensor, Pattern: ir.PatternOutEWiseFusable,
		Params: convParams(spatial, dataLayout, kernelLayout, false)}
	rank := spatial + 2
	op.Infer = func(_ *ir.InferCtx, call *ir.Call) (ir.StructInfo, error) {
		a, err := readConvAttrs(op, call, spatial, kernelLayout)
		if err != nil {
			return nil, err
		}
		dx, dw, outDT, err := convOperandInfo(op, call, rank, a.outDType)
		if err != nil {
			return nil, err
		}
		if dx == nil {
			return ir.TensorInfoNDim(outDT, rank), nil
		}
		cx, cw := toCanonical(dx, a.data), toCanonical(dw, a.kernel)
		groups, win := a.groups, a.win
		if dimsProvablyDiffer(cx[1], ir.Simplify(ir.Mul(cw[1], ir.I64(groups)))) {
			return nil, opErrorf(op, "data has %s channels but weight expects %s input channels per group times %d groups",
				fmtDim(cx[1]), fmtDim(cw[1]), groups)
		}
		if o, ok := ir.IntValue(cw[0]); ok && o%groups != 0 {
			return nil, opErrorf(op, "weight's %d output channels are not divisible by groups=%d", o, groups)
		}
		out := []ir.PrimExpr{cx[0], cw[0]}
		for i := range spatial {
			d := windowOutDim(cx[2+i], cw[2+i], win.strides[i], win.dilation[i], win.padding[i], win.padding[spatial+i], false)
			if provablyNegative(d) {
				return nil, opErrorf(op, "the kernel %v is larger than the padded input %v", cw[2:], cx[2:])
			}
			out = append(out, d)
		}
		return newTensor(outDT, fromCanonical(out, a.out), true, rank), nil
	}
	op.Normalize = normalizeConv(op, spatial)
	eval := func(call *ir.Call, args []Value) (Value, error) {
		a, err := readConvAttrs(op, call, spatial, kernelLayout)
		if err != nil {
			return nil, err
		}
		x, w, outDT, err := convOperands(op, args, rank, a.outDType)
		if err != nil {
			return nil, err
		}
		groups, win := a.groups, a.win
		cx, cw := toCanonical(x.shape, a.data), toCanonical(w.shape, a.kernel)
		c, o, ic := cx[1], cw[0], cw[1]
		if c != ic*groups || o%groups != 0 {
			return nil, opErrorf(op, "data %v and weight %v do not fit groups=%d", x.shape, w.shape, groups)
		}
		shape := []int64{cx[0], o}
		for i := range spatial {
			shape = append(shape, max(0, windowOutInt(cx[2+i], cw[2+i], win.strides[i], win.dilation[i], win.padding[i], win.padding[spatial+i], false)))
		}
		if err := CheckSize(shape); err != nil {
			return nil, opErrorf(op, "%v", err)
		}
		out := newArray(outDT, fromCanonical(shape, a.out))
		og := o / groups
		oIdx, wIdx, xIdx, scratch := make([]int64, rank), make([]int64, rank), make([]int64, rank), make([]int64, rank)
		taps := numElems(cw[1:])
		for k := range numElems(shape) {
			unravel(k, shape, oIdx)
			var sf float64
			var si int64
		tap:
			for t := range taps {
				unravel(t, cw[1:], wIdx[1:])
				wIdx[0] = oIdx[1]
				xIdx[0], xIdx[1] = oIdx[0], (oIdx[1]/og)*ic+wIdx[1]
				for i := range spatial {
					p := oIdx[2+i]*win.strides[i] + wIdx[2+i]*win.dilation[i] - win.padding[i]
					if p < 0 || p >= cx[2+i] {
						continue tap
					}
					xIdx[2+i] = p
				}
				xi, wi := layoutFlat(xIdx, a.data, x.shape, scratch), layoutFlat(wIdx, a.kernel, w.shape, scratch)
				if out.f != nil {
					sf += x.float(xi) * w.float(wi)
				} else {
					si += x.int(xi) * w.int(wi)
				}
			}
			j := layoutFlat(oIdx, a.out, out.shape, scratch)
			if out.f != nil {
				out.setFloat(j, sf)
			} else {
				out.setInt(j, si)
			}
		}
		return out.tensor()
	}
	legalize := func(k *Kernel, call *ir.Call) error {
		a, err := readConvAttrs(op, call, spatial, kernelLayout)
		if err != nil {
			return err
		}
		groups, win := a.groups, a.win
		x, err := k.Input(call.Args[0], "A")
		if err != nil {
			return err
		}
		w, err := k.Input(call.Args[1], "B")
		if err != nil {
			return err
		}
		// As topi: conv2d_nchw, conv2d_nhwc, group_conv2d_nchw, ...
		block := "conv" + itoa(spatial) + "d_" + strings.ToLower(a.dataLayout)
		if groups > 1 {
			block = "group_" + block
		}
		out, err := k.Output(block)
		if err != nil {
			return err
		}
		dt := out.DType
		src := padAxes(k, x, a.data[2:], win.padding, constOf(x.DType, 0))
		cw := toCanonical(w.Shape, a.kernel)
		ic := cw[1]
		var og ir.PrimExpr
		if groups > 1 {
			og = ir.Simplify(ir.FloorDiv(cw[0], ir.I64(groups)))
		}
		k.Reduce(block, out, "nn", cw[1:], constOf(dt, 0), func(s, r []ir.PrimExpr, acc ir.PrimExpr) ir.PrimExpr {
			cs := toCanonical(s, a.out)
			ch := r[0]
			if groups > 1 {
				ch = ir.Add(ir.Mul(ir.FloorDiv(cs[1], og), ic), r[0])
			}
			xi := []ir.PrimExpr{cs[0], ch}
			for i := range spatial {
				xi = append(xi, ir.Simplify(ir.Add(ir.Mul(cs[2+i], ir.I64(win.strides[i])), ir.Mul(r[1+i], ir.I64(win.dilation[i])))))
			}
			wi := append([]ir.PrimExpr{cs[1]}, r...)
			return ir.NewBinary(ir.OpAdd, acc, ir.NewBinary(ir.OpMul, castTo(dt, Load(src, fromCanonical(xi, a.data))), castTo(dt, Load(w, fromCanonical(wi, a.kernel)))))
		})
		return nil
	}
	return withSplitLayouts(Def{Op: op, Eval: eval, Legalize: legalize, Layout: layoutConv, MixedPrecision: mixedAlwaysOutDType}, convLayoutRoles(spatial, kernelLayout))
}

// convOperandInfo is the start of a convolution's inference: the data
// and weight must be tensors of the given rank; the output dtype is
// outDT, or when void the operands' common dtype. dx and dw are nil when
// either shape is unknown.
func convOperandInfo(op *ir.Op, call *ir.Call, rank int, outDT ir.DataType) (dx, dw []ir.PrimExpr, dt ir.DataType, err error) {
	x, err := firstTensorArg(op, call)
	if err != nil {
		return nil, nil, dt, err
	}
	w, err := tensorArg(op, call, 1)
	if err != nil {
		return nil, nil, dt, err
	}
	if dt = outDT; dt.IsVoid() {
		if dt, err = unifyDType(op, x.DType, w.DType); err != nil {
			return nil, nil, dt, err
		}
	}
	for i, t := range []*ir.TensorInfo{x, w} {
		if t.NDim >= 0 && t.NDim != rank {
			return nil, nil, dt, opErrorf(op, "%s must be a %d-D tensor, got rank %d", opArgName(op, i), rank, t.NDim)
		}
	}
	dx, ok1 := x.Dims()
	dw, ok2 := w.Dims()
	if !ok1 || !ok2 {
		return nil, nil, dt, nil
	}
	return dx, dw, dt, nil
}

// convOperands is the start of a convolution's evaluation: the data and
// weight arrays of the given rank, and the output dtype (outDT, or the
// data's when void).
func convOperands(op *ir.Op, args []Value, rank int, outDT ir.DataType) (x, w *array, dt ir.DataType, err error) {
	if x, err = argArray(op, args, 0); err != nil {
		return nil, nil, dt, err
	}
	if w, err = argArray(op, args, 1); err != nil {
		return nil, nil, dt, err
	}
	if dt = outDT; dt.IsVoid() {
		dt = x.dt
	}
	if len(x.shape) != rank || len(w.shape) != rank {
		return nil, nil, dt, opErrorf(op, "data and weight must be %d-D, got %v and %v", rank, x.shape, w.shape)
	}
	return x, w, dt, nil
}

// padSpatial emits topi's pad_temp stage when any padding is nonzero:
// the NC.. input padded on its trailing spatial axes by padding (before...,
// after...) with fill. It returns a itself when there is no padding.
func padSpatial(k *Kernel, a *ir.Buffer, padding []int64, fill ir.PrimExpr) *ir.Buffer {
	spatial := len(padding) / 2
	axes := make([]int, spatial)
	for i := range axes {
		axes[i] = len(a.Shape) - spatial + i
	}
	return padAxes(k, a, axes, padding, fill)
}

// padAxes is padSpatial for spatial axes at any position of a's layout
// (padding lists them in the order of axes).
func padAxes(k *Kernel, a *ir.Buffer, axes []int, padding []int64, fill ir.PrimExpr) *ir.Buffer {
	spatial := len(axes)
	padded := false
	for _, p := range padding {
		padded = padded || p != 0
	}
	if !padded {
		return a
	}
	shape := append([]ir.PrimExpr{}, a.Shape...)
	for i, ax := range axes {
		shape[ax] = ir.Simplify(ir.Add(a.Shape[ax], ir.I64(padding[i]+padding[spatial+i])))
	}
	p := k.Alloc("pad_temp", a.DType, shape)
	k.Compute("pad_temp", p, "i", func(v []ir.PrimExpr) ir.PrimExpr {
		idx := append([]ir.PrimExpr{}, v...)
		var cond ir.PrimExpr
		for i, ax := range axes {
			before := padding[i]
			if before == 0 && padding[spatial+i] == 0 {
				continue
			}
			x := v[ax]
			idx[ax] = ir.Sub(x, ir.I64(before))
			in := ir.NewBinary(ir.OpAnd, ir.NewBinary(ir.OpGE, x, ir.I64(before)),
				ir.NewBinary(ir.OpLT, x, ir.Simplify(ir.Add(a.Shape[ax], ir.I64(before)))))
			if cond == nil {
				cond = in
			} else {
				cond = ir.NewBinary(ir.OpAnd, cond, in)
			}
		}
		return intrinsic("if_then_else", a.DType, cond, Load(a, idx), fill)
	})
	return p
}
