package op

import "github.com/phasec/phasec/ir"

// Shape manipulation and indexing ops.

var (
	// Reshape is R.reshape(x, shape). It is a shape op (CatShape): besides
	// LegalizeOps, RewriteDataflowReshape may turn legalized reshapes back
	// into it and LowerRuntimeBuiltin lowers it to vm.builtin.reshape.
	Reshape = Define(Def{Op: newReshapeOp(), Eval: evalReshape, Legalize: legalizeReshape,
		MixedPrecision: mixedFollow})
	// PermuteDims is R.permute_dims(x, axes=None); None reverses the axes.
	PermuteDims = Define(Def{Op: newPermuteDimsOp(), Eval: evalPermuteDims, Legalize: legalizePermuteDims, Layout: layoutPermuteDims, MixedPrecision: mixedFollow})
	// ExpandDims is R.expand_dims(x, axis).
	ExpandDims = Define(Def{Op: newExpandDimsOp(), Eval: evalExpandDims, Legalize: legalizeExpandDims, Layout: layoutExpandDims, MixedPrecision: mixedFollow})
	// Squeeze is R.squeeze(x, axis=None); None removes every unit dimension.
	Squeeze = Define(Def{Op: newSqueezeOp(), Eval: evalSqueeze, Legalize: legalizeSqueeze, Layout: layoutSqueeze, MixedPrecision: mixedFollow})
	// Flatten is R.flatten(x): a 1-D view of every element.
	Flatten = Define(Def{Op: newFlattenOp(), Eval: evalFlatten, Legalize: legalizeReshape,
		MixedPrecision: mixedFollow})
	// Concat is R.concat(tensors, axis=0); axis None concatenates flattened tensors.
	Concat = Define(Def{Op: newConcatOp(), Eval: evalConcat, Legalize: legalizeConcat, Layout: layoutConcat, MixedPrecision: mixedFollow})
	// Split is R.split(x, indices_or_sections, axis=0), returning a tuple.
	Split = Define(Def{Op: newSplitOp(), Eval: evalSplit, Legalize: legalizeSplit, Layout: layoutSplit, MixedPrecision: mixedFollow})
	// StridedSlice is R.strided_slice(x, axes, begin, end, strides=None, assume_inbound=False).
	StridedSlice = Define(Def{Op: newStridedSliceOp(), Eval: evalStridedSlice, Legalize: legalizeStridedSlice, Layout: layoutStridedSlice, MixedPrecision: mixedFollow})
	// Take is R.take(x, indices, axis=None, mode="fast").
	Take = Define(Def{Op: newTakeOp(), Eval: evalTake, Legalize: legalizeTake})
	// BroadcastTo is R.broadcast_to(x, shape).
	BroadcastTo = Define(Def{Op: newBroadcastToOp(), Eval: evalBroadcastTo, Legalize: legalizeBroadcastTo,
		MixedPrecision: mixedFollow})
)

// --- reshape ----------------------------------------------------------------

func newReshapeOp() *ir.Op {
	op := &ir.Op{
		Name: "relax.reshape", Doc: "Reinterprets the elements of x with a new shape (one dimension may be -1).",
		Pure: true, Category: ir.CatShape, Pattern: ir.PatternInjective,
		Params: []ir.Param{{Name: "x", Kind: ir.ArgExpr}, {Name: "shape", Kind: ir.ArgShape}},
	}
	op.Infer = func(_ *ir.InferCtx, call *ir.Call) (ir.StructInfo, error) {
		t, dims, ndim, shape, err := reshapeTarget(op, call)
		if err != nil {
			return nil, err
		}
		return tensorFromShape(t.DType, dims, ndim, shape), nil
	}
	// Normalize replaces a -1 in a literal shape by the inferred dimension,
	// as TVM's reshape constructor does.
	op.Normalize = func(_ *ir.InferCtx, call *ir.Call) (ir.Expr, error) {
		if len(call.Args) != 2 {
			return call, nil
		}
		se, ok := call.Args[1].(*ir.ShapeExpr)
		if !ok || !hasMinusOne(se.Values) {
			return call, nil
		}
		_, dims, _, _, err := reshapeTarget(op, call)
		if err != nil || dims == nil {
			return call, err
		}
		out := *call
		out.SetStructInfo(nil)
		ns := ir.NewShapeExpr(dims...)
		ns.SetSpan(se.Span())
		out.Args = []ir.Expr{call.Args[0], ns}
		return &out, nil
	}
	return op
}

func hasMinusOne(dims []ir.PrimExpr) bool {
	for _, d := range dims {
		if v, ok := ir.IntValue(d); ok && v == -1 {
			return true
		}
	}
	return false
}

// reshapeTarget resolves the new shape of a reshape: dims with any -1
// replaced (nil when not known), its rank, and the shape expression.
// A -1 needs the input's dims; element counts that are provably different
// constants are an error, while unprovable symbolic counts are accepted
// (the run-time reshape checks them).
func reshapeTarget(op *ir.Op, call *ir.Call) (t *ir.TensorInfo, dims []ir.PrimExpr, ndim int, shape ir.Expr, err error) {
	if t, err = firstTensorArg(op, call); err != nil {
		return
	}
	if dims, ndim, shape, err = shapeArg(op, call, 1); err != nil || dims == nil {
		return
	}
	inferAt := -1
	for i, d := range dims {
		v, ok := ir.IntValue(ir.Simplify(d)) // a folded overflow is as negative as a literal
		switch {
		case !ok || v >= 0:
		case v == -1 && inferAt < 0:
			inferAt = i
		case v == -1:
			return nil, nil, 0, nil, opErrorf(op, "at most one dimension of the new shape may be -1")
		default:
			return nil, nil, 0, nil, opErrorf(op, "new shape dimension %d is negative (%d)", i, v)
		}
	}
	oldDims, oldKnown := t.Dims()
	if inferAt < 0 {
		if oldKnown {
			oldN, newN := shapeProduct(oldDims), shapeProduct(dims)
			if dimsProvablyDiffer(oldN, newN) {
				return nil, nil, 0, nil, opErrorf(op, "cannot reshape %s elements into a shape of %s elements", fmtDim(oldN), fmtDim(newN))
			}
		}
		return t, dims, ndim, shape, nil
	}
	if !oldKnown {
		return t, nil, ndim, nil, nil
	}
	rest := make([]ir.PrimExpr, 0, len(dims)-1)
	for i, d := range dims {
		if i != inferAt {
			rest = append(rest, d)
		}
	}
	oldN, restN := shapeProduct(oldDims), shapeProduct(rest)
	if a, ok1 := ir.IntValue(oldN); ok1 {
		if b, ok2 := ir.IntValue(restN); ok2 && (b == 0 || a%b != 0) {
			return nil, nil, 0, nil, opErrorf(op, "cannot reshape %d elements into a shape with -1 and %d other elements", a, b)
		}
	}
	resolved := append([]ir.PrimExpr(nil), dims...)
	resolved[inferAt] = floorDivDims(oldN, restN)
	return t, resolved, ndim, nil, nil
}

// --- permute_dims / expand_dims / squeeze / flatten --------------------------

