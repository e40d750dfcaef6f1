package ir

import (
	"strings"
	"testing"
)

// testModule has PrimFunc "add" (A, B -> C, all (2, 3) float32), PrimFunc
// "dyn" (A (n,) float32 -> B (n,) float32, scalar n), and Relax function
// "main" (x: (2, 3) float32, y: (4,) float32).
func testModule() *Module {
	mod := NewModule()
	bufs := func(names ...string) ([]*PrimVar, map[*PrimVar]*Buffer) {
		params := make([]*PrimVar, len(names))
		m := map[*PrimVar]*Buffer{}
		for i, n := range names {
			params[i] = NewPrimVar(n, Handle)
			m[params[i]] = NewBuffer(n, []PrimExpr{I64(2), I64(3)}, Float32)
		}
		return params, m
	}
	params, bm := bufs("A", "B", "C")
	mod.Set("add", &PrimFunc{Params: params, BufferMap: bm})
	n := NewPrimVar("n", Int64)
	a, b := NewPrimVar("A", Handle), NewPrimVar("B", Handle)
	mod.Set("dyn", &PrimFunc{
		Params: []*PrimVar{a, b, n},
		BufferMap: map[*PrimVar]*Buffer{
			a: NewBuffer("A", []PrimExpr{n}, Float32),
			b: NewBuffer("B", []PrimExpr{n}, Float32),
		},
	})
	mod.Set("main", &Function{
		Params: []*Var{tensorVar("x", Float32, 2, 3), tensorVar("y", Float32, 4)},
		Ret:    tinfo(Float32, 2, 3), Pure: true,
	})
	return mod
}

func callTIR(op *Op, callee string, args Expr, outs []StructInfo, extra ...Expr) *Call {
	c := NewCall(op, append([]Expr{NewGlobalVar(callee), args}, extra...)...)
	c.SInfoArgs = outs
	return c
}

func TestInferCallFamily(t *testing.T) {
	x := tensorVar("x", Float32, 2, 3)
	out := tinfo(Float32, 2, 3)
	clo := NewVar("f", NewFuncInfo([]StructInfo{tinfo(Float32, 4)}, tinfo(Float32, 4), true))
	withSInfo := func(c *Call, s ...StructInfo) *Call { c.SInfoArgs = s; return c }
	ctx := &InferCtx{Module: testModule()}
	runInferCases(t, ctx, []inferCase{
		{"call_tir one output", callTIR(OpCallTIR, "add", NewTuple(x, x), []StructInfo{out}), out, ""},
		{"call_tir two outputs", callTIR(OpCallTIR, "add", NewTuple(x), []StructInfo{out, tinfo(Int32, 4)}),
			NewTupleInfo(out, tinfo(Int32, 4)), ""},
		{"call_tir tuple out_sinfo", callTIR(OpCallTIR, "add", NewTuple(x), []StructInfo{NewTupleInfo(out, out)}),
			NewTupleInfo(out, out), ""},
		{"call_tir missing out_sinfo", callTIR(OpCallTIR, "add", NewTuple(x), nil), nil, "R.call_tir: missing out_sinfo"},
		{"call_tir non-tensor out", callTIR(OpCallTIR, "add", NewTuple(x), []StructInfo{Object()}), nil, "out_sinfo 0 must be a tensor"},
		{"call_tir bad tir_vars", callTIR(OpCallTIR, "dyn", NewTuple(x), []StructInfo{out}, x), nil, "tir_vars must be a shape"},
		{"call_dps_packed", withSInfo(NewCall(OpCallDPSPacked, NewExternFunc("f"), NewTuple(x)), out), out, ""},
		{"call_dps_packed bad callee", withSInfo(NewCall(OpCallDPSPacked, NewStringImm("f"), NewTuple(x)), out), nil, "callee must be an extern function"},
		{"call_packed no sinfo", NewCall(OpCallPacked, NewExternFunc("f"), x, primLit(2)), Object(), ""},
		{"call_packed one sinfo", withSInfo(NewCall(OpCallPacked, NewExternFunc("f"), x), out), out, ""},
		{"call_pure_packed two sinfo", withSInfo(NewCall(OpCallPurePacked, NewExternFunc("f")), out, ShapeInfoNDim(2)),
			NewTupleInfo(out, ShapeInfoNDim(2)), ""},
		{"call_packed no callee", NewCall(OpCallPacked), nil, "R.call_packed: expects at least 1 arguments"},
		{"builtin_with_ctx void", NewCall(OpCallBuiltinWithCtx, NewExternFunc("vm.builtin.f"), NewTuple(x)), VoidInfo(), ""},
		{"builtin_with_ctx sinfo", withSInfo(NewCall(OpCallBuiltinWithCtx, NewExternFunc("vm.builtin.f"), NewTuple(x)), out), out, ""},
		{"make_closure", NewCall(OpMakeClosure, NewGlobalVar("main"), NewTuple(x)),
			NewFuncInfo([]StructInfo{tinfo(Float32, 2, 3)}, tinfo(Float32, 2, 3), true), ""},
		{"make_closure too many", NewCall(OpMakeClosure, NewGlobalVar("main"), NewTuple(x, x, x)), nil, "captures 3 values but the function takes 2"},
		{"make_closure unknown", NewCall(OpMakeClosure, NewGlobalVar("nowhere"), NewTuple()), OpaqueFuncInfo(Object(), false), ""},
		{"invoke_closure", withSInfo(NewCall(OpInvokeClosure, clo, NewTuple(tensorVar("a", Float32, 4))), tinfo(Float32, 4)), tinfo(Float32, 4), ""},
		{"invoke_pure_closure default", NewCall(OpInvokePureClosure, clo, NewTuple()), Object(), ""},
		{"invoke_closure non-callable", NewCall(OpInvokeClosure, x, NewTuple()), nil, "closure must be callable"},
		{"null_value", NewCall(OpNullValue), Object(), ""},
		{"shape_of", NewCall(OpShapeOf, tensorVar("y", Float32, symN, 4)), ShapeInfoOf(symN, I64(4)), ""},
		{"shape_of unknown", NewCall(OpShapeOf, NewVar("y", TensorInfoNDim(Float32, 3))), ShapeInfoNDim(3), ""},
		{"tensor_to_shape", NewCall(OpTensorToShape, tensorVar("t", Int64, 3)), ShapeInfoNDim(3), ""},
		{"tensor_to_shape symbolic", NewCall(OpTensorToShape, tensorVar("t", Int64, symN)), ShapeInfoNDim(-1), ""},
		{"tensor_to_shape rank", NewCall(OpTensorToShape, tensorVar("t", Int64, 3, 2)), nil, "R.tensor_to_shape: expects a 1-D tensor, got rank 2"},
		{"shape_to_tensor", NewCall(OpShapeToTensor, shapeLit(symN, 4)), tinfo(Int64, 2), ""},
		{"print", NewCall(OpPrint, x, x), VoidInfo(), ""},
		{"assert", NewCall(OpAssert, NewVar("c", NewPrimInfo(Bool)), NewTuple()), VoidInfo(), ""},
		{"assert bool tensor", NewCall(OpAssert, tensorVar("c", Bool)), VoidInfo(), ""},
		{"assert float", NewCall(OpAssert, NewVar("c", NewPrimInfo(Float32))), nil, "R.assert_op: condition must be bool, got float32"},
	})
}

