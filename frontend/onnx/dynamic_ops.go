package onnx

import (
	"fmt"
	"math"

	"github.com/phasec/phasec/ir"
	"github.com/phasec/phasec/op"
)

// The converters' run-time paths (see dynamic.go): each is called by its
// converter when the value it needs is not a constant at import.

// dynReshape resolves Reshape's 0 (copy the input's dimension, unless
// allowzero) and -1 (the remaining element count) on the shape tensor,
// then reshapes to its match_cast dimensions.
func dynReshape(c *nodeCtx, x ir.Expr) ([]ir.Expr, error) {
	s, k, err := c.vec(1)
	if err != nil {
		return nil, err
	}
	r, err := c.rank(0)
	if err != nil {
		return nil, err
	}
	in := c.dimsTensor(x)
	if c.attrInt("allowzero", 0) == 0 {
		// The input's dimensions at the shape's positions (a 0 beyond
		// the input's rank is an error ONNX leaves undefined: it copies 1).
		inK := in
		switch {
		case k < r:
			inK = c.emitOp(op.StridedSlice, nil, in, primTuple([]int64{0}), primTuple([]int64{0}), primTuple([]int64{int64(k)}), primTuple([]int64{1}))
		case k > r:
			ones := make([]int64, k-r)
			for i := range ones {
				ones[i] = 1
			}
			inK = c.emitOp(op.Concat, ir.Attrs{"axis": int64(0)}, ir.NewTuple(in, intsConst(ones)))
		}
		s = c.emitOp(op.Where, nil, c.bin(op.Equal, s, ic(0)), inK, s)
	}
	minus := c.bin(op.Equal, s, ic(-1))
	known := c.emitOp(op.Prod, ir.Attrs{"axis": anyInts([]int64{0}), "keepdims": false}, c.emitOp(op.Where, nil, minus, ic(1), s))
	total := c.emitOp(op.Prod, ir.Attrs{"axis": anyInts([]int64{0}), "keepdims": false}, in)
	rest := c.bin(op.FloorDivide, total, c.emitOp(op.Maximum, nil, known, ic(1)))
	s = c.emitOp(op.Where, nil, minus, rest, s)
	return one(c.reshapeTo(x, s, k))
}

// dynExpand broadcasts x to the run-time shape: ONNX's bidirectional
// broadcast, where a 1 in the shape keeps the input's dimension.
func dynExpand(c *nodeCtx, x ir.Expr) ([]ir.Expr, error) {
	s, k, err := c.vec(1)
	if err != nil {
		return nil, err
	}
	r, err := c.rank(0)
	if err != nil {
		return nil, err
	}
	n := max(k, r)
	in := c.dimsTensor(x)
	pad := func(v ir.Expr, m int) ir.Expr {
		if m == n {
			return v
		}
		ones := make([]int64, n-m)
		for i := range ones {
			ones[i] = 1
		}
		return c.emitOp(op.Concat, ir.Attrs{"axis": int64(0)}, ir.NewTuple(intsConst(ones), v))
	}
	s, in = pad(s, k), pad(in, r)
	out := c.emitOp(op.Where, nil, c.bin(op.Equal, s, ic(1)), in, s)
	return one(c.emitOp(op.BroadcastTo, nil, x, shapeExpr(c.dynShape(out, n))))
}

// dynTile repeats x by run-time counts: x reshaped to (1, d0, 1, d1, ...),
// broadcast to (r0, d0, r1, d1, ...) and reshaped to (r0*d0, r1*d1, ...).
func dynTile(c *nodeCtx, x ir.Expr) ([]ir.Expr, error) {
	reps, k, err := c.vec(1)
	if err != nil {
		return nil, err
	}
	dims, err := c.dims(0)
	if err != nil {
		return nil, err
	}
	if k != len(dims) {
		return nil, fmt.Errorf("repeats has %d entries for rank %d", k, len(dims))
	}
	rs := c.dynShape(reps, k)
	inter := make([]ir.PrimExpr, 0, 2*k)
	wide := make([]ir.PrimExpr, 0, 2*k)
	out := make([]ir.PrimExpr, k)
	for i, d := range dims {
		inter = append(inter, ir.I64(1), d)
		wide = append(wide, rs[i], d)
		out[i] = ir.Mul(rs[i], d)
	}
	y := c.emitOp(op.Reshape, nil, x, shapeExpr(inter))
	y = c.emitOp(op.BroadcastTo, nil, y, shapeExpr(wide))
	return one(c.emitOp(op.Reshape, nil, y, shapeExpr(out)))
}

