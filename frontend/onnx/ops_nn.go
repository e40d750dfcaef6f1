package onnx

import (
	"fmt"

	"google.golang.org/protobuf/proto"

	"github.com/phasec/phasec/frontend/onnx/onnxpb"
	"github.com/phasec/phasec/ir"
	"github.com/phasec/phasec/op"
)

func registerNN() {
	for name, f := range map[string]converter{
		"Conv": convertConv, "ConvTranspose": convertConvTranspose,
		"MaxPool": poolConverter("max"), "AveragePool": poolConverter("avg"), "LpPool": convertLpPool,
		"GlobalAveragePool": globalPool(op.Mean), "GlobalMaxPool": globalPool(op.Max),
		"GlobalLpPool":       convertGlobalLpPool,
		"BatchNormalization": convertBatchNorm, "InstanceNormalization": convertInstanceNorm,
		"LayerNormalization": convertLayerNorm, "GroupNormalization": convertGroupNorm,
		"MeanVarianceNormalization": convertMVN, "LpNormalization": convertLpNorm,
		"LRN": convertLRN, "Dropout": convertDropout,
	} {
		converters[name] = f
	}
}

// convOpts are the attributes Conv, ConvTranspose and the pools share.
type convOpts struct {
	spatial            int
	kernel             []int64
	strides, dilations []int64
	pads               []int64 // begins then ends, ONNX's (and Relax's) order
	autoPad            string
}

// convAttrs reads the shared attributes for an input of rank 2+spatial;
// kernel is the kernel shape (from the attribute or the weight).
func (c *nodeCtx) convAttrs(spatial int, kernel []int64) (*convOpts, error) {
	o := &convOpts{spatial: spatial, kernel: kernel, autoPad: c.attrString("auto_pad", "NOTSET")}
	if k, ok := c.attrInts("kernel_shape"); ok {
		o.kernel = k
	}
	if len(o.kernel) != spatial {
		return nil, fmt.Errorf("kernel_shape has %d entries for %d spatial axes", len(o.kernel), spatial)
	}
	fill := func(name string, n int, def int64) ([]int64, error) {
		v, ok := c.attrInts(name)
		if !ok {
			v = make([]int64, n)
			for i := range v {
				v[i] = def
			}
		}
		if len(v) != n {
			return nil, fmt.Errorf("%s has %d entries, want %d", name, len(v), n)
		}
		return v, nil
	}
	var err error
	if o.strides, err = fill("strides", spatial, 1); err != nil {
		return nil, err
	}
	if o.dilations, err = fill("dilations", spatial, 1); err != nil {
		return nil, err
	}
	if o.pads, err = fill("pads", 2*spatial, 0); err != nil {
		return nil, err
	}
	return o, nil
}

// resolvePads applies auto_pad: SAME_UPPER and SAME_LOWER pad so that
// the output is ceil(in / stride) (the extra odd pixel at the end, or
// the beginning), VALID pads nothing. The spatial input size must be
// static for SAME.
func (c *nodeCtx) resolvePads(o *convOpts, inSpatial []ir.PrimExpr) error {
	switch o.autoPad {
	case "NOTSET", "":
		return nil
	case "VALID":
		for i := range o.pads {
			o.pads[i] = 0
		}
		return nil
	case "SAME_UPPER", "SAME_LOWER":
		for i := 0; i < o.spatial; i++ {
			in, ok := ir.IntValue(inSpatial[i])
			if !ok {
				return unsupported("auto_pad %s over a symbolic spatial dimension", o.autoPad)
			}
			s, k, d := o.strides[i], o.kernel[i], o.dilations[i]
			out := (in + s - 1) / s
			total := max((out-1)*s+(k-1)*d+1-in, 0)
			lo := total / 2
			if o.autoPad == "SAME_LOWER" {
				lo = total - total/2
			}
			o.pads[i], o.pads[i+o.spatial] = lo, total-lo
		}
		return nil
	}
	return fmt.Errorf("auto_pad %q is not one of NOTSET, SAME_UPPER, SAME_LOWER, VALID", o.autoPad)
}

var layouts = [4][3]string{{}, {"NCW", "OIW", "IOW"}, {"NCHW", "OIHW", "IOHW"}, {"NCDHW", "OIDHW", "IODHW"}}