func TestInferMemoryOps(t *testing.T) {
	st := NewVar("st", Object())
	sv := NewVar("s", ShapeInfoNDim(2))
	runInferCases(t, nil, []inferCase{
		{"builtin.alloc_tensor", NewCall(OpBuiltinAllocTensor, shapeLit(2, symN), NewDataTypeImm(Float32), primLit(0), NewStringImm("global")),
			tinfo(Float32, 2, symN), ""},
		{"builtin.alloc_tensor default scope", NewCall(OpBuiltinAllocTensor, shapeLit(4), NewDataTypeImm(Int8), primLit(0)),
			tinfo(Int8, 4), ""},
		{"builtin.alloc_tensor shape var", NewCall(OpBuiltinAllocTensor, sv, NewDataTypeImm(Int8), primLit(0)),
			&TensorInfo{Shape: sv, DType: Int8, NDim: 2}, ""},
		{"builtin.alloc_tensor bad dtype", NewCall(OpBuiltinAllocTensor, shapeLit(4), NewStringImm("float32"), primLit(0)),
			nil, "R.builtin.alloc_tensor: dtype must be a dtype (R.dtype), got a string"},
		{"builtin.alloc_tensor bad shape", NewCall(OpBuiltinAllocTensor, primLit(4), NewDataTypeImm(Int8), primLit(0)),
			nil, "R.builtin.alloc_tensor: shape must be a shape, got R.Prim"},
		{"memory.alloc_storage", NewCall(OpMemAllocStorage, shapeLit(64), primLit(0), NewStringImm("global"), NewDataTypeImm(Float32)),
			Object(), ""},
		{"memory.alloc_storage 2-D size", NewCall(OpMemAllocStorage, shapeLit(8, 8), primLit(0), NewStringImm("global"), NewDataTypeImm(Float32)),
			nil, "size must be a 1-D shape"},
		{"memory.alloc_storage missing", NewCall(OpMemAllocStorage, shapeLit(64), primLit(0)),
			nil, "R.memory.alloc_storage: expects at least 4 arguments, got 2"},
		{"memory.alloc_tensor", NewCall(OpMemAllocTensor, st, primLit(0), shapeLit(symN, 4), NewDataTypeImm(Float16)),
			tinfo(Float16, symN, 4), ""},
		{"memory.alloc_tensor bad offset", NewCall(OpMemAllocTensor, st, NewStringImm("0"), shapeLit(4), NewDataTypeImm(Float16)),
			nil, "offset must be a scalar"},
		{"memory.kill_storage", NewCall(OpMemKillStorage, st), VoidInfo(), ""},
		{"memory.kill_tensor", NewCall(OpMemKillTensor, tensorVar("t", Float32, 2)), VoidInfo(), ""},
		{"vm.alloc_storage", NewCall(OpVMAllocStorage, shapeLit(64), primLit(0), NewDataTypeImm(UInt8), NewStringImm("global")), Object(), ""},
		{"vm.alloc_storage too many", NewCall(OpVMAllocStorage, shapeLit(64), primLit(0), NewDataTypeImm(UInt8), NewStringImm("global"), primLit(1)),
			nil, "expects at most 4 arguments, got 5"},
		{"vm.alloc_tensor", NewCall(OpVMAllocTensor, st, primLit(0), shapeLit(2, 3), NewDataTypeImm(Float32)), tinfo(Float32, 2, 3), ""},
		{"vm.kill_object", NewCall(OpVMKillObject, st), VoidInfo(), ""},
		{"vm.call_tir_dyn", NewCall(OpVMCallTIRDyn, NewGlobalVar("dyn"), NewTuple(tensorVar("a", Float32, 4), tensorVar("b", Float32, 4), shapeLit(4))),
			VoidInfo(), ""},
		{"vm.call_tir_dyn no shape", NewCall(OpVMCallTIRDyn, NewGlobalVar("dyn"), NewTuple(tensorVar("a", Float32, 4))),
			nil, "the last of args must be the shape of tir_vars"},
	})
}

