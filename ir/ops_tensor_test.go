package ir

import "testing"

func TestInferBinary(t *testing.T) {
	sv := NewVar("s", ShapeInfoNDim(2))
	sameA := NewVar("a", &TensorInfo{Shape: sv, DType: Float32, NDim: 2})
	sameB := NewVar("b", &TensorInfo{Shape: sv, DType: Float32, NDim: 2})
	runInferCases(t, nil, []inferCase{
		{"static broadcast", opCall(OpTensorAdd, nil, tensorVar("x", Float32, 2, 3), tensorVar("y", Float32, 3)),
			tinfo(Float32, 2, 3), ""},
		{"symbolic unit broadcast", opCall(OpMultiply, nil, tensorVar("x", Float32, symN, 1), tensorVar("y", Float32, 1, symM)),
			tinfo(Float32, symN, symM), ""},
		{"equal symbolic dims", opCall(OpSubtract, nil, tensorVar("x", Float32, symN, 4), tensorVar("y", Float32, symN, 4)),
			tinfo(Float32, symN, 4), ""},
		{"unprovable symbolic dims degrade to rank", opCall(OpTensorAdd, nil, tensorVar("x", Float32, symN, 4), tensorVar("y", Float32, symM, 4)),
			TensorInfoNDim(Float32, 2), ""},
		{"static mismatch", opCall(OpTensorAdd, nil, tensorVar("x", Float32, 2, 3), tensorVar("y", Float32, 2, 4)),
			nil, "R.add: cannot broadcast dimension 3 with 4"},
		{"dtype mix", opCall(OpDivide, nil, tensorVar("x", Float32, 2), tensorVar("y", Int32, 2)),
			nil, "R.divide: data types float32 and int32 must be equal"},
		{"unknown dtype is accepted", opCall(OpTensorAdd, nil, tensorVar("x", Void, 2), tensorVar("y", Int32, 2)),
			tinfo(Void, 2), ""},
		{"comparison gives bool", opCall(OpLess, nil, tensorVar("x", Float32, symN, 4), tensorVar("y", Float32, 4)),
			tinfo(Bool, symN, 4), ""},
		{"tensor with scalar", opCall(OpPower, nil, tensorVar("x", Float32, symN), NewVar("p", NewPrimInfo(Float32))),
			tinfo(Float32, symN), ""},
		{"two scalars", opCall(OpMaximum, nil, NewVar("p", NewPrimInfo(Int64)), NewVar("q", NewPrimInfo(Int64))),
			NewPrimInfo(Int64), ""},
		{"unknown rank", opCall(OpMinimum, nil, NewVar("x", TensorInfoNDim(Float32, -1)), tensorVar("y", Float32, 3)),
			TensorInfoNDim(Float32, -1), ""},
		{"shared shape var is kept", opCall(OpTensorAdd, nil, sameA, sameB),
			&TensorInfo{Shape: sv, DType: Float32, NDim: 2}, ""},
		{"object operand", opCall(OpTensorAdd, nil, NewVar("o", Object()), tensorVar("y", Float32, 3)),
			nil, "R.add: x1 must be a tensor or a scalar, got R.Object"},
		{"too many args", opCall(OpTensorAdd, nil, tensorVar("x", Float32, 3), tensorVar("y", Float32, 3), tensorVar("z", Float32, 3)),
			nil, "R.add: expects at most 2 arguments, got 3"},
	})
}

func TestInferUnary(t *testing.T) {
	x := tensorVar("x", Float32, symN, 4)
	got, err := inferOf(opCall(OpExp, nil, x), nil)
	if err != nil || got != x.StructInfo() {
		t.Fatalf("R.exp should return its operand's info unchanged, got %v, %v", got, err)
	}
	runInferCases(t, nil, []inferCase{
		{"float op on int", opCall(OpSqrt, nil, tensorVar("i", Int32, 3)), nil, "R.sqrt: requires a float tensor, got int32"},
		{"relu on int", opCall(OpNNRelu, nil, tensorVar("i", Int32, 3)), tinfo(Int32, 3), ""},
		{"gelu on float", opCall(OpNNGelu, nil, x), tinfo(Float32, symN, 4), ""},
		{"not a tensor", opCall(OpNegative, nil, NewVar("s", ShapeInfoNDim(2))), nil, "R.negative: x must be a tensor, got R.Shape"},
		{"missing arg", opCall(OpAbs, nil), nil, "R.abs: expects at least 1 arguments, got 0"},
	})
}

