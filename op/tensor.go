package op

import "github.com/phasec/phasec/ir"

// Tensor creation, casting and matmul.

var (
	// Matmul is R.matmul(x1, x2, out_dtype=None): numpy matmul semantics.
	Matmul = Define(Def{Op: newMatmulOp(), Eval: evalMatmul, Legalize: legalizeMatmul,
		MixedPrecision: mixedAlwaysOutDType})
	// AsType is R.astype(x, dtype).
	AsType = Define(Def{Op: newAsTypeOp(), Eval: evalCast, Legalize: legalizeCast, Layout: layoutUnary, MixedPrecision: mixedFollow})
	// Full is R.full(shape, fill_value, dtype=None).
	Full = Define(Def{Op: newFullOp(), Eval: evalFull, Legalize: fillKernel("T_full", loadFill(1)),
		MixedPrecision: mixedFollow})
	// Zeros is R.zeros(shape, dtype).
	Zeros = Define(Def{Op: newConstFillOp("relax.zeros", "A tensor of zeros of the given shape and dtype."),
		Eval: evalConstFill(0), Legalize: fillKernel("T_full", constFill(0)),
		MixedPrecision: mixedFollow})
	// Ones is R.ones(shape, dtype).
	Ones = Define(Def{Op: newConstFillOp("relax.ones", "A tensor of ones of the given shape and dtype."),
		Eval: evalConstFill(1), Legalize: fillKernel("T_full", constFill(1)),
		MixedPrecision: mixedFollow})
	// FullLike is R.full_like(x, fill_value, dtype=None).
	FullLike = Define(Def{Op: newLikeOp("relax.full_like", "A tensor shaped like x filled with fill_value.", true),
		Eval: evalFullLike, Legalize: fillKernel("T_full_like", loadFill(1)),
		MixedPrecision: mixedFollow})
	// ZerosLike is R.zeros_like(x, dtype=None).
	ZerosLike = Define(Def{Op: newLikeOp("relax.zeros_like", "A tensor of zeros shaped like x.", false),
		Eval: evalLikeFill(0), Legalize: fillKernel("T_full_like", constFill(0))})
	// OnesLike is R.ones_like(x, dtype=None).
	OnesLike = Define(Def{Op: newLikeOp("relax.ones_like", "A tensor of ones shaped like x.", false),
		Eval: evalLikeFill(1), Legalize: fillKernel("T_full_like", constFill(1))})
)

func newMatmulOp() *ir.Op {
	op := &ir.Op{
		Name: "relax.matmul", Doc: "Matrix product with numpy semantics: batched, broadcasting batch dims, 1-D operands promoted.",
		Pure: true, Category: ir.CatTensor, Pattern: ir.PatternOutEWiseFusable,
		Params: []ir.Param{
			{Name: "x1", Kind: ir.ArgExpr},
			{Name: "x2", Kind: ir.ArgExpr},
			{Name: "out_dtype", Kind: ir.AttrDType, Default: ir.Void},
		},
	}
	op.Infer = func(_ *ir.InferCtx, call *ir.Call) (ir.StructInfo, error) { return inferMatmul(op, call) }
	op.Normalize = schemaNormalize(op)
	return op
}