// dynCumSum: the axis is a run-time scalar; the cumulative sum along each
// possible axis, selected by where (the output's shape does not depend on
// the axis).
func dynCumSum(c *nodeCtx, x ir.Expr, rank int, one1 func(ir.Expr, int) ir.Expr) ([]ir.Expr, error) {
	ax := c.i64(c.in[1])
	if t, _ := c.tinfo(1); t != nil && t.NDim != 0 {
		ax = c.emitOp(op.Reshape, nil, ax, shapeExpr(nil))
	}
	var out ir.Expr
	for a := rank - 1; a >= 0; a-- {
		y := one1(x, a)
		if out == nil {
			out = y
			continue
		}
		hit := c.emitOp(op.LogicalOr, nil, c.bin(op.Equal, ax, ic(int64(a))), c.bin(op.Equal, ax, ic(int64(a-rank))))
		out = c.emitOp(op.Where, nil, hit, y, out)
	}
	return one(out)
}

// dynRange: max(ceil((limit - start) / delta), 0) elements start + i*delta.
func dynRange(c *nodeCtx) ([]ir.Expr, error) {
	dt := dtypeOf(c.in[0])
	f := make([]ir.Expr, 3)
	for i := range f {
		if !c.has(i) {
			return nil, fmt.Errorf("input %d is required", i)
		}
		f[i] = c.castTo(c.in[i], ir.Float64)
	}
	cnt := c.emitOp(op.Ceil, nil, c.bin(op.Divide, c.bin(op.Subtract, f[1], f[0]), f[2]))
	cnt = c.emitOp(op.Maximum, nil, cnt, scalarConst(0, ir.Float64))
	n := c.dynScalar(c.i64(cnt))
	idx := c.castTo(c.arangeN(n), ir.Float64)
	v := c.bin(op.Add, f[0], c.bin(op.Multiply, idx, f[2]))
	return one(c.castTo(v, dt))
}

// dynUnsqueeze inserts 1s at run-time axes: a reshape to the input's
// dimensions spread over the positions the axes leave free.
func dynUnsqueeze(c *nodeCtx, x ir.Expr) ([]ir.Expr, error) {
	axes, k, err := c.vec(1)
	if err != nil {
		return nil, err
	}
	r, err := c.rank(0)
	if err != nil {
		return nil, err
	}
	n := r + k
	mask := c.axisMask(c.normAxesT(axes, n), n)
	free := c.bin(op.Subtract, ic(1), mask)
	// Position j takes the input's dimension number (free ones before j).
	before := c.emitOp(op.Cumsum, ir.Attrs{"axis": int64(0), "exclusive": true}, free)
	in := c.emitOp(op.Concat, ir.Attrs{"axis": int64(0)}, ir.NewTuple(c.dimsTensor(x), intsConst([]int64{1})))
	d := c.emitOp(op.Take, ir.Attrs{"axis": int64(0)}, in, c.emitOp(op.Minimum, nil, before, ic(int64(r))))
	shape := c.emitOp(op.Where, nil, c.bin(op.Equal, mask, ic(1)), ic(1), d)
	return one(c.reshapeTo(x, shape, n))
}

// dynSqueeze removes the run-time axes: a reshape to the other dimensions.
func dynSqueeze(c *nodeCtx, x ir.Expr) ([]ir.Expr, error) {
	axes, k, err := c.vec(1)
	if err != nil {
		return nil, err
	}
	r, err := c.rank(0)
	if err != nil {
		return nil, err
	}
	mask := c.axisMask(c.normAxesT(axes, r), r)
	shape := c.compact(c.dimsTensor(x), c.bin(op.Subtract, ic(1), mask), r-k)
	return one(c.reshapeTo(x, shape, r-k))
}

