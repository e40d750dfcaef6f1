package op

import (
	"fmt"
	"math"
	"strings"

	"github.com/phasec/phasec/ir"
)

// Pooling over 1, 2 or 3 spatial axes (TVM's src/relax/op/nn/pooling.cc;
// legalized as python/tvm/relax/transform/legalize_ops/nn.py does, through
// topi.nn.pool1d/pool2d/pool3d and topi.nn.adaptive_pool*). One constructor
// per op family, parameterised by the number of spatial axes, so that the
// 1-D, 2-D and 3-D forms share their inference, evaluation and
// legalization.
//
// Layouts: any permutation of N, C and the spatial axes (NCW, NWC, NCHW,
// NHWC, NCDHW, NDHWC, ...); window attributes are listed in the order of
// the spatial letters (D, H, W) wherever those axes sit. Split layouts
// (NCHW16c) compute in their primal layouts (op/layout_split_ops.go). An
// out_layout whose primal layout differs from layout's is inferred and
// evaluated, and, as in TVM, not legalized.

var (
	// MaxPool1D is R.nn.max_pool1d(data, pool_size, strides, padding,
	// dilation, ceil_mode, count_include_pad, layout, out_layout).
	MaxPool1D = Define(newPoolOp(1, true))
	// MaxPool2D is R.nn.max_pool2d, as max_pool1d over H and W.
	MaxPool2D = Define(newPoolOp(2, true))
	// MaxPool3D is R.nn.max_pool3d, as max_pool1d over D, H and W.
	MaxPool3D = Define(newPoolOp(3, true))
	// AvgPool1D is R.nn.avg_pool1d with the parameters of max_pool1d
	// (count_include_pad defaults to True, as in TVM).
	AvgPool1D = Define(newPoolOp(1, false))
	// AvgPool2D is R.nn.avg_pool2d (count_include_pad defaults to False).
	AvgPool2D = Define(newPoolOp(2, false))
	// AvgPool3D is R.nn.avg_pool3d (count_include_pad defaults to True).
	AvgPool3D = Define(newPoolOp(3, false))

	// AdaptiveAvgPool1D is R.nn.adaptive_avg_pool1d(data, output_size=None,
	// layout="NCW", out_layout=None): output cell i averages input cells
	// floor(i*W/OW) to ceil((i+1)*W/OW) (exclusive), as topi.nn.adaptive_pool.
	AdaptiveAvgPool1D = Define(newAdaptiveAvgPoolOp(1))
	// AdaptiveAvgPool2D is R.nn.adaptive_avg_pool2d, as adaptive_avg_pool1d
	// over H and W.
	AdaptiveAvgPool2D = Define(newAdaptiveAvgPoolOp(2))
	// AdaptiveAvgPool3D is R.nn.adaptive_avg_pool3d, over D, H and W.
	AdaptiveAvgPool3D = Define(newAdaptiveAvgPoolOp(3))
)

// spatialLetters are the spatial axis letters of a layout with n spatial
// axes, in the order the window attributes list them.
func spatialLetters(n int) string { return "DHW"[3-n:] }

// spatialAxes returns the positions of the spatial axes (in the order of
// spatialLetters) in a data layout of N, C and those axes.
func spatialAxes(op *ir.Op, layout string, spatial int) ([]int, error) {
	perm, err := layoutPerm(op, "layout", layout, "NC"+spatialLetters(spatial))
	if err != nil {
		return nil, err
	}
	return perm[2:], nil
}

// poolLayout reads layout and returns the spatial axes of data.
func poolLayout(op *ir.Op, call *ir.Call, spatial int) ([]int, error) {
	layout, _ := opAttr(op, call, "layout").(string)
	return spatialAxes(op, layout, spatial)
}

// errPoolOutLayout leaves a layout-changing pool alone.
var errPoolOutLayout = fmt.Errorf("%w: topi pools in one layout, and out_layout differs from layout (TVM leaves the call alone too)", ErrNotLegalizable)

