package op

import (
	"fmt"
	"math"

	"github.com/phasec/phasec/ir"
)

// The ops' reverse-mode derivatives, read by the Gradient pass (package
// transform), ported from TVM v0.23's python/tvm/relax/op/_op_gradient.py
// (each op's FPrimalGradient). A rule receives the block builder the
// adjoint function is being emitted through, the call (its arguments
// already the adjoint function's), the var bound to the call's result and
// the var holding the gradient flowing into it; it returns one expression
// per argument (Call.Args order): the gradient with respect to that
// argument, or nil where none flows (TVM's no_grad). Rules may emit
// helper bindings through the builder; what they return is emitted by the
// pass as the argument's adjoint.
//
// Invariants: a returned gradient has the struct info of its argument
// (broadcast gradients are summed back with collapse_sum_to, as TVM's
// _fit_shape); rules read shapes from struct info, so a rule reports an
// error instead of a gradient when an argument has no known shape.
//
// The rules are attached in init below rather than in each op's Define
// literal: a rule names other ops (multiply's rule multiplies), and Go
// rejects a package variable whose initializer refers to itself through a
// function (the initialization cycle op.opOf avoids for Eval).
func init() {
	for o, g := range gradientRules() {
		registry.named[o].Gradient = g
	}
}

func gradientRules() map[*ir.Op]GradientFunc {
	noGrad := func(_ *ir.Builder, c *ir.Call, _, _ *ir.Var) ([]ir.Expr, error) {
		return make([]ir.Expr, len(c.Args)), nil
	}
	return map[*ir.Op]GradientFunc{
		// Binary arithmetic, with broadcasting undone by collapse_sum_to.
		Add:      addGrad,
		Subtract: subtractGrad,
		Multiply: multiplyGrad,
		Divide:   divideGrad,
		Power:    powerGrad,
		Maximum:  minMaxGrad(Less, GreaterEqual),
		Minimum:  minMaxGrad(GreaterEqual, Less),

		// Comparisons and constructors carry no gradient.
		Equal: noGrad, NotEqual: noGrad, Greater: noGrad, GreaterEqual: noGrad,
		Less: noGrad, LessEqual: noGrad,
		ZerosLike: noGrad, OnesLike: noGrad, FullLike: noGrad,
		Zeros: noGrad, Ones: noGrad, Full: noGrad,
		Triu: triuGrad,

		// Unary math.
		Abs:      absGrad,
		Cos:      cosGrad,
		Exp:      expGrad,
		Log:      logGrad,
		Negative: negativeGrad,
		Sigmoid:  sigmoidGrad,
		Sin:      sinGrad,
		Sqrt:     sqrtGrad,
		Tanh:     tanhGrad,

		// Reductions.
		Sum:      sumGrad,
		Mean:     meanGrad,
		Variance: varianceGrad,
		Cumsum:   cumsumGrad,

		// Manipulation.
		PermuteDims: permuteDimsGrad,
		Concat:      concatGrad,
		Split:       splitGrad,
		ExpandDims:  expandDimsGrad,
		Reshape:     reshapeGrad,
		BroadcastTo: broadcastToGrad,
		Take:        takeGrad,
		Where:       whereGrad,
		AsType:      asTypeGrad,

		// Linear algebra and neural network ops.
		Matmul:                 matmulGrad,
		Relu:                   reluGrad,
		Silu:                   siluGrad,
		Softmax:                softmaxGrad,
		LogSoftmax:             logSoftmaxGrad,
		CrossEntropyWithLogits: crossEntropyGrad,
		NLLLoss:                nllLossGrad,
		Conv2D:                 conv2dGrad,
		MaxPool2D:              maxPool2dGrad,
		AvgPool2D:              avgPool2dGrad,

		// phasec's own rules (TVM has none).
		Gelu:         geluGrad,
		Tril:         trilGrad,
		StridedSlice: stridedSliceGrad,
	}
}

// gradCall is a call of o on args with attrs, for a rule to return or emit.
func gradCall(o *ir.Op, attrs ir.Attrs, args ...ir.Expr) *ir.Call {
	return &ir.Call{Op: o, Args: args, Attrs: attrs}
}

// gradConst is TVM's relax.const(v, dtype): a rank-0 constant.
func gradConst(v float64, dt ir.DataType) *ir.Constant {
	return &ir.Constant{Data: ir.NewScalarArray(dt, v)}
}

// gradTensor is the struct info of e, a tensor of known rank and dtype.
func gradTensor(o *ir.Op, e ir.Expr) (*ir.TensorInfo, error) {
	t, ok := e.StructInfo().(*ir.TensorInfo)
	if !ok || t.NDim < 0 {
		return nil, opErrorf(o, "gradient: an argument is not a tensor of known rank (%s)", gradSInfoString(e))
	}
	return t, nil
}

// gradDims are the dimensions of tensor e (TVM's _get_shape).
func gradDims(o *ir.Op, e ir.Expr) ([]ir.PrimExpr, error) {
	t, err := gradTensor(o, e)
	if err != nil {
		return nil, err
	}
	d, ok := t.Dims()
	if !ok {
		return nil, opErrorf(o, "gradient: an argument has no known shape (%s)", gradSInfoString(e))
	}
	return d, nil
}

func gradShape(o *ir.Op, e ir.Expr) (*ir.ShapeExpr, error) {
	d, err := gradDims(o, e)
	if err != nil {
		return nil, err
	}
	return ir.NewShapeExpr(d...), nil
}

// gradConstDimsOf is gradConstDims of each expression, in order.
func gradConstDimsOf(o *ir.Op, es ...ir.Expr) ([][]int64, error) {
	out := make([][]int64, len(es))
	for i, e := range es {
		d, err := gradConstDims(o, e)
		if err != nil {
			return nil, err
		}
		out[i] = d
	}
	return out, nil
}

// gradConstDims are the dimensions of e as integers (TVM's int(dim)).
func gradConstDims(o *ir.Op, e ir.Expr) ([]int64, error) {
	d, err := gradDims(o, e)
	if err != nil {
		return nil, err
	}
	out := make([]int64, len(d))
	for i, x := range d {
		v, ok := ir.IntValue(x)
		if !ok {
			return nil, opErrorf(o, "gradient: needs a static shape, got a symbolic dimension in %s", gradSInfoString(e))
		}
		out[i] = v
	}
	return out, nil
}