// scatterAxes spreads per-axis values (k entries for the normalized axes)
// over all rank axes, def where no axis names a position.
func (c *nodeCtx) scatterAxes(vals, axes ir.Expr, rank int, def ir.Expr) ir.Expr {
	pos := make([]int64, rank)
	for i := range pos {
		pos[i] = int64(i)
	}
	col := c.emitOp(op.ExpandDims, ir.Attrs{"axis": anyInts([]int64{1})}, axes) // (k, 1)
	hit := c.i64(c.bin(op.Equal, col, intsConst(pos)))                          // (k, rank)
	vcol := c.emitOp(op.ExpandDims, ir.Attrs{"axis": anyInts([]int64{1})}, vals)
	sum := c.emitOp(op.Sum, ir.Attrs{"axis": anyInts([]int64{0}), "keepdims": false}, c.bin(op.Multiply, hit, vcol))
	any := c.emitOp(op.Max, ir.Attrs{"axis": anyInts([]int64{0}), "keepdims": false}, hit)
	return c.emitOp(op.Where, nil, c.bin(op.Equal, any, ic(1)), sum, def)
}

// dynSlice is R.dynamic_strided_slice with begin, end and strides spread
// over all axes, its result matched to fresh dimensions.
func dynSlice(c *nodeCtx, x ir.Expr) ([]ir.Expr, error) {
	r, err := c.rank(0)
	if err != nil {
		return nil, err
	}
	starts, k, err := c.vec(1)
	if err != nil {
		return nil, err
	}
	ends, _, err := c.vec(2)
	if err != nil {
		return nil, err
	}
	var axes ir.Expr
	if c.has(3) {
		if axes, _, err = c.vec(3); err != nil {
			return nil, err
		}
		axes = c.normAxesT(axes, r)
	} else {
		a := make([]int64, k)
		for i := range a {
			a[i] = int64(i)
		}
		axes = intsConst(a)
	}
	steps := ir.Expr(nil)
	if c.has(4) {
		if steps, _, err = c.vec(4); err != nil {
			return nil, err
		}
	} else {
		ones := make([]int64, k)
		for i := range ones {
			ones[i] = 1
		}
		steps = intsConst(ones)
	}
	// ONNX's INT64 extremes mean "to the end": keep them in int32 range.
	clamp := func(v ir.Expr) ir.Expr {
		return c.emitOp(op.Maximum, nil, c.emitOp(op.Minimum, nil, v, ic(math.MaxInt32)), ic(math.MinInt32))
	}
	zeros, ones := make([]int64, r), make([]int64, r)
	for i := range ones {
		ones[i] = 1
	}
	begin := c.scatterAxes(clamp(starts), axes, r, intsConst(zeros))
	end := c.scatterAxes(clamp(ends), axes, r, c.dimsTensor(x))
	stride := c.scatterAxes(steps, axes, r, intsConst(ones))
	y := c.emitOp(op.DynamicStridedSlice, nil, x, begin, end, stride)
	return one(c.matchDims(y, r))
}

// matchDims match_casts a tensor of unknown shape to rank fresh dims.
func (c *nodeCtx) matchDims(y ir.Expr, rank int) ir.Expr {
	dims := make([]ir.PrimExpr, rank)
	for i := range dims {
		dims[i] = c.imp.freshDim()
	}
	return c.imp.b.EmitMatchCast(y, ir.TensorInfoOf(dtypeOf(y), dims...), "lv")
}

// onesN is n ones.
func onesN(n int) []int64 {
	out := make([]int64, n)
	for i := range out {
		out[i] = 1
	}
	return out
}

