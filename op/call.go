package op

import (
	"slices"
	"strconv"

	"github.com/phasec/phasec/tensor"

	"github.com/phasec/phasec/ir"
)

// The call family (call_tir, call_dps_packed, packed calls), closures and the
// small utility ops. Memory ops are in memory.go and vm.go; tensor
// ops in unary.go, binary.go, tensor.go, manip.go, reduce.go and nn.go.
//
// Every op's Infer, Normalize and Validate hooks tolerate arguments that
// the normalizer has not reached yet (literal leaves without struct info)
// and report problems as errors prefixed with the op's TVMScript name.

var (
	// CallTIR is R.call_tir(gvar, args, out_sinfo=..., tir_vars=None).
	CallTIR = Define(Def{Op: newCallTIROp("relax.call_tir",
		"Calls a PrimFunc in destination-passing style; the compiler allocates the outputs.", false)})
	// CallTIRInplace is R.call_tir_inplace(gvar, args, inplace_indices, out_sinfo=..., tir_vars=None).
	CallTIRInplace = Define(Def{Op: newCallTIROp("relax.call_tir_inplace",
		"Calls a PrimFunc that writes some outputs into its inputs (inplace_indices, -1 for a fresh output).", true)})
	// CallDPSPacked is R.call_dps_packed(func, args, out_sinfo=...).
	CallDPSPacked = Define(Def{Op: newCallDPSPackedOp()})
	// CallPacked is R.call_packed(func, *args, sinfo_args=...): an impure packed call.
	CallPacked = Define(Def{Op: newPackedOp("relax.call_packed",
		"Calls a packed function by name; impure, returns its sinfo_args.", false)})
	// CallPurePacked is R.call_pure_packed(func, *args, sinfo_args=...).
	CallPurePacked = Define(Def{Op: newPackedOp("relax.call_pure_packed",
		"Calls a packed function declared pure, so it may appear in dataflow blocks.", true)})
	// CallInplacePacked is R.call_inplace_packed(func, *args,
	// inplace_indices=..., sinfo_args=...): a packed call declared pure
	// that writes its results into the arguments inplace_indices name.
	CallInplacePacked = Define(Def{Op: newInplacePackedOp()})
	// CallBuiltinWithCtx is R.call_builtin_with_ctx(func, args, sinfo_args=...).
	CallBuiltinWithCtx = Define(Def{Op: newBuiltinWithCtxOp()})
	// MakeClosure is R.make_closure(func, args): func with captured args bound.
	MakeClosure = Define(Def{Op: newMakeClosureOp()})
	// InvokeClosure is R.invoke_closure(closure, args, sinfo_args=...).
	InvokeClosure = Define(Def{Op: newInvokeClosureOp("relax.invoke_closure",
		"Calls a closure; impure.", false)})
	// InvokePureClosure is R.invoke_pure_closure(closure, args, sinfo_args=...).
	InvokePureClosure = Define(Def{Op: newInvokeClosureOp("relax.invoke_pure_closure",
		"Calls a closure declared pure.", true)})
	// NullValue is R.null_value(): the null object.
	NullValue = Define(Def{Op: newNullValueOp(), Eval: evalNullValue})
	// ShapeOf is R.shape_of(expr): the shape of a tensor as a shape value.
	ShapeOf = Define(Def{Op: newShapeOfOp(), Eval: evalShapeOf})
	// TensorToShape is R.tensor_to_shape(expr): a 1-D int tensor as a shape.
	TensorToShape = Define(Def{Op: newTensorToShapeOp(), Eval: evalTensorToShape})
	// ShapeToTensor is R.shape_to_tensor(expr): a shape as a 1-D int64 tensor.
	ShapeToTensor = Define(Def{Op: newShapeToTensorOp(), Eval: evalShapeToTensor})
	// Print is R.print(*values, format=""): prints values at run time.
	Print = Define(Def{Op: newPrintOp()})
	// Assert is R.assert_op(condition, format_args=None, format=""): a run-time check.
	Assert = Define(Def{Op: newAssertOp()})
)

// --- call_tir / call_tir_inplace -------------------------------------------

func newCallTIROp(name, doc string, inplace bool) *ir.Op {
	op := &ir.Op{Name: name, Doc: doc, SInfoArgs: ir.OutSInfo, Pure: true, Category: ir.CatCall, Pattern: ir.PatternOpaque}
	op.Params = []ir.Param{
		{Name: "gvar", Kind: ir.ArgExpr},
		{Name: "args", Kind: ir.ArgTuple},
	}
	if inplace {
		op.Params = append(op.Params, ir.Param{Name: "inplace_indices", Kind: ir.AttrInts})
	}
	op.Params = append(op.Params, ir.Param{Name: "tir_vars", Kind: ir.ArgShape, Optional: true})
	op.Infer = func(_ *ir.InferCtx, call *ir.Call) (ir.StructInfo, error) { return inferCallTIR(op, call) }
	op.Normalize = func(_ *ir.InferCtx, call *ir.Call) (ir.Expr, error) { return normalizeDPSCall(op, call) }
	op.Validate = func(ctx *ir.InferCtx, call *ir.Call) error { return validateCallTIR(op, ctx, call, inplace) }
	return op
}