// convOperands reads what Conv and ConvTranspose share: data, weight
// (of known shape), the input's rank (1-3 spatial axes) and the attributes.
func (c *nodeCtx) convOperands(name string) (x, w ir.Expr, rank int, o *convOpts, err error) {
	if x, err = c.arg(0); err != nil {
		return
	}
	if w, err = c.arg(1); err != nil {
		return
	}
	if rank, err = c.rank(0); err != nil {
		return
	}
	if spatial := rank - 2; spatial < 1 || spatial > 3 {
		return nil, nil, 0, nil, unsupported("%s over %d spatial axes", name, spatial)
	}
	wshape, ok := c.staticShape(1)
	if !ok {
		return nil, nil, 0, nil, unsupported("%s with a weight of unknown shape", name)
	}
	o, err = c.convAttrs(rank-2, wshape[2:])
	return
}

func convertConv(c *nodeCtx) ([]ir.Expr, error) {
	x, w, rank, o, err := c.convOperands("Conv")
	if err != nil {
		return nil, err
	}
	spatial := rank - 2
	dims, err := c.dims(0)
	if err != nil {
		return nil, err
	}
	if err := c.resolvePads(o, dims[2:]); err != nil {
		return nil, err
	}
	convOps := [4]*ir.Op{nil, op.Conv1D, op.Conv2D, op.Conv3D}
	out := c.emitOp(convOps[spatial], ir.Attrs{
		"strides": anyInts(o.strides), "padding": anyInts(o.pads), "dilation": anyInts(o.dilations),
		"groups": c.attrInt("group", 1), "data_layout": layouts[spatial][0], "kernel_layout": layouts[spatial][1],
	}, x, w)
	if c.has(2) {
		out = c.emitOp(op.Add, nil, out, c.alongAxis(c.in[2], rank, 1))
	}
	return one(out)
}

// convertConvTranspose: output_shape, when given, decides the padding
// (the total split as auto_pad does, SAME_UPPER putting the extra at the
// end), as TVM's ConvTranspose does.
func convertConvTranspose(c *nodeCtx) ([]ir.Expr, error) {
	x, w, rank, o, err := c.convOperands("ConvTranspose")
	if err != nil {
		return nil, err
	}
	spatial := rank - 2
	outPad, ok := c.attrInts("output_padding")
	if !ok {
		outPad = make([]int64, spatial)
	}
	outShape, hasOut := c.attrInts("output_shape")
	if hasOut || o.autoPad == "SAME_UPPER" || o.autoPad == "SAME_LOWER" {
		in, ok := c.staticShape(0)
		if !ok {
			return nil, unsupported("ConvTranspose with output_shape or auto_pad over a symbolic input")
		}
		if !hasOut {
			outShape = make([]int64, spatial)
			for i := range outShape {
				outShape[i] = in[2+i] * o.strides[i]
			}
		}
		if len(outShape) == spatial+2 {
			outShape = outShape[2:]
		}
		for i := 0; i < spatial; i++ {
			total := o.strides[i]*(in[2+i]-1) + outPad[i] + (o.kernel[i]-1)*o.dilations[i] + 1 - outShape[i]
			if total < 0 {
				// A larger output than the convolution gives: the
				// rest becomes output padding.
				outPad[i] -= total
				total = 0
			}
			lo := total / 2
			if o.autoPad != "SAME_UPPER" {
				lo = total - total/2
			}
			if o.autoPad == "NOTSET" || o.autoPad == "" {
				lo = total / 2
			}
			o.pads[i], o.pads[i+spatial] = lo, total-lo
		}
	} else if o.autoPad == "VALID" {
		for i := range o.pads {
			o.pads[i] = 0
		}
	}
	convOps := [4]*ir.Op{nil, op.Conv1DTranspose, op.Conv2DTranspose, op.Conv3DTranspose}
	out := c.emitOp(convOps[spatial], ir.Attrs{
		"strides": anyInts(o.strides), "padding": anyInts(o.pads), "output_padding": anyInts(outPad),
		"dilation": anyInts(o.dilations), "groups": c.attrInt("group", 1),
		"data_layout": layouts[spatial][0], "kernel_layout": layouts[spatial][2],
	}, x, w)
	if c.has(2) {
		out = c.emitOp(op.Add, nil, out, c.alongAxis(c.in[2], rank, 1))
	}
	return one(out)
}