// poolOutAxes is the permutation (as permute_dims' axes) from layout to
// out_layout, nil when they are equal (or out_layout is absent, which
// means layout). TVM infers a layout-changing pool's struct info but does
// not legalize it (legalize_ops/nn.py leaves the call alone), and so does
// phasec; the evaluator pools and then permutes.
func poolOutAxes(op *ir.Op, call *ir.Call) ([]int, error) {
	layout, _ := opAttr(op, call, "layout").(string)
	out, ok := call.Attrs["out_layout"].(string)
	if !ok || out == layout {
		return nil, nil
	}
	if _, err := layoutPerm(op, "out_layout", out, layout); err != nil {
		return nil, err
	}
	axes := make([]int, len(out))
	for i := range out {
		axes[i] = strings.IndexByte(layout, out[i])
	}
	return axes, nil
}

// relayoutInfo and relayoutValue put a pooling result, computed in the
// data's layout, into out_layout.
func relayoutInfo(t *ir.TensorInfo, axes []int) *ir.TensorInfo {
	dims, ok := t.Dims()
	if axes == nil || !ok {
		return t
	}
	out := make([]ir.PrimExpr, len(dims))
	for i, a := range axes {
		out[i] = dims[a]
	}
	return newTensor(t.DType, out, true, len(out))
}

func relayoutValue(v Value, err error, axes []int) (Value, error) {
	if axes == nil || err != nil {
		return v, err
	}
	list := make([]any, len(axes))
	for i, a := range axes {
		list[i] = int64(a)
	}
	return evalPermuteDims(&ir.Call{Op: PermuteDims, Attrs: ir.Attrs{"axes": list}}, []Value{v})
}

// normalizePool canonicalises the call's schema (and, with kernelAttr, its
// window attributes) and sets an absent out_layout to layout.
func normalizePool(op *ir.Op, spatial int, kernelAttr string) func(*ir.InferCtx, *ir.Call) (ir.Expr, error) {
	window := normalizeWindow(op, spatial, kernelAttr)
	return func(ctx *ir.InferCtx, call *ir.Call) (ir.Expr, error) {
		var e ir.Expr
		var err error
		if kernelAttr != "" {
			e, err = window(ctx, call)
		} else {
			e, err = schemaNormalize(op)(ctx, call)
		}
		if err != nil {
			return nil, err
		}
		c, ok := e.(*ir.Call)
		if !ok {
			return e, nil
		}
		return withOutLayout(op, c, "layout"), nil
	}
}

// checkRank is the rank rule of the pooling ops: data has spatial+2 axes.
func checkRank(op *ir.Op, x *ir.TensorInfo, spatial int) error {
	if x.NDim >= 0 && x.NDim != spatial+2 {
		return opErrorf(op, "data must be a %d-D tensor, got rank %d", spatial+2, x.NDim)
	}
	return nil
}

// --- nn.max_pool1d/2d/3d, nn.avg_pool1d/2d/3d -------------------------------------------

// poolAttrs are a pooling call's attributes in canonical form.
type poolAttrs struct {
	win        window
	axes       []int // spatial axes of data
	outAxes    []int // poolOutAxes
	ceil, incl bool
}