// dpsOutputs returns the output tensors of a call_tir-style call: its
// out_sinfo list, or the fields of a single tuple out_sinfo (the form TVM's
// C++ constructor builds).
func dpsOutputs(op *ir.Op, call *ir.Call) ([]ir.StructInfo, error) {
	outs := call.SInfoArgs
	if len(outs) == 1 {
		if t, ok := outs[0].(*ir.TupleInfo); ok {
			outs = t.Fields
		}
	}
	if len(outs) == 0 {
		return nil, opErrorf(op, "missing out_sinfo")
	}
	for i, o := range outs {
		if _, ok := o.(*ir.TensorInfo); !ok {
			return nil, opErrorf(op, "out_sinfo %d must be a tensor, got %s", i, sinfoKind(o))
		}
	}
	return outs, nil
}

func inferCallTIR(op *ir.Op, call *ir.Call) (ir.StructInfo, error) {
	if err := opCheckArity(op, call); err != nil {
		return nil, err
	}
	outs, err := dpsOutputs(op, call)
	if err != nil {
		return nil, err
	}
	if len(call.Args) > 2 {
		if _, ok := argStructInfo(call.Args[2]).(*ir.ShapeInfo); !ok {
			return nil, opErrorf(op, "tir_vars must be a shape, got %s", sinfoKind(argStructInfo(call.Args[2])))
		}
	}
	if len(outs) == 1 {
		return outs[0], nil
	}
	return ir.NewTupleInfo(append([]ir.StructInfo(nil), outs...)...), nil
}

// normalizeDPSCall puts a call_tir-style call in canonical form: the
// argument list is an in-line tuple (a bare tensor is wrapped, a tuple-valued
// variable is unpacked into its fields), out_sinfo is a flat list of
// tensors, and attributes have their canonical types.
func normalizeDPSCall(op *ir.Op, call *ir.Call) (ir.Expr, error) {
	c, err := normalizeSchema(op, call)
	if err != nil {
		return nil, err
	}
	var newArgs []ir.Expr
	if len(c.Args) > 1 {
		if tup, ok := wrapArgTuple(c.Args[1]); ok {
			newArgs = append([]ir.Expr(nil), c.Args...)
			newArgs[1] = tup
		}
	}
	var newOuts []ir.StructInfo
	if len(c.SInfoArgs) == 1 {
		if t, ok := c.SInfoArgs[0].(*ir.TupleInfo); ok {
			newOuts = append([]ir.StructInfo(nil), t.Fields...)
		}
	}
	if newArgs == nil && newOuts == nil {
		return c, nil
	}
	out := *c
	out.SetStructInfo(nil)
	if newArgs != nil {
		out.Args = newArgs
	}
	if newOuts != nil {
		out.SInfoArgs = newOuts
	}
	return &out, nil
}

// wrapArgTuple returns the in-line tuple form of an argument-list operand,
// and false when it already is an in-line tuple.
func wrapArgTuple(e ir.Expr) (*ir.Tuple, bool) {
	if _, ok := e.(*ir.Tuple); ok {
		return nil, false
	}
	if ti, ok := argStructInfo(e).(*ir.TupleInfo); ok {
		fields := make([]ir.Expr, len(ti.Fields))
		for i, f := range ti.Fields {
			g := &ir.TupleGetItem{Tuple: e, Index: i}
			g.SetStructInfo(f)
			fields[i] = g
		}
		return ir.NewTuple(fields...), true
	}
	return ir.NewTuple(e), true
}

// argListInfos returns the struct info of each element of an argument-list
// operand (an in-line tuple, a tuple-valued expression, or a bare value).
func argListInfos(e ir.Expr) []ir.StructInfo {
	if t, ok := e.(*ir.Tuple); ok {
		out := make([]ir.StructInfo, len(t.Fields))
		for i, f := range t.Fields {
			out[i] = argStructInfo(f)
		}
		return out
	}
	if ti, ok := argStructInfo(e).(*ir.TupleInfo); ok {
		return ti.Fields
	}
	return []ir.StructInfo{argStructInfo(e)}
}