func TestInferMatmul(t *testing.T) {
	runInferCases(t, nil, []inferCase{
		{"batched symbolic", opCall(OpMatmul, nil, tensorVar("a", Float32, symB, symN, symK), tensorVar("b", Float32, symK, symM)),
			tinfo(Float32, symB, symN, symM), ""},
		{"vector times matrix", opCall(OpMatmul, nil, tensorVar("a", Float32, symK), tensorVar("b", Float32, symK, symM)),
			tinfo(Float32, symM), ""},
		{"matrix times vector", opCall(OpMatmul, nil, tensorVar("a", Float32, symN, symK), tensorVar("b", Float32, symK)),
			tinfo(Float32, symN), ""},
		{"dot product", opCall(OpMatmul, nil, tensorVar("a", Float32, 3), tensorVar("b", Float32, 3)),
			tinfo(Float32), ""},
		{"broadcast batch", opCall(OpMatmul, nil, tensorVar("a", Float32, 2, 1, symN, 3), tensorVar("b", Float32, 5, 3, 4)),
			tinfo(Float32, 2, 5, symN, 4), ""},
		{"reduction mismatch", opCall(OpMatmul, nil, tensorVar("a", Float32, symN, 3), tensorVar("b", Float32, 5, symM)),
			nil, "R.matmul: reduction dims 3 and 5 differ"},
		{"symbolic reduction accepted", opCall(OpMatmul, nil, tensorVar("a", Float32, 2, symN), tensorVar("b", Float32, symM, 4)),
			tinfo(Float32, 2, 4), ""},
		{"out_dtype", opCall(OpMatmul, Attrs{"out_dtype": Float32}, tensorVar("a", Float16, 2, 3), tensorVar("b", Float16, 3, 4)),
			tinfo(Float32, 2, 4), ""},
		{"dtype mix", opCall(OpMatmul, nil, tensorVar("a", Float16, 2, 3), tensorVar("b", Float32, 3, 4)),
			nil, "R.matmul: data types float16 and float32 must be equal"},
		{"unknown rank", opCall(OpMatmul, nil, NewVar("a", TensorInfoNDim(Float32, -1)), tensorVar("b", Float32, 3, 4)),
			TensorInfoNDim(Float32, -1), ""},
		{"unknown shape known rank", opCall(OpMatmul, nil, NewVar("a", TensorInfoNDim(Float32, 3)), tensorVar("b", Float32, 3, 4)),
			TensorInfoNDim(Float32, 3), ""},
		{"unprovable batch", opCall(OpMatmul, nil, tensorVar("a", Float32, symN, 2, 3), tensorVar("b", Float32, symM, 3, 4)),
			TensorInfoNDim(Float32, 3), ""},
		{"batch mismatch", opCall(OpMatmul, nil, tensorVar("a", Float32, 2, 2, 3), tensorVar("b", Float32, 3, 3, 4)),
			nil, "R.matmul: cannot broadcast dimension 2 with 3"},
		{"rank 0", opCall(OpMatmul, nil, tensorVar("a", Float32), tensorVar("b", Float32, 3)),
			nil, "rank-0"},
	})
}