func newPoolOp(spatial int, isMax bool) Def {
	kind, what := "avg", "average"
	if isMax {
		kind, what = "max", "maximum"
	}
	layout, _ := convLayouts(spatial)
	op := &ir.Op{Name: "relax.nn." + kind + "_pool" + itoa(spatial) + "d", Doc: itoa(spatial) + "-D " + what + " pooling.", Pure: true, Category: ir.CatTensor, Pattern: ir.PatternOutEWiseFusable,
		Params: []ir.Param{{Name: "data", Kind: ir.ArgExpr},
			{Name: "pool_size", Kind: ir.AttrInts, Default: ones(spatial, false)},
			{Name: "strides", Kind: ir.AttrInts, Default: ones(spatial, false)},
			{Name: "padding", Kind: ir.AttrInts, Default: ones(max(2, spatial), true)},
			{Name: "dilation", Kind: ir.AttrInts, Default: ones(spatial, false)},
			{Name: "ceil_mode", Kind: ir.AttrBool, Default: false},
			// TVM's avg_pool1d and avg_pool3d count the padding by default, avg_pool2d does not.
			{Name: "count_include_pad", Kind: ir.AttrBool, Default: !isMax && spatial != 2},
			{Name: "layout", Kind: ir.AttrStr, Default: layout},
			{Name: "out_layout", Kind: ir.AttrStr, Optional: true}}}
	attrs := func(call *ir.Call) (poolAttrs, error) {
		var p poolAttrs
		var err error
		if p.axes, err = poolLayout(op, call, spatial); err != nil {
			return p, err
		}
		if p.outAxes, err = poolOutAxes(op, call); err != nil {
			return p, err
		}
		if p.win, err = windowAttrs(op, call, spatial, "pool_size"); err != nil {
			return p, err
		}
		if p.ceil, err = opAttrBool(op, call, "ceil_mode"); err != nil {
			return p, err
		}
		p.incl, err = opAttrBool(op, call, "count_include_pad")
		return p, err
	}
	op.Infer = func(_ *ir.InferCtx, call *ir.Call) (ir.StructInfo, error) {
		x, err := firstTensorArg(op, call)
		if err != nil {
			return nil, err
		}
		p, err := attrs(call)
		if err != nil {
			return nil, err
		}
		if err := checkRank(op, x, spatial); err != nil {
			return nil, err
		}
		dx, ok := x.Dims()
		if !ok {
			return ir.TensorInfoNDim(x.DType, spatial+2), nil
		}
		out := append([]ir.PrimExpr{}, dx...)
		w := p.win
		for i, ax := range p.axes {
			out[ax] = windowOutDim(dx[ax], ir.I64(w.kernel[i]), w.strides[i], w.dilation[i], w.padding[i], w.padding[spatial+i], p.ceil)
			if provablyNegative(out[ax]) {
				return nil, opErrorf(op, "pool_size %v is larger than the padded input", w.kernel)
			}
		}
		return relayoutInfo(newTensor(x.DType, out, true, spatial+2), p.outAxes), nil
	}
	op.Normalize = normalizePool(op, spatial, "pool_size")
	eval := func(call *ir.Call, args []Value) (Value, error) {
		x, err := argArray(op, args, 0)
		if err != nil {
			return nil, err
		}
		p, err := attrs(call)
		if err != nil {
			return nil, err
		}
		if len(x.shape) != spatial+2 {
			return nil, opErrorf(op, "data must be %d-D, got %v", spatial+2, x.shape)
		}
		v, err := evalPool(op, x, p, isMax)
		return relayoutValue(v, err, p.outAxes)
	}
	legalize := func(k *Kernel, call *ir.Call) error {
		p, err := attrs(call)
		if err != nil {
			return err
		}
		a, err := k.Input(call.Args[0], "A")
		if err != nil {
			return err
		}
		if p.outAxes != nil {
			return errPoolOutLayout
		}
		if a.DType.IsBool() && !isMax {
			return ErrNotLegalizable
		}
		return legalizePool(k, a, p, isMax)
	}
	return withSplitLayouts(Def{Op: op, Eval: eval, Legalize: legalize, Layout: layoutPool, MixedPrecision: mixedFollow}, poolLayoutRoles(spatial))
}

// evalPool is max or average pooling of x over the window p.
func evalPool(op *ir.Op, x *array, p poolAttrs, isMax bool) (Value, error) {
	w, spatial := p.win, len(p.axes)
	shape := append([]int64{}, x.shape...)
	for i, ax := range p.axes {
		shape[ax] = max(0, windowOutInt(x.shape[ax], w.kernel[i], w.strides[i], w.dilation[i], w.padding[i], w.padding[spatial+i], p.ceil))
	}
	if err := CheckSize(shape); err != nil {
		return nil, opErrorf(op, "%v", err)
	}
	out := newArray(x.dt, shape)
	oIdx, xIdx, tap := make([]int64, len(shape)), make([]int64, len(shape)), make([]int64, spatial)
	taps := numElems(w.kernel)
	// As topi, max pooling starts from the dtype's least value (finite for
	// floats), which is also what a window entirely in the padding yields.
	least := leastValue(x.dt)
	for k := range out.size() {
		unravel(k, shape, oIdx)
		copy(xIdx, oIdx)
		// Floats accumulate in acc, integers exactly in accI.
		acc, accI := least, int64(least)
		if !isMax {
			acc, accI = 0, 0
		}
		var count int64
		for t := range taps {
			unravel(t, w.kernel, tap)
			inData, inPad := true, true
			for i, ax := range p.axes {
				pos := oIdx[ax]*w.strides[i] + tap[i]*w.dilation[i] - w.padding[i]
				inData = inData && pos >= 0 && pos < x.shape[ax]
				inPad = inPad && pos < x.shape[ax]+w.padding[spatial+i] // the user's padding, not ceil mode's
				xIdx[ax] = pos
			}
			if inData || (p.incl && inPad) {
				count++
			}
			if !inData {
				continue
			}
			j := flatIndex(xIdx, x.shape)
			switch {
			case x.f != nil && isMax:
				acc = math.Max(acc, x.f[j])
			case x.f != nil:
				acc += x.f[j]
			case isMax:
				accI = max(accI, x.i[j])
			default:
				accI += x.i[j]
			}
		}
		switch {
		case x.f != nil && isMax:
			out.setFloat(k, acc)
		case x.f != nil:
			out.setFloat(k, acc/float64(max(count, 1)))
		case isMax:
			out.setInt(k, accI)
		default:
			// The kernel sums in the data's dtype (wrapping) and divides
			// with TIR's truncating Div, as topi.
			out.setInt(k, wrapInt(x.dt, accI)/max(count, 1))
		}
	}
	return out.tensor()
}