func gradSInfoString(e ir.Expr) string {
	if s := e.StructInfo(); s != nil {
		return fmt.Sprint(s)
	}
	return "no struct info"
}

// fitShape is TVM's _fit_shape: grad itself when it has input's shape,
// else grad summed down to it (collapse_sum_to). grad is normalized
// through b first, which binds its nested calls.
func fitShape(b *ir.Builder, o *ir.Op, grad, input ir.Expr) (ir.Expr, error) {
	grad = b.Normalize(grad)
	want, err := gradDims(o, input)
	if err != nil {
		return nil, err
	}
	have, err := gradDims(o, grad)
	if err != nil {
		return nil, err
	}
	if len(have) == len(want) {
		az := ir.NewAnalyzer()
		same := true
		for i := range have {
			same = same && az.CanProveEqual(have[i], want[i])
		}
		if same {
			return grad, nil
		}
	}
	return gradCall(CollapseSumTo, nil, grad, ir.NewShapeExpr(want...)), nil
}

func argDType(o *ir.Op, e ir.Expr) (ir.DataType, error) {
	t, err := gradTensor(o, e)
	if err != nil {
		return ir.Void, err
	}
	return t.DType, nil
}

func neg(x ir.Expr) *ir.Call     { return gradCall(Negative, nil, x) }
func mul(x, y ir.Expr) *ir.Call  { return gradCall(Multiply, nil, x, y) }
func div(x, y ir.Expr) *ir.Call  { return gradCall(Divide, nil, x, y) }
func sub(x, y ir.Expr) *ir.Call  { return gradCall(Subtract, nil, x, y) }
func plus(x, y ir.Expr) *ir.Call { return gradCall(Add, nil, x, y) }

func where(c, x, y ir.Expr) *ir.Call { return gradCall(Where, nil, c, x, y) }

// fitBoth returns the gradients of a binary op's operands, each fitted to
// its operand's shape.
func fitBoth(b *ir.Builder, c *ir.Call, gx, gy ir.Expr) ([]ir.Expr, error) {
	o := opOf(c)
	fx, err := fitShape(b, o, gx, c.Args[0])
	if err != nil {
		return nil, err
	}
	fy, err := fitShape(b, o, gy, c.Args[1])
	if err != nil {
		return nil, err
	}
	return []ir.Expr{fx, fy}, nil
}

func addGrad(b *ir.Builder, c *ir.Call, _, g *ir.Var) ([]ir.Expr, error) {
	return fitBoth(b, c, g, g)
}

func subtractGrad(b *ir.Builder, c *ir.Call, _, g *ir.Var) ([]ir.Expr, error) {
	return fitBoth(b, c, g, neg(g))
}

func multiplyGrad(b *ir.Builder, c *ir.Call, _, g *ir.Var) ([]ir.Expr, error) {
	x, y := c.Args[0], c.Args[1]
	return fitBoth(b, c, mul(g, y), mul(g, x))
}

// divideGrad: d(x/y) = g/y, -g * (x/y) / y.
func divideGrad(b *ir.Builder, c *ir.Call, r, g *ir.Var) ([]ir.Expr, error) {
	y := c.Args[1]
	return fitBoth(b, c, div(g, y), div(mul(neg(g), r), y))
}

// powerGrad: d(x**y) = g * y * x**(y-1), g * x**y * log(x).
func powerGrad(b *ir.Builder, c *ir.Call, r, g *ir.Var) ([]ir.Expr, error) {
	x, y := c.Args[0], c.Args[1]
	dt, err := argDType(opOf(c), y)
	if err != nil {
		return nil, err
	}
	xm1 := gradCall(Power, nil, x, sub(y, gradConst(1, dt)))
	return fitBoth(b, c, mul(mul(g, y), xm1), mul(mul(g, r), gradCall(Log, nil, x)))
}

// minMaxGrad: the gradient flows to the operand that was chosen; for x
// it is blocked where xBlocked(x, y) holds, for y where yBlocked does.
func minMaxGrad(xBlocked, yBlocked *ir.Op) GradientFunc {
	return func(b *ir.Builder, c *ir.Call, _, g *ir.Var) ([]ir.Expr, error) {
		x, y := c.Args[0], c.Args[1]
		dt, err := argDType(opOf(c), x)
		if err != nil {
			return nil, err
		}
		zero := gradConst(0, dt)
		return fitBoth(b, c,
			where(gradCall(xBlocked, nil, x, y), zero, g),
			where(gradCall(yBlocked, nil, x, y), zero, g))
	}
}

func triuGrad(_ *ir.Builder, c *ir.Call, _, g *ir.Var) ([]ir.Expr, error) {
	return []ir.Expr{gradCall(Triu, c.Attrs, g)}, nil
}

func absGrad(_ *ir.Builder, c *ir.Call, _, g *ir.Var) ([]ir.Expr, error) {
	x := c.Args[0]
	dt, err := argDType(opOf(c), x)
	if err != nil {
		return nil, err
	}
	sign := where(gradCall(Less, nil, x, gradConst(0, dt)), gradConst(-1, dt), gradConst(1, dt))
	return []ir.Expr{mul(g, sign)}, nil
}

func cosGrad(_ *ir.Builder, c *ir.Call, _, g *ir.Var) ([]ir.Expr, error) {
	return []ir.Expr{mul(neg(g), gradCall(Sin, nil, c.Args[0]))}, nil
}

func expGrad(_ *ir.Builder, _ *ir.Call, r, g *ir.Var) ([]ir.Expr, error) {
	return []ir.Expr{mul(g, r)}, nil
}

func logGrad(_ *ir.Builder, c *ir.Call, _, g *ir.Var) ([]ir.Expr, error) {
	return []ir.Expr{div(g, c.Args[0])}, nil
}

func negativeGrad(_ *ir.Builder, _ *ir.Call, _, g *ir.Var) ([]ir.Expr, error) {
	return []ir.Expr{neg(g)}, nil
}

