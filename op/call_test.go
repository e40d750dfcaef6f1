package op

import (
	"github.com/phasec/phasec/ir"

	"testing"

	"github.com/stretchr/testify/require"
)

// testModule has PrimFunc "add" (A, B -> C, all (2, 3) float32), PrimFunc
// "dyn" (A (n,) float32 -> B (n,) float32, scalar n), and Relax function
// "main" (x: (2, 3) float32, y: (4,) float32).
func testModule() *ir.Module {
	mod := ir.NewModule()
	bufs := func(names ...string) ([]*ir.PrimVar, map[*ir.PrimVar]*ir.Buffer) {
		params := make([]*ir.PrimVar, len(names))
		m := map[*ir.PrimVar]*ir.Buffer{}
		for i, n := range names {
			params[i] = ir.NewPrimVar(n, ir.Handle)
			m[params[i]] = ir.NewBuffer(n, []ir.PrimExpr{ir.I64(2), ir.I64(3)}, ir.Float32)
		}
		return params, m
	}
	params, bm := bufs("A", "B", "C")
	mod.Set("add", &ir.PrimFunc{Params: params, BufferMap: bm})
	n := ir.NewPrimVar("n", ir.Int64)
	a, b := ir.NewPrimVar("A", ir.Handle), ir.NewPrimVar("B", ir.Handle)
	mod.Set("dyn", &ir.PrimFunc{
		Params: []*ir.PrimVar{a, b, n},
		BufferMap: map[*ir.PrimVar]*ir.Buffer{
			a: ir.NewBuffer("A", []ir.PrimExpr{n}, ir.Float32),
			b: ir.NewBuffer("B", []ir.PrimExpr{n}, ir.Float32),
		},
	})
	mod.Set("main", &ir.Function{
		Params: []*ir.Var{tensorVar("x", ir.Float32, 2, 3), tensorVar("y", ir.Float32, 4)},
		Ret:    tinfo(ir.Float32, 2, 3), Pure: true,
	})
	return mod
}

func callTIR(op *ir.Op, callee string, args ir.Expr, outs []ir.StructInfo, extra ...ir.Expr) *ir.Call {
	c := ir.NewCall(op, append([]ir.Expr{ir.NewGlobalVar(callee), args}, extra...)...)
	c.SInfoArgs = outs
	return c
}