func inferMatmul(op *ir.Op, call *ir.Call) (ir.StructInfo, error) {
	a, err := firstTensorArg(op, call)
	if err != nil {
		return nil, err
	}
	b, err := tensorArg(op, call, 1)
	if err != nil {
		return nil, err
	}
	outDType, err := opAttrDType(op, call, "out_dtype")
	if err != nil {
		return nil, err
	}
	if outDType.IsVoid() {
		if outDType, err = unifyDType(op, a.DType, b.DType); err != nil {
			return nil, err
		}
	}
	if a.NDim == 0 || b.NDim == 0 {
		return nil, opErrorf(op, "does not accept rank-0 tensors")
	}
	if a.NDim < 0 || b.NDim < 0 {
		return ir.TensorInfoNDim(outDType, -1), nil
	}
	aVec, bVec := a.NDim == 1, b.NDim == 1
	aRank, bRank := max(a.NDim, 2), max(b.NDim, 2)
	outNDim := max(aRank, bRank)
	if aVec {
		outNDim--
	}
	if bVec {
		outNDim--
	}
	da, okA := a.Dims()
	db, okB := b.Dims()
	if !okA || !okB {
		return ir.TensorInfoNDim(outDType, outNDim), nil
	}
	// Promote vectors to matrices: (k) -> (1, k) on the left, (k, 1) on the right.
	if aVec {
		da = []ir.PrimExpr{ir.I64(1), da[0]}
	}
	if bVec {
		db = []ir.PrimExpr{db[0], ir.I64(1)}
	}
	k1, k2 := da[len(da)-1], db[len(db)-2]
	if dimsProvablyDiffer(k1, k2) {
		return nil, opErrorf(op, "reduction dims %s and %s differ", fmtDim(k1), fmtDim(k2))
	}
	var scratch [6]ir.PrimExpr // batch dims and the two matrix dims
	batch, known, err := broadcastDims(op, da[:len(da)-2], db[:len(db)-2], scratch[:])
	if err != nil {
		return nil, err
	}
	if !known {
		return ir.TensorInfoNDim(outDType, outNDim), nil
	}
	dims := batch
	if !aVec {
		dims = append(dims, da[len(da)-2])
	}
	if !bVec {
		dims = append(dims, db[len(db)-1])
	}
	return newTensor(outDType, dims, true, outNDim), nil
}

func newAsTypeOp() *ir.Op {
	op := &ir.Op{
		Name: "relax.astype", Doc: "Casts each element to dtype.", Pure: true, Category: ir.CatTensor, Pattern: ir.PatternElemWise,
		Params: []ir.Param{{Name: "x", Kind: ir.ArgExpr}, {Name: "dtype", Kind: ir.AttrDType}},
	}
	op.Infer = castInfer(op)
	op.Normalize = schemaNormalize(op)
	return op
}

// castInfer is the struct info of astype and wrap_param: the tensor's, with
// the dtype attribute's element type.
func castInfer(op *ir.Op) func(*ir.InferCtx, *ir.Call) (ir.StructInfo, error) {
	return func(_ *ir.InferCtx, call *ir.Call) (ir.StructInfo, error) {
		t, err := firstTensorArg(op, call)
		if err != nil {
			return nil, err
		}
		dtype, err := opAttrDType(op, call, "dtype")
		if err != nil {
			return nil, err
		}
		return withDType(t, dtype), nil
	}
}

// fillValueArg checks that argument i is a scalar tensor and returns it.
func fillValueArg(op *ir.Op, call *ir.Call, i int) (*ir.TensorInfo, error) {
	v, err := tensorArg(op, call, i)
	if err != nil {
		return nil, err
	}
	if v.NDim > 0 {
		return nil, opErrorf(op, "fill_value must be a scalar tensor, got rank %d", v.NDim)
	}
	return v, nil
}

func newFullOp() *ir.Op {
	op := &ir.Op{
		Name: "relax.full", Doc: "A tensor of the given shape filled with a scalar.", Pure: true, Category: ir.CatTensor, Pattern: ir.PatternElemWise,
		Params: []ir.Param{
			{Name: "shape", Kind: ir.ArgShape},
			{Name: "fill_value", Kind: ir.ArgExpr},
			{Name: "dtype", Kind: ir.AttrDType, Default: ir.Void},
		},
	}
	op.Infer = func(_ *ir.InferCtx, call *ir.Call) (ir.StructInfo, error) {
		if err := opCheckArity(op, call); err != nil {
			return nil, err
		}
		dims, ndim, shape, err := shapeArg(op, call, 0)
		if err != nil {
			return nil, err
		}
		v, err := fillValueArg(op, call, 1)
		if err != nil {
			return nil, err
		}
		dtype, err := opAttrDType(op, call, "dtype")
		if err != nil {
			return nil, err
		}
		if dtype.IsVoid() {
			dtype = v.DType
		}
		return tensorFromShape(dtype, dims, ndim, shape), nil
	}
	op.Normalize = schemaNormalize(op)
	return op
}