func newPermuteDimsOp() *ir.Op {
	op := &ir.Op{
		Name: "relax.permute_dims", Doc: "Permutes the axes of x (reverses them when axes is None).",
		Pure: true, Category: ir.CatTensor, Pattern: ir.PatternInjective,
		Params: []ir.Param{{Name: "x", Kind: ir.ArgExpr}, {Name: "axes", Kind: ir.AttrInts, Optional: true, PrintNone: true}},
	}
	op.Infer = func(_ *ir.InferCtx, call *ir.Call) (ir.StructInfo, error) {
		t, err := firstTensorArg(op, call)
		if err != nil {
			return nil, err
		}
		axes, hasAxes, err := opAttrInts(op, call, "axes")
		if err != nil {
			return nil, err
		}
		ndim := t.NDim
		if hasAxes {
			if ndim >= 0 && len(axes) != ndim {
				return nil, opErrorf(op, "axes has %d entries but x has rank %d", len(axes), ndim)
			}
			ndim = len(axes)
		}
		if ndim < 0 {
			return ir.TensorInfoNDim(t.DType, -1), nil
		}
		perm := make([]int, ndim)
		if hasAxes {
			norm, err := normAxes(op, axes, ndim)
			if err != nil {
				return nil, err
			}
			perm = norm
		} else {
			for i := range perm {
				perm[i] = ndim - 1 - i
			}
		}
		dims, ok := t.Dims()
		if !ok {
			return ir.TensorInfoNDim(t.DType, ndim), nil
		}
		out := make([]ir.PrimExpr, ndim)
		for i, p := range perm {
			out[i] = dims[p]
		}
		return newTensor(t.DType, out, true, ndim), nil
	}
	op.Normalize = schemaNormalize(op)
	return op
}

func newExpandDimsOp() *ir.Op {
	op := &ir.Op{
		Name: "relax.expand_dims", Doc: "Inserts unit dimensions at the given axes of the result.",
		Pure: true, Category: ir.CatTensor, Pattern: ir.PatternBroadcast,
		Params: []ir.Param{{Name: "x", Kind: ir.ArgExpr}, {Name: "axis", Kind: ir.AttrInts}},
	}
	op.Infer = func(_ *ir.InferCtx, call *ir.Call) (ir.StructInfo, error) {
		t, err := firstTensorArg(op, call)
		if err != nil {
			return nil, err
		}
		axes, _, err := opAttrInts(op, call, "axis")
		if err != nil {
			return nil, err
		}
		if t.NDim < 0 {
			return ir.TensorInfoNDim(t.DType, -1), nil
		}
		ndim := t.NDim + len(axes)
		norm, err := normAxes(op, axes, ndim)
		if err != nil {
			return nil, err
		}
		dims, ok := t.Dims()
		if !ok {
			return ir.TensorInfoNDim(t.DType, ndim), nil
		}
		inserted := make([]bool, ndim)
		for _, a := range norm {
			inserted[a] = true
		}
		out := make([]ir.PrimExpr, 0, ndim)
		next := 0
		for i := range ndim {
			if inserted[i] {
				out = append(out, ir.I64(1))
			} else {
				out = append(out, dims[next])
				next++
			}
		}
		return newTensor(t.DType, out, true, ndim), nil
	}
	op.Normalize = schemaNormalize(op)
	return op
}

func newSqueezeOp() *ir.Op {
	op := &ir.Op{
		Name: "relax.squeeze", Doc: "Removes unit dimensions (those at axis, or all of them).",
		Pure: true, Category: ir.CatTensor, Pattern: ir.PatternInjective,
		Params: []ir.Param{{Name: "x", Kind: ir.ArgExpr}, {Name: "axis", Kind: ir.AttrInts, Optional: true, PrintNone: true}},
	}
	op.Infer = func(_ *ir.InferCtx, call *ir.Call) (ir.StructInfo, error) {
		t, err := firstTensorArg(op, call)
		if err != nil {
			return nil, err
		}
		axes, hasAxis, err := opAttrInts(op, call, "axis")
		if err != nil {
			return nil, err
		}
		if t.NDim < 0 {
			return ir.TensorInfoNDim(t.DType, -1), nil
		}
		dims, known := t.Dims()
		removed := make([]bool, t.NDim)
		if hasAxis {
			norm, err := normAxes(op, axes, t.NDim)
			if err != nil {
				return nil, err
			}
			for _, a := range norm {
				if known {
					if v, ok := ir.IntValue(dims[a]); ok && v != 1 {
						return nil, opErrorf(op, "cannot squeeze axis %d of length %d", a, v)
					}
				}
				removed[a] = true
			}
		} else {
			if !known {
				return ir.TensorInfoNDim(t.DType, -1), nil
			}
			for i, d := range dims {
				v, ok := ir.IntValue(d)
				if !ok {
					// A symbolic dimension may or may not be 1.
					return ir.TensorInfoNDim(t.DType, -1), nil
				}
				removed[i] = v == 1
			}
		}
		out := []ir.PrimExpr{}
		ndim := 0
		for i, r := range removed {
			if !r {
				ndim++
				if known {
					out = append(out, dims[i])
				}
			}
		}
		return newTensor(t.DType, out, known, ndim), nil
	}
	op.Normalize = schemaNormalize(op)
	return op
}

func newFlattenOp() *ir.Op {
	op := &ir.Op{
		Name: "relax.flatten", Doc: "A 1-D tensor of all elements of x in row-major order.",
		Pure: true, Category: ir.CatTensor, Pattern: ir.PatternInjective,
		Params: []ir.Param{{Name: "x", Kind: ir.ArgExpr}},
	}
	op.Infer = func(_ *ir.InferCtx, call *ir.Call) (ir.StructInfo, error) {
		t, err := firstTensorArg(op, call)
		if err != nil {
			return nil, err
		}
		if t.NDim == 1 {
			return t, nil
		}
		dims, ok := t.Dims()
		if !ok {
			return ir.TensorInfoNDim(t.DType, 1), nil
		}
		return newTensor(t.DType, []ir.PrimExpr{shapeProduct(dims)}, true, 1), nil
	}
	return op
}

// --- concat / split -----------------------------------------------------------

func newConcatOp() *ir.Op {
	op := &ir.Op{
		Name: "relax.concat", Doc: "Joins a tuple of tensors along axis.",
		Pure: true, Category: ir.CatTensor, Pattern: ir.PatternInjective,
		Params: []ir.Param{{Name: "tensors", Kind: ir.ArgTuple}, {Name: "axis", Kind: ir.AttrInt, Default: int64(0)}},
	}
	op.Infer = func(_ *ir.InferCtx, call *ir.Call) (ir.StructInfo, error) { return inferConcat(op, call) }
	op.Normalize = schemaNormalize(op)
	return op
}

func inferConcat(op *ir.Op, call *ir.Call) (ir.StructInfo, error) {
	if err := opCheckArity(op, call); err != nil {
		return nil, err
	}
	ti, ok := argStructInfo(call.Args[0]).(*ir.TupleInfo)
	if !ok {
		return nil, opErrorf(op, "tensors must be a tuple, got %s", sinfoKind(argStructInfo(call.Args[0])))
	}
	if len(ti.Fields) == 0 {
		return nil, opErrorf(op, "needs at least one tensor")
	}
	axis, hasAxis, err := opAttrInt(op, call, "axis")
	if err != nil {
		return nil, err
	}
	ts := make([]*ir.TensorInfo, len(ti.Fields))
	dtype, ndim := ir.Void, -1
	for i, f := range ti.Fields {
		t, ok := f.(*ir.TensorInfo)
		if !ok {
			return nil, opErrorf(op, "field %d of tensors must be a tensor, got %s", i, sinfoKind(f))
		}
		ts[i] = t
		if !t.DType.IsVoid() {
			if !dtype.IsVoid() && dtype != t.DType {
				return nil, opErrorf(op, "data types %s and %s must be equal", dtype, t.DType)
			}
			dtype = t.DType
		}
		if hasAxis && t.NDim >= 0 {
			if ndim >= 0 && ndim != t.NDim {
				return nil, opErrorf(op, "tensors have ranks %d and %d", ndim, t.NDim)
			}
			ndim = t.NDim
		}
	}
	if !hasAxis {
		// Concatenate flattened tensors.
		var total ir.PrimExpr
		for _, t := range ts {
			dims, ok := t.Dims()
			if !ok {
				return ir.TensorInfoNDim(dtype, 1), nil
			}
			total = addDim(total, shapeProduct(dims))
		}
		return newTensor(dtype, []ir.PrimExpr{total}, true, 1), nil
	}
	if ndim < 0 {
		return ir.TensorInfoNDim(dtype, -1), nil
	}
	a, err := normAxis(op, axis, ndim)
	if err != nil {
		return nil, err
	}
	out := make([]ir.PrimExpr, ndim)
	known := true
	var total ir.PrimExpr
	for _, t := range ts {
		dims, ok := t.Dims()
		if !ok {
			known = false
			continue
		}
		for i, d := range dims {
			switch {
			case i == a:
			case out[i] == nil:
				out[i] = d
			case dimsProvablyDiffer(out[i], d):
				return nil, opErrorf(op, "dimension %d differs between tensors: %s vs %s", i, fmtDim(out[i]), fmtDim(d))
			}
		}
		total = addDim(total, dims[a])
	}
	if !known {
		return ir.TensorInfoNDim(dtype, ndim), nil
	}
	out[a] = total
	return newTensor(dtype, out, true, ndim), nil
}