func poolConverter(kind string) converter {
	return func(c *nodeCtx) ([]ir.Expr, error) {
		x, err := c.arg(0)
		if err != nil {
			return nil, err
		}
		rank, err := c.rank(0)
		if err != nil {
			return nil, err
		}
		spatial := rank - 2
		if spatial < 1 || spatial > 3 {
			return nil, unsupported("pooling over %d spatial axes", spatial)
		}
		indices := kind == "max" && len(c.node.GetOutput()) > 1 && c.node.GetOutput()[1] != ""
		o, err := c.convAttrs(spatial, nil)
		if err != nil {
			return nil, err
		}
		dims, err := c.dims(0)
		if err != nil {
			return nil, err
		}
		if err := c.resolvePads(o, dims[2:]); err != nil {
			return nil, err
		}
		attrs := ir.Attrs{
			"pool_size": anyInts(o.kernel), "strides": anyInts(o.strides), "padding": anyInts(o.pads),
			"dilation": anyInts(o.dilations), "ceil_mode": c.attrInt("ceil_mode", 0) == 1,
			"count_include_pad": c.attrInt("count_include_pad", 0) == 1, "layout": layouts[spatial][0],
		}
		ops := map[string][4]*ir.Op{"max": {nil, op.MaxPool1D, op.MaxPool2D, op.MaxPool3D}, "avg": {nil, op.AvgPool1D, op.AvgPool2D, op.AvgPool3D}}
		y := c.emitOp(ops[kind][spatial], attrs, x)
		if !indices {
			return []ir.Expr{y}, nil
		}
		idx, err := c.maxPoolIndices(x, y, o)
		if err != nil {
			return nil, err
		}
		return []ir.Expr{y, idx}, nil
	}
}

// convertLpPool: (sum over the window of |x|^p)^(1/p), as an average
// pool of |x|^p times the window size.
func convertLpPool(c *nodeCtx) ([]ir.Expr, error) {
	x, err := c.arg(0)
	if err != nil {
		return nil, err
	}
	dt := dtypeOf(x)
	p := float64(c.attrInt("p", 2))
	pw := c.emitOp(op.Power, nil, c.emitOp(op.Abs, nil, x), scalarConst(p, dt))
	// count_include_pad: the sum counts padded zeros as zeros.
	sub := *c
	sub.in = []ir.Expr{pw}
	sub.attrs = map[string]*onnxpb.AttributeProto{}
	for k, v := range c.attrs {
		sub.attrs[k] = v
	}
	sub.attrs["count_include_pad"] = &onnxpb.AttributeProto{Name: proto.String("count_include_pad"), I: proto.Int64(1), Type: onnxpb.AttributeProto_INT.Enum()}
	avg, err := poolConverter("avg")(&sub)
	if err != nil {
		return nil, err
	}
	k, _ := c.attrInts("kernel_shape")
	n := int64(1)
	for _, v := range k {
		n *= v
	}
	sum := c.emitOp(op.Multiply, nil, avg[0], scalarConst(float64(n), dt))
	return one(c.emitOp(op.Power, nil, sum, scalarConst(1/p, dt)))
}

func globalPool(o *ir.Op) converter {
	return func(c *nodeCtx) ([]ir.Expr, error) {
		x, err := c.arg(0)
		if err != nil {
			return nil, err
		}
		rank, err := c.rank(0)
		if err != nil {
			return nil, err
		}
		var axes []int
		for i := 2; i < rank; i++ {
			axes = append(axes, i)
		}
		return one(c.emitOp(o, ir.Attrs{"axis": anyInts(axes), "keepdims": true}, x))
	}
}

func convertGlobalLpPool(c *nodeCtx) ([]ir.Expr, error) {
	x, err := c.arg(0)
	if err != nil {
		return nil, err
	}
	rank, err := c.rank(0)
	if err != nil {
		return nil, err
	}
	dt := dtypeOf(x)
	p := float64(c.attrInt("p", 2))
	var axes []int
	for i := 2; i < rank; i++ {
		axes = append(axes, i)
	}
	s := c.emitOp(op.Sum, ir.Attrs{"axis": anyInts(axes), "keepdims": true}, c.emitOp(op.Power, nil, c.emitOp(op.Abs, nil, x), scalarConst(p, dt)))
	return one(c.emitOp(op.Power, nil, s, scalarConst(1/p, dt)))
}

func convertBatchNorm(c *nodeCtx) ([]ir.Expr, error) {
	for i := range 5 {
		if !c.has(i) {
			return nil, fmt.Errorf("BatchNormalization needs five inputs")
		}
	}
	if c.attrInt("training_mode", 0) == 1 || len(c.node.GetOutput()) > 1 && c.opset >= 14 {
		return nil, unsupported("BatchNormalization in training mode")
	}
	t := c.emitOp(op.BatchNorm, ir.Attrs{"axis": int64(1), "epsilon": c.attrFloat("epsilon", 1e-5), "training": false},
		c.in[0], c.in[1], c.in[2], c.in[3], c.in[4])
	return one(c.imp.b.Emit(&ir.TupleGetItem{Tuple: t, Index: 0}, "lv"))
}