func TestInferReshape(t *testing.T) {
	s2 := NewVar("s", ShapeInfoNDim(2))
	runInferCases(t, nil, []inferCase{
		{"symbolic", opCall(OpReshape, nil, tensorVar("x", Float32, symN, 4), shapeLit(Mul(symN, I64(4)))),
			tinfo(Float32, Mul(symN, I64(4))), ""},
		{"infer -1", opCall(OpReshape, nil, tensorVar("x", Float32, 2, 3, 4), shapeLit(-1, 4)),
			tinfo(Float32, 6, 4), ""},
		{"infer symbolic -1", opCall(OpReshape, nil, tensorVar("x", Float32, symN, 4, 2), shapeLit(-1, 8)),
			tinfo(Float32, symN, 8), ""},
		{"-1 with unknown input", opCall(OpReshape, nil, NewVar("x", TensorInfoNDim(Float32, 2)), shapeLit(-1, 8)),
			TensorInfoNDim(Float32, 2), ""},
		{"element count mismatch", opCall(OpReshape, nil, tensorVar("x", Float32, 2, 3), shapeLit(5)),
			nil, "R.reshape: cannot reshape 6 elements into a shape of 5 elements"},
		{"-1 not dividing", opCall(OpReshape, nil, tensorVar("x", Float32, 2, 3), shapeLit(-1, 4)),
			nil, "R.reshape: cannot reshape 6 elements"},
		{"two -1", opCall(OpReshape, nil, tensorVar("x", Float32, 2, 3), shapeLit(-1, -1)),
			nil, "at most one dimension"},
		{"unprovable symbolic accepted", opCall(OpReshape, nil, tensorVar("x", Float32, symN, 4), shapeLit(symM)),
			tinfo(Float32, symM), ""},
		{"shape var", opCall(OpReshape, nil, tensorVar("x", Float32, symN, 4), s2),
			&TensorInfo{Shape: s2, DType: Float32, NDim: 2}, ""},
		{"not a shape", opCall(OpReshape, nil, tensorVar("x", Float32, 4), tensorVar("y", Int64, 1)),
			nil, "R.reshape: shape must be a shape, got R.Tensor(ndim=1)"},
	})
}

func TestReshapeNormalizeResolvesMinusOne(t *testing.T) {
	call := opCall(OpReshape, nil, tensorVar("x", Float32, 2, 3, 4), shapeLit(-1, 4))
	got, err := OpReshape.Normalize(nil, call)
	if err != nil {
		t.Fatal(err)
	}
	se := got.(*Call).Args[1].(*ShapeExpr)
	if !dimListEqual(se.Values, toDims([]any{6, 4})) {
		t.Fatalf("shape not resolved: %s", descDims(se.Values))
	}
	again, _ := OpReshape.Normalize(nil, got.(*Call))
	if again != got {
		t.Fatal("normalizing a canonical reshape should return it unchanged")
	}
}

func TestInferReductions(t *testing.T) {
	x := tensorVar("x", Float32, symN, 4, 5)
	runInferCases(t, nil, []inferCase{
		{"sum axis", opCall(OpSum, Attrs{"axis": []any{int64(1)}}, x), tinfo(Float32, symN, 5), ""},
		{"sum keepdims", opCall(OpSum, Attrs{"axis": []any{int64(1)}, "keepdims": true}, x), tinfo(Float32, symN, 1, 5), ""},
		{"sum all", opCall(OpSum, nil, x), tinfo(Float32), ""},
		{"mean negative axis", opCall(OpMean, Attrs{"axis": []any{int64(-1), int64(0)}}, x), tinfo(Float32, 4), ""},
		{"max keepdims all", opCall(OpReduceMax, Attrs{"keepdims": true}, x), tinfo(Float32, 1, 1, 1), ""},
		{"min scalar axis attr", opCall(OpReduceMin, Attrs{"axis": int64(0)}, x), tinfo(Float32, 4, 5), ""},
		{"prod unknown shape", opCall(OpProd, Attrs{"axis": []any{int64(0)}}, NewVar("y", TensorInfoNDim(Int32, 3))),
			TensorInfoNDim(Int32, 2), ""},
		{"unknown rank all", opCall(OpSum, nil, NewVar("y", TensorInfoNDim(Float32, -1))), tinfo(Float32), ""},
		{"unknown rank axis", opCall(OpSum, Attrs{"axis": []any{int64(0)}}, NewVar("y", TensorInfoNDim(Float32, -1))),
			TensorInfoNDim(Float32, -1), ""},
		{"axis out of range", opCall(OpSum, Attrs{"axis": []any{int64(3)}}, x), nil, "R.sum: axis 3 is out of range for a tensor of rank 3"},
		{"repeated axis", opCall(OpSum, Attrs{"axis": []any{int64(1), int64(-2)}}, x), nil, "R.sum: axis 1 appears twice"},
		{"bad attr type", opCall(OpSum, Attrs{"keepdims": "yes"}, x), nil, "R.sum: attribute keepdims must be a bool"},
	})
}