// sigmoidGrad: g * s * (1 - s).
func sigmoidGrad(_ *ir.Builder, c *ir.Call, r, g *ir.Var) ([]ir.Expr, error) {
	dt, err := argDType(opOf(c), c.Args[0])
	if err != nil {
		return nil, err
	}
	return []ir.Expr{mul(mul(g, r), sub(gradConst(1, dt), r))}, nil
}

func sinGrad(_ *ir.Builder, c *ir.Call, _, g *ir.Var) ([]ir.Expr, error) {
	return []ir.Expr{mul(g, gradCall(Cos, nil, c.Args[0]))}, nil
}

// sqrtGrad: 0.5 * g / sqrt(x).
func sqrtGrad(_ *ir.Builder, c *ir.Call, r, g *ir.Var) ([]ir.Expr, error) {
	dt, err := argDType(opOf(c), c.Args[0])
	if err != nil {
		return nil, err
	}
	return []ir.Expr{div(mul(gradConst(0.5, dt), g), r)}, nil
}

// tanhGrad: g * (1 - t * t).
func tanhGrad(_ *ir.Builder, c *ir.Call, r, g *ir.Var) ([]ir.Expr, error) {
	dt, err := argDType(opOf(c), c.Args[0])
	if err != nil {
		return nil, err
	}
	return []ir.Expr{mul(g, sub(gradConst(1, dt), mul(r, r)))}, nil
}

// reduceAxes reads a reduction's axis attribute: nil for every axis.
func reduceAxes(c *ir.Call) ([]int64, bool, error) {
	o := opOf(c)
	axes, present, err := opAttrInts(o, c, "axis")
	if err != nil {
		return nil, false, err
	}
	keep, err := opAttrBool(o, c, "keepdims")
	return axes, present && len(axes) > 0 && !keep, err
}

// sumGrad: the gradient broadcast back over the reduced axes (expanded
// first when they were dropped).
func sumGrad(_ *ir.Builder, c *ir.Call, _, g *ir.Var) ([]ir.Expr, error) {
	axes, expand, err := reduceAxes(c)
	if err != nil {
		return nil, err
	}
	shape, err := gradShape(opOf(c), c.Args[0])
	if err != nil {
		return nil, err
	}
	var grad ir.Expr = g
	if expand {
		grad = gradCall(ExpandDims, ir.Attrs{"axis": intsAttr(axes)}, grad)
	}
	return []ir.Expr{gradCall(BroadcastTo, nil, grad, shape)}, nil
}

// reducedCount is the number of elements each output of a reduction over
// axes (nil: all) of x averages (TVM's _get_shape_prod).
func reducedCount(o *ir.Op, x ir.Expr, axes []int64) (int64, error) {
	dims, err := gradConstDims(o, x)
	if err != nil {
		return 0, err
	}
	n := int64(1)
	if axes == nil {
		for _, d := range dims {
			n *= d
		}
		return n, nil
	}
	for _, a := range axes {
		if a < 0 {
			a += int64(len(dims))
		}
		if a < 0 || a >= int64(len(dims)) {
			return 0, opErrorf(o, "gradient: axis %d out of range", a)
		}
		n *= dims[a]
	}
	return n, nil
}

func meanGrad(_ *ir.Builder, c *ir.Call, _, g *ir.Var) ([]ir.Expr, error) {
	o := opOf(c)
	axes, expand, err := reduceAxes(c)
	if err != nil {
		return nil, err
	}
	n, err := reducedCount(o, c.Args[0], axes)
	if err != nil {
		return nil, err
	}
	shape, err := gradShape(o, c.Args[0])
	if err != nil {
		return nil, err
	}
	dt, err := argDType(o, c.Args[0])
	if err != nil {
		return nil, err
	}
	var grad ir.Expr = div(g, gradConst(float64(n), dt))
	if expand {
		grad = gradCall(ExpandDims, ir.Attrs{"axis": intsAttr(axes)}, grad)
	}
	return []ir.Expr{gradCall(BroadcastTo, nil, grad, shape)}, nil
}

// varianceGrad: g * (2/n * x - 2/n² * sum(x)) over the reduced axes.
func varianceGrad(_ *ir.Builder, c *ir.Call, _, g *ir.Var) ([]ir.Expr, error) {
	o := opOf(c)
	x := c.Args[0]
	axes, expand, err := reduceAxes(c)
	if err != nil {
		return nil, err
	}
	n, err := reducedCount(o, x, axes)
	if err != nil {
		return nil, err
	}
	dt, err := argDType(o, x)
	if err != nil {
		return nil, err
	}
	nf := float64(n)
	var axisAttr any
	if axes != nil {
		axisAttr = intsAttr(axes)
	}
	grad1 := mul(gradConst(2/nf, dt), x)
	grad2 := mul(gradConst(2/nf/nf, dt), gradCall(Sum, ir.Attrs{"axis": axisAttr, "keepdims": true}, x))
	var grad ir.Expr = g
	if expand {
		grad = gradCall(ExpandDims, ir.Attrs{"axis": intsAttr(axes)}, grad)
	}
	return []ir.Expr{mul(grad, sub(grad1, grad2))}, nil
}

// cumsumGrad: a reversed cumulative sum, sum(g) - cumsum(g) + g.
func cumsumGrad(_ *ir.Builder, c *ir.Call, _, g *ir.Var) ([]ir.Expr, error) {
	o := opOf(c)
	x := c.Args[0]
	if ex, _ := opAttrBool(o, c, "exclusive"); ex {
		return nil, opErrorf(o, "gradient: exclusive cumsum has no gradient rule (TVM has none)")
	}
	axis, hasAxis, err := opAttrInt(o, c, "axis")
	if err != nil {
		return nil, err
	}
	var grad ir.Expr
	if hasAxis {
		total := gradCall(Sum, ir.Attrs{"axis": []any{axis}, "keepdims": true}, g)
		grad = plus(sub(total, gradCall(Cumsum, ir.Attrs{"axis": axis}, g)), g)
	} else {
		shape, err := gradShape(o, x)
		if err != nil {
			return nil, err
		}
		total := gradCall(Sum, ir.Attrs{"keepdims": true}, g)
		flat := plus(sub(total, gradCall(Cumsum, nil, g)), gradCall(Flatten, nil, g))
		grad = gradCall(Reshape, nil, flat, shape)
	}
	if dt, _ := opAttrDType(o, c, "dtype"); !dt.IsVoid() {
		xdt, err := argDType(o, x)
		if err != nil {
			return nil, err
		}
		grad = gradCall(AsType, ir.Attrs{"dtype": xdt}, grad)
	}
	return []ir.Expr{grad}, nil
}

