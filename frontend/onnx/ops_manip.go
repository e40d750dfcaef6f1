package onnx

import (
	"fmt"
	"math"

	"github.com/phasec/phasec/ir"
	"github.com/phasec/phasec/op"
)

func registerManip() {
	for name, f := range map[string]converter{
		"Reshape": convertReshape, "Flatten": convertFlatten, "Transpose": convertTranspose,
		"Concat": convertConcat, "Slice": convertSlice, "Split": convertSplit,
		"Squeeze": convertSqueeze, "Unsqueeze": convertUnsqueeze,
		"Gather": convertGather, "GatherElements": convertGatherElements, "GatherND": convertGatherND,
		"ScatterElements": convertScatterElements, "Scatter": convertScatterElements, "ScatterND": convertScatterND,
		"Expand": convertExpand, "Tile": convertTile, "Pad": convertPad,
		"Shape": convertShape, "Size": convertSize, "ConstantOfShape": convertConstantOfShape,
		"Range": convertRange, "Constant": convertConstant, "EyeLike": convertEyeLike,
		"OneHot": convertOneHot, "Trilu": convertTrilu, "Resize": convertResize, "Upsample": convertResize,
		"DepthToSpace": convertDepthToSpace, "SpaceToDepth": convertSpaceToDepth,
	} {
		converters[name] = f
	}
}

// axesOf reads a node's axes from the attribute (before opset v) or
// input i (from v on); ok is false when there are none.
func (c *nodeCtx) axesOf(v int64, i int) ([]int64, bool, error) {
	if c.opset < v {
		a, ok := c.attrInts("axes")
		return a, ok, nil
	}
	if !c.has(i) {
		return nil, false, nil
	}
	a, err := c.constInts(i)
	return a, err == nil, err
}

func convertReshape(c *nodeCtx) ([]ir.Expr, error) {
	x, err := c.arg(0)
	if err != nil {
		return nil, err
	}
	var shape []ir.PrimExpr
	if c.opset < 5 {
		a, _ := c.attrInts("shape")
		shape = i64Dims(a)
	} else if v, ok := c.symInts(1); ok {
		shape = v
	} else {
		return dynReshape(c, x)
	}
	dims := make([]ir.PrimExpr, len(shape))
	allowZero := c.attrInt("allowzero", 0) == 1
	var in []ir.PrimExpr
	for i, e := range shape {
		s, static := ir.IntValue(e)
		if !static {
			dims[i] = e
			continue
		}
		if s == 0 && !allowZero {
			if in == nil {
				if in, err = c.dims(0); err != nil {
					return nil, err
				}
			}
			if i >= len(in) {
				return nil, fmt.Errorf("shape[%d] is 0 (copy) but the input has rank %d", i, len(in))
			}
			dims[i] = in[i]
			continue
		}
		dims[i] = ir.I64(s)
	}
	return one(c.emitOp(op.Reshape, nil, x, shapeExpr(dims)))
}

func convertFlatten(c *nodeCtx) ([]ir.Expr, error) {
	x, err := c.arg(0)
	if err != nil {
		return nil, err
	}
	dims, err := c.dims(0)
	if err != nil {
		return nil, err
	}
	axis := c.attrInt("axis", 1)
	if axis < 0 {
		axis += int64(len(dims))
	}
	if axis < 0 || axis > int64(len(dims)) {
		return nil, fmt.Errorf("axis %d is out of range for rank %d", c.attrInt("axis", 1), len(dims))
	}
	return one(c.emitOp(op.Reshape, nil, x, shapeExpr([]ir.PrimExpr{product(dims[:axis]), product(dims[axis:])})))
}

func convertTranspose(c *nodeCtx) ([]ir.Expr, error) {
	x, err := c.arg(0)
	if err != nil {
		return nil, err
	}
	perm, ok := c.attrInts("perm")
	if !ok {
		rank, err := c.rank(0)
		if err != nil {
			return nil, err
		}
		for i := rank - 1; i >= 0; i-- {
			perm = append(perm, int64(i))
		}
	}
	return one(c.emitOp(op.PermuteDims, ir.Attrs{"axes": anyInts(perm)}, x))
}