// validateCallTIR checks a call_tir against its callee: the callee is a
// PrimFunc of the module, and its parameters match the arguments, the
// freshly allocated outputs and the tir_vars in number and, where known, in
// dtype, rank and constant dimensions. Without a module only the callee's
// form is checked.
func validateCallTIR(op *ir.Op, ctx *ir.InferCtx, call *ir.Call, inplace bool) error {
	if len(call.Args) < 2 {
		return opCheckArity(op, call)
	}
	gv, ok := call.Args[0].(*ir.GlobalVar)
	if !ok {
		return opErrorf(op, "callee must be a global PrimFunc (cls.name), got %s", exprKind(call.Args[0]))
	}
	outs, err := dpsOutputs(op, call)
	if err != nil {
		return err
	}
	// TVM's parser builds the call with MakeCallTIR or MakeCallTIRInplace
	// (src/relax/op/op.cc), which require every out_sinfo to have a shape.
	for i, o := range outs {
		if _, known := o.(*ir.TensorInfo).Dims(); !known {
			return opErrorf(op, "out_sinfo %d must be a tensor with a shape, got %s (TVM's MakeCallTIR requires one)", i, ir.FormatStructInfo(o, nil))
		}
	}
	inputs := argListInfos(call.Args[1])
	freshOuts := outs
	if inplace {
		if freshOuts, err = validateInplace(op, call, inputs, outs); err != nil {
			return err
		}
	}
	if ctx == nil || ctx.Module == nil {
		return nil
	}
	f, found := ctx.Module.Lookup(gv.Name)
	if !found {
		return opErrorf(op, "no function named %s in the module", gv.Name)
	}
	pf, ok := f.(*ir.PrimFunc)
	if !ok {
		return opErrorf(op, "callee %s is a Relax function, not a PrimFunc", gv.Name)
	}
	nTIRVars := 0
	if len(call.Args) > 2 {
		s, _ := argStructInfo(call.Args[2]).(*ir.ShapeInfo)
		if s == nil || s.NDim < 0 {
			return nil // cannot count the scalar parameters
		}
		nTIRVars = s.NDim
	}
	want := len(inputs) + len(freshOuts) + nTIRVars
	if len(pf.Params) != want {
		return opErrorf(op, "PrimFunc %s takes %d parameters, but the call passes %d arguments, %d outputs and %d tir_vars",
			gv.Name, len(pf.Params), len(inputs), len(freshOuts), nTIRVars)
	}
	for i, s := range inputs {
		if err := checkPrimFuncParam(op, gv.Name, pf, i, s, "argument"); err != nil {
			return err
		}
	}
	for j, s := range freshOuts {
		if err := checkPrimFuncParam(op, gv.Name, pf, len(inputs)+j, s, "output"); err != nil {
			return err
		}
	}
	return checkDerivedOutputs(op, ctx, call, pf, inputs, outs, nTIRVars, inplace)
}

// checkDerivedOutputs is TVM's ValidateCallTIR (src/relax/op/op.cc, with
// InferCallTIROutputStructInfoFromArguments): the PrimFunc's signature,
// with its symbolic shape variables bound by the arguments (and tir_vars),
// implies the outputs' struct info, and out_sinfo must be at least as
// specific. This catches what the per-parameter checks cannot: a dimension
// the arguments bind (n = 4) that out_sinfo contradicts (7), an argument
// less specific than its parameter, an out_sinfo less specific than the
// signature implies. A symbolic variable only the outputs mention stays
// free, so out_sinfo may pick any value for it.
func checkDerivedOutputs(op *ir.Op, ctx *ir.InferCtx, call *ir.Call, pf *ir.PrimFunc, inputs, outs []ir.StructInfo, nTIRVars int, inplace bool) error {
	params := int64Dims(ir.PrimFuncInfo(pf).Params)
	nIn := len(inputs)
	dummyParams := append(slices.Clone(params[:nIn]), params[len(params)-nTIRVars:]...)
	dummyRet := slices.Clone(params[nIn : len(params)-nTIRVars])
	if inplace { // an output computed in place has its input's parameter type
		idx, _, _ := opAttrInts(op, call, "inplace_indices") // validated by validateInplace
		for i, k := range idx {
			if k >= 0 && i <= len(dummyRet) {
				dummyRet = slices.Insert(dummyRet, i, params[k])
			}
		}
	}
	args := make([]ir.Expr, 0, len(dummyParams))
	for _, s := range inputs {
		if s == nil {
			s = ir.Object()
		}
		args = append(args, ir.NewVar("arg", s))
	}
	if nTIRVars > 0 {
		shape, _ := argStructInfo(call.Args[2]).(*ir.ShapeInfo)
		for i := range nTIRVars {
			var s ir.StructInfo = ir.NewPrimInfo(ir.Int64)
			if shape != nil && i < len(shape.Values) && shape.Values[i] != nil {
				s = ir.PrimInfoOf(shape.Values[i])
			}
			args = append(args, ir.NewVar("tir_var", s))
		}
	}
	var ret ir.StructInfo = ir.NewTupleInfo(dummyRet...)
	if len(dummyRet) == 1 {
		ret = dummyRet[0]
	}
	implied, err := ir.DeriveCallRetStructInfo(ir.NewFuncInfo(dummyParams, ret, false), ir.NewCall(ir.NewVar("kernel", nil), args...), ctx)
	if err != nil {
		return opErrorf(op, "PrimFunc %s: %v", call.Args[0].(*ir.GlobalVar).Name, err)
	}
	var explicit ir.StructInfo = ir.NewTupleInfo(outs...)
	if len(call.SInfoArgs) == 1 {
		explicit = call.SInfoArgs[0]
	}
	if !ir.IsBaseOf(implied, explicit) {
		return opErrorf(op, "out_sinfo %s is not compatible with PrimFunc %s, whose signature implies %s",
			ir.FormatStructInfo(explicit, nil), call.Args[0].(*ir.GlobalVar).Name, ir.FormatStructInfo(implied, nil))
	}
	return nil
}