// legalizePool emits topi.nn.pool's computation: a pad_temp stage (extra
// padding after in ceil mode, so the last partial window exists), then the
// max (block pool_max) or the sum (pool_sum) divided by the count of taps
// inside the data, or inside the user's padding with count_include_pad
// (pool_avg).
func legalizePool(k *Kernel, a *ir.Buffer, p poolAttrs, isMax bool) error {
	w, spatial := p.win, len(p.axes)
	dt := a.DType
	padding := append([]int64{}, w.padding...)
	if p.ceil {
		for i := range spatial {
			padding[spatial+i] += w.strides[i] - 1
		}
	}
	fill := limitValue(dt, true)
	if !isMax {
		fill = constOf(dt, 0)
	}
	src := padAxes(k, a, p.axes, padding, fill)
	tap := func(s, r []ir.PrimExpr) ir.PrimExpr {
		idx := append([]ir.PrimExpr{}, s...)
		for i, ax := range p.axes {
			idx[ax] = ir.Simplify(ir.Add(ir.Mul(s[ax], ir.I64(w.strides[i])), ir.Mul(r[i], ir.I64(w.dilation[i]))))
		}
		return Load(src, idx)
	}
	kext := make([]ir.PrimExpr, spatial)
	for i, n := range w.kernel {
		kext[i] = ir.I64(n)
	}
	if isMax {
		out, err := k.Output("pool_max")
		if err != nil {
			return err
		}
		k.Reduce("pool_max", out, "ax", kext, fill, func(s, r []ir.PrimExpr, acc ir.PrimExpr) ir.PrimExpr {
			return ir.NewBinary(ir.OpMax, acc, tap(s, r))
		})
		return nil
	}
	out, err := k.Output("pool_avg")
	if err != nil {
		return err
	}
	sum := k.Alloc("pool_sum", dt, out.Shape)
	k.Reduce("pool_sum", sum, "ax", kext, constOf(dt, 0), func(s, r []ir.PrimExpr, acc ir.PrimExpr) ir.PrimExpr {
		return ir.NewBinary(ir.OpAdd, acc, tap(s, r))
	})
	k.Compute("pool_avg", out, "ax", func(v []ir.PrimExpr) ir.PrimExpr {
		count := ir.PrimExpr(ir.I64(1))
		for i, ax := range p.axes {
			// Taps t in [0, K) with lo <= start + t*d <= hi.
			start := ir.Sub(ir.Mul(v[ax], ir.I64(w.strides[i])), ir.I64(w.padding[i]))
			d := ir.I64(w.dilation[i])
			lo, hi := ir.PrimExpr(ir.I64(0)), ir.Sub(a.Shape[ax], ir.I64(1))
			if p.incl {
				lo = ir.I64(-w.padding[i])
				hi = ir.Add(a.Shape[ax], ir.I64(w.padding[spatial+i]-1))
			}
			first := ir.Max(ir.I64(0), ir.FloorDiv(ir.Add(ir.Sub(lo, start), ir.Sub(d, ir.I64(1))), d))
			last := ir.Min(ir.I64(w.kernel[i]-1), ir.FloorDiv(ir.Sub(hi, start), d))
			count = ir.Mul(count, ir.Max(ir.Add(ir.Sub(last, first), ir.I64(1)), ir.I64(0)))
		}
		return ir.NewBinary(ir.OpDiv, Load(sum, v), castTo(dt, ir.Max(count, ir.I64(1))))
	})
	return nil
}