func convertConcat(c *nodeCtx) ([]ir.Expr, error) {
	var xs []ir.Expr
	for i := range c.in {
		x, err := c.arg(i)
		if err != nil {
			return nil, err
		}
		xs = append(xs, x)
	}
	var sym []ir.PrimExpr
	anySym := false
	for i := range xs {
		v, ok := c.symInts(i)
		if !ok {
			sym, anySym = nil, false
			break
		}
		anySym = anySym || c.symbolicIn(i)
		sym = append(sym, v...)
	}
	if anySym {
		c.setSym(0, sym)
	}
	if len(xs) == 1 {
		return one(xs[0])
	}
	return one(c.emitOp(op.Concat, ir.Attrs{"axis": c.attrInt("axis", 0)}, ir.NewTuple(xs...)))
}

// convertSlice: starts, ends, axes and steps are attributes before
// opset 10, inputs after; they must be constants. Out-of-range bounds
// clamp, as strided_slice's do.
func convertSlice(c *nodeCtx) ([]ir.Expr, error) {
	x, err := c.arg(0)
	if err != nil {
		return nil, err
	}
	rank, err := c.rank(0)
	if err != nil {
		return nil, err
	}
	var starts, ends, axes, steps []int64
	if c.opset < 10 {
		starts, _ = c.attrInts("starts")
		ends, _ = c.attrInts("ends")
		axes, _ = c.attrInts("axes")
	} else {
		for i := 1; i <= 4; i++ {
			if _, ok := c.constant(i); c.has(i) && !ok {
				return dynSlice(c, x)
			}
		}
		if starts, err = c.constInts(1); err != nil {
			return nil, err
		}
		if ends, err = c.constInts(2); err != nil {
			return nil, err
		}
		if c.has(3) {
			if axes, err = c.constInts(3); err != nil {
				return nil, err
			}
		}
		if c.has(4) {
			if steps, err = c.constInts(4); err != nil {
				return nil, err
			}
		}
	}
	if axes == nil {
		for i := range starts {
			axes = append(axes, int64(i))
		}
	}
	if steps == nil {
		steps = make([]int64, len(starts))
		for i := range steps {
			steps[i] = 1
		}
	}
	if len(ends) != len(starts) || len(axes) != len(starts) || len(steps) != len(starts) {
		return nil, fmt.Errorf("starts, ends, axes and steps must have the same length")
	}
	for i, a := range axes {
		n, err := normAxis(a, rank)
		if err != nil {
			return nil, err
		}
		axes[i] = int64(n)
		if steps[i] == 0 {
			return nil, fmt.Errorf("steps[%d] is 0", i)
		}
		// ONNX's INT64 extremes mean "to the end": keep them in range
		// of the index arithmetic.
		ends[i] = max(min(ends[i], math.MaxInt32), math.MinInt32)
		starts[i] = max(min(starts[i], math.MaxInt32), math.MinInt32)
	}
	return one(c.emitOp(op.StridedSlice, nil, x, primTuple(axes), primTuple(starts), primTuple(ends), primTuple(steps)))
}

func convertSplit(c *nodeCtx) ([]ir.Expr, error) {
	x, dims, axis, err := c.dataAlongAxis(0)
	if err != nil {
		return nil, err
	}
	var sizes []int64
	if c.opset < 13 {
		sizes, _ = c.attrInts("split")
	} else if c.has(1) {
		if _, ok := c.constant(1); !ok {
			return dynSplit(c, x, axis)
		}
		if sizes, err = c.constInts(1); err != nil {
			return nil, err
		}
	}
	n := len(c.node.GetOutput())
	var ios any
	if sizes != nil {
		var idx []int64
		acc := int64(0)
		for _, s := range sizes[:len(sizes)-1] {
			acc += s
			idx = append(idx, acc)
		}
		ios = anyInts(idx)
	} else {
		if c.opset >= 18 {
			n = int(c.attrInt("num_outputs", int64(n)))
		}
		d, ok := ir.IntValue(dims[axis])
		switch {
		case ok && d%int64(n) != 0:
			chunk := (d + int64(n) - 1) / int64(n)
			var idx []int64
			for i := int64(1); i < int64(n); i++ {
				idx = append(idx, i*chunk)
			}
			ios = anyInts(idx)
		default:
			ios = int64(n)
		}
	}
	t := c.emitOp(op.Split, ir.Attrs{"indices_or_sections": ios, "axis": int64(axis)}, x)
	outs := make([]ir.Expr, len(c.node.GetOutput()))
	for i := range outs {
		outs[i] = c.imp.b.Emit(&ir.TupleGetItem{Tuple: t, Index: i}, "lv")
	}
	return outs, nil
}