// addDim adds d to a running sum (nil is zero).
func addDim(sum, d ir.PrimExpr) ir.PrimExpr {
	if sum == nil {
		return d
	}
	return addDims(sum, d)
}

func newSplitOp() *ir.Op {
	op := &ir.Op{
		Name: "relax.split", Doc: "Splits x along axis into equal sections or at indices; returns a tuple.",
		Pure: true, Category: ir.CatTensor, Pattern: ir.PatternInjective,
		Params: []ir.Param{
			{Name: "x", Kind: ir.ArgExpr},
			{Name: "indices_or_sections", Kind: ir.AttrAny},
			{Name: "axis", Kind: ir.AttrInt, Default: int64(0)},
		},
	}
	op.Infer = func(_ *ir.InferCtx, call *ir.Call) (ir.StructInfo, error) { return inferSplit(op, call) }
	op.Normalize = schemaNormalize(op)
	return op
}

// maxSplitParts bounds the tuple a split produces.
const maxSplitParts = 1 << 16

func inferSplit(op *ir.Op, call *ir.Call) (ir.StructInfo, error) {
	t, err := firstTensorArg(op, call)
	if err != nil {
		return nil, err
	}
	axis, _, err := opAttrInt(op, call, "axis")
	if err != nil {
		return nil, err
	}
	v := opAttr(op, call, "indices_or_sections")
	sections, isSections := ir.AttrAsInt(v)
	indices, isIndices := ir.AttrAsInts(v)
	switch {
	case isSections && sections <= 0:
		return nil, opErrorf(op, "the number of sections must be positive, got %d", sections)
	case isSections && sections > maxSplitParts || isIndices && len(indices) >= maxSplitParts:
		// A tuple of that many fields is an input error, not a model.
		return nil, opErrorf(op, "splits into more than %d parts", maxSplitParts)
	case !isSections && !isIndices:
		return nil, opErrorf(op, "indices_or_sections must be an int or a list of ints, got %v", v)
	}
	n := int(sections)
	if isIndices {
		n = len(indices) + 1
	}
	fields := make([]ir.StructInfo, n)
	if t.NDim < 0 {
		for i := range fields {
			fields[i] = ir.TensorInfoNDim(t.DType, -1)
		}
		return ir.NewTupleInfo(fields...), nil
	}
	a, err := normAxis(op, axis, t.NDim)
	if err != nil {
		return nil, err
	}
	dims, known := t.Dims()
	if !known {
		for i := range fields {
			fields[i] = ir.TensorInfoNDim(t.DType, t.NDim)
		}
		return ir.NewTupleInfo(fields...), nil
	}
	length := dims[a]
	part := func(d ir.PrimExpr) *ir.TensorInfo {
		out := append([]ir.PrimExpr(nil), dims...)
		out[a] = d
		return newTensor(t.DType, out, true, t.NDim)
	}
	if isSections {
		// TVM's InferStructInfoSplit (src/relax/op/tensor/manipulate.cc):
		// the first sections-1 parts have ceil(length / sections) entries
		// and the last the rest, so an axis need not divide evenly.
		each := floorDivDims(ir.Simplify(ir.Add(length, ir.I64(sections-1))), ir.I64(sections))
		last := ir.Simplify(ir.Sub(length, ir.Mul(each, ir.I64(sections-1))))
		if l, ok := ir.IntValue(last); ok && l < 0 {
			e, _ := ir.IntValue(each)
			return nil, opErrorf(op, "axis %d of length %s does not split into %d sections: %d parts of %d leave %d for the last", a, fmtDim(length), sections, sections-1, e, l)
		}
		for i := range fields {
			fields[i] = part(each)
		}
		fields[len(fields)-1] = part(last)
		return ir.NewTupleInfo(fields...), nil
	}
	var prev ir.PrimExpr = ir.I64(0)
	for i := range fields {
		end := length
		if i < len(indices) {
			end = ir.I64(indices[i])
		}
		fields[i] = part(splitLength(prev, end, length))
		prev = end
	}
	return ir.NewTupleInfo(fields...), nil
}

// splitLength is the length of [begin, end) clipped to [0, length].
func splitLength(begin, end, length ir.PrimExpr) ir.PrimExpr {
	b, ok1 := ir.IntValue(begin)
	e, ok2 := ir.IntValue(end)
	l, ok3 := ir.IntValue(length)
	if ok1 && ok2 && ok3 {
		b, e = min(b, l), min(e, l)
		return ir.I64(max(e-b, 0))
	}
	return ir.Simplify(ir.Max(ir.Sub(ir.Min(end, length), ir.Min(begin, length)), ir.I64(0)))
}

// --- strided_slice / take / broadcast_to --------------------------------------

func newStridedSliceOp() *ir.Op {
	op := &ir.Op{
		Name: "relax.strided_slice", Doc: "Slices x along axes from begin to end with strides.",
		Pure: true, Category: ir.CatTensor, Pattern: ir.PatternInjective,
		Params: []ir.Param{
			{Name: "x", Kind: ir.ArgExpr},
			{Name: "axes", Kind: ir.ArgTuple},
			{Name: "begin", Kind: ir.ArgTuple},
			{Name: "end", Kind: ir.ArgTuple},
			{Name: "strides", Kind: ir.ArgTuple, Optional: true},
			{Name: "assume_inbound", Kind: ir.AttrBool, Default: false},
		},
	}
	op.Infer = func(_ *ir.InferCtx, call *ir.Call) (ir.StructInfo, error) { return inferStridedSlice(op, call) }
	op.Normalize = schemaNormalize(op)
	return op
}

// primTupleArg reads a tuple of scalars (R.prim_value fields or a tuple of
// Prim info with known values); nil entries are unknown values.
func primTupleArg(op *ir.Op, call *ir.Call, i int) ([]ir.PrimExpr, error) {
	ti, ok := argStructInfo(call.Args[i]).(*ir.TupleInfo)
	if !ok {
		return nil, opErrorf(op, "%s must be a tuple of integers, got %s", opArgName(op, i), sinfoKind(argStructInfo(call.Args[i])))
	}
	out := make([]ir.PrimExpr, len(ti.Fields))
	for j, f := range ti.Fields {
		p, ok := f.(*ir.PrimInfo)
		if !ok || (!p.DType.IsVoid() && !p.DType.IsInteger()) {
			return nil, opErrorf(op, "%s[%d] must be an integer, got %s", opArgName(op, i), j, sinfoKind(f))
		}
		out[j] = p.Value
	}
	return out, nil
}