func TestInferCallFamily(t *testing.T) {
	x := tensorVar("x", ir.Float32, 2, 3)
	out := tinfo(ir.Float32, 2, 3)
	clo := ir.NewVar("f", ir.NewFuncInfo([]ir.StructInfo{tinfo(ir.Float32, 4)}, tinfo(ir.Float32, 4), true))
	withSInfo := func(c *ir.Call, s ...ir.StructInfo) *ir.Call { c.SInfoArgs = s; return c }
	ctx := &ir.InferCtx{Module: testModule()}
	runInferCases(t, ctx, []inferCase{
		{"call_tir one output", callTIR(CallTIR, "add", ir.NewTuple(x, x), []ir.StructInfo{out}), out, ""},
		{"call_tir two outputs", callTIR(CallTIR, "add", ir.NewTuple(x), []ir.StructInfo{out, tinfo(ir.Int32, 4)}),
			ir.NewTupleInfo(out, tinfo(ir.Int32, 4)), ""},
		{"call_tir tuple out_sinfo", callTIR(CallTIR, "add", ir.NewTuple(x), []ir.StructInfo{ir.NewTupleInfo(out, out)}),
			ir.NewTupleInfo(out, out), ""},
		{"call_tir missing out_sinfo", callTIR(CallTIR, "add", ir.NewTuple(x), nil), nil, "R.call_tir: missing out_sinfo"},
		{"call_tir non-tensor out", callTIR(CallTIR, "add", ir.NewTuple(x), []ir.StructInfo{ir.Object()}), nil, "out_sinfo 0 must be a tensor"},
		{"call_tir bad tir_vars", callTIR(CallTIR, "dyn", ir.NewTuple(x), []ir.StructInfo{out}, x), nil, "tir_vars must be a shape"},
		{"call_dps_packed", withSInfo(ir.NewCall(CallDPSPacked, ir.NewExternFunc("f"), ir.NewTuple(x)), out), out, ""},
		{"call_dps_packed bad callee", withSInfo(ir.NewCall(CallDPSPacked, ir.NewStringImm("f"), ir.NewTuple(x)), out), nil, "callee must be an extern function"},
		{"call_packed no sinfo", ir.NewCall(CallPacked, ir.NewExternFunc("f"), x, primLit(2)), ir.Object(), ""},
		{"call_packed one sinfo", withSInfo(ir.NewCall(CallPacked, ir.NewExternFunc("f"), x), out), out, ""},
		{"call_pure_packed two sinfo", withSInfo(ir.NewCall(CallPurePacked, ir.NewExternFunc("f")), out, ir.ShapeInfoNDim(2)),
			ir.NewTupleInfo(out, ir.ShapeInfoNDim(2)), ""},
		{"call_packed no callee", ir.NewCall(CallPacked), nil, "R.call_packed: expects at least 1 arguments"},
		{"builtin_with_ctx void", ir.NewCall(CallBuiltinWithCtx, ir.NewExternFunc("vm.builtin.f"), ir.NewTuple(x)), ir.VoidInfo(), ""},
		{"builtin_with_ctx sinfo", withSInfo(ir.NewCall(CallBuiltinWithCtx, ir.NewExternFunc("vm.builtin.f"), ir.NewTuple(x)), out), out, ""},
		{"make_closure", ir.NewCall(MakeClosure, ir.NewGlobalVar("main"), ir.NewTuple(x)),
			ir.NewFuncInfo([]ir.StructInfo{tinfo(ir.Float32, 2, 3)}, tinfo(ir.Float32, 2, 3), true), ""},
		{"make_closure too many", ir.NewCall(MakeClosure, ir.NewGlobalVar("main"), ir.NewTuple(x, x, x)), nil, "captures 3 values but the function takes 2"},
		{"make_closure unknown", ir.NewCall(MakeClosure, ir.NewGlobalVar("nowhere"), ir.NewTuple()), ir.OpaqueFuncInfo(ir.Object(), false), ""},
		{"invoke_closure", withSInfo(ir.NewCall(InvokeClosure, clo, ir.NewTuple(tensorVar("a", ir.Float32, 4))), tinfo(ir.Float32, 4)), tinfo(ir.Float32, 4), ""},
		{"invoke_pure_closure default", ir.NewCall(InvokePureClosure, clo, ir.NewTuple()), ir.Object(), ""},
		{"invoke_closure non-callable", ir.NewCall(InvokeClosure, x, ir.NewTuple()), nil, "closure must be callable"},
		{"null_value", ir.NewCall(NullValue), ir.Object(), ""},
		{"shape_of", ir.NewCall(ShapeOf, tensorVar("y", ir.Float32, symN, 4)), ir.ShapeInfoOf(symN, ir.I64(4)), ""},
		{"shape_of unknown", ir.NewCall(ShapeOf, ir.NewVar("y", ir.TensorInfoNDim(ir.Float32, 3))), ir.ShapeInfoNDim(3), ""},
		{"tensor_to_shape", ir.NewCall(TensorToShape, tensorVar("t", ir.Int64, 3)), ir.ShapeInfoNDim(3), ""},
		{"tensor_to_shape symbolic", ir.NewCall(TensorToShape, tensorVar("t", ir.Int64, symN)), ir.ShapeInfoNDim(-1), ""},
		{"tensor_to_shape rank", ir.NewCall(TensorToShape, tensorVar("t", ir.Int64, 3, 2)), nil, "R.tensor_to_shape: expects a 1-D tensor, got rank 2"},
		{"shape_to_tensor", ir.NewCall(ShapeToTensor, shapeLit(symN, 4)), tinfo(ir.Int64, 2), ""},
		{"print", ir.NewCall(Print, x, x), ir.VoidInfo(), ""},
		{"assert", ir.NewCall(Assert, ir.NewVar("c", ir.NewPrimInfo(ir.Bool)), ir.NewTuple()), ir.VoidInfo(), ""},
		{"assert bool tensor", ir.NewCall(Assert, tensorVar("c", ir.Bool)), ir.VoidInfo(), ""},
		{"assert float", ir.NewCall(Assert, ir.NewVar("c", ir.NewPrimInfo(ir.Float32))), nil, "R.assert_op: condition must be bool, got float32"},
	})
}