func convertSqueeze(c *nodeCtx) ([]ir.Expr, error) {
	x, err := c.arg(0)
	if err != nil {
		return nil, err
	}
	if _, isConst := c.constant(1); c.opset >= 13 && c.has(1) && !isConst {
		return dynSqueeze(c, x)
	}
	axes, ok, err := c.axesOf(13, 1)
	if err != nil {
		return nil, err
	}
	c.propagateSym()
	if !ok {
		return one(c.emitOp(op.Squeeze, nil, x))
	}
	return one(c.emitOp(op.Squeeze, ir.Attrs{"axis": anyInts(axes)}, x))
}

func convertUnsqueeze(c *nodeCtx) ([]ir.Expr, error) {
	x, err := c.arg(0)
	if err != nil {
		return nil, err
	}
	if _, isConst := c.constant(1); c.opset >= 13 && c.has(1) && !isConst {
		return dynUnsqueeze(c, x)
	}
	axes, ok, err := c.axesOf(13, 1)
	if err != nil {
		return nil, err
	}
	if !ok {
		return nil, fmt.Errorf("axes are required")
	}
	rank, err := c.rank(0)
	if err != nil {
		return nil, err
	}
	out := rank + len(axes)
	norm := make([]int64, len(axes))
	for i, a := range axes {
		n, err := normAxis(a, out)
		if err != nil {
			return nil, err
		}
		norm[i] = int64(n)
	}
	c.propagateSym()
	return one(c.emitOp(op.ExpandDims, ir.Attrs{"axis": anyInts(norm)}, x))
}

// wrapIndices makes negative indices along a dimension of size dim
// positive: at import when they are constants, else with a where.
func (c *nodeCtx) wrapIndices(idx ir.Expr, i int, dim ir.PrimExpr) ir.Expr {
	if a, ok := c.constant(i); ok {
		neg := false
		for j := range int(a.NumElements()) {
			if a.Int(j) < 0 {
				neg = true
				break
			}
		}
		if !neg {
			return idx
		}
	}
	d, ok := ir.IntValue(dim)
	if !ok {
		return idx
	}
	dt := dtypeOf(idx)
	cond := c.emitOp(op.Less, nil, idx, scalarConst(0, dt))
	return c.emitOp(op.Where, nil, cond, c.emitOp(op.Add, nil, idx, scalarConst(float64(d), dt)), idx)
}

func convertGather(c *nodeCtx) ([]ir.Expr, error) {
	x, dims, axis, err := c.dataAlongAxis(0)
	if err != nil {
		return nil, err
	}
	idx, err := c.arg(1)
	if err != nil {
		return nil, err
	}
	if v, ok := c.imp.symbolic[c.inputName(0)]; ok && len(dims) == 1 {
		if ix, err := c.constInts(1); err == nil {
			var sel []ir.PrimExpr
			for _, k := range ix {
				if k < 0 {
					k += int64(len(v))
				}
				if k >= 0 && k < int64(len(v)) {
					sel = append(sel, v[k])
				}
			}
			if len(sel) == len(ix) {
				c.setSym(0, sel)
			}
		}
	}
	idx = c.wrapIndices(idx, 1, dims[axis])
	return one(c.emitOp(op.Take, ir.Attrs{"axis": int64(axis)}, x, idx))
}

func convertGatherElements(c *nodeCtx) ([]ir.Expr, error) {
	x, dims, axis, err := c.dataAlongAxis(0)
	if err != nil {
		return nil, err
	}
	idx, err := c.arg(1)
	if err != nil {
		return nil, err
	}
	idx = c.wrapIndices(idx, 1, dims[axis])
	return one(c.emitOp(opGatherElements, ir.Attrs{"axis": int64(axis)}, x, idx))
}

func convertGatherND(c *nodeCtx) ([]ir.Expr, error) {
	x, err := c.arg(0)
	if err != nil {
		return nil, err
	}
	idx, err := c.arg(1)
	if err != nil {
		return nil, err
	}
	return one(c.emitOp(op.GatherND, ir.Attrs{"batch_dims": c.attrInt("batch_dims", 0)}, x, idx))
}