// int64Dims returns the parameters with every symbolic dimension of
// another integer type cast to int64, as TVM's struct info of a PrimFunc
// writes them (cast(DataType::Int(64), dim) in InferStructInfo,
// src/tir/ir/function.cc): an int32 shape variable becomes a compound
// dimension, which binds nothing, so the outputs it shapes are erased to
// their rank rather than bound.
func int64Dims(params []ir.StructInfo) []ir.StructInfo {
	out := params
	for i, p := range params {
		t, ok := p.(*ir.TensorInfo)
		if !ok {
			continue
		}
		dims, known := t.Dims()
		if !known || !slices.ContainsFunc(dims, func(d ir.PrimExpr) bool {
			_, isConst := d.(*ir.IntImm)
			return !isConst && d.DType() != ir.Int64
		}) {
			continue
		}
		cast := make([]ir.PrimExpr, len(dims))
		for j, d := range dims {
			if _, isConst := d.(*ir.IntImm); isConst || d.DType() == ir.Int64 {
				cast[j] = d
			} else {
				cast[j] = &ir.Cast{Type: ir.Int64, Value: d}
			}
		}
		if &out[0] == &params[0] {
			out = slices.Clone(params)
		}
		out[i] = ir.TensorInfoOf(t.DType, cast...)
	}
	return out
}

// validateInplace checks inplace_indices and returns the outputs that get a
// fresh buffer (index -1).
func validateInplace(op *ir.Op, call *ir.Call, inputs, outs []ir.StructInfo) ([]ir.StructInfo, error) {
	idx, present, err := opAttrInts(op, call, "inplace_indices")
	if err != nil {
		return nil, err
	}
	if !present || len(idx) != len(outs) {
		return nil, opErrorf(op, "inplace_indices must have one entry per output (%d), got %d", len(outs), len(idx))
	}
	var fresh []ir.StructInfo
	seen := map[int64]bool{}
	inPlace := 0
	for j, k := range idx {
		if k == -1 {
			fresh = append(fresh, outs[j])
			continue
		}
		if k < 0 || k >= int64(len(inputs)) {
			return nil, opErrorf(op, "inplace index %d is out of range for %d arguments", k, len(inputs))
		}
		if seen[k] {
			return nil, opErrorf(op, "argument %d is used in place twice", k)
		}
		seen[k] = true
		inPlace++
		in, ok := inputs[k].(*ir.TensorInfo)
		if !ok {
			return nil, opErrorf(op, "argument %d is used in place but is %s, not a tensor", k, sinfoKind(inputs[k]))
		}
		out := outs[j].(*ir.TensorInfo)
		if err := checkTensorMatch(op, in, out, "argument "+strconv.Itoa(int(k)), "output "+strconv.Itoa(j)); err != nil {
			return nil, err
		}
		if err := checkInplaceIdentical(op, in, out, k, j); err != nil {
			return nil, err
		}
	}
	if inPlace == 0 {
		return nil, opErrorf(op, "inplace_indices has no in-place output (all -1); use R.call_tir")
	}
	return fresh, nil
}

// checkInplaceIdentical is the rest of TVM's NormalizeCallTIRInPlace
// (src/relax/op/op.cc): an output computed in place has a known dtype and
// shape, and its input has the same dtype and a shape provably equal to
// it (not merely one that might be).
func checkInplaceIdentical(op *ir.Op, in, out *ir.TensorInfo, k int64, j int) error {
	outDims, known := out.Dims()
	if !known || out.DType.IsVoid() {
		return opErrorf(op, "output %d is computed in place, so its out_sinfo must have a shape and a dtype, got %s", j, ir.FormatStructInfo(out, nil))
	}
	inDims, known := in.Dims()
	same := known && in.DType == out.DType && len(inDims) == len(outDims)
	for d := 0; same && d < len(inDims); d++ {
		same = ir.CanProveEqual(inDims[d], outDims[d])
	}
	if !same {
		return opErrorf(op, "output %d %s is computed in place of argument %d %s, which must have the same shape and dtype", j, ir.FormatStructInfo(out, nil), k, ir.FormatStructInfo(in, nil))
	}
	return nil
}