// permuteDimsGrad: the inverse permutation.
func permuteDimsGrad(_ *ir.Builder, c *ir.Call, _, g *ir.Var) ([]ir.Expr, error) {
	axes, present, err := opAttrInts(opOf(c), c, "axes")
	if err != nil {
		return nil, err
	}
	if !present {
		return []ir.Expr{gradCall(PermuteDims, nil, g)}, nil
	}
	inv := make([]int64, len(axes))
	for i, a := range axes {
		if a < 0 {
			a += int64(len(axes))
		}
		inv[a] = int64(i)
	}
	return []ir.Expr{gradCall(PermuteDims, ir.Attrs{"axes": intsAttr(inv)}, g)}, nil
}

// concatGrad: the gradient split where the operands were joined.
func concatGrad(_ *ir.Builder, c *ir.Call, _, g *ir.Var) ([]ir.Expr, error) {
	o := opOf(c)
	axis, _, err := opAttrInt(o, c, "axis")
	if err != nil {
		return nil, err
	}
	ts, ok := c.Args[0].StructInfo().(*ir.TupleInfo)
	if !ok {
		return nil, opErrorf(o, "gradient: the operand is not a tuple")
	}
	var indices []any
	var at ir.PrimExpr
	for i := 0; i+1 < len(ts.Fields); i++ {
		t, ok := ts.Fields[i].(*ir.TensorInfo)
		if !ok {
			return nil, opErrorf(o, "gradient: field %d is not a tensor", i)
		}
		d, ok := t.Dims()
		if !ok {
			return nil, opErrorf(o, "gradient: field %d has no known shape", i)
		}
		a := axis
		if a < 0 {
			a += int64(len(d))
		}
		if at == nil {
			at = d[a]
		} else {
			at = ir.NewAnalyzer().Simplify(ir.NewBinary(ir.OpAdd, at, d[a]))
		}
		indices = append(indices, at)
	}
	return []ir.Expr{gradCall(Split, ir.Attrs{"indices_or_sections": indices, "axis": axis}, g)}, nil
}

func splitGrad(_ *ir.Builder, c *ir.Call, _, g *ir.Var) ([]ir.Expr, error) {
	axis, _, err := opAttrInt(opOf(c), c, "axis")
	if err != nil {
		return nil, err
	}
	return []ir.Expr{gradCall(Concat, ir.Attrs{"axis": axis}, g)}, nil
}

func expandDimsGrad(_ *ir.Builder, c *ir.Call, _, g *ir.Var) ([]ir.Expr, error) {
	return []ir.Expr{gradCall(Squeeze, ir.Attrs{"axis": c.Attrs["axis"]}, g)}, nil
}

func reshapeGrad(_ *ir.Builder, c *ir.Call, _, g *ir.Var) ([]ir.Expr, error) {
	shape, err := gradShape(opOf(c), c.Args[0])
	if err != nil {
		return nil, err
	}
	return []ir.Expr{gradCall(Reshape, nil, g, shape), nil}, nil
}

func broadcastToGrad(_ *ir.Builder, c *ir.Call, _, g *ir.Var) ([]ir.Expr, error) {
	shape, err := gradShape(opOf(c), c.Args[0])
	if err != nil {
		return nil, err
	}
	return []ir.Expr{gradCall(CollapseSumTo, nil, g, shape), nil}, nil
}

func whereGrad(_ *ir.Builder, c *ir.Call, _, g *ir.Var) ([]ir.Expr, error) {
	o := opOf(c)
	cond := c.Args[0]
	dx, err := argDType(o, c.Args[1])
	if err != nil {
		return nil, err
	}
	dy, err := argDType(o, c.Args[2])
	if err != nil {
		return nil, err
	}
	return []ir.Expr{nil, where(cond, g, gradConst(0, dx)), where(cond, gradConst(0, dy), g)}, nil
}

func asTypeGrad(_ *ir.Builder, c *ir.Call, _, g *ir.Var) ([]ir.Expr, error) {
	dt, err := argDType(opOf(c), c.Args[0])
	if err != nil {
		return nil, err
	}
	return []ir.Expr{gradCall(AsType, ir.Attrs{"dtype": dt}, g)}, nil
}

// transposeLastTwo swaps a tensor's last two axes.
func transposeLastTwo(x ir.Expr, ndim int) *ir.Call {
	axes := make([]int64, ndim)
	for i := range axes {
		axes[i] = int64(i)
	}
	axes[ndim-2], axes[ndim-1] = axes[ndim-1], axes[ndim-2]
	return gradCall(PermuteDims, ir.Attrs{"axes": intsAttr(axes)}, x)
}

// matmulGrad: g @ bᵀ and aᵀ @ g, with the vector cases expanded to
// matrices, fitted to the operands (batch broadcasting summed away).
func matmulGrad(b *ir.Builder, c *ir.Call, _, g *ir.Var) ([]ir.Expr, error) {
	o := opOf(c)
	ta, err := gradTensor(o, c.Args[0])
	if err != nil {
		return nil, err
	}
	tb, err := gradTensor(o, c.Args[1])
	if err != nil {
		return nil, err
	}
	a, bb := c.Args[0], c.Args[1]
	mm := func(x, y ir.Expr) *ir.Call { return gradCall(Matmul, nil, x, y) }
	expand := func(x ir.Expr, axis int64) *ir.Call {
		return gradCall(ExpandDims, ir.Attrs{"axis": []any{axis}}, x)
	}
	var ga, gb ir.Expr
	switch {
	case ta.NDim > 1 && tb.NDim > 1:
		ga = mm(g, transposeLastTwo(bb, tb.NDim))
		gb = mm(transposeLastTwo(a, ta.NDim), g)
	case ta.NDim == 1 && tb.NDim > 1:
		ge := expand(g, -2)
		ga = mm(ge, transposeLastTwo(bb, tb.NDim))
		gb = mm(expand(a, 1), ge)
	case tb.NDim == 1 && ta.NDim > 1:
		ge := expand(g, -1)
		ga = mm(ge, expand(bb, 0))
		gb = gradCall(Squeeze, ir.Attrs{"axis": []any{int64(-1)}}, mm(transposeLastTwo(a, ta.NDim), ge))
	default:
		ga, gb = mul(g, bb), mul(g, a)
	}
	return fitBoth(b, c, ga, gb)
}