// leastValue is the least value of dtype dt (the least finite one for floats).
func leastValue(dt ir.DataType) float64 {
	switch v := limitValue(dt, true).(type) {
	case *ir.FloatImm:
		return v.Value
	case *ir.IntImm:
		return float64(v.Value)
	}
	return 0 // bool: false
}

// --- nn.adaptive_avg_pool1d/2d/3d ---------------------------------------------------------

func newAdaptiveAvgPoolOp(spatial int) Def {
	layout, _ := convLayouts(spatial)
	op := &ir.Op{Name: "relax.nn.adaptive_avg_pool" + itoa(spatial) + "d", Doc: itoa(spatial) + "-D adaptive average pooling to output_size.",
		Pure: true, Category: ir.CatTensor, Pattern: ir.PatternOutEWiseFusable,
		Params: []ir.Param{{Name: "data", Kind: ir.ArgExpr}, {Name: "output_size", Kind: ir.AttrInts, Optional: true, PrintNone: true},
			{Name: "layout", Kind: ir.AttrStr, Default: layout}, {Name: "out_layout", Kind: ir.AttrStr, Optional: true}}}
	// attrs returns the spatial axes, output_size expanded to one entry per
	// spatial axis (nil for the input's extents) and poolOutAxes.
	attrs := func(call *ir.Call) (axes []int, size []int64, outAxes []int, err error) {
		if axes, err = poolLayout(op, call, spatial); err != nil {
			return nil, nil, nil, err
		}
		if outAxes, err = poolOutAxes(op, call); err != nil {
			return nil, nil, nil, err
		}
		v, has, err := opAttrInts(op, call, "output_size")
		if err != nil || !has {
			return axes, nil, outAxes, err
		}
		if v, err = expandInts(op, "output_size", v, spatial); err != nil {
			return nil, nil, nil, err
		}
		for _, x := range v {
			if x <= 0 {
				return nil, nil, nil, opErrorf(op, "output_size must be positive, got %v", v)
			}
		}
		return axes, v, outAxes, nil
	}
	op.Infer = func(_ *ir.InferCtx, call *ir.Call) (ir.StructInfo, error) {
		x, err := firstTensorArg(op, call)
		if err != nil {
			return nil, err
		}
		axes, size, outAxes, err := attrs(call)
		if err != nil {
			return nil, err
		}
		if err := checkRank(op, x, spatial); err != nil {
			return nil, err
		}
		dims, ok := x.Dims()
		if !ok {
			return ir.TensorInfoNDim(x.DType, spatial+2), nil
		}
		out := append([]ir.PrimExpr{}, dims...)
		for i, ax := range axes {
			if size != nil {
				out[ax] = ir.I64(size[i])
			}
		}
		return relayoutInfo(newTensor(x.DType, out, true, spatial+2), outAxes), nil
	}
	op.Normalize = normalizePool(op, spatial, "")
	eval := func(call *ir.Call, args []Value) (Value, error) {
		x, err := argArray(op, args, 0)
		if err != nil {
			return nil, err
		}
		if len(x.shape) != spatial+2 {
			return nil, opErrorf(op, "data must be %d-D, got %v", spatial+2, x.shape)
		}
		axes, size, outAxes, err := attrs(call)
		if err != nil {
			return nil, err
		}
		return relayoutValue(evalAdaptiveAvgPool(x, axes, size), nil, outAxes)
	}
	legalize := func(k *Kernel, call *ir.Call) error {
		axes, _, outAxes, err := attrs(call)
		if err != nil {
			return err
		}
		if outAxes != nil {
			return errPoolOutLayout
		}
		a, err := k.Input(call.Args[0], "A")
		if err != nil {
			return err
		}
		if a.DType.IsBool() {
			return ErrNotLegalizable
		}
		return legalizeAdaptiveAvgPool(k, a, axes)
	}
	return withSplitLayouts(Def{Op: op, Eval: eval, Legalize: legalize, Layout: layoutPool, MixedPrecision: mixedFollow}, poolLayoutRoles(spatial))
}