func TestInferMemoryOps(t *testing.T) {
	st := ir.NewVar("st", ir.Object())
	sv := ir.NewVar("s", ir.ShapeInfoNDim(2))
	runInferCases(t, nil, []inferCase{
		{"builtin.alloc_tensor", ir.NewCall(BuiltinAllocTensor, shapeLit(2, symN), ir.NewDataTypeImm(ir.Float32), primLit(0), ir.NewStringImm("global")),
			tinfo(ir.Float32, 2, symN), ""},
		{"builtin.alloc_tensor default scope", ir.NewCall(BuiltinAllocTensor, shapeLit(4), ir.NewDataTypeImm(ir.Int8), primLit(0)),
			tinfo(ir.Int8, 4), ""},
		{"builtin.alloc_tensor shape var", ir.NewCall(BuiltinAllocTensor, sv, ir.NewDataTypeImm(ir.Int8), primLit(0)),
			&ir.TensorInfo{Shape: sv, DType: ir.Int8, NDim: 2}, ""},
		{"builtin.alloc_tensor bad dtype", ir.NewCall(BuiltinAllocTensor, shapeLit(4), ir.NewStringImm("float32"), primLit(0)),
			nil, "R.builtin.alloc_tensor: dtype must be a dtype (R.dtype), got a string"},
		{"builtin.alloc_tensor bad shape", ir.NewCall(BuiltinAllocTensor, primLit(4), ir.NewDataTypeImm(ir.Int8), primLit(0)),
			nil, "R.builtin.alloc_tensor: shape must be a shape, got R.Prim"},
		{"memory.alloc_storage", ir.NewCall(MemAllocStorage, shapeLit(64), primLit(0), ir.NewStringImm("global"), ir.NewDataTypeImm(ir.Float32)),
			ir.Object(), ""},
		{"memory.alloc_storage 2-D size", ir.NewCall(MemAllocStorage, shapeLit(8, 8), primLit(0), ir.NewStringImm("global"), ir.NewDataTypeImm(ir.Float32)),
			nil, "size must be a 1-D shape"},
		{"memory.alloc_storage missing", ir.NewCall(MemAllocStorage, shapeLit(64), primLit(0)),
			nil, "R.memory.alloc_storage: expects at least 4 arguments, got 2"},
		{"memory.alloc_tensor", ir.NewCall(MemAllocTensor, st, primLit(0), shapeLit(symN, 4), ir.NewDataTypeImm(ir.Float16)),
			tinfo(ir.Float16, symN, 4), ""},
		{"memory.alloc_tensor bad offset", ir.NewCall(MemAllocTensor, st, ir.NewStringImm("0"), shapeLit(4), ir.NewDataTypeImm(ir.Float16)),
			nil, "offset must be a scalar"},
		{"memory.kill_storage", ir.NewCall(MemKillStorage, st), ir.VoidInfo(), ""},
		{"memory.kill_tensor", ir.NewCall(MemKillTensor, tensorVar("t", ir.Float32, 2)), ir.VoidInfo(), ""},
		{"vm.alloc_storage", ir.NewCall(VMAllocStorage, shapeLit(64), primLit(0), ir.NewDataTypeImm(ir.UInt8), ir.NewStringImm("global")), ir.Object(), ""},
		{"vm.alloc_storage too many", ir.NewCall(VMAllocStorage, shapeLit(64), primLit(0), ir.NewDataTypeImm(ir.UInt8), ir.NewStringImm("global"), primLit(1)),
			nil, "expects at most 4 arguments, got 5"},
		{"vm.alloc_tensor", ir.NewCall(VMAllocTensor, st, primLit(0), shapeLit(2, 3), ir.NewDataTypeImm(ir.Float32)), tinfo(ir.Float32, 2, 3), ""},
		{"vm.kill_object", ir.NewCall(VMKillObject, st), ir.VoidInfo(), ""},
		{"vm.call_tir_dyn", ir.NewCall(VMCallTIRDyn, ir.NewGlobalVar("dyn"), ir.NewTuple(tensorVar("a", ir.Float32, 4), tensorVar("b", ir.Float32, 4), shapeLit(4))),
			ir.VoidInfo(), ""},
		// TVM infers void for any callee (ReturnVoidStructInfo): a string
		// names a function resolved when the call runs.
		{"vm.call_tir_dyn string callee", ir.NewCall(VMCallTIRDyn, ir.NewStringImm("te_func"), ir.NewTuple(tensorVar("a", ir.Float32, 4), shapeLit(4))),
			ir.VoidInfo(), ""},
		{"vm.call_tir_dyn tensor callee", ir.NewCall(VMCallTIRDyn, tensorVar("f", ir.Float32, 4), ir.NewTuple(tensorVar("a", ir.Float32, 4), shapeLit(4))),
			nil, "callee must be a PrimFunc, a function name or a function value"},
		{"vm.call_tir_dyn no shape", ir.NewCall(VMCallTIRDyn, ir.NewGlobalVar("dyn"), ir.NewTuple(tensorVar("a", ir.Float32, 4))),
			nil, "the last of args must be the shape of tir_vars"},
	})
}