// atAxis is the int64 vector base of n entries with entry axis replaced
// by the scalar tensor v.
func (c *nodeCtx) atAxis(v, base ir.Expr, n, axis int) ir.Expr {
	mask := make([]int64, n)
	mask[axis] = 1
	return c.emitOp(op.Where, nil, c.bin(op.Equal, intsConst(mask), ic(1)), v, base)
}

// withDim gives y, a slice of a tensor of dimensions dims along axis
// with symbolic bounds, its shape: dims with n at axis (a match_cast,
// which strided_slice's inference cannot prove for symbolic bounds).
func (c *nodeCtx) withDim(y ir.Expr, dims []ir.PrimExpr, axis int, n ir.PrimExpr) ir.Expr {
	if t, ok := y.StructInfo().(*ir.TensorInfo); ok {
		if _, known := t.Dims(); known {
			return y
		}
	}
	d := append([]ir.PrimExpr(nil), dims...)
	d[axis] = n
	return c.imp.b.EmitMatchCast(y, ir.TensorInfoOf(dtypeOf(y), d...), "lv")
}

// dynSplit slices the parts of run-time sizes along axis with symbolic
// bounds.
func dynSplit(c *nodeCtx, x ir.Expr, axis int) ([]ir.Expr, error) {
	sizes, k, err := c.vec(1)
	if err != nil {
		return nil, err
	}
	if k != len(c.node.GetOutput()) {
		return nil, fmt.Errorf("split has %d entries for %d outputs", k, len(c.node.GetOutput()))
	}
	sz := c.dynShape(sizes, k)
	dims, err := c.dims(0)
	if err != nil {
		return nil, err
	}
	outs := make([]ir.Expr, k)
	starts := c.emitOp(op.Cumsum, ir.Attrs{"axis": int64(0), "exclusive": true}, sizes)
	r := len(dims)
	in := c.dimsTensor(x)
	for i := range outs {
		b := c.elem(starts, i)
		begin := c.atAxis(b, intsConst(make([]int64, r)), r, axis)
		end := c.atAxis(c.bin(op.Add, b, c.elem(sizes, i)), in, r, axis)
		part := c.emitOp(op.DynamicStridedSlice, nil, x, begin, end, intsConst(onesN(r)))
		outs[i] = c.withDim(part, dims, axis, sz[i])
	}
	return outs, nil
}

// dynTopK: a stable argsort along axis, its first k indices (k a run-time
// count), and the values they gather.
func dynTopK(c *nodeCtx, x ir.Expr) ([]ir.Expr, error) {
	r, err := c.rank(0)
	if err != nil {
		return nil, err
	}
	axis, err := normAxis(c.attrInt("axis", -1), r)
	if err != nil {
		return nil, err
	}
	k := c.dynScalar(c.in[1])
	largest := c.attrInt("largest", 1) == 1
	// Ties keep the lower index first (ONNX): sort -x ascending for the
	// largest rather than x descending.
	key := x
	if largest {
		key = c.emitOp(op.Negative, nil, x)
	}
	idx := c.emitOp(op.Argsort, ir.Attrs{"axis": int64(axis), "descending": false, "dtype": ir.Int64}, key)
	kT := c.emitOp(op.Reshape, nil, c.i64(c.in[1]), shapeExpr(nil))
	end := c.atAxis(kT, c.dimsTensor(x), r, axis)
	idx = c.emitOp(op.DynamicStridedSlice, nil, idx, intsConst(make([]int64, r)), end, intsConst(onesN(r)))
	dims, err := c.dims(0)
	if err != nil {
		return nil, err
	}
	idx = c.withDim(idx, dims, axis, k)
	vals := c.emitOp(op.GatherElements, ir.Attrs{"axis": int64(axis)}, x, idx)
	return []ir.Expr{vals, idx}, nil
}