// reluGrad: g where x >= 0.
func reluGrad(_ *ir.Builder, c *ir.Call, _, g *ir.Var) ([]ir.Expr, error) {
	x := c.Args[0]
	dt, err := argDType(opOf(c), x)
	if err != nil {
		return nil, err
	}
	zero := gradConst(0, dt)
	return []ir.Expr{where(gradCall(Less, nil, x, zero), zero, g)}, nil
}

// siluGrad: g * (s + y * (1 - s)) with s = sigmoid(x), y = x * s.
func siluGrad(_ *ir.Builder, c *ir.Call, r, g *ir.Var) ([]ir.Expr, error) {
	x := c.Args[0]
	dt, err := argDType(opOf(c), x)
	if err != nil {
		return nil, err
	}
	s := gradCall(Sigmoid, nil, x)
	return []ir.Expr{mul(g, plus(s, mul(r, sub(gradConst(1, dt), s))))}, nil
}

func softmaxAxis(c *ir.Call) []any {
	a, _, _ := opAttrInt(opOf(c), c, "axis")
	return []any{a}
}

// softmaxGrad: (g - sum(g * y, axis)) * y.
func softmaxGrad(_ *ir.Builder, c *ir.Call, r, g *ir.Var) ([]ir.Expr, error) {
	s := gradCall(Sum, ir.Attrs{"axis": softmaxAxis(c), "keepdims": true}, mul(g, r))
	return []ir.Expr{mul(sub(g, s), r)}, nil
}

// logSoftmaxGrad: g - sum(g, axis) * exp(y).
func logSoftmaxGrad(_ *ir.Builder, c *ir.Call, r, g *ir.Var) ([]ir.Expr, error) {
	s := gradCall(Sum, ir.Attrs{"axis": softmaxAxis(c), "keepdims": true}, g)
	return []ir.Expr{sub(g, mul(s, gradCall(Exp, nil, r)))}, nil
}

// crossEntropyGrad: -g * labels and -g * predictions, g divided by the
// batch size when there is a batch axis.
func crossEntropyGrad(_ *ir.Builder, c *ir.Call, _, g *ir.Var) ([]ir.Expr, error) {
	o := opOf(c)
	x, y := c.Args[0], c.Args[1]
	tx, err := gradTensor(o, x)
	if err != nil {
		return nil, err
	}
	var og ir.Expr = g
	if tx.NDim > 1 {
		dims, err := gradConstDims(o, x)
		if err != nil {
			return nil, err
		}
		og = div(g, gradConst(float64(dims[0]), sinfoDType(g.StructInfo())))
	}
	return []ir.Expr{mul(neg(og), y), mul(neg(og), x)}, nil
}

func prod(xs []int64) int64 {
	n := int64(1)
	for _, x := range xs {
		n *= x
	}
	return n
}

func shapeOfInts(xs []int64) *ir.ShapeExpr {
	d := make([]ir.PrimExpr, len(xs))
	for i, x := range xs {
		d[i] = ir.NewInt(ir.Int64, x)
	}
	return ir.NewShapeExpr(d...)
}

// takeGrad is TVM's take_backward composed from phasec's ops: the
// gradient of each taken element is added (scatter_elements with
// reduction "add") into zeros at the position it was taken from. The
// indices are flattened to one axis first, and without an axis the data
// is treated as flattened (TVM's take of axis None).
func takeGrad(_ *ir.Builder, c *ir.Call, _, g *ir.Var) ([]ir.Expr, error) {
	o := opOf(c)
	x, idx := c.Args[0], c.Args[1]
	ds, err := gradConstDimsOf(o, x, idx)
	if err != nil {
		return nil, err
	}
	xdims, idims := ds[0], ds[1]
	dt, err := argDType(o, x)
	if err != nil {
		return nil, err
	}
	axis, hasAxis, err := opAttrInt(o, c, "axis")
	if err != nil {
		return nil, err
	}
	data := xdims
	if !hasAxis {
		data, axis = []int64{prod(xdims)}, 0
	}
	if axis < 0 {
		axis += int64(len(data))
	}
	k := prod(idims)
	gdims := append(append(append([]int64{}, data[:axis]...), k), data[axis+1:]...)
	idxDims := make([]int64, len(gdims))
	for i := range idxDims {
		idxDims[i] = 1
	}
	idxDims[axis] = k
	flatIdx := gradCall(Reshape, nil, idx, shapeOfInts(idxDims))
	spread := gradCall(BroadcastTo, nil, flatIdx, shapeOfInts(gdims))
	gs := gradCall(Reshape, nil, g, shapeOfInts(gdims))
	zeros := gradCall(Zeros, ir.Attrs{"dtype": dt}, shapeOfInts(data))
	var grad ir.Expr = gradCall(ScatterElements, ir.Attrs{"axis": axis, "reduction": "add"}, zeros, spread, gs)
	if !hasAxis {
		grad = gradCall(Reshape, nil, grad, shapeOfInts(xdims))
	}
	return []ir.Expr{grad, nil}, nil
}