// checkTensorMatch rejects statically known differences between two tensors
// that must describe the same buffer.
func checkTensorMatch(op *ir.Op, a, b *ir.TensorInfo, what, against string) error {
	if !a.DType.IsVoid() && !b.DType.IsVoid() && a.DType != b.DType {
		return opErrorf(op, "%s has dtype %s but %s has %s", what, a.DType, against, b.DType)
	}
	if a.NDim >= 0 && b.NDim >= 0 && a.NDim != b.NDim {
		return opErrorf(op, "%s has rank %d but %s has %d", what, a.NDim, against, b.NDim)
	}
	da, ok1 := a.Dims()
	db, ok2 := b.Dims()
	if ok1 && ok2 && len(da) == len(db) {
		for i := range da {
			if dimsProvablyDiffer(da[i], db[i]) {
				return opErrorf(op, "%s has dimension %d = %s but %s has %s", what, i, fmtDim(da[i]), against, fmtDim(db[i]))
			}
		}
	}
	return nil
}

// checkPrimFuncParam checks the value passed for PrimFunc parameter i.
func checkPrimFuncParam(op *ir.Op, callee string, pf *ir.PrimFunc, i int, s ir.StructInfo, what string) error {
	p := pf.Params[i]
	buf := pf.ParamBuffer(i)
	switch {
	case buf != nil:
		switch t := s.(type) {
		case *ir.TensorInfo:
			b := ir.TensorInfoOf(buf.DType, buf.Shape...)
			return checkTensorMatch(op, t, b, what+" "+strconv.Itoa(i), "buffer "+buf.Name+" of "+callee)
		case *ir.ObjectInfo, nil:
			return nil
		default:
			return opErrorf(op, "%s %d is %s but parameter %s of %s is a buffer", what, i, sinfoKind(s), buf.Name, callee)
		}
	case p.Type.IsHandle():
		return nil
	default:
		switch t := s.(type) {
		case *ir.PrimInfo:
			if !t.DType.IsVoid() && t.DType != p.Type {
				return opErrorf(op, "%s %d has dtype %s but parameter %s of %s is %s", what, i, t.DType, p.Name, callee, p.Type)
			}
			return nil
		case *ir.ObjectInfo, nil:
			return nil
		default:
			return opErrorf(op, "%s %d is %s but parameter %s of %s is a scalar %s", what, i, sinfoKind(s), p.Name, callee, p.Type)
		}
	}
}

// exprKind names an expression's node type for messages.
func exprKind(e ir.Expr) string {
	switch e := e.(type) {
	case *ir.Var:
		return "variable " + e.Name
	case *ir.GlobalVar:
		return "global " + e.Name
	case *ir.ExternFunc:
		return "extern function " + e.Symbol
	case *ir.StringImm:
		return "a string"
	case *ir.Op:
		return "op " + ir.OpPath(e)
	case nil:
		return "nothing"
	case *ir.Call:
		return "a call"
	case *ir.Tuple:
		return "a tuple"
	case *ir.Constant:
		return "a constant"
	case *ir.ShapeExpr:
		return "a shape"
	case *ir.PrimValue:
		return "a prim value"
	case *ir.Function:
		return "a function"
	}
	return "an expression"
}

// --- call_dps_packed --------------------------------------------------------

func newCallDPSPackedOp() *ir.Op {
	op := &ir.Op{
		Name:      "relax.call_dps_packed",
		Doc:       "Calls a packed function in destination-passing style; the compiler allocates the outputs.",
		SInfoArgs: ir.OutSInfo, Pure: true, Category: ir.CatCall, Pattern: ir.PatternOpaque,
		Params: []ir.Param{
			{Name: "func", Kind: ir.ArgExpr},
			{Name: "args", Kind: ir.ArgTuple},
		},
		ExternCallee: "func",
	}
	op.Infer = func(_ *ir.InferCtx, call *ir.Call) (ir.StructInfo, error) {
		if err := opCheckArity(op, call); err != nil {
			return nil, err
		}
		if err := checkExternCallee(op, call.Args[0]); err != nil {
			return nil, err
		}
		outs, err := dpsOutputs(op, call)
		if err != nil {
			return nil, err
		}
		if len(outs) == 1 {
			return outs[0], nil
		}
		return ir.NewTupleInfo(append([]ir.StructInfo(nil), outs...)...), nil
	}
	op.Normalize = func(_ *ir.InferCtx, call *ir.Call) (ir.Expr, error) { return normalizeDPSCall(op, call) }
	return op
}

// checkExternCallee accepts the callee forms of packed calls: an extern
// function, a variable holding a packed function or closure, or a global
// naming an extern function of the module (cls.f for f = R.ExternFunc(...)).
func checkExternCallee(op *ir.Op, e ir.Expr) error {
	switch e.(type) {
	case *ir.ExternFunc, *ir.Var:
		return nil
	case *ir.GlobalVar:
		if f, ok := e.StructInfo().(*ir.FuncInfo); ok && f.Opaque {
			return nil
		}
	}
	return opErrorf(op, "callee must be an extern function name, got %s", exprKind(e))
}