func inferStridedSlice(op *ir.Op, call *ir.Call) (ir.StructInfo, error) {
	t, err := firstTensorArg(op, call)
	if err != nil {
		return nil, err
	}
	axes, err := primTupleArg(op, call, 1)
	if err != nil {
		return nil, err
	}
	begin, err := primTupleArg(op, call, 2)
	if err != nil {
		return nil, err
	}
	end, err := primTupleArg(op, call, 3)
	if err != nil {
		return nil, err
	}
	var strides []ir.PrimExpr
	if len(call.Args) > 4 {
		if strides, err = primTupleArg(op, call, 4); err != nil {
			return nil, err
		}
		if len(strides) != len(axes) {
			return nil, opErrorf(op, "strides has %d entries but axes has %d", len(strides), len(axes))
		}
	}
	if len(begin) != len(axes) || len(end) != len(axes) {
		return nil, opErrorf(op, "axes, begin and end must have the same length, got %d, %d and %d", len(axes), len(begin), len(end))
	}
	inbound, err := opAttrBool(op, call, "assume_inbound")
	if err != nil {
		return nil, err
	}
	if t.NDim < 0 {
		return ir.TensorInfoNDim(t.DType, -1), nil
	}
	axisInts := make([]int64, len(axes))
	for i, a := range axes {
		v, ok := ir.IntValue(a)
		if !ok {
			return nil, opErrorf(op, "axes must be constant integers")
		}
		axisInts[i] = v
	}
	norm, err := normAxes(op, axisInts, t.NDim)
	if err != nil {
		return nil, err
	}
	dims, ok := t.Dims()
	if !ok {
		return ir.TensorInfoNDim(t.DType, t.NDim), nil
	}
	out := append([]ir.PrimExpr(nil), dims...)
	for i, a := range norm {
		var stride ir.PrimExpr = ir.I64(1)
		if strides != nil {
			stride = strides[i]
		}
		l, err := sliceLength(op, begin[i], end[i], stride, dims[a], inbound)
		if err != nil {
			return nil, err
		}
		if l == nil {
			return ir.TensorInfoNDim(t.DType, t.NDim), nil
		}
		out[a] = l
	}
	return newTensor(t.DType, out, true, t.NDim), nil
}

// sliceLength is the number of elements a Python-style slice
// begin:end:stride selects from a dimension of the given extent; nil when
// it cannot be expressed (symbolic values without assume_inbound).
func sliceLength(op *ir.Op, begin, end, stride, extent ir.PrimExpr, inbound bool) (ir.PrimExpr, error) {
	if begin == nil || end == nil || stride == nil {
		return nil, nil
	}
	s, sOK := ir.IntValue(stride)
	if sOK && s == 0 {
		return nil, opErrorf(op, "stride must not be zero")
	}
	b, bOK := ir.IntValue(begin)
	e, eOK := ir.IntValue(end)
	n, nOK := ir.IntValue(extent)
	if bOK && eOK && sOK && nOK {
		return ir.I64(staticSliceLength(b, e, s, n)), nil
	}
	if inbound && sOK && s > 0 {
		return ir.Simplify(ir.FloorDiv(ir.Add(ir.Sub(end, begin), ir.I64(s-1)), ir.I64(s))), nil
	}
	return nil, nil
}

// staticSliceLength mirrors Python's slice.indices for constant operands.
func staticSliceLength(b, e, s, n int64) int64 {
	clamp := func(x, lo, hi int64) int64 { return max(lo, min(x, hi)) }
	if s > 0 {
		if b < 0 {
			b += n
		}
		if e < 0 {
			e += n
		}
		b, e = clamp(b, 0, n), clamp(e, 0, n)
		if e <= b {
			return 0
		}
		return (e - b + s - 1) / s
	}
	if b < 0 {
		b += n
	}
	if e < 0 {
		e += n
	}
	b, e = clamp(b, -1, n-1), clamp(e, -1, n-1)
	if b <= e {
		return 0
	}
	return (b - e + (-s) - 1) / (-s)
}

func newTakeOp() *ir.Op {
	op := &ir.Op{
		Name: "relax.take", Doc: "Gathers elements of x at indices along axis (of the flattened x when axis is None).",
		Pure: true, Category: ir.CatTensor, Pattern: ir.PatternInjective,
		Params: []ir.Param{
			{Name: "x", Kind: ir.ArgExpr},
			{Name: "indices", Kind: ir.ArgExpr},
			{Name: "axis", Kind: ir.AttrInt, Optional: true, PrintNone: true},
			{Name: "mode", Kind: ir.AttrStr, Default: "fast"},
		},
	}
	op.Infer = func(_ *ir.InferCtx, call *ir.Call) (ir.StructInfo, error) {
		t, err := firstTensorArg(op, call)
		if err != nil {
			return nil, err
		}
		var idx *ir.TensorInfo
		if p, ok := argStructInfo(call.Args[1]).(*ir.PrimInfo); ok {
			idx = ir.TensorInfoOf(p.DType) // a scalar index: a rank-0 tensor
		} else if idx, err = tensorArg(op, call, 1); err != nil {
			return nil, err
		}
		if !idx.DType.IsVoid() && !idx.DType.IsInteger() {
			return nil, opErrorf(op, "indices must be an integer tensor, got %s", idx.DType)
		}
		axis, hasAxis, err := opAttrInt(op, call, "axis")
		if err != nil {
			return nil, err
		}
		if mode, _ := opAttr(op, call, "mode").(string); mode != "fast" && mode != "clip" && mode != "wrap" && mode != "nan" {
			return nil, opErrorf(op, "mode must be one of fast, clip, wrap, nan; got %q", mode)
		}
		if !hasAxis {
			return idxShapedLike(t.DType, idx), nil
		}
		if t.NDim < 0 || idx.NDim < 0 {
			return ir.TensorInfoNDim(t.DType, -1), nil
		}
		a, err := normAxis(op, axis, t.NDim)
		if err != nil {
			return nil, err
		}
		ndim := t.NDim - 1 + idx.NDim
		dims, ok1 := t.Dims()
		idims, ok2 := idx.Dims()
		if !ok1 || !ok2 {
			return ir.TensorInfoNDim(t.DType, ndim), nil
		}
		out := make([]ir.PrimExpr, 0, ndim)
		out = append(out, dims[:a]...)
		out = append(out, idims...)
		out = append(out, dims[a+1:]...)
		return newTensor(t.DType, out, true, ndim), nil
	}
	op.Normalize = schemaNormalize(op)
	return op
}

// idxShapedLike is a tensor of dtype shaped like the index tensor.
func idxShapedLike(dtype ir.DataType, idx *ir.TensorInfo) *ir.TensorInfo {
	return withDType(idx, dtype)
}

func newBroadcastToOp() *ir.Op {
	op := &ir.Op{
		Name: "relax.broadcast_to", Doc: "Broadcasts x to shape with numpy rules.",
		Pure: true, Category: ir.CatTensor, Pattern: ir.PatternBroadcast,
		Params: []ir.Param{{Name: "x", Kind: ir.ArgExpr}, {Name: "shape", Kind: ir.ArgShape}},
	}
	op.Infer = func(_ *ir.InferCtx, call *ir.Call) (ir.StructInfo, error) {
		t, err := firstTensorArg(op, call)
		if err != nil {
			return nil, err
		}
		target, ndim, shape, err := shapeArg(op, call, 1)
		if err != nil {
			return nil, err
		}
		if t.NDim >= 0 && ndim >= 0 && t.NDim > ndim {
			return nil, opErrorf(op, "cannot broadcast a tensor of rank %d to rank %d", t.NDim, ndim)
		}
		if dims, ok := t.Dims(); ok && target != nil {
			for i := 1; i <= len(dims); i++ {
				d, g := dims[len(dims)-i], target[len(target)-i]
				if !isOne(d) && dimsProvablyDiffer(d, g) {
					return nil, opErrorf(op, "cannot broadcast dimension %s to %s", fmtDim(d), fmtDim(g))
				}
			}
		}
		return tensorFromShape(t.DType, target, ndim, shape), nil
	}
	return op
}