// nllLossGrad is TVM's nll_loss_backward composed from phasec's ops: the
// gradient reaches only each target's class, -w[target] (0 for
// ignore_index) times the incoming gradient, divided by the summed
// weights of the counted targets under reduction "mean".
func nllLossGrad(_ *ir.Builder, c *ir.Call, _, g *ir.Var) ([]ir.Expr, error) {
	o := opOf(c)
	pred, targets := c.Args[0], c.Args[1]
	pdims, err := gradConstDims(o, pred)
	if err != nil {
		return nil, err
	}
	pdt, err := argDType(o, pred)
	if err != nil {
		return nil, err
	}
	tdt, err := argDType(o, targets)
	if err != nil {
		return nil, err
	}
	classAxis := int64(0)
	if len(pdims) > 1 {
		classAxis = 1
	}
	ignore, _, err := opAttrInt(o, c, "ignore_index")
	if err != nil {
		return nil, err
	}
	reduction, _ := opAttr(o, c, "reduction").(string)
	valid := gradCall(NotEqual, nil, targets, gradConst(float64(ignore), tdt))
	safe := where(valid, targets, gradConst(0, tdt))
	var weight ir.Expr = where(valid, gradConst(1, pdt), gradConst(0, pdt))
	if len(c.Args) > 2 {
		weight = mul(gradCall(Take, ir.Attrs{"axis": int64(0)}, c.Args[2], safe), weight)
	}
	var coef ir.Expr
	switch reduction {
	case "mean":
		coef = neg(mul(div(g, gradCall(Sum, nil, weight)), weight))
	case "sum", "none":
		coef = neg(mul(g, weight))
	default:
		return nil, opErrorf(o, "gradient: unknown reduction %q", reduction)
	}
	oneHot := gradCall(OneHot, ir.Attrs{"depth": pdims[classAxis], "axis": classAxis}, safe,
		ir.NewPrimValue(ir.NewFloat(pdt, 1)), ir.NewPrimValue(ir.NewFloat(pdt, 0)))
	grad := mul(oneHot, gradCall(ExpandDims, ir.Attrs{"axis": []any{classAxis}}, coef))
	out := make([]ir.Expr, len(c.Args))
	out[0] = grad
	return out, nil
}

// convWindow reads a 2-D convolution's or pooling's strides, padding
// (top, left, bottom, right) and dilation.
func convWindow(o *ir.Op, c *ir.Call) (strides, pad, dil []int64, err error) {
	if strides, _, err = opAttrInts(o, c, "strides"); err != nil {
		return
	}
	if pad, _, err = opAttrInts(o, c, "padding"); err != nil {
		return
	}
	if dil, _, err = opAttrInts(o, c, "dilation"); err != nil {
		return
	}
	switch len(pad) {
	case 1:
		pad = []int64{pad[0], pad[0], pad[0], pad[0]}
	case 2:
		pad = []int64{pad[0], pad[1], pad[0], pad[1]}
	}
	if len(strides) == 1 {
		strides = []int64{strides[0], strides[0]}
	}
	if len(dil) == 1 {
		dil = []int64{dil[0], dil[0]}
	}
	if len(strides) != 2 || len(pad) != 4 || len(dil) != 2 {
		err = opErrorf(o, "gradient: strides, padding and dilation must be 2-D")
	}
	return
}

// conv2dGrad is TVM's conv2d gradient (NCHW data, OIHW weights): the
// data's gradient a transposed convolution of g with the weights, the
// weights' a convolution of the data with g (batch and channels swapped,
// strides and dilation exchanged), cut to the kernel's size.
func conv2dGrad(_ *ir.Builder, c *ir.Call, r, g *ir.Var) ([]ir.Expr, error) {
	o := opOf(c)
	for attr, want := range map[string]string{"data_layout": "NCHW", "kernel_layout": "OIHW", "out_layout": "NCHW"} {
		if l, _ := opAttr(o, c, attr).(string); l != want && !(attr == "out_layout" && l == "") {
			return nil, opErrorf(o, "gradient: only %s=%q is supported, got %q", attr, want, l)
		}
	}
	data, weight := c.Args[0], c.Args[1]
	strides, pad, dil, err := convWindow(o, c)
	if err != nil {
		return nil, err
	}
	groups, _, err := opAttrInt(o, c, "groups")
	if err != nil {
		return nil, err
	}
	outDType, _ := opAttrDType(o, c, "out_dtype")
	ds, err := gradConstDimsOf(o, r, data, weight)
	if err != nil {
		return nil, err
	}
	od, xd, wd := ds[0], ds[1], ds[2]
	batch, outC, gh, gw := od[0], od[1], od[2], od[3]
	inC, inH, inW := xd[1], xd[2], xd[3]
	fh, fw := wd[2], wd[3]
	// The transposed convolution's natural size, completed to the input's
	// by output_padding.
	outH := (gh-1)*strides[0] - pad[0] - pad[2] + dil[0]*(fh-1) + 1
	outW := (gw-1)*strides[1] - pad[1] - pad[3] + dil[1]*(fw-1) + 1
	dataGrad := gradCall(Conv2DTranspose, ir.Attrs{
		"strides": intsAttr(strides), "padding": intsAttr(pad),
		"output_padding": intsAttr([]int64{inH - outH, inW - outW}),
		"dilation":       intsAttr(dil), "groups": groups,
		"data_layout": "NCHW", "kernel_layout": "IOHW", "out_layout": "NCHW", "out_dtype": outDType,
	}, g, weight)
	var x ir.Expr = data
	if groups != 1 {
		x = gradCall(Reshape, nil, x, shapeOfInts([]int64{batch, groups, inC / groups, inH, inW}))
		x = gradCall(PermuteDims, ir.Attrs{"axes": intsAttr([]int64{1, 0, 2, 3, 4})}, x)
		x = gradCall(Reshape, nil, x, shapeOfInts([]int64{batch * groups, inC / groups, inH, inW}))
	}
	var weightGrad ir.Expr = gradCall(Conv2D, ir.Attrs{
		"strides": intsAttr(dil), "padding": intsAttr(pad), "dilation": intsAttr(strides), "groups": groups,
		"data_layout": "CNHW", "kernel_layout": "IOHW", "out_layout": "CNHW", "out_dtype": outDType,
	}, x, g)
	wh := (inH-(gh-1)*strides[0]-1+pad[0]+pad[2])/dil[0] + 1
	ww := (inW-(gw-1)*strides[1]-1+pad[1]+pad[3])/dil[1] + 1
	if wh < fh || ww < fw {
		return nil, opErrorf(o, "gradient: the weight gradient (%dx%d) is smaller than the kernel (%dx%d)", wh, ww, fh, fw)
	}
	if wh > fh || ww > fw {
		weightGrad = stridedSlice(weightGrad, []int64{0, 1, 2, 3}, []int64{0, 0, 0, 0}, []int64{outC, inC / groups, fh, fw})
	}
	return []ir.Expr{dataGrad, weightGrad}, nil
}