func TestCallTIRNormalize(t *testing.T) {
	x := tensorVar("x", Float32, 2, 3)
	out := []StructInfo{tinfo(Float32, 2, 3)}

	bare := callTIR(OpCallTIR, "add", x, out)
	got, err := OpCallTIR.Normalize(nil, bare)
	if err != nil {
		t.Fatal(err)
	}
	tup, ok := got.(*Call).Args[1].(*Tuple)
	if !ok || len(tup.Fields) != 1 || tup.Fields[0] != x {
		t.Fatalf("bare argument not wrapped into a tuple: %#v", got.(*Call).Args[1])
	}
	if bare.Args[1] != x {
		t.Fatal("Normalize modified its input call")
	}

	canonical := got.(*Call)
	if again, _ := OpCallTIR.Normalize(nil, canonical); again != canonical {
		t.Fatal("normalizing a canonical call_tir should return it unchanged")
	}

	tv := NewVar("t", NewTupleInfo(tinfo(Float32, 2, 3), tinfo(Float32, 2, 3)))
	got, _ = OpCallTIR.Normalize(nil, callTIR(OpCallTIR, "add", tv, out))
	tup = got.(*Call).Args[1].(*Tuple)
	if len(tup.Fields) != 2 {
		t.Fatalf("tuple var not unpacked: %d fields", len(tup.Fields))
	}
	for i, f := range tup.Fields {
		g, ok := f.(*TupleGetItem)
		if !ok || g.Tuple != tv || g.Index != i {
			t.Fatalf("field %d is not t[%d]", i, i)
		}
	}

	got, _ = OpCallTIR.Normalize(nil, callTIR(OpCallTIR, "add", NewTuple(x), []StructInfo{NewTupleInfo(out[0], out[0])}))
	if n := len(got.(*Call).SInfoArgs); n != 2 {
		t.Fatalf("tuple out_sinfo not flattened: %d entries", n)
	}

	inplace := callTIR(OpCallTIRInplace, "add", x, out)
	inplace.Attrs = Attrs{"inplace_indices": int64(0)}
	got, _ = OpCallTIRInplace.Normalize(nil, inplace)
	if v := got.(*Call).Attrs["inplace_indices"]; !attrValueEqual(v, []any{int64(0)}) {
		t.Fatalf("inplace_indices not canonical: %#v", v)
	}
}