func scatterReduction(c *nodeCtx) (string, error) {
	switch r := c.attrString("reduction", "none"); r {
	case "none":
		return "update", nil
	case "add", "mul", "max", "min":
		return r, nil
	default:
		return "", unsupported("reduction %q", r)
	}
}

func convertScatterElements(c *nodeCtx) ([]ir.Expr, error) {
	for i := range 3 {
		if !c.has(i) {
			return nil, fmt.Errorf("three inputs are required")
		}
	}
	red, err := scatterReduction(c)
	if err != nil {
		return nil, err
	}
	dims, err := c.dims(0)
	if err != nil {
		return nil, err
	}
	axis, err := normAxis(c.attrInt("axis", 0), len(dims))
	if err != nil {
		return nil, err
	}
	idx := c.wrapIndices(c.in[1], 1, dims[axis])
	return one(c.emitOp(opScatterElements, ir.Attrs{"axis": int64(axis), "reduction": red}, c.in[0], idx, c.in[2]))
}

func convertScatterND(c *nodeCtx) ([]ir.Expr, error) {
	for i := range 3 {
		if !c.has(i) {
			return nil, fmt.Errorf("three inputs are required")
		}
	}
	red, err := scatterReduction(c)
	if err != nil {
		return nil, err
	}
	return one(c.emitOp(opScatterND, ir.Attrs{"reduction": red}, c.in[0], c.in[1], c.in[2]))
}

// convertExpand: the output shape is the broadcast of the input's and
// the shape operand (which may hold 1 where the input is larger).
func convertExpand(c *nodeCtx) ([]ir.Expr, error) {
	x, err := c.arg(0)
	if err != nil {
		return nil, err
	}
	shape, ok := c.symInts(1)
	if !ok {
		return dynExpand(c, x)
	}
	in, err := c.dims(0)
	if err != nil {
		return nil, err
	}
	n := max(len(in), len(shape))
	out := make([]ir.PrimExpr, n)
	for i := range n {
		var a ir.PrimExpr = ir.I64(1)
		if j := i - (n - len(in)); j >= 0 {
			a = in[j]
		}
		var s ir.PrimExpr = ir.I64(1)
		if j := i - (n - len(shape)); j >= 0 {
			s = shape[j]
		}
		// A 1 in the shape keeps the input's dimension.
		if v, static := ir.IntValue(s); static && v == 1 {
			out[i] = a
		} else {
			out[i] = s
		}
	}
	return one(c.emitOp(op.BroadcastTo, nil, x, shapeExpr(out)))
}

func convertTile(c *nodeCtx) ([]ir.Expr, error) {
	x, err := c.arg(0)
	if err != nil {
		return nil, err
	}
	if _, ok := c.constant(1); !ok {
		return dynTile(c, x)
	}
	reps, err := c.constInts(1)
	if err != nil {
		return nil, err
	}
	return one(c.emitOp(op.Tile, ir.Attrs{"repeats": anyInts(reps)}, x))
}

func convertPad(c *nodeCtx) ([]ir.Expr, error) {
	x, err := c.arg(0)
	if err != nil {
		return nil, err
	}
	rank, err := c.rank(0)
	if err != nil {
		return nil, err
	}
	var pads []int64
	value := 0.0
	if c.opset < 11 {
		pads, _ = c.attrInts("pads")
		value = c.attrFloat("value", 0)
	} else {
		_, constPads := c.constant(1)
		_, constValue := c.constant(2)
		if !constPads || c.has(2) && !constValue {
			return dynPad(c, x, c.attrString("mode", "constant"))
		}
		if pads, err = c.constInts(1); err != nil {
			return nil, err
		}
		if c.has(2) {
			v, err := c.constFloats(2)
			if err != nil {
				return nil, err
			}
			if len(v) > 0 {
				value = v[0]
			}
		}
	}
	axes := make([]int64, rank)
	for i := range axes {
		axes[i] = int64(i)
	}
	if c.has(3) {
		if axes, err = c.constInts(3); err != nil {
			return nil, err
		}
	}
	if len(pads) != 2*len(axes) {
		return nil, fmt.Errorf("pads has %d entries for %d axes", len(pads), len(axes))
	}
	width := make([]int64, 2*rank)
	for i, a := range axes {
		ax, err := normAxis(a, rank)
		if err != nil {
			return nil, err
		}
		width[2*ax], width[2*ax+1] = pads[i], pads[i+len(axes)]
	}
	for _, p := range width {
		if p < 0 {
			return nil, unsupported("negative pads")
		}
	}
	mode := c.attrString("mode", "constant")
	if mode != "constant" && mode != "reflect" && mode != "edge" {
		return nil, unsupported("pad mode %q", mode)
	}
	return one(c.emitOp(op.Pad, ir.Attrs{"pad_width": anyInts(width), "pad_mode": mode, "pad_value": value}, x))
}