// --- evaluation -------------------------------------------------------------

// Every manipulation op is a gather: each output element copies one input
// element, found by src from the output multi-index.

// gather builds an array of shape whose element at idx is x's element
// src(idx).
func gather(x *array, shape []int64, src func(idx []int64) int64) *array {
	out := newArray(x.dt, shape)
	idx := make([]int64, len(shape))
	for k := range out.size() {
		unravel(k, shape, idx)
		out.copyElem(k, x, src(idx))
	}
	return out
}

// flatIndex is the C-order flat index of idx in shape.
func flatIndex(idx, shape []int64) int64 {
	k := int64(0)
	for i, d := range shape {
		k = k*d + idx[i]
	}
	return k
}

// evalFlatten is every element in a 1-D tensor, in row-major order.
func evalFlatten(call *ir.Call, args []Value) (Value, error) {
	x, err := argArray(opOf(call), args, 0)
	if err != nil {
		return nil, err
	}
	return reshaped(x, []int64{x.size()})
}

func reshaped(x *array, shape []int64) (Value, error) {
	out := &array{dt: x.dt, shape: append([]int64{}, shape...), f: x.f, i: x.i}
	return out.tensor()
}

// evalReshape reinterprets the elements; one dimension may be -1.
func evalReshape(call *ir.Call, args []Value) (Value, error) {
	op := opOf(call)
	x, err := argArray(op, args, 0)
	if err != nil {
		return nil, err
	}
	shape, err := argShape(op, args, 1)
	if err != nil {
		return nil, err
	}
	shape = append([]int64{}, shape...)
	infer, known := -1, int64(1)
	for i, d := range shape {
		switch {
		case d == -1 && infer < 0:
			infer = i
		case d < 0:
			return nil, opErrorf(op, "shape dimension %d is %d", i, d)
		default:
			known *= d
		}
	}
	if infer >= 0 {
		if known == 0 || x.size()%known != 0 {
			return nil, opErrorf(op, "cannot infer the -1 dimension: %d elements into %v", x.size(), shape)
		}
		shape[infer] = x.size() / known
		known *= shape[infer]
	}
	if known != x.size() {
		return nil, opErrorf(op, "cannot reshape %d elements %v to %v (%d elements)", x.size(), x.shape, shape, known)
	}
	return reshaped(x, shape)
}

func evalPermuteDims(call *ir.Call, args []Value) (Value, error) {
	op := opOf(call)
	x, err := argArray(op, args, 0)
	if err != nil {
		return nil, err
	}
	axes, has, err := opAttrInts(op, call, "axes")
	if err != nil {
		return nil, err
	}
	n := len(x.shape)
	perm := make([]int, n)
	if !has {
		for i := range perm {
			perm[i] = n - 1 - i
		}
	} else {
		if len(axes) != n {
			return nil, opErrorf(op, "axes has %d entries but x has rank %d", len(axes), n)
		}
		seen := make([]bool, n)
		for i, a := range axes {
			if perm[i], err = normAxisEval(op, a, n); err != nil {
				return nil, err
			}
			if seen[perm[i]] {
				return nil, opErrorf(op, "axis %d appears twice", a)
			}
			seen[perm[i]] = true
		}
	}
	shape := make([]int64, n)
	for i, p := range perm {
		shape[i] = x.shape[p]
	}
	in := make([]int64, n)
	return gather(x, shape, func(idx []int64) int64 {
		for i, p := range perm {
			in[p] = idx[i]
		}
		return flatIndex(in, x.shape)
	}).tensor()
}

func evalExpandDims(call *ir.Call, args []Value) (Value, error) {
	op := opOf(call)
	x, err := argArray(op, args, 0)
	if err != nil {
		return nil, err
	}
	axes, _, err := opAttrInts(op, call, "axis")
	if err != nil {
		return nil, err
	}
	n := len(x.shape) + len(axes)
	unit := make([]bool, n)
	for _, a := range axes {
		i, err := normAxisEval(op, a, n)
		if err != nil {
			return nil, err
		}
		if unit[i] {
			return nil, opErrorf(op, "axis %d appears twice", a)
		}
		unit[i] = true
	}
	shape := make([]int64, 0, n)
	j := 0
	for i := range n {
		if unit[i] {
			shape = append(shape, 1)
		} else {
			shape = append(shape, x.shape[j])
			j++
		}
	}
	return reshaped(x, shape)
}

func evalSqueeze(call *ir.Call, args []Value) (Value, error) {
	op := opOf(call)
	x, err := argArray(op, args, 0)
	if err != nil {
		return nil, err
	}
	axes, has, err := opAttrInts(op, call, "axis")
	if err != nil {
		return nil, err
	}
	drop := make([]bool, len(x.shape))
	for _, a := range axes {
		i, err := normAxisEval(op, a, len(x.shape))
		if err != nil {
			return nil, err
		}
		if x.shape[i] != 1 {
			return nil, opErrorf(op, "cannot squeeze axis %d of length %d", a, x.shape[i])
		}
		drop[i] = true
	}
	shape := []int64{}
	for i, d := range x.shape {
		if drop[i] || (!has && d == 1) {
			continue
		}
		shape = append(shape, d)
	}
	return reshaped(x, shape)
}

func evalBroadcastTo(call *ir.Call, args []Value) (Value, error) {
	op := opOf(call)
	x, err := argArray(op, args, 0)
	if err != nil {
		return nil, err
	}
	shape, err := argShape(op, args, 1)
	if err != nil {
		return nil, err
	}
	if len(x.shape) > len(shape) {
		return nil, opErrorf(op, "cannot broadcast a tensor of rank %d to rank %d", len(x.shape), len(shape))
	}
	for i, d := range x.shape {
		if t := shape[len(shape)-len(x.shape)+i]; d != 1 && d != t {
			return nil, opErrorf(op, "cannot broadcast dimension %d of length %d to %d", i, d, t)
		}
	}
	b := newBroadcaster(x.shape)
	return gather(x, shape, b.index).tensor()
}

// tupleArrays reads a tuple argument of tensors.
func tupleArrays(op *ir.Op, args []Value, i int) ([]*array, error) {
	tup, ok := args[i].(Tuple)
	if !ok {
		return nil, opErrorf(op, "%s must be a tuple, got %s", paramName(op, i), KindOf(args[i]))
	}
	out := make([]*array, len(tup))
	for j, v := range tup {
		a, err := toArray(v)
		if err != nil {
			return nil, opErrorf(op, "%s[%d]: %v", paramName(op, i), j, err)
		}
		out[j] = a
	}
	return out, nil
}

