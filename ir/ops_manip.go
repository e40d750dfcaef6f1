package ir

// Shape manipulation and indexing ops.

var (
	// OpReshape is R.reshape(x, shape). It is a shape op (CatShape): besides
	// LegalizeOps, RewriteDataflowReshape may turn legalized reshapes back
	// into it and LowerRuntimeBuiltin lowers it to vm.builtin.reshape.
	OpReshape = RegisterOp(newReshapeOp())
	// OpPermuteDims is R.permute_dims(x, axes=None); None reverses the axes.
	OpPermuteDims = RegisterOp(newPermuteDimsOp())
	// OpExpandDims is R.expand_dims(x, axis).
	OpExpandDims = RegisterOp(newExpandDimsOp())
	// OpSqueeze is R.squeeze(x, axis=None); None removes every unit dimension.
	OpSqueeze = RegisterOp(newSqueezeOp())
	// OpFlatten is R.flatten(x): a 1-D view of every element.
	OpFlatten = RegisterOp(newFlattenOp())
	// OpConcat is R.concat(tensors, axis=0); axis None concatenates flattened tensors.
	OpConcat = RegisterOp(newConcatOp())
	// OpSplit is R.split(x, indices_or_sections, axis=0), returning a tuple.
	OpSplit = RegisterOp(newSplitOp())
	// OpStridedSlice is R.strided_slice(x, axes, begin, end, strides=None, assume_inbound=False).
	OpStridedSlice = RegisterOp(newStridedSliceOp())
	// OpTake is R.take(x, indices, axis=None, mode="fast").
	OpTake = RegisterOp(newTakeOp())
	// OpBroadcastTo is R.broadcast_to(x, shape).
	OpBroadcastTo = RegisterOp(newBroadcastToOp())
)

// --- reshape ----------------------------------------------------------------

func newReshapeOp() *Op {
	op := &Op{
		Name: "relax.reshape", Doc: "Reinterprets the elements of x with a new shape (one dimension may be -1).",
		Pure: true, Category: CatShape,
		Params: []Param{{Name: "x", Kind: ArgExpr}, {Name: "shape", Kind: ArgShape}},
	}
	op.Infer = func(_ *InferCtx, call *Call) (StructInfo, error) {
		t, dims, ndim, shape, err := reshapeTarget(op, call)
		if err != nil {
			return nil, err
		}
		return tensorFromShape(t.DType, dims, ndim, shape), nil
	}
	// Normalize replaces a -1 in a literal shape by the inferred dimension,
	// as TVM's reshape constructor does.
	op.Normalize = func(_ *InferCtx, call *Call) (Expr, error) {
		if len(call.Args) != 2 {
			return call, nil
		}
		se, ok := call.Args[1].(*ShapeExpr)
		if !ok || !hasMinusOne(se.Values) {
			return call, nil
		}
		_, dims, _, _, err := reshapeTarget(op, call)
		if err != nil || dims == nil {
			return call, err
		}
		out := *call
		out.sinfo = nil
		ns := NewShapeExpr(dims...)
		ns.SetSpan(se.Span())
		out.Args = []Expr{call.Args[0], ns}
		return &out, nil
	}
	return op
}