// convertShape folds to a constant when the shape is static; start and
// end (opset 15) slice it.
func convertShape(c *nodeCtx) ([]ir.Expr, error) {
	x, err := c.arg(0)
	if err != nil {
		return nil, err
	}
	rank, err := c.rank(0)
	if err != nil {
		return nil, err
	}
	start, end := c.attrInt("start", 0), c.attrInt("end", int64(rank))
	clampIdx := func(v int64) int64 {
		if v < 0 {
			v += int64(rank)
		}
		return max(0, min(v, int64(rank)))
	}
	start, end = clampIdx(start), clampIdx(end)
	if end < start {
		end = start
	}
	if s, ok := c.staticShape(0); ok {
		return one(intsConst(s[start:end]))
	}
	if dims, err := c.dims(0); err == nil {
		c.setSym(0, dims[start:end])
	}
	t := c.emitOp(op.ShapeToTensor, nil, c.emitOp(op.ShapeOf, nil, x))
	if start != 0 || end != int64(rank) {
		t = c.emitOp(op.StridedSlice, nil, t, primTuple([]int64{0}), primTuple([]int64{start}), primTuple([]int64{end}), primTuple([]int64{1}))
	}
	return one(c.castTo(t, ir.Int64))
}

func convertSize(c *nodeCtx) ([]ir.Expr, error) {
	x, err := c.arg(0)
	if err != nil {
		return nil, err
	}
	if s, ok := c.staticShape(0); ok {
		n := int64(1)
		for _, d := range s {
			n *= d
		}
		return one(scalarConst(float64(n), ir.Int64))
	}
	t := c.castTo(c.emitOp(op.ShapeToTensor, nil, c.emitOp(op.ShapeOf, nil, x)), ir.Int64)
	return one(c.emitOp(op.Prod, ir.Attrs{"keepdims": false}, t))
}

// attrTensor returns a tensor-valued attribute's data.
func (c *nodeCtx) attrTensor(name string) (*ir.NDArray, bool, error) {
	a, ok := c.attrs[name]
	if !ok || a.GetT() == nil {
		return nil, false, nil
	}
	d, err := TensorData(a.GetT(), c.imp.m.Dir, c.imp.m.Limits)
	return d, true, err
}

func convertConstantOfShape(c *nodeCtx) ([]ir.Expr, error) {
	dt, v := ir.Float32, 0.0
	val, ok, err := c.attrTensor("value")
	if err != nil {
		return nil, err
	}
	if ok {
		dt = val.DType
		if val.NumElements() != 1 {
			return nil, fmt.Errorf("value must have one element")
		}
		if dt.IsFloat() {
			v = val.Float(0)
		} else {
			v = float64(val.Int(0))
		}
	}
	if c.symbolicIn(0) {
		dims, _ := c.symInts(0)
		return one(c.emitOp(op.Full, ir.Attrs{"dtype": dt}, shapeExpr(dims), scalarConst(v, dt)))
	}
	if _, ok := c.constant(0); !ok && c.has(0) {
		// TVM: R.broadcast_to(value, R.tensor_to_shape(shape)).
		s, n, err := c.vec(0)
		if err != nil {
			return nil, err
		}
		return one(c.emitOp(op.Full, ir.Attrs{"dtype": dt}, shapeExpr(c.dynShape(s, n)), scalarConst(v, dt)))
	}
	shape, err := c.constInts(0)
	if err != nil {
		return nil, err
	}
	a, err := ir.NewNDArray(dt, shape)
	if err != nil {
		return nil, err
	}
	if a.NumElements() > foldLimit {
		return one(c.emitOp(op.Full, ir.Attrs{"dtype": dt}, shapeExpr(i64Dims(shape)), scalarConst(v, dt)))
	}
	for i := range int(a.NumElements()) {
		if dt.IsFloat() {
			a.SetFloat(i, v)
		} else {
			a.SetInt(i, int64(v))
		}
	}
	return one(&ir.Constant{Data: a})
}