// --- packed calls -----------------------------------------------------------

func newPackedOp(name, doc string, pure bool) *ir.Op {
	op := &ir.Op{
		Name: name, Doc: doc, SInfoArgs: ir.SInfoArgsKw, Pure: pure, Category: ir.CatPacked, Pattern: ir.PatternOpaque,
		// The VM runs an impure packed call as an extern call; the pure
		// form is rewritten to it by RemovePurityChecking.
		LegalAtBuild: !pure,
		Params: []ir.Param{
			{Name: "func", Kind: ir.ArgExpr},
			{Name: "args", Kind: ir.ArgExpr, Variadic: true},
		},
		ExternCallee: "func",
	}
	op.Infer = func(_ *ir.InferCtx, call *ir.Call) (ir.StructInfo, error) {
		if err := opCheckArity(op, call); err != nil {
			return nil, err
		}
		if err := checkExternCallee(op, call.Args[0]); err != nil {
			return nil, err
		}
		return infoBySInfoArgs(call, ir.Object()), nil
	}
	if !pure {
		// R.call_packed("f", args...) is sugar: its canonical form is a
		// direct call of the ExternFunc, as in TVM, so there is one
		// spelling of an impure packed call (RemovePurityChecking produces
		// the same form from call_pure_packed).
		op.Normalize = func(_ *ir.InferCtx, call *ir.Call) (ir.Expr, error) {
			callee, ok := call.Args[0].(*ir.ExternFunc)
			if !ok {
				return call, nil
			}
			direct := &ir.Call{Op: callee, Args: call.Args[1:], SInfoArgs: call.SInfoArgs}
			direct.SetSpan(call.Span())
			return direct, nil
		}
	}
	return op
}

func newInplacePackedOp() *ir.Op {
	op := newPackedOp("relax.call_inplace_packed",
		"Calls a packed function declared pure that writes its results into the arguments inplace_indices names.", true)
	op.Params = append(op.Params, ir.Param{Name: "inplace_indices", Kind: ir.AttrInts})
	packedInfer := op.Infer
	op.Infer = func(ctx *ir.InferCtx, call *ir.Call) (ir.StructInfo, error) {
		ret, err := packedInfer(ctx, call)
		if err != nil {
			return nil, err
		}
		idx, ok := call.Attrs["inplace_indices"].([]any)
		if !ok || len(idx) == 0 {
			return nil, opErrorf(op, "inplace_indices must be a non-empty list of argument positions")
		}
		nargs := int64(len(call.Args) - 1)
		for _, v := range idx {
			if i, ok := v.(int64); !ok || i < 0 || i >= nargs {
				return nil, opErrorf(op, "inplace index %v is not the position of one of the %d arguments", v, nargs)
			}
		}
		return ret, nil
	}
	return op
}

func newBuiltinWithCtxOp() *ir.Op {
	op := &ir.Op{
		Name:      "relax.call_builtin_with_ctx",
		Doc:       "Calls a VM builtin, passing the VM context first; impure.",
		SInfoArgs: ir.SInfoArgsKw, Category: ir.CatPacked, Pattern: ir.PatternOpaque, LegalAtBuild: true,
		Params: []ir.Param{
			{Name: "func", Kind: ir.ArgExpr},
			{Name: "args", Kind: ir.ArgTuple},
		},
		ExternCallee: "func",
	}
	op.Infer = func(_ *ir.InferCtx, call *ir.Call) (ir.StructInfo, error) {
		if err := opCheckArity(op, call); err != nil {
			return nil, err
		}
		if err := checkExternCallee(op, call.Args[0]); err != nil {
			return nil, err
		}
		// Without sinfo_args a builtin returns void.
		return infoBySInfoArgs(call, ir.VoidInfo()), nil
	}
	op.Normalize = func(_ *ir.InferCtx, call *ir.Call) (ir.Expr, error) { return normalizeArgTuple(op, call, 1) }
	return op
}

// normalizeArgTuple wraps argument pos into an in-line tuple when needed.
func normalizeArgTuple(op *ir.Op, call *ir.Call, pos int) (ir.Expr, error) {
	c, err := normalizeSchema(op, call)
	if err != nil {
		return nil, err
	}
	if pos >= len(c.Args) {
		return c, nil
	}
	tup, changed := wrapArgTuple(c.Args[pos])
	if !changed {
		return c, nil
	}
	out := *c
	out.SetStructInfo(nil)
	out.Args = append([]ir.Expr(nil), c.Args...)
	out.Args[pos] = tup
	return &out, nil
}

// --- closures ---------------------------------------------------------------