func newConstFillOp(name, doc string) *ir.Op {
	op := &ir.Op{
		Name: name, Doc: doc, Pure: true, Category: ir.CatTensor, Pattern: ir.PatternElemWise,
		Params: []ir.Param{{Name: "shape", Kind: ir.ArgShape}, {Name: "dtype", Kind: ir.AttrDType}},
	}
	op.Infer = func(_ *ir.InferCtx, call *ir.Call) (ir.StructInfo, error) {
		if err := opCheckArity(op, call); err != nil {
			return nil, err
		}
		dims, ndim, shape, err := shapeArg(op, call, 0)
		if err != nil {
			return nil, err
		}
		dtype, err := opAttrDType(op, call, "dtype")
		if err != nil {
			return nil, err
		}
		return tensorFromShape(dtype, dims, ndim, shape), nil
	}
	op.Normalize = schemaNormalize(op)
	return op
}

func newLikeOp(name, doc string, withFill bool) *ir.Op {
	params := []ir.Param{{Name: "x", Kind: ir.ArgExpr}}
	if withFill {
		params = append(params, ir.Param{Name: "fill_value", Kind: ir.ArgExpr})
	}
	params = append(params, ir.Param{Name: "dtype", Kind: ir.AttrDType, Default: ir.Void})
	op := &ir.Op{Name: name, Doc: doc, Pure: true, Category: ir.CatTensor, Pattern: ir.PatternElemWise, Params: params}
	op.Infer = func(_ *ir.InferCtx, call *ir.Call) (ir.StructInfo, error) {
		t, err := firstTensorArg(op, call)
		if err != nil {
			return nil, err
		}
		if withFill {
			if _, err := fillValueArg(op, call, 1); err != nil {
				return nil, err
			}
		}
		dtype, err := opAttrDType(op, call, "dtype")
		if err != nil {
			return nil, err
		}
		if dtype.IsVoid() {
			dtype = t.DType
		}
		return withDType(t, dtype), nil
	}
	op.Normalize = schemaNormalize(op)
	return op
}

// --- evaluation -------------------------------------------------------------

// evalFull fills the shape argument with fill_value.
func evalFull(call *ir.Call, args []Value) (Value, error) {
	op := opOf(call)
	shape, err := argShape(op, args, 0)
	if err != nil {
		return nil, err
	}
	return evalFill(op, call, shape, args, 1, ir.Void)
}

// evalFullLike fills x's shape with fill_value.
func evalFullLike(call *ir.Call, args []Value) (Value, error) {
	op := opOf(call)
	x, err := argArray(op, args, 0)
	if err != nil {
		return nil, err
	}
	return evalFill(op, call, x.shape, args, 1, x.dt)
}

// evalFill fills shape with the scalar argument at fillPos, in the dtype
// attribute, else def, else the fill value's dtype.
func evalFill(op *ir.Op, call *ir.Call, shape []int64, args []Value, fillPos int, def ir.DataType) (Value, error) {
	v, err := argArray(op, args, fillPos)
	if err != nil {
		return nil, err
	}
	if v.size() != 1 || len(v.shape) != 0 {
		return nil, opErrorf(op, "fill_value must be a scalar, got shape %v", v.shape)
	}
	dt, err := opAttrDType(op, call, "dtype")
	if err != nil {
		return nil, err
	}
	if dt.IsVoid() {
		dt = def
	}
	if dt.IsVoid() {
		dt = v.dt
	}
	return fillArray(op, dt, shape, v, 0)
}

func fillArray(op *ir.Op, dt ir.DataType, shape []int64, v *array, k int64) (Value, error) {
	if err := CheckSize(shape); err != nil {
		return nil, opErrorf(op, "%v", err)
	}
	out := newArray(dt, shape)
	for j := range out.size() {
		out.copyElem(j, v, k)
	}
	return out.tensor()
}