func TestInferNN(t *testing.T) {
	x := tensorVar("x", Float32, symN, 4)
	runInferCases(t, nil, []inferCase{
		{"softmax", opCall(OpNNSoftmax, nil, x), tinfo(Float32, symN, 4), ""},
		{"log_softmax axis", opCall(OpNNLogSoftmax, Attrs{"axis": int64(0)}, x), tinfo(Float32, symN, 4), ""},
		{"softmax axis range", opCall(OpNNSoftmax, Attrs{"axis": int64(2)}, x), nil, "R.nn.softmax: axis 2 is out of range"},
		{"softmax int", opCall(OpNNSoftmax, nil, tensorVar("i", Int32, 3)), nil, "R.nn.softmax: requires a float tensor"},
		{"layer_norm", opCall(OpNNLayerNorm, Attrs{"axes": []any{int64(-1)}}, x, tensorVar("g", Float32, 4), tensorVar("b", Float32, 4)),
			tinfo(Float32, symN, 4), ""},
		{"layer_norm gamma dim", opCall(OpNNLayerNorm, Attrs{"axes": []any{int64(-1)}}, x, tensorVar("g", Float32, 5), tensorVar("b", Float32, 4)),
			nil, "R.nn.layer_norm: gamma dimension 0 is 5 but data dimension 1 is 4"},
		{"layer_norm beta rank", opCall(OpNNLayerNorm, Attrs{"axes": []any{int64(-1)}}, x, tensorVar("g", Float32, 4), tensorVar("b", Float32, 1, 4)),
			nil, "R.nn.layer_norm: beta must have rank 1"},
		{"layer_norm dtype", opCall(OpNNLayerNorm, Attrs{"axes": []any{int64(1)}}, x, tensorVar("g", Float16, 4), tensorVar("b", Float32, 4)),
			nil, "gamma has dtype float16 but data has float32"},
		{"rms_norm default axes", opCall(OpNNRMSNorm, nil, x, tensorVar("w", Float32, 4)), tinfo(Float32, symN, 4), ""},
		{"rms_norm symbolic weight", opCall(OpNNRMSNorm, Attrs{"axes": []any{int64(0)}}, x, tensorVar("w", Float32, symN)), tinfo(Float32, symN, 4), ""},
	})
}

func TestInferCreation(t *testing.T) {
	s := NewVar("s", ShapeInfoNDim(3))
	one := NewVar("c", tinfo(Float32))
	runInferCases(t, nil, []inferCase{
		{"astype", opCall(OpAsType, Attrs{"dtype": Float16}, tensorVar("x", Float32, symN, 4)), tinfo(Float16, symN, 4), ""},
		{"astype string dtype", opCall(OpAsType, Attrs{"dtype": "int8"}, tensorVar("x", Float32, 2)), tinfo(Int8, 2), ""},
		{"full", opCall(OpFull, nil, shapeLit(2, symN), one), tinfo(Float32, 2, symN), ""},
		{"full dtype", opCall(OpFull, Attrs{"dtype": Int32}, shapeLit(2), one), tinfo(Int32, 2), ""},
		{"full shape var", opCall(OpFull, nil, s, one), &TensorInfo{Shape: s, DType: Float32, NDim: 3}, ""},
		{"full non-scalar", opCall(OpFull, nil, shapeLit(2), tensorVar("v", Float32, 2)), nil, "R.full: fill_value must be a scalar tensor"},
		{"zeros", opCall(OpZeros, Attrs{"dtype": Int32}, shapeLit(symN)), tinfo(Int32, symN), ""},
		{"ones", opCall(OpOnes, Attrs{"dtype": Float32}, shapeLit(3, 3)), tinfo(Float32, 3, 3), ""},
		{"zeros_like", opCall(OpZerosLike, nil, tensorVar("x", Float16, symN)), tinfo(Float16, symN), ""},
		{"ones_like dtype", opCall(OpOnesLike, Attrs{"dtype": Int8}, tensorVar("x", Float16, symN)), tinfo(Int8, symN), ""},
		{"full_like", opCall(OpFullLike, nil, tensorVar("x", Float32, 2, 2), one), tinfo(Float32, 2, 2), ""},
	})
}