func hasMinusOne(dims []PrimExpr) bool {
	for _, d := range dims {
		if v, ok := IntValue(d); ok && v == -1 {
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
func reshapeTarget(op *Op, call *Call) (t *TensorInfo, dims []PrimExpr, ndim int, shape Expr, err error) {
	if t, err = firstTensorArg(op, call); err != nil {
		return
	}
	if dims, ndim, shape, err = shapeArg(op, call, 1); err != nil || dims == nil {
		return
	}
	inferAt := -1
	for i, d := range dims {
		v, ok := IntValue(Simplify(d)) // a folded overflow is as negative as a literal
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
	rest := make([]PrimExpr, 0, len(dims)-1)
	for i, d := range dims {
		if i != inferAt {
			rest = append(rest, d)
		}
	}
	oldN, restN := shapeProduct(oldDims), shapeProduct(rest)
	if a, ok1 := IntValue(oldN); ok1 {
		if b, ok2 := IntValue(restN); ok2 && (b == 0 || a%b != 0) {
			return nil, nil, 0, nil, opErrorf(op, "cannot reshape %d elements into a shape with -1 and %d other elements", a, b)
		}
	}
	resolved := append([]PrimExpr(nil), dims...)
	resolved[inferAt] = floorDivDims(oldN, restN)
	return t, resolved, ndim, nil, nil
}

// --- permute_dims / expand_dims / squeeze / flatten --------------------------

func newPermuteDimsOp() *Op {
	op := &Op{
		Name: "relax.permute_dims", Doc: "Permutes the axes of x (reverses them when axes is None).",
		Pure: true, Category: CatTensor,
		Params: []Param{{Name: "x", Kind: ArgExpr}, {Name: "axes", Kind: AttrInts, Optional: true}},
	}
	op.Infer = func(_ *InferCtx, call *Call) (StructInfo, error) {
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
			return TensorInfoNDim(t.DType, -1), nil
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
			return TensorInfoNDim(t.DType, ndim), nil
		}
		out := make([]PrimExpr, ndim)
		for i, p := range perm {
			out[i] = dims[p]
		}
		return newTensor(t.DType, out, true, ndim), nil
	}
	op.Normalize = schemaNormalize(op)
	return op
}

func newExpandDimsOp() *Op {
	op := &Op{
		Name: "relax.expand_dims", Doc: "Inserts unit dimensions at the given axes of the result.",
		Pure: true, Category: CatTensor,
		Params: []Param{{Name: "x", Kind: ArgExpr}, {Name: "axis", Kind: AttrInts}},
	}
	op.Infer = func(_ *InferCtx, call *Call) (StructInfo, error) {
		t, err := firstTensorArg(op, call)
		if err != nil {
			return nil, err
		}
		axes, _, err := opAttrInts(op, call, "axis")
		if err != nil {
			return nil, err
		}
		if t.NDim < 0 {
			return TensorInfoNDim(t.DType, -1), nil
		}
		ndim := t.NDim + len(axes)
		norm, err := normAxes(op, axes, ndim)
		if err != nil {
			return nil, err
		}
		dims, ok := t.Dims()
		if !ok {
			return TensorInfoNDim(t.DType, ndim), nil
		}
		inserted := make([]bool, ndim)
		for _, a := range norm {
			inserted[a] = true
		}
		out := make([]PrimExpr, 0, ndim)
		next := 0
		for i := range ndim {
			if inserted[i] {
				out = append(out, I64(1))
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

func newSqueezeOp() *Op {
	op := &Op{
		Name: "relax.squeeze", Doc: "Removes unit dimensions (those at axis, or all of them).",
		Pure: true, Category: CatTensor,
		Params: []Param{{Name: "x", Kind: ArgExpr}, {Name: "axis", Kind: AttrInts, Optional: true}},
	}
	op.Infer = func(_ *InferCtx, call *Call) (StructInfo, error) {
		t, err := firstTensorArg(op, call)
		if err != nil {
			return nil, err
		}
		axes, hasAxis, err := opAttrInts(op, call, "axis")
		if err != nil {
			return nil, err
		}
		if t.NDim < 0 {
			return TensorInfoNDim(t.DType, -1), nil
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
					if v, ok := IntValue(dims[a]); ok && v != 1 {
						return nil, opErrorf(op, "cannot squeeze axis %d of length %d", a, v)
					}
				}
				removed[a] = true
			}
		} else {
			if !known {
				return TensorInfoNDim(t.DType, -1), nil
			}
			for i, d := range dims {
				v, ok := IntValue(d)
				if !ok {
					// A symbolic dimension may or may not be 1.
					return TensorInfoNDim(t.DType, -1), nil
				}
				removed[i] = v == 1
			}
		}
		out := []PrimExpr{}
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

func newFlattenOp() *Op {
	op := &Op{
		Name: "relax.flatten", Doc: "A 1-D tensor of all elements of x in row-major order.",
		Pure: true, Category: CatTensor,
		Params: []Param{{Name: "x", Kind: ArgExpr}},
	}
	op.Infer = func(_ *InferCtx, call *Call) (StructInfo, error) {
		t, err := firstTensorArg(op, call)
		if err != nil {
			return nil, err
		}
		if t.NDim == 1 {
			return t, nil
		}
		dims, ok := t.Dims()
		if !ok {
			return TensorInfoNDim(t.DType, 1), nil
		}
		return newTensor(t.DType, []PrimExpr{shapeProduct(dims)}, true, 1), nil
	}
	return op
}

// --- concat / split -----------------------------------------------------------

func newConcatOp() *Op {
	op := &Op{
		Name: "relax.concat", Doc: "Joins a tuple of tensors along axis.",
		Pure: true, Category: CatTensor,
		Params: []Param{{Name: "tensors", Kind: ArgTuple}, {Name: "axis", Kind: AttrInt, Default: int64(0)}},
	}
	op.Infer = func(_ *InferCtx, call *Call) (StructInfo, error) { return inferConcat(op, call) }
	op.Normalize = schemaNormalize(op)
	return op
}

func inferConcat(op *Op, call *Call) (StructInfo, error) {
	if err := opCheckArity(op, call); err != nil {
		return nil, err
	}
	ti, ok := argStructInfo(call.Args[0]).(*TupleInfo)
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
	ts := make([]*TensorInfo, len(ti.Fields))
	dtype, ndim := Void, -1
	for i, f := range ti.Fields {
		t, ok := f.(*TensorInfo)
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
		var total PrimExpr
		for _, t := range ts {
			dims, ok := t.Dims()
			if !ok {
				return TensorInfoNDim(dtype, 1), nil
			}
			total = addDim(total, shapeProduct(dims))
		}
		return newTensor(dtype, []PrimExpr{total}, true, 1), nil
	}
	if ndim < 0 {
		return TensorInfoNDim(dtype, -1), nil
	}
	a, err := normAxis(op, axis, ndim)
	if err != nil {
		return nil, err
	}
	out := make([]PrimExpr, ndim)
	known := true
	var total PrimExpr
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
		return TensorInfoNDim(dtype, ndim), nil
	}
	out[a] = total
	return newTensor(dtype, out, true, ndim), nil
}

// addDim adds d to a running sum (nil is zero).
func addDim(sum, d PrimExpr) PrimExpr {
	if sum == nil {
		return d
	}
	return addDims(sum, d)
}

func newSplitOp() *Op {
	op := &Op{
		Name: "relax.split", Doc: "Splits x along axis into equal sections or at indices; returns a tuple.",
		Pure: true, Category: CatTensor,
		Params: []Param{
			{Name: "x", Kind: ArgExpr},
			{Name: "indices_or_sections", Kind: AttrAny},
			{Name: "axis", Kind: AttrInt, Default: int64(0)},
		},
	}
	op.Infer = func(_ *InferCtx, call *Call) (StructInfo, error) { return inferSplit(op, call) }
	op.Normalize = schemaNormalize(op)
	return op
}

func inferSplit(op *Op, call *Call) (StructInfo, error) {
	t, err := firstTensorArg(op, call)
	if err != nil {
		return nil, err
	}
	axis, _, err := opAttrInt(op, call, "axis")
	if err != nil {
		return nil, err
	}
	v := opAttr(op, call, "indices_or_sections")
	sections, isSections := attrAsInt(v)
	indices, isIndices := attrAsInts(v)
	switch {
	case isSections && sections <= 0:
		return nil, opErrorf(op, "the number of sections must be positive, got %d", sections)
	case !isSections && !isIndices:
		return nil, opErrorf(op, "indices_or_sections must be an int or a list of ints, got %v", v)
	}
	n := int(sections)
	if isIndices {
		n = len(indices) + 1
	}
	fields := make([]StructInfo, n)
	if t.NDim < 0 {
		for i := range fields {
			fields[i] = TensorInfoNDim(t.DType, -1)
		}
		return NewTupleInfo(fields...), nil
	}
	a, err := normAxis(op, axis, t.NDim)
	if err != nil {
		return nil, err
	}
	dims, known := t.Dims()
	if !known {
		for i := range fields {
			fields[i] = TensorInfoNDim(t.DType, t.NDim)
		}
		return NewTupleInfo(fields...), nil
	}
	length := dims[a]
	part := func(d PrimExpr) *TensorInfo {
		out := append([]PrimExpr(nil), dims...)
		out[a] = d
		return newTensor(t.DType, out, true, t.NDim)
	}
	if isSections {
		if l, ok := IntValue(length); ok && l%sections != 0 {
			return nil, opErrorf(op, "axis %d of length %d does not split into %d equal sections", a, l, sections)
		}
		each := floorDivDims(length, I64(sections))
		for i := range fields {
			fields[i] = part(each)
		}
		return NewTupleInfo(fields...), nil
	}
	var prev PrimExpr = I64(0)
	for i := range fields {
		end := length
		if i < len(indices) {
			end = I64(indices[i])
		}
		fields[i] = part(splitLength(prev, end, length))
		prev = end
	}
	return NewTupleInfo(fields...), nil
}

// splitLength is the length of [begin, end) clipped to [0, length].
func splitLength(begin, end, length PrimExpr) PrimExpr {
	b, ok1 := IntValue(begin)
	e, ok2 := IntValue(end)
	l, ok3 := IntValue(length)
	if ok1 && ok2 && ok3 {
		b, e = min(b, l), min(e, l)
		return I64(max(e-b, 0))
	}
	return Simplify(Max(Sub(Min(end, length), Min(begin, length)), I64(0)))
}

// --- strided_slice / take / broadcast_to --------------------------------------

func newStridedSliceOp() *Op {
	op := &Op{
		Name: "relax.strided_slice", Doc: "Slices x along axes from begin to end with strides.",
		Pure: true, Category: CatTensor,
		Params: []Param{
			{Name: "x", Kind: ArgExpr},
			{Name: "axes", Kind: ArgTuple},
			{Name: "begin", Kind: ArgTuple},
			{Name: "end", Kind: ArgTuple},
			{Name: "strides", Kind: ArgTuple, Optional: true},
			{Name: "assume_inbound", Kind: AttrBool, Default: false},
		},
	}
	op.Infer = func(_ *InferCtx, call *Call) (StructInfo, error) { return inferStridedSlice(op, call) }
	op.Normalize = schemaNormalize(op)
	return op
}

// primTupleArg reads a tuple of scalars (R.prim_value fields or a tuple of
// Prim info with known values); nil entries are unknown values.
func primTupleArg(op *Op, call *Call, i int) ([]PrimExpr, error) {
	ti, ok := argStructInfo(call.Args[i]).(*TupleInfo)
	if !ok {
		return nil, opErrorf(op, "%s must be a tuple of integers, got %s", opArgName(op, i), sinfoKind(argStructInfo(call.Args[i])))
	}
	out := make([]PrimExpr, len(ti.Fields))
	for j, f := range ti.Fields {
		p, ok := f.(*PrimInfo)
		if !ok || (!p.DType.IsVoid() && !p.DType.IsInteger()) {
			return nil, opErrorf(op, "%s[%d] must be an integer, got %s", opArgName(op, i), j, sinfoKind(f))
		}
		out[j] = p.Value
	}
	return out, nil
}

func inferStridedSlice(op *Op, call *Call) (StructInfo, error) {
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
	var strides []PrimExpr
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
		return TensorInfoNDim(t.DType, -1), nil
	}
	axisInts := make([]int64, len(axes))
	for i, a := range axes {
		v, ok := IntValue(a)
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
		return TensorInfoNDim(t.DType, t.NDim), nil
	}
	out := append([]PrimExpr(nil), dims...)
	for i, a := range norm {
		var stride PrimExpr = I64(1)
		if strides != nil {
			stride = strides[i]
		}
		l, err := sliceLength(op, begin[i], end[i], stride, dims[a], inbound)
		if err != nil {
			return nil, err
		}
		if l == nil {
			return TensorInfoNDim(t.DType, t.NDim), nil
		}
		out[a] = l
	}
	return newTensor(t.DType, out, true, t.NDim), nil
}

// sliceLength is the number of elements a Python-style slice
// begin:end:stride selects from a dimension of the given extent; nil when
// it cannot be expressed (symbolic values without assume_inbound).
func sliceLength(op *Op, begin, end, stride, extent PrimExpr, inbound bool) (PrimExpr, error) {
	if begin == nil || end == nil || stride == nil {
		return nil, nil
	}
	s, sOK := IntValue(stride)
	if sOK && s == 0 {
		return nil, opErrorf(op, "stride must not be zero")
	}
	b, bOK := IntValue(begin)
	e, eOK := IntValue(end)
	n, nOK := IntValue(extent)
	if bOK && eOK && sOK && nOK {
		return I64(staticSliceLength(b, e, s, n)), nil
	}
	if inbound && sOK && s > 0 {
		return Simplify(FloorDiv(Add(Sub(end, begin), I64(s-1)), I64(s))), nil
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

func newTakeOp() *Op {
	op := &Op{
		Name: "relax.take", Doc: "Gathers elements of x at indices along axis (of the flattened x when axis is None).",
		Pure: true, Category: CatTensor,
		Params: []Param{
			{Name: "x", Kind: ArgExpr},
			{Name: "indices", Kind: ArgExpr},
			{Name: "axis", Kind: AttrInt, Optional: true},
			{Name: "mode", Kind: AttrStr, Default: "fast"},
		},
	}
	op.Infer = func(_ *InferCtx, call *Call) (StructInfo, error) {
		t, err := firstTensorArg(op, call)
		if err != nil {
			return nil, err
		}
		idx, err := tensorArg(op, call, 1)
		if err != nil {
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
			return TensorInfoNDim(t.DType, -1), nil
		}
		a, err := normAxis(op, axis, t.NDim)
		if err != nil {
			return nil, err
		}
		ndim := t.NDim - 1 + idx.NDim
		dims, ok1 := t.Dims()
		idims, ok2 := idx.Dims()
		if !ok1 || !ok2 {
			return TensorInfoNDim(t.DType, ndim), nil
		}
		out := make([]PrimExpr, 0, ndim)
		out = append(out, dims[:a]...)
		out = append(out, idims...)
		out = append(out, dims[a+1:]...)
		return newTensor(t.DType, out, true, ndim), nil
	}
	op.Normalize = schemaNormalize(op)
	return op
}

// idxShapedLike is a tensor of dtype shaped like the index tensor.
func idxShapedLike(dtype DataType, idx *TensorInfo) *TensorInfo {
	return withDType(idx, dtype)
}

func newBroadcastToOp() *Op {
	op := &Op{
		Name: "relax.broadcast_to", Doc: "Broadcasts x to shape with numpy rules.",
		Pure: true, Category: CatTensor,
		Params: []Param{{Name: "x", Kind: ArgExpr}, {Name: "shape", Kind: ArgShape}},
	}
	op.Infer = func(_ *InferCtx, call *Call) (StructInfo, error) {
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