func evalConcat(call *ir.Call, args []Value) (Value, error) {
	op := opOf(call)
	xs, err := tupleArrays(op, args, 0)
	if err != nil {
		return nil, err
	}
	if len(xs) == 0 {
		return nil, opErrorf(op, "needs at least one tensor")
	}
	axisV, hasAxis, err := opAttrInt(op, call, "axis")
	if err != nil {
		return nil, err
	}
	if !hasAxis { // axis None: concatenate the flattened tensors
		for j, x := range xs {
			xs[j] = &array{dt: x.dt, shape: []int64{x.size()}, f: x.f, i: x.i}
		}
	}
	first := xs[0]
	axis, err := normAxisEval(op, axisV, len(first.shape))
	if err != nil {
		return nil, err
	}
	shape := append([]int64{}, first.shape...)
	shape[axis] = 0
	starts := make([]int64, len(xs))
	for j, x := range xs {
		if x.dt != first.dt {
			return nil, opErrorf(op, "tensors[%d] has dtype %s but tensors[0] has %s", j, x.dt, first.dt)
		}
		if len(x.shape) != len(first.shape) {
			return nil, opErrorf(op, "tensors[%d] has rank %d but tensors[0] has %d", j, len(x.shape), len(first.shape))
		}
		for d := range x.shape {
			if d != axis && x.shape[d] != first.shape[d] {
				return nil, opErrorf(op, "tensors[%d] dimension %d is %d but tensors[0] has %d", j, d, x.shape[d], first.shape[d])
			}
		}
		starts[j] = shape[axis]
		shape[axis] += x.shape[axis]
	}
	out := newArray(first.dt, shape)
	idx := make([]int64, len(shape))
	in := make([]int64, len(shape))
	for k := range out.size() {
		unravel(k, shape, idx)
		j := len(xs) - 1
		for j > 0 && starts[j] > idx[axis] {
			j--
		}
		copy(in, idx)
		in[axis] -= starts[j]
		out.copyElem(k, xs[j], flatIndex(in, xs[j].shape))
	}
	return out.tensor()
}

// evalSplit cuts x along axis into sections of ceil(extent / sections)
// (the last one the rest, as TVM's topi.split computes) or at indices
// (clamped to the extent).
func evalSplit(call *ir.Call, args []Value) (Value, error) {
	op := opOf(call)
	x, err := argArray(op, args, 0)
	if err != nil {
		return nil, err
	}
	axis, err := axisAttr(op, call, len(x.shape))
	if err != nil {
		return nil, err
	}
	n := x.shape[axis]
	v := opAttr(op, call, "indices_or_sections")
	var cuts []int64
	if sections, ok := ir.AttrAsInt(v); ok {
		if sections <= 0 {
			return nil, opErrorf(op, "the number of sections must be positive, got %d", sections)
		}
		// Parts of ceil(n / sections), the last one the rest (inferSplit).
		each := (n + sections - 1) / sections
		if last := n - each*(sections-1); last < 0 {
			return nil, opErrorf(op, "axis %d of length %d does not split into %d sections: %d parts of %d leave %d for the last", axis, n, sections, sections-1, each, last)
		}
		for s := int64(1); s < sections; s++ {
			cuts = append(cuts, s*each)
		}
	} else if indices, ok := ir.AttrAsInts(v); ok {
		cuts = indices
	} else {
		return nil, opErrorf(op, "indices_or_sections must be an int or a list of ints, got %v", v)
	}
	bounds := append(append([]int64{0}, cuts...), n)
	parts := make(Tuple, len(bounds)-1)
	for p := range parts {
		lo, hi := max(0, min(bounds[p], n)), max(0, min(bounds[p+1], n))
		hi = max(hi, lo)
		shape := append([]int64{}, x.shape...)
		shape[axis] = hi - lo
		in := make([]int64, len(shape))
		t, err := gather(x, shape, func(idx []int64) int64 {
			copy(in, idx)
			in[axis] += lo
			return flatIndex(in, x.shape)
		}).tensor()
		if err != nil {
			return nil, err
		}
		parts[p] = t
	}
	return parts, nil
}

// primInts reads a tuple argument of integer scalars.
func primInts(op *ir.Op, args []Value, i int) ([]int64, error) {
	tup, ok := args[i].(Tuple)
	if !ok {
		return nil, opErrorf(op, "%s must be a tuple of integers, got %s", paramName(op, i), KindOf(args[i]))
	}
	out := make([]int64, len(tup))
	for j, v := range tup {
		p, ok := v.(Prim)
		if !ok || p.DType.IsFloat() {
			return nil, opErrorf(op, "%s[%d] must be an integer, got %s", paramName(op, i), j, KindOf(v))
		}
		out[j] = p.I
	}
	return out, nil
}

// sliceStart is where a Python-style slice begin:...:stride starts in a
// dimension of extent n.
func sliceStart(b, s, n int64) int64 {
	if b < 0 {
		b += n
	}
	if s > 0 {
		return max(0, min(b, n))
	}
	return max(-1, min(b, n-1))
}

func evalStridedSlice(call *ir.Call, args []Value) (Value, error) {
	op := opOf(call)
	x, err := argArray(op, args, 0)
	if err != nil {
		return nil, err
	}
	var lists [4][]int64
	for i := 1; i <= 3; i++ {
		if lists[i-1], err = primInts(op, args, i); err != nil {
			return nil, err
		}
	}
	axes, begin, end := lists[0], lists[1], lists[2]
	strides := make([]int64, len(axes))
	for i := range strides {
		strides[i] = 1
	}
	if len(args) > 4 {
		if strides, err = primInts(op, args, 4); err != nil {
			return nil, err
		}
	}
	if len(begin) != len(axes) || len(end) != len(axes) || len(strides) != len(axes) {
		return nil, opErrorf(op, "axes, begin, end and strides must have the same length")
	}
	shape := append([]int64{}, x.shape...)
	start := make([]int64, len(shape))
	step := make([]int64, len(shape))
	for i := range step {
		step[i] = 1
	}
	for i, a := range axes {
		ax, err := normAxisEval(op, a, len(shape))
		if err != nil {
			return nil, err
		}
		if strides[i] == 0 {
			return nil, opErrorf(op, "stride must not be zero")
		}
		n := x.shape[ax]
		shape[ax] = staticSliceLength(begin[i], end[i], strides[i], n)
		start[ax] = sliceStart(begin[i], strides[i], n)
		step[ax] = strides[i]
	}
	in := make([]int64, len(shape))
	return gather(x, shape, func(idx []int64) int64 {
		for d := range idx {
			in[d] = start[d] + idx[d]*step[d]
		}
		return flatIndex(in, x.shape)
	}).tensor()
}

// evalTake gathers along axis; mode fast requires in-range indices
// (negative ones count from the end), clip clamps, wrap wraps.
func evalTake(call *ir.Call, args []Value) (Value, error) {
	op := opOf(call)
	x, err := argArray(op, args, 0)
	if err != nil {
		return nil, err
	}
	ind, err := argArray(op, args, 1)
	if err != nil {
		return nil, err
	}
	if ind.f != nil || ind.dt.IsBool() {
		return nil, opErrorf(op, "indices must be integers, got %s", ind.dt)
	}
	axisV, hasAxis, err := opAttrInt(op, call, "axis")
	if err != nil {
		return nil, err
	}
	mode, _ := opAttr(op, call, "mode").(string)
	if !hasAxis {
		x = &array{dt: x.dt, shape: []int64{x.size()}, f: x.f, i: x.i}
		axisV = 0
	}
	axis, err := normAxisEval(op, axisV, len(x.shape))
	if err != nil {
		return nil, err
	}
	n := x.shape[axis]
	if n == 0 && ind.size() > 0 {
		return nil, opErrorf(op, "cannot take from axis %d of length 0", axis)
	}
	shape := append(append(append([]int64{}, x.shape[:axis]...), ind.shape...), x.shape[axis+1:]...)
	if err := CheckSize(shape); err != nil {
		return nil, opErrorf(op, "%v", err)
	}
	in := make([]int64, len(x.shape))
	var bad error
	out := gather(x, shape, func(idx []int64) int64 {
		j := ind.i[flatIndex(idx[axis:axis+len(ind.shape)], ind.shape)]
		switch {
		case mode == "clip":
			j = max(0, min(j, n-1))
		case mode == "wrap" && n > 0:
			j = ((j % n) + n) % n
		case j < -n || j >= n:
			if bad == nil {
				bad = opErrorf(op, "index %d is out of range for axis %d of length %d", j, axis, n)
			}
			j = 0
		case j < 0:
			j += n
		}
		copy(in, idx[:axis])
		in[axis] = j
		copy(in[axis+1:], idx[axis+len(ind.shape):])
		return flatIndex(in, x.shape)
	})
	if bad != nil {
		return nil, bad
	}
	return out.tensor()
}