func TestCallTIRValidate(t *testing.T) {
	mod := testModule()
	ctx := &InferCtx{Module: mod}
	x := tensorVar("x", Float32, 2, 3)
	out := []StructInfo{tinfo(Float32, 2, 3)}
	withAttrs := func(c *Call, a Attrs) *Call { c.Attrs = a; return c }
	cases := []struct {
		name string
		call *Call
		ctx  *InferCtx
		err  string
	}{
		{"good", callTIR(OpCallTIR, "add", NewTuple(x, x), out), ctx, ""},
		{"bare arg counts as one argument", callTIR(OpCallTIR, "add", x, out), ctx, "the call passes 1 arguments, 1 outputs"},
		{"no module skips signature", callTIR(OpCallTIR, "add", NewTuple(x), out), nil, ""},
		{"unknown callee", callTIR(OpCallTIR, "nope", NewTuple(x, x), out), ctx, "R.call_tir: no function named nope in the module"},
		{"relax callee", callTIR(OpCallTIR, "main", NewTuple(x, x), out), ctx, "R.call_tir: callee main is a Relax function, not a PrimFunc"},
		{"extern callee", withSInfoArgs(NewCall(OpCallTIR, NewExternFunc("f"), NewTuple(x)), out), ctx, "callee must be a global PrimFunc"},
		{"too few args", callTIR(OpCallTIR, "add", NewTuple(x), out), ctx, "PrimFunc add takes 3 parameters, but the call passes 1 arguments, 1 outputs and 0 tir_vars"},
		{"wrong dtype", callTIR(OpCallTIR, "add", NewTuple(x, tensorVar("i", Int32, 2, 3)), out), ctx,
			"R.call_tir: argument 1 has dtype int32 but buffer B of add has float32"},
		{"wrong rank", callTIR(OpCallTIR, "add", NewTuple(x, tensorVar("v", Float32, 6)), out), ctx, "argument 1 has rank 1 but buffer B of add has 2"},
		{"wrong dim", callTIR(OpCallTIR, "add", NewTuple(x, x), []StructInfo{tinfo(Float32, 3, 3)}), ctx,
			"output 2 has dimension 0 = 3 but buffer C of add has 2"},
		{"prim for buffer", callTIR(OpCallTIR, "add", NewTuple(x, primLit(1)), out), ctx, "argument 1 is R.Prim but parameter B of add is a buffer"},
		{"unknown info passes", callTIR(OpCallTIR, "add", NewTuple(x, NewVar("o", Object())), out), ctx, ""},
		{"tir_vars", callTIR(OpCallTIR, "dyn", NewTuple(tensorVar("a", Float32, symN)), []StructInfo{tinfo(Float32, symN)}, shapeLit(symN)), ctx, ""},
		{"tir_vars missing", callTIR(OpCallTIR, "dyn", NewTuple(tensorVar("a", Float32, symN)), []StructInfo{tinfo(Float32, symN)}), ctx,
			"PrimFunc dyn takes 3 parameters"},
		{"inplace good", withAttrs(callTIR(OpCallTIRInplace, "add", NewTuple(x, x, x), out), Attrs{"inplace_indices": []any{int64(0)}}), ctx, ""},
		{"inplace fresh output", withAttrs(callTIR(OpCallTIRInplace, "add", NewTuple(x, x), []StructInfo{out[0], out[0]}),
			Attrs{"inplace_indices": []any{int64(1), int64(-1)}}), ctx, ""},
		{"inplace count", withAttrs(callTIR(OpCallTIRInplace, "add", NewTuple(x, x, x), out), Attrs{"inplace_indices": []any{int64(0), int64(1)}}), ctx,
			"inplace_indices must have one entry per output (1), got 2"},
		{"inplace range", withAttrs(callTIR(OpCallTIRInplace, "add", NewTuple(x, x, x), out), Attrs{"inplace_indices": []any{int64(3)}}), ctx,
			"inplace index 3 is out of range for 3 arguments"},
		{"inplace none", withAttrs(callTIR(OpCallTIRInplace, "add", NewTuple(x, x), out), Attrs{"inplace_indices": []any{int64(-1)}}), ctx,
			"no in-place output"},
		{"inplace mismatch", withAttrs(callTIR(OpCallTIRInplace, "add", NewTuple(tensorVar("i", Int32, 2, 3), x, x), out), Attrs{"inplace_indices": []any{int64(0)}}), ctx,
			"argument 0 has dtype int32 but output 0 has float32"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			err := c.call.Op.(*Op).Validate(c.ctx, c.call)
			switch {
			case c.err == "" && err != nil:
				t.Fatalf("unexpected error: %v", err)
			case c.err != "" && err == nil:
				t.Fatalf("want error containing %q", c.err)
			case c.err != "" && !strings.Contains(err.Error(), c.err):
				t.Fatalf("error %q does not contain %q", err, c.err)
			}
		})
	}
}

func withSInfoArgs(c *Call, s []StructInfo) *Call { c.SInfoArgs = s; return c }