func TestCallTIRNormalize(t *testing.T) {
	x := tensorVar("x", ir.Float32, 2, 3)
	out := []ir.StructInfo{tinfo(ir.Float32, 2, 3)}

	bare := callTIR(CallTIR, "add", x, out)
	got, err := CallTIR.Normalize(nil, bare)
	require.NoError(t, err)
	tup, ok := got.(*ir.Call).Args[1].(*ir.Tuple)
	require.True(t, ok, "bare argument not wrapped into a tuple: %#v", got.(*ir.Call).Args[1])
	require.Len(t, tup.Fields, 1, "bare argument not wrapped into a tuple: %#v", got.(*ir.Call).Args[1])
	require.Same(t, x, tup.Fields[0], "bare argument not wrapped into a tuple: %#v", got.(*ir.Call).Args[1])
	require.Same(t, x, bare.Args[1], "Normalize modified its input call")

	canonical := got.(*ir.Call)
	again, _ := CallTIR.Normalize(nil, canonical)
	require.Same(t, canonical, again, "normalizing a canonical call_tir should return it unchanged")

	tv := ir.NewVar("t", ir.NewTupleInfo(tinfo(ir.Float32, 2, 3), tinfo(ir.Float32, 2, 3)))
	got, _ = CallTIR.Normalize(nil, callTIR(CallTIR, "add", tv, out))
	tup = got.(*ir.Call).Args[1].(*ir.Tuple)
	require.Len(t, tup.Fields, 2, "tuple var not unpacked")
	for i, f := range tup.Fields {
		g, ok := f.(*ir.TupleGetItem)
		require.True(t, ok, "field %d is not t[%d]", i, i)
		require.Same(t, tv, g.Tuple, "field %d is not t[%d]", i, i)
		require.Equal(t, i, g.Index, "field %d is not t[%d]", i, i)
	}

	got, _ = CallTIR.Normalize(nil, callTIR(CallTIR, "add", ir.NewTuple(x), []ir.StructInfo{ir.NewTupleInfo(out[0], out[0])}))
	require.Len(t, got.(*ir.Call).SInfoArgs, 2, "tuple out_sinfo not flattened")

	inplace := callTIR(CallTIRInplace, "add", x, out)
	inplace.Attrs = ir.Attrs{"inplace_indices": int64(0)}
	got, _ = CallTIRInplace.Normalize(nil, inplace)
	v := got.(*ir.Call).Attrs["inplace_indices"]
	require.True(t, attrValueEqual(v, []any{int64(0)}), "inplace_indices not canonical: %#v", v)
}