// EvalReshape is R.reshape's evaluation on values (for builtins that
// reshape).
func EvalReshape(x, shape Value) (Value, error) {
	return evalReshape(ir.NewCall(Reshape), []Value{x, shape})
}

// --- legalization -------------------------------------------------------------

// legalizeBroadcastTo is topi.broadcast_to (T_broadcast_to).
func legalizeBroadcastTo(k *Kernel, call *ir.Call) error {
	a, err := k.Input(call.Args[0], "A")
	if err != nil {
		return err
	}
	out, err := k.Output("T_broadcast_to")
	if err != nil {
		return err
	}
	k.Compute("T_broadcast_to", out, "ax", func(v []ir.PrimExpr) ir.PrimExpr { return Load(a, broadcastIndex(a.Shape, out.Shape, v)) })
	return nil
}

// legalizeReshape is topi.reshape (T_reshape): each output element reads
// the input element with the same row-major position.
func legalizeReshape(k *Kernel, call *ir.Call) error {
	a, err := k.Input(call.Args[0], "A")
	if err != nil {
		return err
	}
	out, err := k.Output("T_reshape")
	if err != nil {
		return err
	}
	k.Compute("T_reshape", out, "ax", func(v []ir.PrimExpr) ir.PrimExpr {
		return Load(a, unravelIndex(ravelIndex(v, out.Shape), a.Shape))
	})
	return nil
}

func legalizePermuteDims(k *Kernel, call *ir.Call) error {
	op := opOf(call)
	a, err := k.Input(call.Args[0], "A")
	if err != nil {
		return err
	}
	axes, has, err := opAttrInts(op, call, "axes")
	if err != nil {
		return err
	}
	n := len(a.Shape)
	perm := make([]int, n)
	for i := range perm {
		perm[i] = n - 1 - i
		if has {
			if perm[i], err = normAxisEval(op, axes[i], n); err != nil {
				return err
			}
		}
	}
	out, err := k.Output("T_transpose")
	if err != nil {
		return err
	}
	k.Compute("T_transpose", out, "ax", func(v []ir.PrimExpr) ir.PrimExpr {
		idx := make([]ir.PrimExpr, n)
		for i, p := range perm {
			idx[p] = v[i]
		}
		return Load(a, idx)
	})
	return nil
}

func legalizeExpandDims(k *Kernel, call *ir.Call) error {
	op := opOf(call)
	a, err := k.Input(call.Args[0], "A")
	if err != nil {
		return err
	}
	axes, _, err := opAttrInts(op, call, "axis")
	if err != nil {
		return err
	}
	out, err := k.Output("T_expand_dims")
	if err != nil {
		return err
	}
	unit := make([]bool, len(out.Shape))
	for _, x := range axes {
		i, err := normAxisEval(op, x, len(out.Shape))
		if err != nil {
			return err
		}
		unit[i] = true
	}
	k.Compute("T_expand_dims", out, "ax", func(v []ir.PrimExpr) ir.PrimExpr {
		var idx []ir.PrimExpr
		for i, x := range v {
			if !unit[i] {
				idx = append(idx, x)
			}
		}
		return Load(a, idx)
	})
	return nil
}

func legalizeSqueeze(k *Kernel, call *ir.Call) error {
	op := opOf(call)
	a, err := k.Input(call.Args[0], "A")
	if err != nil {
		return err
	}
	axes, has, err := opAttrInts(op, call, "axis")
	if err != nil {
		return err
	}
	drop := make([]bool, len(a.Shape))
	for i, d := range a.Shape {
		n, static := ir.IntValue(d)
		if !has && static && n == 1 {
			drop[i] = true
		} else if !has && !static {
			return ErrNotLegalizable // whether a symbolic dimension is 1 is unknown
		}
	}
	for _, x := range axes {
		i, err := normAxisEval(op, x, len(a.Shape))
		if err != nil {
			return err
		}
		drop[i] = true
	}
	out, err := k.Output("T_squeeze")
	if err != nil {
		return err
	}
	k.Compute("T_squeeze", out, "ax", func(v []ir.PrimExpr) ir.PrimExpr {
		idx := make([]ir.PrimExpr, len(a.Shape))
		j := 0
		for i := range idx {
			if drop[i] {
				idx[i] = ir.I64(0)
				continue
			}
			idx[i] = v[j]
			j++
		}
		return Load(a, idx)
	})
	return nil
}

// legalizeConcat is topi.concatenate (T_concat): a chain of
// T.if_then_else on the position along axis.
func legalizeConcat(k *Kernel, call *ir.Call) error {
	op := opOf(call)
	tup, ok := call.Args[0].(*ir.Tuple)
	if !ok || len(tup.Fields) == 0 {
		return ErrNotLegalizable
	}
	axisV, has, err := opAttrInt(op, call, "axis")
	if err != nil {
		return err
	}
	var ins []*ir.Buffer
	for i, f := range tup.Fields {
		b, err := k.Input(f, string(rune('A'+i%26)))
		if err != nil {
			return err
		}
		ins = append(ins, b)
	}
	if !has { // axis None: concatenate the flattened tensors
		for i, b := range ins {
			ins[i] = k.Flatten(b)
		}
		axisV = 0
	}
	axis, err := normAxisEval(op, axisV, len(ins[0].Shape))
	if err != nil {
		return err
	}
	out, err := k.Output("T_concat")
	if err != nil {
		return err
	}
	k.Compute("T_concat", out, "ax", func(v []ir.PrimExpr) ir.PrimExpr {
		starts := make([]ir.PrimExpr, len(ins))
		var s ir.PrimExpr = ir.I64(0)
		for i, b := range ins {
			starts[i] = ir.Simplify(s)
			s = ir.Add(s, b.Shape[axis])
		}
		at := func(i int) ir.PrimExpr {
			idx := append([]ir.PrimExpr{}, v...)
			idx[axis] = ir.Simplify(ir.Sub(v[axis], starts[i]))
			return Load(ins[i], idx)
		}
		value := at(len(ins) - 1)
		for i := len(ins) - 2; i >= 0; i-- {
			end := ir.Simplify(ir.Add(starts[i], ins[i].Shape[axis]))
			value = intrinsic("if_then_else", out.DType, ir.NewBinary(ir.OpLT, v[axis], end), at(i), value)
		}
		return value
	})
	return nil
}

// legalizeSplit writes each part in its own block T_split (topi.split).
func legalizeSplit(k *Kernel, call *ir.Call) error {
	op := opOf(call)
	a, err := k.Input(call.Args[0], "A")
	if err != nil {
		return err
	}
	ti, ok := call.StructInfo().(*ir.TupleInfo)
	if !ok {
		return ErrNotLegalizable
	}
	axis, err := axisAttr(op, call, len(a.Shape))
	if err != nil {
		return err
	}
	var outs []*ir.Buffer
	for range ti.Fields {
		o, err := k.OutputOf("T_split", ti.Fields[len(outs)])
		if err != nil {
			return err
		}
		outs = append(outs, o)
	}
	var start ir.PrimExpr = ir.I64(0)
	for _, o := range outs {
		s := ir.Simplify(start)
		k.Compute(o.Name, o, "ax", func(v []ir.PrimExpr) ir.PrimExpr {
			idx := append([]ir.PrimExpr{}, v...)
			idx[axis] = ir.Simplify(ir.Add(v[axis], s))
			return Load(a, idx)
		})
		start = ir.Add(start, o.Shape[axis])
	}
	return nil
}