// convertRange needs constant operands: its length is the output shape.
func convertRange(c *nodeCtx) ([]ir.Expr, error) {
	for i := range 3 {
		if _, ok := c.constant(i); !ok {
			return dynRange(c)
		}
	}
	vals := make([]float64, 3)
	for i := range 3 {
		v, err := c.constFloats(i)
		if err != nil {
			return nil, err
		}
		if len(v) != 1 {
			return nil, fmt.Errorf("input %d must be a scalar", i)
		}
		vals[i] = v[0]
	}
	dt := dtypeOf(c.in[0])
	start, limit, delta := vals[0], vals[1], vals[2]
	if delta == 0 {
		return nil, fmt.Errorf("delta is 0")
	}
	n := int64(max(math.Ceil((limit-start)/delta), 0))
	if n > foldLimit*16 {
		return nil, unsupported("Range of %d elements", n)
	}
	a, err := ir.NewNDArray(dt, []int64{n})
	if err != nil {
		return nil, err
	}
	for i := range int(n) {
		v := start + float64(i)*delta
		if dt.IsFloat() {
			a.SetFloat(i, v)
		} else {
			a.SetInt(i, int64(v))
		}
	}
	return one(&ir.Constant{Data: a})
}

func convertConstant(c *nodeCtx) ([]ir.Expr, error) {
	if a, ok, err := c.attrTensor("value"); ok || err != nil {
		if err != nil {
			return nil, err
		}
		return one(&ir.Constant{Data: a})
	}
	if a, ok := c.attrs["value_float"]; ok {
		return one(scalarConst(float64(a.GetF()), ir.Float32))
	}
	if a, ok := c.attrs["value_int"]; ok {
		return one(scalarConst(float64(a.GetI()), ir.Int64))
	}
	if fs, ok := c.attrFloats("value_floats"); ok {
		a, _ := ir.NewNDArray(ir.Float32, []int64{int64(len(fs))})
		for i, f := range fs {
			a.SetFloat(i, float64(f))
		}
		return one(&ir.Constant{Data: a})
	}
	if is, ok := c.attrInts("value_ints"); ok {
		return one(intsConst(is))
	}
	return nil, unsupported("Constant without a tensor, float or int value (sparse and string values)")
}

func convertEyeLike(c *nodeCtx) ([]ir.Expr, error) {
	s, ok := c.staticShape(0)
	if !ok || len(s) != 2 {
		return nil, unsupported("EyeLike of a non-static or non-2-D input")
	}
	dt := dtypeOf(c.in[0])
	if a, ok := c.attrs["dtype"]; ok {
		if dt, ok = DType(int32(a.GetI())); !ok {
			return nil, unsupported("dtype %s", dtypeName(int32(a.GetI())))
		}
	}
	k := c.attrInt("k", 0)
	a, err := ir.NewNDArray(dt, s)
	if err != nil {
		return nil, err
	}
	for i := int64(0); i < s[0]; i++ {
		if j := i + k; j >= 0 && j < s[1] {
			a.SetFloat(int(i*s[1]+j), 1)
		}
	}
	return one(&ir.Constant{Data: a})
}

func convertOneHot(c *nodeCtx) ([]ir.Expr, error) {
	idx, err := c.arg(0)
	if err != nil {
		return nil, err
	}
	_, constDepth := c.constant(1)
	_, constVals := c.constant(2)
	if !constDepth || !constVals {
		return dynOneHot(c, idx)
	}
	depth, err := c.constFloats(1)
	if err != nil {
		return nil, err
	}
	vals, err := c.constFloats(2)
	if err != nil {
		return nil, err
	}
	if len(depth) != 1 || len(vals) != 2 {
		return nil, fmt.Errorf("depth must be a scalar and values a pair")
	}
	dt := dtypeOf(c.in[2])
	d := int64(depth[0])
	idx = c.castTo(idx, ir.Int64)
	cond := c.emitOp(op.Less, nil, idx, scalarConst(0, ir.Int64))
	idx = c.emitOp(op.Where, nil, cond, c.emitOp(op.Add, nil, idx, scalarConst(float64(d), ir.Int64)), idx)
	prim := func(v float64) ir.Expr {
		if dt.IsFloat() {
			return ir.NewPrimValue(ir.NewFloat(dt, v))
		}
		return ir.NewPrimValue(ir.NewInt(dt, int64(v)))
	}
	rank, err := c.rank(0)
	if err != nil {
		return nil, err
	}
	axis, err := normAxis(c.attrInt("axis", -1), rank+1) // an axis of the output
	if err != nil {
		return nil, err
	}
	return one(c.emitOp(op.OneHot, ir.Attrs{"depth": d, "axis": int64(axis)}, idx, prim(vals[1]), prim(vals[0])))
}