// evalConstFill fills the shape argument with c.
func evalConstFill(c int64) EvalFunc {
	return func(call *ir.Call, args []Value) (Value, error) {
		op := opOf(call)
		shape, err := argShape(op, args, 0)
		if err != nil {
			return nil, err
		}
		dt, err := opAttrDType(op, call, "dtype")
		if err != nil {
			return nil, err
		}
		return fillArray(op, dt, shape, &array{dt: ir.Int64, i: []int64{c}}, 0)
	}
}

// evalLikeFill fills x's shape with c.
func evalLikeFill(c int64) EvalFunc {
	return func(call *ir.Call, args []Value) (Value, error) {
		op := opOf(call)
		x, err := argArray(op, args, 0)
		if err != nil {
			return nil, err
		}
		dt, err := opAttrDType(op, call, "dtype")
		if err != nil {
			return nil, err
		}
		if dt.IsVoid() {
			dt = x.dt
		}
		return fillArray(op, dt, x.shape, &array{dt: ir.Int64, i: []int64{c}}, 0)
	}
}

// evalMatmul is numpy.matmul: a 1-D left operand is a row vector and a 1-D
// right operand a column vector (the unit dimension is dropped from the
// result), batch dimensions broadcast. Products accumulate in float64 (or
// int64) and round once to the output dtype.
func evalMatmul(call *ir.Call, args []Value) (Value, error) {
	op := opOf(call)
	a, b, err := binaryArgs(op, args)
	if err != nil {
		return nil, err
	}
	if len(a.shape) == 0 || len(b.shape) == 0 {
		return nil, opErrorf(op, "does not accept rank-0 tensors")
	}
	outDT, err := opAttrDType(op, call, "out_dtype")
	if err != nil {
		return nil, err
	}
	if outDT.IsVoid() {
		outDT = a.dt
	}
	as, bs := a.shape, b.shape
	if len(as) == 1 {
		as = []int64{1, as[0]}
	}
	if len(bs) == 1 {
		bs = []int64{bs[0], 1}
	}
	m, k, k2, n := as[len(as)-2], as[len(as)-1], bs[len(bs)-2], bs[len(bs)-1]
	if k != k2 {
		return nil, opErrorf(op, "x1 dimension %d is %d but x2 dimension %d is %d", len(a.shape)-1, k, max(len(b.shape)-2, 0), k2)
	}
	batch, err := broadcastShape(op, as[:len(as)-2], bs[:len(bs)-2])
	if err != nil {
		return nil, err
	}
	full := append(append([]int64{}, batch...), m, n)
	shape := append([]int64{}, batch...)
	if len(a.shape) > 1 {
		shape = append(shape, m)
	}
	if len(b.shape) > 1 {
		shape = append(shape, n)
	}
	if err := CheckSize(full); err != nil {
		return nil, opErrorf(op, "%v", err)
	}
	if k > 0 && numElems(full) > MaxElements*64/k {
		return nil, opErrorf(op, "%v x %v is more work than the reference evaluator's limit", a.shape, b.shape)
	}
	out := newArray(outDT, shape)
	ba, bb := newBroadcaster(as[:len(as)-2]), newBroadcaster(bs[:len(bs)-2])
	idx := make([]int64, len(full))
	total := numElems(full)
	for o := int64(0); o < total; o++ {
		unravel(o, full, idx)
		bi := idx[:len(batch)]
		i, j := idx[len(batch)], idx[len(batch)+1]
		aBase := ba.index(bi) * m * k
		bBase := bb.index(bi) * k * n
		if a.f != nil {
			s := 0.0
			for t := int64(0); t < k; t++ {
				s += a.f[aBase+i*k+t] * b.f[bBase+t*n+j]
			}
			out.setFloat(o, s)
		} else {
			s := int64(0)
			for t := int64(0); t < k; t++ {
				s += a.i[aBase+i*k+t] * b.i[bBase+t*n+j]
			}
			out.setInt(o, s)
		}
	}
	return out.tensor()
}

// --- legalization -------------------------------------------------------------