func gradPrimTuple(xs []int64) *ir.Tuple {
	f := make([]ir.Expr, len(xs))
	for i, x := range xs {
		f[i] = ir.NewPrimValue(ir.NewInt(ir.Int64, x))
	}
	return ir.NewTuple(f...)
}

func stridedSlice(x ir.Expr, axes, begin, end []int64) *ir.Call {
	return gradCall(StridedSlice, nil, x, gradPrimTuple(axes), gradPrimTuple(begin), gradPrimTuple(end))
}

// poolGeometry is a 2-D pooling window over an NCHW input, with the
// paddings that make a convolution over the same windows yield exactly the
// pooled size (forward, for ceil_mode's extra windows) and a transposed
// convolution yield exactly the input size (backward).
type poolGeometry struct {
	n, c, h, w, oh, ow int64
	win                window
	fwdPad, bwdPad     []int64 // top, left, bottom, right
	outPad             []int64 // the transposed convolution's output_padding
}

func newPoolGeometry(o *ir.Op, c *ir.Call, r *ir.Var) (*poolGeometry, error) {
	for _, attr := range []string{"layout", "out_layout"} {
		if l, _ := opAttr(o, c, attr).(string); l != "NCHW" && !(attr == "out_layout" && l == "") {
			return nil, opErrorf(o, "gradient: only %s=\"NCHW\" is supported, got %q", attr, l)
		}
	}
	win, err := windowAttrs(o, c, 2, "pool_size")
	if err != nil {
		return nil, err
	}
	ds, err := gradConstDimsOf(o, c.Args[0], r)
	if err != nil {
		return nil, err
	}
	xd, od := ds[0], ds[1]
	p := &poolGeometry{n: xd[0], c: xd[1], h: xd[2], w: xd[3], oh: od[2], ow: od[3], win: win}
	p.fwdPad = append([]int64{}, win.padding...)
	p.bwdPad = append([]int64{}, win.padding...)
	p.outPad = make([]int64, 2)
	in, out := []int64{p.h, p.w}, []int64{p.oh, p.ow}
	for i := range 2 {
		span := win.dilation[i]*(win.kernel[i]-1) + 1
		// The rows the windows reach, past the padded input under ceil_mode.
		reach := (out[i]-1)*win.strides[i] + span
		if extra := reach - (in[i] + win.padding[i] + win.padding[i+2]); extra > 0 {
			p.fwdPad[i+2] += extra
		}
		natural := reach - win.padding[i] - win.padding[i+2]
		switch {
		case natural > in[i]:
			p.bwdPad[i+2] += natural - in[i]
		case natural < in[i]:
			p.outPad[i] = in[i] - natural
		}
	}
	return p, nil
}

func (p *poolGeometry) convAttrs(pad []int64, kernelLayout string, groups int64) ir.Attrs {
	return ir.Attrs{"strides": intsAttr(p.win.strides), "padding": intsAttr(pad), "dilation": intsAttr(p.win.dilation),
		"groups": groups, "data_layout": "NCHW", "kernel_layout": kernelLayout, "out_layout": "NCHW"}
}

// windowsOf convolves x (batch, 1, h, w) with the one-hot kernels (one
// per window position): (batch, kh*kw, oh, ow), each window's elements.
func (p *poolGeometry) windowsOf(x ir.Expr, eye ir.Expr) *ir.Call {
	return gradCall(Conv2D, p.convAttrs(p.fwdPad, "OIHW", 1), x, eye)
}

// scatterWindows is windowsOf's transpose: each window's elements added
// back at their input positions, (batch, 1, h, w).
func (p *poolGeometry) scatterWindows(x ir.Expr, eye ir.Expr) *ir.Call {
	a := p.convAttrs(p.bwdPad, "IOHW", 1)
	a["output_padding"] = intsAttr(p.outPad)
	return gradCall(Conv2DTranspose, a, x, eye)
}

// oneHotKernels are the kh*kw kernels (kh*kw, 1, kh, kw) each picking one
// window position.
func (p *poolGeometry) oneHotKernels(dt ir.DataType) *ir.Call {
	k := p.win.kernel[0] * p.win.kernel[1]
	n := ir.NewPrimValue(ir.NewInt(ir.Int64, k))
	eye := gradCall(Eye, ir.Attrs{"dtype": dt}, n, n, ir.NewPrimValue(ir.NewInt(ir.Int64, 0)))
	return gradCall(Reshape, nil, eye, shapeOfInts([]int64{k, 1, p.win.kernel[0], p.win.kernel[1]}))
}