func convertTrilu(c *nodeCtx) ([]ir.Expr, error) {
	x, err := c.arg(0)
	if err != nil {
		return nil, err
	}
	upper := c.attrInt("upper", 1) == 1
	k := int64(0)
	if c.has(1) {
		ks, err := c.constInts(1)
		if err != nil {
			return c.triluMask(x, upper)
		}
		if len(ks) != 1 {
			return nil, fmt.Errorf("k must be a scalar")
		}
		k = ks[0]
	}
	o := op.Tril
	if upper {
		o = op.Triu
	}
	return one(c.emitOp(o, ir.Attrs{"k": k}, x))
}

// convertResize maps 4-D NCHW resizes onto image.resize2d (TVM's
// Resize does the same for 2-D spatial inputs): output sizes from sizes,
// or from scales times the input's static shape.
func convertResize(c *nodeCtx) ([]ir.Expr, error) {
	x, err := c.arg(0)
	if err != nil {
		return nil, err
	}
	in, ok := c.staticShape(0)
	if !ok {
		return nil, unsupported("Resize of an input of non-static shape")
	}
	if _, ok := c.attrs["axes"]; ok {
		return nil, unsupported("Resize with axes")
	}
	if c.attrInt("keep_aspect_ratio_policy", 0) != 0 || c.attrString("keep_aspect_ratio_policy", "stretch") != "stretch" {
		return nil, unsupported("keep_aspect_ratio_policy")
	}
	var attrScales []float64
	scaleIn, sizeIn := -1, -1
	switch {
	case c.node.GetOpType() == "Upsample" && c.opset < 9:
		fs, _ := c.attrFloats("scales")
		for _, f := range fs {
			attrScales = append(attrScales, float64(f))
		}
	case c.node.GetOpType() == "Upsample" || c.opset < 11:
		scaleIn = 1
	case c.has(3):
		sizeIn = 3
	case c.has(2):
		scaleIn = 2
	}
	p, err := c.resizeShapes(in, scaleIn, sizeIn, attrScales)
	if err != nil {
		return nil, err
	}
	coord := c.attrString("coordinate_transformation_mode", "half_pixel")
	if c.opset < 11 {
		coord = "asymmetric"
	}
	var roi ir.Expr
	if coord == "tf_crop_and_resize" && c.opset >= 11 && c.has(1) {
		roi = c.castTo(c.in[1], ir.Float64)
	}
	mode := c.attrString("mode", "nearest")
	method := map[string]string{"nearest": "nearest_neighbor", "linear": "linear", "bilinear": "linear", "cubic": "cubic"}[mode]
	if method == "" {
		return nil, fmt.Errorf("mode %q", mode)
	}
	rounding := ""
	if method == "nearest_neighbor" {
		rounding = c.attrString("nearest_mode", "round_prefer_floor")
	}
	// resize2d (TVM's conversion) where it computes what ONNX defines.
	sizes := make([]int64, len(in))
	for a := range sizes {
		sizes[a], _ = ir.IntValue(p.out[a])
	}
	if p.static && len(in) == 4 && sizes[0] == in[0] && sizes[1] == in[1] && c.opset >= 11 &&
		coord != "tf_crop_and_resize" && rounding != "round_prefer_ceil" && c.attrInt("antialias", 0) == 0 {
		return one(c.emitOp(opResize2D, ir.Attrs{
			"layout": "NCHW", "method": method, "coordinate_transformation_mode": coord, "rounding_method": rounding,
			"cubic_alpha": c.attrFloat("cubic_coeff_a", -0.75), "cubic_exclude": c.attrInt("exclude_outside", 0),
			"extrapolation_value": c.attrFloat("extrapolation_value", 0),
		}, x, shapeExpr(i64Dims(sizes[2:]))))
	}
	y, err := c.resizeSeparable(x, in, p, roi)
	if err != nil {
		return nil, err
	}
	return one(y)
}