// fillKernel writes value (of the call) to every output element, in block.
func fillKernel(block string, value func(k *Kernel, call *ir.Call) (ir.PrimExpr, error)) LegalizeFunc {
	return func(k *Kernel, call *ir.Call) error {
		v, err := value(k, call)
		if err != nil {
			return err
		}
		out, err := k.Output(block)
		if err != nil {
			return err
		}
		k.Compute(block, out, "ax", func([]ir.PrimExpr) ir.PrimExpr { return castTo(out.DType, v) })
		return nil
	}
}

// loadFill is the fill value at argument pos.
func loadFill(pos int) func(k *Kernel, call *ir.Call) (ir.PrimExpr, error) {
	return func(k *Kernel, call *ir.Call) (ir.PrimExpr, error) {
		if pos >= len(call.Args) {
			return nil, ErrNotLegalizable
		}
		f, err := k.Operand(call.Args[pos], "fill_value", nil)
		if err != nil {
			return nil, err
		}
		return f(nil), nil
	}
}

// constFill is the constant c in the output dtype.
func constFill(c float64) func(k *Kernel, call *ir.Call) (ir.PrimExpr, error) {
	return func(k *Kernel, call *ir.Call) (ir.PrimExpr, error) {
		t, ok := call.StructInfo().(*ir.TensorInfo)
		if !ok || t.DType.IsVoid() {
			return nil, ErrNotLegalizable
		}
		return constOf(t.DType, c), nil
	}
}

// legalizeMatmul is TVM's te matmul (legalize_ops/linear_algebra.py):
// block matmul over the output with a reduction k, operands cast to the
// output dtype, batch dimensions broadcast, 1-D operands promoted.
func legalizeMatmul(k *Kernel, call *ir.Call) error {
	a, err := k.Input(call.Args[0], "A")
	if err != nil {
		return err
	}
	b, err := k.Input(call.Args[1], "B")
	if err != nil {
		return err
	}
	out, err := k.Output("matmul")
	if err != nil {
		return err
	}
	aVec, bVec := len(a.Shape) == 1, len(b.Shape) == 1
	nBatch := len(out.Shape)
	if !aVec {
		nBatch--
	}
	if !bVec {
		nBatch--
	}
	red := a.Shape[len(a.Shape)-1]
	dt := out.DType
	k.Reduce("matmul", out, "i", []ir.PrimExpr{red}, constOf(dt, 0), func(s, r []ir.PrimExpr, acc ir.PrimExpr) ir.PrimExpr {
		batch := s[:nBatch]
		var ai, bi []ir.PrimExpr
		if aVec {
			ai = []ir.PrimExpr{r[0]}
		} else {
			ai = append(broadcastIndex(a.Shape[:len(a.Shape)-2], out.Shape[:nBatch], batch), s[nBatch], r[0])
		}
		if bVec {
			bi = []ir.PrimExpr{r[0]}
		} else {
			n := s[len(s)-1]
			bi = append(broadcastIndex(b.Shape[:len(b.Shape)-2], out.Shape[:nBatch], batch), r[0], n)
		}
		return ir.NewBinary(ir.OpAdd, acc, ir.NewBinary(ir.OpMul, castTo(dt, Load(a, ai)), castTo(dt, Load(b, bi))))
	})
	return nil
}

// --- tril and triu -------------------------------------------------------------

var (
	// Tril is R.tril(x, k=0): x with the elements above diagonal k zeroed.
	Tril = Define(newTriangleOp("relax.tril", "The lower triangle (j - i <= k) of the last two dimensions; zero elsewhere.", true))
	// Triu is R.triu(x, k=0): x with the elements below diagonal k zeroed.
	Triu = Define(newTriangleOp("relax.triu", "The upper triangle (j - i >= k) of the last two dimensions; zero elsewhere.", false))
)