// dynOneHot: where(expand_dims(indices, axis) == arange(depth) along
// axis, on, off), for a run-time depth or values.
func dynOneHot(c *nodeCtx, idx ir.Expr) ([]ir.Expr, error) {
	r, err := c.rank(0)
	if err != nil {
		return nil, err
	}
	axis, err := normAxis(c.attrInt("axis", -1), r+1)
	if err != nil {
		return nil, err
	}
	depthT := c.emitOp(op.Reshape, nil, c.i64(c.in[1]), shapeExpr(nil))
	if isFloat(c.in[1]) {
		depthT = c.emitOp(op.Reshape, nil, c.i64(c.emitOp(op.Floor, nil, c.in[1])), shapeExpr(nil))
	}
	d := c.dynScalar(depthT)
	idx = c.i64(idx)
	idx = c.emitOp(op.Where, nil, c.bin(op.Less, idx, ic(0)), c.bin(op.Add, idx, depthT), idx)
	col := c.emitOp(op.ExpandDims, ir.Attrs{"axis": anyInts([]int64{int64(axis)})}, idx)
	along := make([]ir.PrimExpr, r+1)
	for i := range along {
		along[i] = ir.I64(1)
	}
	along[axis] = d
	ar := c.emitOp(op.Reshape, nil, c.arangeN(d), shapeExpr(along))
	hit := c.bin(op.Equal, col, ar)
	vals := c.in[2]
	off := c.emitOp(op.Reshape, nil, c.elem(vals, 0), shapeExpr(nil))
	on := c.emitOp(op.Reshape, nil, c.elem(vals, 1), shapeExpr(nil))
	return one(c.emitOp(op.Where, nil, hit, on, off))
}

// dynCompress keeps the slices where a run-time condition holds: the
// count is a fresh dimension, the kept positions are compacted (see
// compact) and taken, as TVM's nonzero and match_cast.
func dynCompress(c *nodeCtx, x ir.Expr, axis int) ([]ir.Expr, error) {
	keep := c.i64(c.in[1])
	cnt := c.emitOp(op.Sum, ir.Attrs{"axis": anyInts([]int64{0}), "keepdims": false}, keep)
	n := c.dynScalar(cnt)
	pos := c.emitOp(op.Cumsum, ir.Attrs{"axis": int64(0), "exclusive": false}, keep)
	p := c.emitOp(op.ExpandDims, ir.Attrs{"axis": anyInts([]int64{1})}, c.arangeN(n))
	idx := c.emitOp(op.Sum, ir.Attrs{"axis": anyInts([]int64{1}), "keepdims": false}, c.i64(c.bin(op.LessEqual, pos, p)))
	return one(c.emitOp(op.Take, ir.Attrs{"axis": int64(axis)}, x, idx))
}

// dynReduce reduces over run-time axes: along each axis the reduction
// (kept as a dimension of 1) replaces x where the axis is named, the
// result is sliced to 1 along the named axes, and without keepdims
// reshaped to the other dimensions (as many as rank minus the axes'
// count, the axes being distinct).
func dynReduce(c *nodeCtx, x ir.Expr, o *ir.Op, keepdims bool) ([]ir.Expr, error) {
	axes, k, err := c.vec(1)
	if err != nil {
		return nil, err
	}
	r, err := c.rank(0)
	if err != nil {
		return nil, err
	}
	mask := c.axisMask(c.normAxesT(axes, r), r)
	y := x
	for a := range r {
		red := c.emitOp(o, ir.Attrs{"axis": anyInts([]int64{int64(a)}), "keepdims": true}, y)
		named := c.bin(op.Equal, c.elem(mask, a), ic(1))
		y = c.emitOp(op.Where, nil, named, red, y)
	}
	in := c.dimsTensor(x)
	outDims := c.emitOp(op.Where, nil, c.bin(op.Equal, mask, ic(1)), ic(1), in)
	zeros, ones := make([]int64, r), make([]int64, r)
	for i := range ones {
		ones[i] = 1
	}
	y = c.emitOp(op.DynamicStridedSlice, nil, y, intsConst(zeros), outDims, intsConst(ones))
	y = c.imp.b.EmitMatchCast(y, ir.TensorInfoOf(dtypeOf(x), c.dynShape(outDims, r)...), "lv")
	if keepdims {
		return one(y)
	}
	shape := c.compact(in, c.bin(op.Subtract, ic(1), mask), r-k)
	return one(c.reshapeTo(y, shape, r-k))
}