// adaptiveBounds is the input range [start, end) of output cell o of n
// cells over an axis of extent in.
func adaptiveBounds(o, in, n int64) (start, end int64) {
	return o * in / n, ((o+1)*in + n - 1) / n
}

func evalAdaptiveAvgPool(x *array, axes []int, size []int64) Value {
	shape := append([]int64{}, x.shape...)
	for i, ax := range axes {
		if size != nil {
			shape[ax] = size[i]
		}
	}
	out := newArray(x.dt, shape)
	oIdx, xIdx := make([]int64, len(shape)), make([]int64, len(shape))
	start, box, off := make([]int64, len(axes)), make([]int64, len(axes)), make([]int64, len(axes))
	for k := range out.size() {
		unravel(k, shape, oIdx)
		copy(xIdx, oIdx)
		for i, ax := range axes {
			s, e := adaptiveBounds(oIdx[ax], x.shape[ax], shape[ax])
			start[i], box[i] = s, e-s
		}
		n := numElems(box)
		var sum float64
		var sumI int64
		for t := range n {
			unravel(t, box, off)
			for i, ax := range axes {
				xIdx[ax] = start[i] + off[i]
			}
			if j := flatIndex(xIdx, x.shape); x.f != nil {
				sum += x.f[j]
			} else {
				sumI += x.i[j]
			}
		}
		if x.f != nil {
			out.setFloat(k, sum/float64(max(n, 1)))
		} else {
			// Summed in the data's dtype (wrapping), divided with TIR's truncating Div, as topi.
			out.setInt(k, wrapInt(x.dt, sumI)/max(n, 1))
		}
	}
	v, _ := out.tensor()
	return v
}

// legalizeAdaptiveAvgPool sums, for each output cell, the widest window
// (ceil(in/out) + 1 taps per axis) masked to the cell's [start, end)
// (block adaptive_pool_sum), then divides by the cell's size
// (adaptive_pool_avg).
func legalizeAdaptiveAvgPool(k *Kernel, a *ir.Buffer, axes []int) error {
	out, err := k.Output("adaptive_pool_avg")
	if err != nil {
		return err
	}
	dt := a.DType
	bounds := func(i ir.PrimExpr, ax int) (start, end ir.PrimExpr) {
		in, o := a.Shape[ax], out.Shape[ax]
		start = ir.FloorDiv(ir.Mul(i, in), o)
		end = ir.FloorDiv(ir.Sub(ir.Add(ir.Mul(ir.Add(i, ir.I64(1)), in), o), ir.I64(1)), o)
		return start, end
	}
	var extents []ir.PrimExpr
	for _, ax := range axes {
		in, o := a.Shape[ax], out.Shape[ax]
		extents = append(extents, ir.Simplify(ir.Add(ir.FloorDiv(ir.Sub(ir.Add(in, o), ir.I64(1)), o), ir.I64(1))))
	}
	sum := k.Alloc("adaptive_pool_sum", dt, out.Shape)
	k.Reduce("adaptive_pool_sum", sum, "ax", extents, constOf(dt, 0), func(s, r []ir.PrimExpr, acc ir.PrimExpr) ir.PrimExpr {
		idx := append([]ir.PrimExpr{}, s...)
		var in ir.PrimExpr
		for i, ax := range axes {
			start, end := bounds(s[ax], ax)
			idx[ax] = ir.Add(start, r[i])
			lt := ir.NewBinary(ir.OpLT, idx[ax], end)
			if in == nil {
				in = lt
			} else {
				in = ir.NewBinary(ir.OpAnd, in, lt)
			}
		}
		return ir.NewBinary(ir.OpAdd, acc, intrinsic("if_then_else", dt, in, Load(a, idx), constOf(dt, 0)))
	})
	k.Compute("adaptive_pool_avg", out, "ax", func(v []ir.PrimExpr) ir.PrimExpr {
		var n ir.PrimExpr
		for _, ax := range axes {
			start, end := bounds(v[ax], ax)
			if n == nil {
				n = ir.Sub(end, start)
			} else {
				n = ir.Mul(n, ir.Sub(end, start))
			}
		}
		return ir.NewBinary(ir.OpDiv, Load(sum, v), castTo(dt, ir.Max(n, ir.I64(1))))
	})
	return nil
}