func newTriangleOp(name, doc string, lower bool) Def {
	op := &ir.Op{Name: name, Doc: doc, Pure: true, Category: ir.CatTensor, Pattern: ir.PatternElemWise,
		Params: []ir.Param{{Name: "x", Kind: ir.ArgExpr}, {Name: "k", Kind: ir.AttrInt, Default: int64(0)}}}
	op.Infer = func(_ *ir.InferCtx, call *ir.Call) (ir.StructInfo, error) {
		t, err := firstTensorArg(op, call)
		if err != nil {
			return nil, err
		}
		if t.NDim >= 0 && t.NDim < 2 {
			return nil, opErrorf(op, "x must have rank at least 2, got %d", t.NDim)
		}
		return t, nil
	}
	op.Normalize = schemaNormalize(op)
	keep := func(i, j, k int64) bool {
		if lower {
			return j-i <= k
		}
		return j-i >= k
	}
	eval := func(call *ir.Call, args []Value) (Value, error) {
		x, err := argArray(op, args, 0)
		if err != nil {
			return nil, err
		}
		if len(x.shape) < 2 {
			return nil, opErrorf(op, "x must have rank at least 2, got %d", len(x.shape))
		}
		d, _, err := opAttrInt(op, call, "k")
		if err != nil {
			return nil, err
		}
		out := newArray(x.dt, x.shape)
		idx := make([]int64, len(x.shape))
		for k := range out.size() {
			unravel(k, x.shape, idx)
			if keep(idx[len(idx)-2], idx[len(idx)-1], d) {
				out.copyElem(k, x, k)
			}
		}
		return out.tensor()
	}
	legalize := func(k *Kernel, call *ir.Call) error {
		a, err := k.Input(call.Args[0], "A")
		if err != nil {
			return err
		}
		d, _, err := opAttrInt(op, call, "k")
		if err != nil {
			return err
		}
		block := "T_" + name[len("relax."):]
		out, err := k.Output(block)
		if err != nil {
			return err
		}
		cmp := ir.OpGE
		if lower {
			cmp = ir.OpLE
		}
		k.Compute(block, out, "ax", func(v []ir.PrimExpr) ir.PrimExpr {
			i, j := v[len(v)-2], v[len(v)-1]
			return &ir.Select{Cond: ir.NewBinary(cmp, ir.Sub(j, i), ir.I64(d)), True: Load(a, v), False: constOf(a.DType, 0)}
		})
		return nil
	}
	return Def{Op: op, Eval: eval, Legalize: legalize}
}

// WrapParam is R.wrap_param(data, dtype="float32"): a model parameter cast
// to dtype (a no-op when it already has it).
var WrapParam = Define(newWrapParamOp())

func newWrapParamOp() Def {
	op := &ir.Op{Name: "relax.wrap_param", Doc: "Casts a model parameter to dtype.", Pure: true, Category: ir.CatTensor, Pattern: ir.PatternElemWise,
		Params: []ir.Param{{Name: "data", Kind: ir.ArgExpr}, {Name: "dtype", Kind: ir.AttrDType, Default: ir.Float32}}}
	op.Infer = castInfer(op)
	op.Normalize = schemaNormalize(op)
	return Def{Op: op, Eval: evalCast, Legalize: legalizeCast}
}

// evalCast evaluates astype and wrap_param: each element converted to the
// dtype attribute's type.
func evalCast(call *ir.Call, args []Value) (Value, error) {
	op := opOf(call)
	x, err := argArray(op, args, 0)
	if err != nil {
		return nil, err
	}
	dt, err := opAttrDType(op, call, "dtype")
	if err != nil {
		return nil, err
	}
	out := newArray(dt, x.shape)
	for k := range out.size() {
		out.copyElem(k, x, k)
	}
	return result(out, isScalarArg(args[0]))
}

// legalizeCast is topi.cast (T_cast).
func legalizeCast(k *Kernel, call *ir.Call) error {
	a, err := k.Input(call.Args[0], "A")
	if err != nil {
		return err
	}
	out, err := k.Output("T_cast")
	if err != nil {
		return err
	}
	k.Compute("T_cast", out, "ax", func(v []ir.PrimExpr) ir.PrimExpr { return castTo(out.DType, Load(a, v)) })
	return nil
}