func convertDepthToSpace(c *nodeCtx) ([]ir.Expr, error) {
	x, err := c.arg(0)
	if err != nil {
		return nil, err
	}
	s, ok := c.staticShape(0)
	if !ok || len(s) != 4 {
		return nil, unsupported("DepthToSpace of a non-static or non-4-D input")
	}
	b := c.attrInt("blocksize", 0)
	if b <= 0 || s[1]%(b*b) != 0 {
		return nil, fmt.Errorf("blocksize %d does not divide the channels", b)
	}
	n, ch, h, w := s[0], s[1], s[2], s[3]
	var r ir.Expr
	var perm []int64
	if c.attrString("mode", "DCR") == "DCR" {
		r = c.emitOp(op.Reshape, nil, x, shapeExpr(i64Dims([]int64{n, b, b, ch / (b * b), h, w})))
		perm = []int64{0, 3, 4, 1, 5, 2}
	} else {
		r = c.emitOp(op.Reshape, nil, x, shapeExpr(i64Dims([]int64{n, ch / (b * b), b, b, h, w})))
		perm = []int64{0, 1, 4, 2, 5, 3}
	}
	t := c.emitOp(op.PermuteDims, ir.Attrs{"axes": anyInts(perm)}, r)
	return one(c.emitOp(op.Reshape, nil, t, shapeExpr(i64Dims([]int64{n, ch / (b * b), h * b, w * b}))))
}

func convertSpaceToDepth(c *nodeCtx) ([]ir.Expr, error) {
	x, err := c.arg(0)
	if err != nil {
		return nil, err
	}
	s, ok := c.staticShape(0)
	if !ok || len(s) != 4 {
		return nil, unsupported("SpaceToDepth of a non-static or non-4-D input")
	}
	b := c.attrInt("blocksize", 0)
	if b <= 0 || s[2]%b != 0 || s[3]%b != 0 {
		return nil, fmt.Errorf("blocksize %d does not divide the spatial axes", b)
	}
	n, ch, h, w := s[0], s[1], s[2], s[3]
	r := c.emitOp(op.Reshape, nil, x, shapeExpr(i64Dims([]int64{n, ch, h / b, b, w / b, b})))
	t := c.emitOp(op.PermuteDims, ir.Attrs{"axes": anyInts([]int64{0, 3, 5, 1, 2, 4})}, r)
	return one(c.emitOp(op.Reshape, nil, t, shapeExpr(i64Dims([]int64{n, ch * b * b, h / b, w / b}))))
}

// triluMask is Trilu with a run-time k: the element (i, j) of the last
// two axes is kept where j - i >= k (upper) or j - i <= k (lower).
func (c *nodeCtx) triluMask(x ir.Expr, upper bool) ([]ir.Expr, error) {
	dims, err := c.dims(0)
	if err != nil {
		return nil, err
	}
	if len(dims) < 2 {
		return nil, fmt.Errorf("Trilu needs rank 2 or more")
	}
	n, okN := ir.IntValue(dims[len(dims)-2])
	m, okM := ir.IntValue(dims[len(dims)-1])
	if !okN || !okM {
		return nil, unsupported("Trilu with a run-time k over symbolic dimensions")
	}
	iota := func(count int64, shape []int64) ir.Expr {
		vs := make([]int64, count)
		for i := range vs {
			vs[i] = int64(i)
		}
		k := intsConst(vs)
		k.Data.Shape = shape
		return k
	}
	diff := c.emitOp(op.Subtract, nil, iota(m, []int64{1, m}), iota(n, []int64{n, 1}))
	k := c.castTo(c.in[1], ir.Int64)
	var keep ir.Expr
	if upper {
		keep = c.emitOp(op.GreaterEqual, nil, diff, k)
	} else {
		keep = c.emitOp(op.LessEqual, nil, diff, k)
	}
	return one(c.emitOp(op.Where, nil, keep, x, scalarConst(0, dtypeOf(x))))
}