// maxPool2dGrad is TVM's max_pool2d_backward composed from phasec's ops:
// each window's gradient goes to its first maximal element. The windows
// are extracted by a convolution with one-hot kernels, the maxima found
// by comparison with the pooled result (padding excluded, ties to the
// first by a cumulative count), and the gradients put back by the
// transposed convolution.
func maxPool2dGrad(_ *ir.Builder, c *ir.Call, r, g *ir.Var) ([]ir.Expr, error) {
	o := opOf(c)
	p, err := newPoolGeometry(o, c, r)
	if err != nil {
		return nil, err
	}
	dt, err := argDType(o, c.Args[0])
	if err != nil {
		return nil, err
	}
	eye := p.oneHotKernels(dt)
	bc := p.n * p.c
	x := gradCall(Reshape, nil, c.Args[0], shapeOfInts([]int64{bc, 1, p.h, p.w}))
	windows := p.windowsOf(x, eye)
	inBounds := gradCall(Greater, nil,
		p.windowsOf(gradCall(Ones, ir.Attrs{"dtype": dt}, shapeOfInts([]int64{1, 1, p.h, p.w})), eye),
		gradConst(0.5, dt))
	pooled := gradCall(Reshape, nil, r, shapeOfInts([]int64{bc, 1, p.oh, p.ow}))
	isMax := gradCall(LogicalAnd, nil, gradCall(Equal, nil, windows, pooled), inBounds)
	zero, one := gradConst(0, dt), gradConst(1, dt)
	count := gradCall(Cumsum, ir.Attrs{"axis": int64(1)}, where(isMax, one, zero))
	first := gradCall(LogicalAnd, nil, isMax, gradCall(Equal, nil, count, one))
	gr := gradCall(Reshape, nil, g, shapeOfInts([]int64{bc, 1, p.oh, p.ow}))
	contrib := where(first, gr, zero)
	back := p.scatterWindows(contrib, eye)
	return []ir.Expr{gradCall(Reshape, nil, back, shapeOfInts([]int64{p.n, p.c, p.h, p.w}))}, nil
}

// avgPool2dGrad is TVM's avg_pool2d_backward composed from phasec's ops:
// each window's gradient divided by the window's divisor is spread over
// its elements by a transposed convolution with ones (one group per
// channel). The divisor follows the op itself: the pooled average of ones
// over the count of in-bounds elements is its reciprocal, whatever
// count_include_pad and ceil_mode make it.
func avgPool2dGrad(_ *ir.Builder, c *ir.Call, r, g *ir.Var) ([]ir.Expr, error) {
	o := opOf(c)
	p, err := newPoolGeometry(o, c, r)
	if err != nil {
		return nil, err
	}
	dt, err := argDType(o, c.Args[0])
	if err != nil {
		return nil, err
	}
	ones := gradCall(Ones, ir.Attrs{"dtype": dt}, shapeOfInts([]int64{1, 1, p.h, p.w}))
	kernel := gradCall(Ones, ir.Attrs{"dtype": dt}, shapeOfInts([]int64{1, 1, p.win.kernel[0], p.win.kernel[1]}))
	count := gradCall(Conv2D, p.convAttrs(p.fwdPad, "OIHW", 1), ones, kernel)
	inverse := div(gradCall(c.Op.(*ir.Op), c.Attrs, ones), count)
	scaled := mul(g, inverse)
	spread := gradCall(Ones, ir.Attrs{"dtype": dt}, shapeOfInts([]int64{p.c, 1, p.win.kernel[0], p.win.kernel[1]}))
	a := p.convAttrs(p.bwdPad, "IOHW", p.c)
	a["output_padding"] = intsAttr(p.outPad)
	return []ir.Expr{gradCall(Conv2DTranspose, a, scaled, spread)}, nil
}

// The rules below are phasec's: TVM v0.23 registers no gradient for these
// ops.

// geluGrad: d/dx x Φ(x) = Φ(x) + x φ(x), Φ(x) = (1 + erf(x/√2))/2 and
// φ(x) = exp(-x²/2)/√(2π).
func geluGrad(_ *ir.Builder, c *ir.Call, _, g *ir.Var) ([]ir.Expr, error) {
	x := c.Args[0]
	dt, err := argDType(opOf(c), x)
	if err != nil {
		return nil, err
	}
	cdf := mul(gradConst(0.5, dt), plus(gradConst(1, dt), gradCall(Erf, nil, mul(x, gradConst(1/math.Sqrt2, dt)))))
	pdf := mul(gradConst(1/math.Sqrt(2*math.Pi), dt), gradCall(Exp, nil, mul(gradConst(-0.5, dt), mul(x, x))))
	return []ir.Expr{mul(g, plus(cdf, mul(x, pdf)))}, nil
}

func trilGrad(_ *ir.Builder, c *ir.Call, _, g *ir.Var) ([]ir.Expr, error) {
	return []ir.Expr{gradCall(Tril, c.Attrs, g)}, nil
}

// stridedSliceGrad: the gradient padded with zeros back to the input's
// shape; unit strides only.
func stridedSliceGrad(_ *ir.Builder, c *ir.Call, _, g *ir.Var) ([]ir.Expr, error) {
	o := opOf(c)
	dims, err := gradConstDims(o, c.Args[0])
	if err != nil {
		return nil, err
	}
	ints := func(i int) ([]int64, error) {
		if i >= len(c.Args) {
			return nil, nil
		}
		t, ok := c.Args[i].(*ir.Tuple)
		if !ok {
			return nil, opErrorf(o, "gradient: %s must be a tuple of constants", o.Params[i].Name)
		}
		out := make([]int64, len(t.Fields))
		for j, f := range t.Fields {
			pv, ok := f.(*ir.PrimValue)
			if !ok {
				return nil, opErrorf(o, "gradient: %s must be constants", o.Params[i].Name)
			}
			if out[j], ok = ir.IntValue(pv.Value); !ok {
				return nil, opErrorf(o, "gradient: %s must be constants", o.Params[i].Name)
			}
		}
		return out, nil
	}
	axes, err := ints(1)
	if err != nil {
		return nil, err
	}
	begin, err := ints(2)
	if err != nil {
		return nil, err
	}
	end, err := ints(3)
	if err != nil {
		return nil, err
	}
	strides, err := ints(4)
	if err != nil {
		return nil, err
	}
	for _, s := range strides {
		if s != 1 {
			return nil, opErrorf(o, "gradient: only unit strides have a gradient rule, got %v", strides)
		}
	}
	clamp := func(v, n int64) int64 {
		if v < 0 {
			v += n
		}
		return min(max(v, 0), n)
	}
	pad := make([]int64, 2*len(dims))
	for i, a := range axes {
		if a < 0 {
			a += int64(len(dims))
		}
		n := dims[a]
		b, e := clamp(begin[i], n), clamp(end[i], n)
		pad[2*a], pad[2*a+1] = b, n-max(e, b)
	}
	out := make([]ir.Expr, len(c.Args))
	out[0] = gradCall(Pad, ir.Attrs{"pad_width": intsAttr(pad)}, g)
	return out, nil
}