func newMakeClosureOp() *ir.Op {
	op := &ir.Op{
		Name:     "relax.make_closure",
		Doc:      "Builds a closure from a global function and the values it captures (its trailing parameters, as LambdaLift appends them and the VM binds them last).",
		Pure:     true,
		Category: ir.CatClosure, Pattern: ir.PatternOpaque,
		Params: []ir.Param{
			{Name: "func", Kind: ir.ArgExpr},
			{Name: "args", Kind: ir.ArgTuple},
		},
	}
	op.Infer = func(ctx *ir.InferCtx, call *ir.Call) (ir.StructInfo, error) {
		if err := opCheckArity(op, call); err != nil {
			return nil, err
		}
		captured := argListInfos(call.Args[1])
		fi, _ := argStructInfo(call.Args[0]).(*ir.FuncInfo)
		if gv, ok := call.Args[0].(*ir.GlobalVar); ok && fi == nil {
			if s, found := ctx.GlobalInfo(gv.Name); found {
				fi, _ = s.(*ir.FuncInfo)
			}
		}
		switch {
		case fi == nil:
			return ir.OpaqueFuncInfo(ir.Object(), false), nil
		case fi.Opaque:
			return ir.OpaqueFuncInfo(fi.Ret, fi.Pure), nil
		case len(fi.Params) < len(captured):
			return nil, opErrorf(op, "captures %d values but the function takes %d parameters", len(captured), len(fi.Params))
		}
		rest := append([]ir.StructInfo(nil), fi.Params[:len(fi.Params)-len(captured)]...)
		return ir.NewFuncInfo(rest, fi.Ret, fi.Pure), nil
	}
	op.Normalize = func(_ *ir.InferCtx, call *ir.Call) (ir.Expr, error) { return normalizeArgTuple(op, call, 1) }
	return op
}

func newInvokeClosureOp(name, doc string, pure bool) *ir.Op {
	op := &ir.Op{
		Name: name, Doc: doc, SInfoArgs: ir.SInfoArgsKw, Pure: pure, Category: ir.CatClosure, Pattern: ir.PatternOpaque,
		Params: []ir.Param{
			{Name: "closure", Kind: ir.ArgExpr},
			{Name: "args", Kind: ir.ArgTuple},
		},
	}
	op.Infer = func(_ *ir.InferCtx, call *ir.Call) (ir.StructInfo, error) {
		if err := opCheckArity(op, call); err != nil {
			return nil, err
		}
		switch s := argStructInfo(call.Args[0]).(type) {
		case *ir.FuncInfo, *ir.ObjectInfo, nil:
		default:
			return nil, opErrorf(op, "closure must be callable, got %s", sinfoKind(s))
		}
		return infoBySInfoArgs(call, ir.Object()), nil
	}
	op.Normalize = func(_ *ir.InferCtx, call *ir.Call) (ir.Expr, error) { return normalizeArgTuple(op, call, 1) }
	return op
}

// --- utilities ----------------------------------------------------------------

func newNullValueOp() *ir.Op {
	op := &ir.Op{Name: "relax.null_value", Doc: "The null object.", Pure: true, Category: ir.CatMisc, Pattern: ir.PatternOpaque,
		LegalAtBuild: true}
	op.Infer = func(_ *ir.InferCtx, call *ir.Call) (ir.StructInfo, error) {
		if err := opCheckArity(op, call); err != nil {
			return nil, err
		}
		return ir.Object(), nil
	}
	return op
}

func newShapeOfOp() *ir.Op {
	op := &ir.Op{
		Name: "relax.shape_of", Doc: "The shape of a tensor as a shape value.", Pure: true, Category: ir.CatShape, Pattern: ir.PatternOpaque,
		Params: []ir.Param{{Name: "expr", Kind: ir.ArgExpr}},
	}
	op.Infer = func(_ *ir.InferCtx, call *ir.Call) (ir.StructInfo, error) {
		t, err := firstTensorArg(op, call)
		if err != nil {
			return nil, err
		}
		if dims, ok := t.Dims(); ok {
			return ir.ShapeInfoOf(dims...), nil
		}
		return ir.ShapeInfoNDim(t.NDim), nil
	}
	return op
}

func newTensorToShapeOp() *ir.Op {
	op := &ir.Op{
		Name: "relax.tensor_to_shape", Doc: "Converts a 1-D integer tensor to a shape value.", Pure: true, Category: ir.CatShape, Pattern: ir.PatternOpaque,
		Params: []ir.Param{{Name: "expr", Kind: ir.ArgExpr}},
	}
	op.Infer = func(_ *ir.InferCtx, call *ir.Call) (ir.StructInfo, error) {
		t, err := firstTensorArg(op, call)
		if err != nil {
			return nil, err
		}
		if t.NDim >= 0 && t.NDim != 1 {
			return nil, opErrorf(op, "expects a 1-D tensor, got rank %d", t.NDim)
		}
		if !t.DType.IsVoid() && !t.DType.IsInteger() {
			return nil, opErrorf(op, "expects an integer tensor, got %s", t.DType)
		}
		if dims, ok := t.Dims(); ok {
			if n, ok := ir.IntValue(dims[0]); ok {
				return ir.ShapeInfoNDim(int(n)), nil
			}
		}
		return ir.ShapeInfoNDim(-1), nil
	}
	return op
}