// dynPad pads by run-time widths, one axis at a time: the output
// positions index the input (shifted by the leading width) through a take
// of clamped (edge), reflected (reflect) or masked (constant) indices.
func dynPad(c *nodeCtx, x ir.Expr, mode string) ([]ir.Expr, error) {
	r, err := c.rank(0)
	if err != nil {
		return nil, err
	}
	pads, k, err := c.vec(1)
	if err != nil {
		return nil, err
	}
	axes := make([]int, r)
	for i := range axes {
		axes[i] = i
	}
	if c.has(3) {
		a, err := c.constInts(3)
		if err != nil {
			return nil, err
		}
		axes = axes[:0]
		for _, v := range a {
			n, err := normAxis(v, r)
			if err != nil {
				return nil, err
			}
			axes = append(axes, n)
		}
	}
	if k != 2*len(axes) {
		return nil, fmt.Errorf("pads has %d entries for %d axes", k, len(axes))
	}
	dt := dtypeOf(x)
	var value ir.Expr = scalarConst(0, dt)
	if c.has(2) {
		value = c.emitOp(op.Reshape, nil, c.castTo(c.in[2], dt), shapeExpr(nil))
	}
	dims := c.dimsTensor(x)
	y := x
	for i, a := range axes {
		before, after := c.elem(pads, i), c.elem(pads, i+len(axes))
		n := c.elem(dims, a)
		size := c.dynScalar(c.bin(op.Add, n, c.bin(op.Add, before, after)))
		src := c.bin(op.Subtract, c.arangeN(size), before)
		last := c.bin(op.Subtract, n, ic(1))
		clamped := c.emitOp(op.Maximum, nil, c.emitOp(op.Minimum, nil, src, last), ic(0))
		idx := clamped
		if mode == "reflect" {
			period := c.emitOp(op.Maximum, nil, c.bin(op.Multiply, last, ic(2)), ic(1))
			m := c.bin(op.FloorMod, src, period)
			idx = c.emitOp(op.Where, nil, c.bin(op.Greater, m, last), c.bin(op.Subtract, period, m), m)
		}
		y = c.emitOp(op.Take, ir.Attrs{"axis": int64(a)}, y, idx)
		if mode == "constant" {
			inside := c.emitOp(op.LogicalAnd, nil, c.bin(op.GreaterEqual, src, ic(0)), c.bin(op.LessEqual, src, last))
			shape := make([]ir.PrimExpr, r)
			for j := range shape {
				shape[j] = ir.I64(1)
			}
			shape[a] = size
			inside = c.emitOp(op.Reshape, nil, inside, shapeExpr(shape))
			y = c.emitOp(op.Where, nil, inside, y, value)
		}
	}
	return one(y)
}

// dynWindow is a cosine-sum window of a run-time size.
func dynWindow(c *nodeCtx, coeffs []float64, dt ir.DataType) ([]ir.Expr, error) {
	size := c.emitOp(op.Reshape, nil, c.i64(c.in[0]), shapeExpr(nil))
	n := c.dynScalar(size)
	den := c.castTo(size, ir.Float64)
	if c.attrInt("periodic", 1) == 0 {
		den = c.bin(op.Subtract, den, scalarConst(1, ir.Float64))
	}
	t := c.bin(op.Divide, c.bin(op.Multiply, c.castTo(c.arangeN(n), ir.Float64), scalarConst(2*math.Pi, ir.Float64)), den)
	var v ir.Expr = scalarConst(coeffs[0], ir.Float64)
	for k := 1; k < len(coeffs); k++ {
		term := c.emitOp(op.Cos, nil, c.bin(op.Multiply, t, scalarConst(float64(k), ir.Float64)))
		v = c.bin(op.Add, v, c.bin(op.Multiply, term, scalarConst(coeffs[k], ir.Float64)))
	}
	return one(c.castTo(v, dt))
}