// constTuple reads a tuple argument of constant integers.
func constTuple(e ir.Expr) ([]int64, bool) {
	ti, ok := argStructInfo(e).(*ir.TupleInfo)
	if !ok {
		return nil, false
	}
	out := make([]int64, len(ti.Fields))
	for i, f := range ti.Fields {
		p, ok := f.(*ir.PrimInfo)
		if !ok || p.Value == nil {
			return nil, false
		}
		if out[i], ok = ir.IntValue(p.Value); !ok {
			return nil, false
		}
	}
	return out, true
}

// legalizeStridedSlice handles constant axes, begins, ends and strides
// (T_strided_slice_with_axes).
func legalizeStridedSlice(k *Kernel, call *ir.Call) error {
	op := opOf(call)
	var lists [4][]int64
	for i := 1; i < len(call.Args) && i <= 4; i++ {
		l, ok := constTuple(call.Args[i])
		if !ok {
			return ErrNotLegalizable
		}
		lists[i-1] = l
	}
	axes, begin := lists[0], lists[1]
	strides := lists[3]
	if strides == nil {
		strides = make([]int64, len(axes))
		for i := range strides {
			strides[i] = 1
		}
	}
	a, err := k.Input(call.Args[0], "A")
	if err != nil {
		return err
	}
	out, err := k.Output("T_strided_slice_with_axes")
	if err != nil {
		return err
	}
	start := make([]int64, len(a.Shape))
	step := make([]int64, len(a.Shape))
	for i := range step {
		step[i] = 1
	}
	for i, x := range axes {
		ax, err := normAxisEval(op, x, len(a.Shape))
		if err != nil {
			return err
		}
		n, ok := ir.IntValue(a.Shape[ax])
		if !ok || strides[i] == 0 {
			return ErrNotLegalizable
		}
		start[ax], step[ax] = sliceStart(begin[i], strides[i], n), strides[i]
	}
	k.Compute("T_strided_slice_with_axes", out, "ax", func(v []ir.PrimExpr) ir.PrimExpr {
		idx := make([]ir.PrimExpr, len(v))
		for i, x := range v {
			idx[i] = ir.Simplify(ir.Add(ir.I64(start[i]), ir.Mul(x, ir.I64(step[i]))))
		}
		return Load(a, idx)
	})
	return nil
}

// legalizeTake is topi.take (T_take); mode clip clamps, wrap wraps, fast
// trusts the indices.
func legalizeTake(k *Kernel, call *ir.Call) error {
	op := opOf(call)
	a, err := k.Input(call.Args[0], "A")
	if err != nil {
		return err
	}
	axisV, has, err := opAttrInt(op, call, "axis")
	if err != nil {
		return err
	}
	// axis None indexes the flattened a: topi.take without an axis reads
	// a at the unravelled flat index, with the output shaped as indices.
	shape := a.Shape
	load := func(idx []ir.PrimExpr) ir.PrimExpr { return Load(a, idx) }
	if !has {
		shape, axisV = []ir.PrimExpr{ir.Simplify(shapeProduct(a.Shape))}, 0
		load = func(idx []ir.PrimExpr) ir.PrimExpr { return Load(a, unravelIndex(idx[0], a.Shape)) }
	}
	axis, err := normAxisEval(op, axisV, len(shape))
	if err != nil {
		return err
	}
	mode, _ := opAttr(op, call, "mode").(string)
	_, outDims, ok := knownTensorInfo(call.StructInfo())
	if !ok {
		return ErrNotLegalizable
	}
	var nIdx int
	var index func(v []ir.PrimExpr) ir.PrimExpr
	if p, isPrim := argStructInfo(call.Args[1]).(*ir.PrimInfo); isPrim {
		f, err := k.Operand(call.Args[1], "B", nil)
		if err != nil || p.DType.IsVoid() {
			return ErrNotLegalizable
		}
		index = func([]ir.PrimExpr) ir.PrimExpr { return f(nil) }
	} else {
		b, err := k.Input(call.Args[1], "B")
		if err != nil {
			return err
		}
		nIdx = len(b.Shape)
		index = func(v []ir.PrimExpr) ir.PrimExpr { return Load(b, v[axis:axis+nIdx]) }
	}
	_ = outDims
	out, err := k.Output("T_take")
	if err != nil {
		return err
	}
	n := shape[axis]
	k.Compute("T_take", out, "ax", func(v []ir.PrimExpr) ir.PrimExpr {
		j := castTo(ir.Int64, index(v))
		switch mode {
		case "clip":
			j = ir.NewBinary(ir.OpMin, ir.NewBinary(ir.OpMax, j, ir.I64(0)), ir.Sub(n, ir.I64(1)))
		case "wrap":
			j = ir.NewBinary(ir.OpFloorMod, j, n)
		}
		idx := append(append(append([]ir.PrimExpr{}, v[:axis]...), j), v[axis+nIdx:]...)
		return load(idx)
	})
	return nil
}

// --- flip ------------------------------------------------------------------------

// Flip is R.flip(data, axis): the elements in reverse order along axis.
var Flip = Define(newFlipOp())

func newFlipOp() Def {
	op := &ir.Op{Name: "relax.flip", Doc: "Reverses the order of the elements along axis.", Pure: true, Category: ir.CatTensor, Pattern: ir.PatternInjective,
		Params: []ir.Param{{Name: "data", Kind: ir.ArgExpr}, {Name: "axis", Kind: ir.AttrInt}}}
	op.Infer = func(_ *ir.InferCtx, call *ir.Call) (ir.StructInfo, error) {
		t, err := firstTensorArg(op, call)
		if err != nil {
			return nil, err
		}
		axis, _, err := opAttrInt(op, call, "axis")
		if err != nil {
			return nil, err
		}
		if t.NDim >= 0 {
			if _, err := normAxis(op, axis, t.NDim); err != nil {
				return nil, err
			}
		}
		return t, nil
	}
	op.Normalize = schemaNormalize(op)
	eval := func(call *ir.Call, args []Value) (Value, error) {
		x, err := argArray(op, args, 0)
		if err != nil {
			return nil, err
		}
		axis, err := axisAttr(op, call, len(x.shape))
		if err != nil {
			return nil, err
		}
		in := make([]int64, len(x.shape))
		return gather(x, x.shape, func(idx []int64) int64 {
			copy(in, idx)
			in[axis] = x.shape[axis] - 1 - idx[axis]
			return flatIndex(in, x.shape)
		}).tensor()
	}
	legalize := func(k *Kernel, call *ir.Call) error {
		a, err := k.Input(call.Args[0], "A")
		if err != nil {
			return err
		}
		axis, err := axisAttr(op, call, len(a.Shape))
		if err != nil {
			return err
		}
		out, err := k.Output("T_reverse_sequence")
		if err != nil {
			return err
		}
		k.Compute("T_reverse_sequence", out, "ax", func(v []ir.PrimExpr) ir.PrimExpr {
			idx := append([]ir.PrimExpr{}, v...)
			idx[axis] = ir.Simplify(ir.Sub(ir.Sub(a.Shape[axis], ir.I64(1)), v[axis]))
			return Load(a, idx)
		})
		return nil
	}
	return Def{Op: op, Eval: eval, Legalize: legalize, Layout: axisRule("axis")}
}