// normalize is (x - mean) / sqrt(var + eps) over axes.
func (c *nodeCtx) normalize(x ir.Expr, axes []int, eps float64) ir.Expr {
	dt := dtypeOf(x)
	a := ir.Attrs{"axis": anyInts(axes), "keepdims": true}
	mean := c.emitOp(op.Mean, a, x)
	centered := c.emitOp(op.Subtract, nil, x, mean)
	v := c.emitOp(op.Mean, a, c.emitOp(op.Multiply, nil, centered, centered))
	den := c.emitOp(op.Sqrt, nil, c.emitOp(op.Add, nil, v, scalarConst(eps, dt)))
	return c.emitOp(op.Divide, nil, centered, den)
}

func convertInstanceNorm(c *nodeCtx) ([]ir.Expr, error) {
	x, err := c.arg(0)
	if err != nil {
		return nil, err
	}
	rank, err := c.rank(0)
	if err != nil {
		return nil, err
	}
	if !c.has(1) || !c.has(2) {
		return nil, fmt.Errorf("InstanceNormalization needs scale and B")
	}
	var axes []int
	for i := 2; i < rank; i++ {
		axes = append(axes, i)
	}
	out := c.normalize(x, axes, c.attrFloat("epsilon", 1e-5))
	out = c.emitOp(op.Multiply, nil, out, c.alongAxis(c.in[1], rank, 1))
	return one(c.emitOp(op.Add, nil, out, c.alongAxis(c.in[2], rank, 1)))
}

// convertLayerNorm: normalized over axis..rank-1 (in float32 when
// stash_type is 1 and the input is narrower); scale and bias broadcast to
// those axes. The optional outputs are the mean and the inverse standard
// deviation, with the normalized axes kept as 1.
func convertLayerNorm(c *nodeCtx) ([]ir.Expr, error) {
	x, err := c.arg(0)
	if err != nil {
		return nil, err
	}
	rank, err := c.rank(0)
	if err != nil {
		return nil, err
	}
	axis, err := normAxis(c.attrInt("axis", -1), rank)
	if err != nil {
		return nil, err
	}
	var axes []int
	for i := axis; i < rank; i++ {
		axes = append(axes, i)
	}
	dt := dtypeOf(x)
	xs := x
	if c.attrInt("stash_type", 1) == 1 && dt != ir.Float64 {
		xs = c.castTo(x, ir.Float32)
	}
	sdt := dtypeOf(xs)
	a := ir.Attrs{"axis": anyInts(axes), "keepdims": true}
	mean := c.emitOp(op.Mean, a, xs)
	centered := c.emitOp(op.Subtract, nil, xs, mean)
	v := c.emitOp(op.Mean, a, c.emitOp(op.Multiply, nil, centered, centered))
	inv := c.emitOp(op.Rsqrt, nil, c.emitOp(op.Add, nil, v, scalarConst(c.attrFloat("epsilon", 1e-5), sdt)))
	out := c.castTo(c.emitOp(op.Multiply, nil, centered, inv), dt)
	if c.has(1) {
		out = c.emitOp(op.Multiply, nil, out, c.in[1])
	}
	if c.has(2) {
		out = c.emitOp(op.Add, nil, out, c.in[2])
	}
	return []ir.Expr{out, mean, inv}, nil
}

// convertGroupNorm: opset 18's scale and bias are per group, opset 21's
// per channel.
func convertGroupNorm(c *nodeCtx) ([]ir.Expr, error) {
	x, err := c.arg(0)
	if err != nil {
		return nil, err
	}
	dims, err := c.dims(0)
	if err != nil {
		return nil, err
	}
	rank := len(dims)
	g := c.attrInt("num_groups", 0)
	ch, ok := ir.IntValue(dims[1])
	if !ok || g <= 0 || ch%g != 0 {
		return nil, unsupported("GroupNormalization with %d groups over %s channels", g, dims[1])
	}
	grouped := append([]ir.PrimExpr{dims[0], ir.I64(g), ir.I64(ch / g)}, dims[2:]...)
	xr := c.emitOp(op.Reshape, nil, x, shapeExpr(grouped))
	var axes []int
	for i := 2; i < rank+1; i++ {
		axes = append(axes, i)
	}
	out := c.normalize(xr, axes, c.attrFloat("epsilon", 1e-5))
	scale, bias := c.in[1], c.in[2]
	if c.opset < 21 {
		out = c.emitOp(op.Multiply, nil, out, c.alongAxis(scale, rank+1, 1))
		out = c.emitOp(op.Add, nil, out, c.alongAxis(bias, rank+1, 1))
		return one(c.emitOp(op.Reshape, nil, out, shapeExpr(dims)))
	}
	out = c.emitOp(op.Reshape, nil, out, shapeExpr(dims))
	out = c.emitOp(op.Multiply, nil, out, c.alongAxis(scale, rank, 1))
	return one(c.emitOp(op.Add, nil, out, c.alongAxis(bias, rank, 1)))
}