func TestCallTIRValidate(t *testing.T) {
	mod := testModule()
	ctx := &ir.InferCtx{Module: mod}
	x := tensorVar("x", ir.Float32, 2, 3)
	out := []ir.StructInfo{tinfo(ir.Float32, 2, 3)}
	withAttrs := func(c *ir.Call, a ir.Attrs) *ir.Call { c.Attrs = a; return c }
	cases := []struct {
		name string
		call *ir.Call
		ctx  *ir.InferCtx
		err  string
	}{
		{"good", callTIR(CallTIR, "add", ir.NewTuple(x, x), out), ctx, ""},
		{"bare arg counts as one argument", callTIR(CallTIR, "add", x, out), ctx, "the call passes 1 arguments, 1 outputs"},
		{"no module skips signature", callTIR(CallTIR, "add", ir.NewTuple(x), out), nil, ""},
		{"unknown callee", callTIR(CallTIR, "nope", ir.NewTuple(x, x), out), ctx, "R.call_tir: no function named nope in the module"},
		{"relax callee", callTIR(CallTIR, "main", ir.NewTuple(x, x), out), ctx, "R.call_tir: callee main is a Relax function, not a PrimFunc"},
		{"extern callee", withSInfoArgs(ir.NewCall(CallTIR, ir.NewExternFunc("f"), ir.NewTuple(x)), out), ctx, "callee must be a global PrimFunc"},
		{"too few args", callTIR(CallTIR, "add", ir.NewTuple(x), out), ctx, "PrimFunc add takes 3 parameters, but the call passes 1 arguments, 1 outputs and 0 tir_vars"},
		{"wrong dtype", callTIR(CallTIR, "add", ir.NewTuple(x, tensorVar("i", ir.Int32, 2, 3)), out), ctx,
			"R.call_tir: argument 1 has dtype int32 but buffer B of add has float32"},
		{"wrong rank", callTIR(CallTIR, "add", ir.NewTuple(x, tensorVar("v", ir.Float32, 6)), out), ctx, "argument 1 has rank 1 but buffer B of add has 2"},
		{"wrong dim", callTIR(CallTIR, "add", ir.NewTuple(x, x), []ir.StructInfo{tinfo(ir.Float32, 3, 3)}), ctx,
			"output 2 has dimension 0 = 3 but buffer C of add has 2"},
		{"prim for buffer", callTIR(CallTIR, "add", ir.NewTuple(x, primLit(1)), out), ctx, "argument 1 is R.Prim but parameter B of add is a buffer"},
		// TVM's ValidateCallTIR derives the outputs from the signature
		// (DeriveCallRetStructInfo): an R.Object argument for a buffer is
		// FailL1 there, an error.
		{"object for buffer", callTIR(CallTIR, "add", ir.NewTuple(x, ir.NewVar("o", ir.Object())), out), ctx,
			"argument 1 type mismatch: expected R.Tensor((2, 3), dtype=\"float32\"), given R.Object"},
		{"unknown shape passes (FailL2)", callTIR(CallTIR, "add", ir.NewTuple(x, ir.NewVar("u", ir.TensorInfoNDim(ir.Float32, 2))), out), ctx, ""},
		{"unknown rank fails (FailL1)", callTIR(CallTIR, "add", ir.NewTuple(x, ir.NewVar("u", ir.TensorInfoNDim(ir.Float32, -1))), out), ctx, "argument 1 type mismatch"},
		// TVM's MakeCallTIR (src/relax/op/op.cc) requires a shape.
		{"out_sinfo without a shape", callTIR(CallTIR, "add", ir.NewTuple(x, x), []ir.StructInfo{ir.TensorInfoNDim(ir.Float32, 2)}), ctx,
			"out_sinfo 0 must be a tensor with a shape, got R.Tensor(dtype=\"float32\", ndim=2)"},
		{"argument binds n, out_sinfo contradicts it", callTIR(CallTIR, "dyn", ir.NewTuple(tensorVar("a", ir.Float32, 4)), []ir.StructInfo{tinfo(ir.Float32, 5)}, shapeLit(4)), ctx,
			"whose signature implies R.Tensor((4,), dtype=\"float32\")"},
		// A scalar parameter's struct info is R.Prim("int64") without a
		// value (TVM's InferStructInfo of a PrimFunc), so tir_vars bind nothing.
		{"tir_vars do not bind n", callTIR(CallTIR, "dyn", ir.NewTuple(ir.NewVar("u", ir.TensorInfoNDim(ir.Float32, 1))), []ir.StructInfo{tinfo(ir.Float32, 5)}, shapeWithInfo(6)), ctx, ""},
		{"tir_vars", callTIR(CallTIR, "dyn", ir.NewTuple(tensorVar("a", ir.Float32, symN)), []ir.StructInfo{tinfo(ir.Float32, symN)}, shapeLit(symN)), ctx, ""},
		{"tir_vars missing", callTIR(CallTIR, "dyn", ir.NewTuple(tensorVar("a", ir.Float32, symN)), []ir.StructInfo{tinfo(ir.Float32, symN)}), ctx,
			"PrimFunc dyn takes 3 parameters"},
		{"inplace good", withAttrs(callTIR(CallTIRInplace, "add", ir.NewTuple(x, x, x), out), ir.Attrs{"inplace_indices": []any{int64(0)}}), ctx, ""},
		{"inplace fresh output", withAttrs(callTIR(CallTIRInplace, "add", ir.NewTuple(x, x), []ir.StructInfo{out[0], out[0]}),
			ir.Attrs{"inplace_indices": []any{int64(1), int64(-1)}}), ctx, ""},
		{"inplace count", withAttrs(callTIR(CallTIRInplace, "add", ir.NewTuple(x, x, x), out), ir.Attrs{"inplace_indices": []any{int64(0), int64(1)}}), ctx,
			"inplace_indices must have one entry per output (1), got 2"},
		{"inplace range", withAttrs(callTIR(CallTIRInplace, "add", ir.NewTuple(x, x, x), out), ir.Attrs{"inplace_indices": []any{int64(3)}}), ctx,
			"inplace index 3 is out of range for 3 arguments"},
		{"inplace none", withAttrs(callTIR(CallTIRInplace, "add", ir.NewTuple(x, x), out), ir.Attrs{"inplace_indices": []any{int64(-1)}}), ctx,
			"no in-place output"},
		{"inplace mismatch", withAttrs(callTIR(CallTIRInplace, "add", ir.NewTuple(tensorVar("i", ir.Int32, 2, 3), x, x), out), ir.Attrs{"inplace_indices": []any{int64(0)}}), ctx,
			"argument 0 has dtype int32 but output 0 has float32"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			err := c.call.Op.(*ir.Op).Validate(c.ctx, c.call)
			if c.err == "" {
				require.NoError(t, err)
			} else {
				require.ErrorContains(t, err, c.err)
			}
		})
	}
}

func withSInfoArgs(c *ir.Call, s []ir.StructInfo) *ir.Call { c.SInfoArgs = s; return c }

// shapeWithInfo is R.shape([...]) with its struct info, as the parser builds it.
func shapeWithInfo(dims ...any) *ir.ShapeExpr {
	s := shapeLit(dims...)
	s.SetStructInfo(ir.ShapeInfoOf(s.Values...))
	return s
}