func newShapeToTensorOp() *ir.Op {
	op := &ir.Op{
		Name: "relax.shape_to_tensor", Doc: "Converts a shape value to a 1-D int64 tensor.", Pure: true, Category: ir.CatShape, Pattern: ir.PatternOpaque,
		Params: []ir.Param{{Name: "expr", Kind: ir.ArgExpr}},
	}
	op.Infer = func(_ *ir.InferCtx, call *ir.Call) (ir.StructInfo, error) {
		if err := opCheckArity(op, call); err != nil {
			return nil, err
		}
		s, ok := argStructInfo(call.Args[0]).(*ir.ShapeInfo)
		if !ok {
			return nil, opErrorf(op, "expr must be a shape, got %s", sinfoKind(argStructInfo(call.Args[0])))
		}
		if s.NDim >= 0 {
			return ir.TensorInfoOf(ir.Int64, ir.I64(int64(s.NDim))), nil
		}
		return ir.TensorInfoNDim(ir.Int64, 1), nil
	}
	return op
}

func newPrintOp() *ir.Op {
	op := &ir.Op{
		Name: "relax.print", Doc: "Prints its values at run time; impure.", Category: ir.CatMisc, Pattern: ir.PatternOpaque,
		Params: []ir.Param{
			{Name: "values", Kind: ir.ArgExpr, Variadic: true},
			{Name: "format", Kind: ir.AttrStr, Default: ""},
		},
	}
	op.Infer = func(_ *ir.InferCtx, call *ir.Call) (ir.StructInfo, error) { return ir.VoidInfo(), nil }
	op.Normalize = schemaNormalize(op)
	return op
}

func newAssertOp() *ir.Op {
	op := &ir.Op{
		Name: "relax.assert_op", Doc: "Fails at run time unless condition holds; impure.", Category: ir.CatMisc, Pattern: ir.PatternOpaque,
		Params: []ir.Param{
			{Name: "condition", Kind: ir.ArgExpr},
			{Name: "format_args", Kind: ir.ArgTuple, Default: ir.NewTuple()},
			{Name: "format", Kind: ir.AttrStr, Default: ""},
		},
	}
	op.Infer = func(_ *ir.InferCtx, call *ir.Call) (ir.StructInfo, error) {
		if err := opCheckArity(op, call); err != nil {
			return nil, err
		}
		switch s := argStructInfo(call.Args[0]).(type) {
		case *ir.PrimInfo:
			if !s.DType.IsVoid() && !s.DType.IsBool() {
				return nil, opErrorf(op, "condition must be bool, got %s", s.DType)
			}
		case *ir.TensorInfo:
			if (!s.DType.IsVoid() && !s.DType.IsBool()) || s.NDim > 0 {
				return nil, opErrorf(op, "condition must be a bool scalar, got a %s tensor of rank %d", fmtDType(s.DType), s.NDim)
			}
		default:
			return nil, opErrorf(op, "condition must be a bool scalar, got %s", sinfoKind(s))
		}
		return ir.VoidInfo(), nil
	}
	op.Normalize = func(_ *ir.InferCtx, call *ir.Call) (ir.Expr, error) { return normalizeArgTuple(op, call, 1) }
	return op
}

// --- evaluation -------------------------------------------------------------

// The call family, closures, print and assert need the module and the
// interpreter's state: package eval evaluates them, and their records have
// no Eval. The shape utilities and null_value are plain functions of their
// arguments.

// evalNullValue is the null object (a nil Value).
func evalNullValue(*ir.Call, []Value) (Value, error) { return nil, nil }

// evalShapeOf is the tensor's shape.
func evalShapeOf(call *ir.Call, args []Value) (Value, error) {
	op := opOf(call)
	t, ok := args[0].(*tensor.Tensor)
	if !ok {
		return nil, opErrorf(op, "expr must be a tensor, got %s", KindOf(args[0]))
	}
	return Shape(append([]int64{}, t.Shape...)), nil
}

// evalTensorToShape reads a 1-D integer tensor as a shape.
func evalTensorToShape(call *ir.Call, args []Value) (Value, error) {
	op := opOf(call)
	x, err := argArray(op, args, 0)
	if err != nil {
		return nil, err
	}
	if len(x.shape) != 1 || x.f != nil {
		return nil, opErrorf(op, "expects a 1-D integer tensor, got %s of rank %d", x.dt, len(x.shape))
	}
	return Shape(append([]int64{}, x.i...)), nil
}

// evalShapeToTensor writes a shape as a 1-D int64 tensor.
func evalShapeToTensor(call *ir.Call, args []Value) (Value, error) {
	op := opOf(call)
	s, err := argShape(op, args, 0)
	if err != nil {
		return nil, err
	}
	a := newArray(ir.Int64, []int64{int64(len(s))})
	copy(a.i, s)
	return a.tensor()
}