func convertMVN(c *nodeCtx) ([]ir.Expr, error) {
	x, err := c.arg(0)
	if err != nil {
		return nil, err
	}
	axes, ok := c.attrInts("axes")
	if !ok {
		axes = []int64{0, 2, 3}
	}
	ia := make([]int, len(axes))
	for i, a := range axes {
		ia[i] = int(a)
	}
	dt := dtypeOf(x)
	a := ir.Attrs{"axis": anyInts(ia), "keepdims": true}
	mean := c.emitOp(op.Mean, a, x)
	centered := c.emitOp(op.Subtract, nil, x, mean)
	v := c.emitOp(op.Mean, a, c.emitOp(op.Multiply, nil, centered, centered))
	den := c.emitOp(op.Add, nil, c.emitOp(op.Sqrt, nil, v), scalarConst(1e-9, dt))
	return one(c.emitOp(op.Divide, nil, centered, den))
}

func convertLpNorm(c *nodeCtx) ([]ir.Expr, error) {
	x, err := c.arg(0)
	if err != nil {
		return nil, err
	}
	a := ir.Attrs{"axis": anyInts([]int64{c.attrInt("axis", -1)}), "keepdims": true}
	var n ir.Expr
	switch c.attrInt("p", 2) {
	case 1:
		n = c.emitOp(op.Sum, a, c.emitOp(op.Abs, nil, x))
	case 2:
		n = c.emitOp(op.Sqrt, nil, c.emitOp(op.Sum, a, c.emitOp(op.Multiply, nil, x, x)))
	default:
		return nil, fmt.Errorf("p must be 1 or 2")
	}
	return one(c.emitOp(op.Divide, nil, x, n))
}

// convertLRN: x / (bias + alpha/size * sum of squares over a window of
// channels)^beta; the window sum is an average pool over the channel
// axis of the squares, padded with zeros.
func convertLRN(c *nodeCtx) ([]ir.Expr, error) {
	x, err := c.arg(0)
	if err != nil {
		return nil, err
	}
	dims, err := c.dims(0)
	if err != nil {
		return nil, err
	}
	if len(dims) != 4 {
		return nil, unsupported("LRN over rank %d", len(dims))
	}
	dt := dtypeOf(x)
	size := c.attrInt("size", 1)
	alpha, beta, bias := c.attrFloat("alpha", 1e-4), c.attrFloat("beta", 0.75), c.attrFloat("bias", 1)
	sq := c.emitOp(op.Multiply, nil, x, x)
	// (N, C, H, W) -> (N, 1, C, H*W): pool over C with a (size, 1) window.
	r := c.emitOp(op.Reshape, nil, sq, shapeExpr([]ir.PrimExpr{dims[0], ir.I64(1), dims[1], product(dims[2:])}))
	lo := (size - 1) / 2
	hi := size - 1 - lo
	pooled := c.emitOp(op.AvgPool2D, ir.Attrs{"pool_size": anyInts([]int64{size, 1}), "strides": anyInts([]int64{1, 1}),
		"padding": anyInts([]int64{lo, 0, hi, 0}), "dilation": anyInts([]int64{1, 1}), "ceil_mode": false,
		"count_include_pad": true, "layout": "NCHW"}, r)
	sum := c.emitOp(op.Reshape, nil, pooled, shapeExpr(dims))
	// avg * size = sum; alpha/size * sum = alpha * avg
	den := c.emitOp(op.Add, nil, c.emitOp(op.Multiply, nil, sum, scalarConst(alpha, dt)), scalarConst(bias, dt))
	den = c.emitOp(op.Power, nil, den, scalarConst(beta, dt))
	return one(c.emitOp(op.Divide, nil, x, den))
}

// convertDropout is the identity at inference; the mask, when asked
// for, is all true.
func convertDropout(c *nodeCtx) ([]ir.Expr, error) {
	x, err := c.arg(0)
	if err != nil {
		return nil, err
	}
	if c.attrInt("is_test", 1) == 0 && c.opset < 7 {
		return nil, unsupported("Dropout in training mode")
	}
	if c.has(2) {
		if m, ok := c.constant(2); !ok || m.Int(0) != 0 {
			return nil, unsupported("Dropout with training_mode")
		}
	}
	mask := c.emitOp(op.OnesLike, ir.Attrs{"dtype": ir.Bool}, x)
	return []ir.Expr{x, mask}, nil
}
