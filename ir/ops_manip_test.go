package ir

import "testing"

func TestInferLayoutOps(t *testing.T) {
	x := tensorVar("x", Float32, symN, 3, 4)
	runInferCases(t, nil, []inferCase{
		{"permute reverse", opCall(OpPermuteDims, nil, x), tinfo(Float32, 4, 3, symN), ""},
		{"permute axes", opCall(OpPermuteDims, Attrs{"axes": []any{int64(0), int64(2), int64(1)}}, x), tinfo(Float32, symN, 4, 3), ""},
		{"permute wrong length", opCall(OpPermuteDims, Attrs{"axes": []any{int64(0), int64(1)}}, x), nil, "R.permute_dims: axes has 2 entries but x has rank 3"},
		{"permute repeat", opCall(OpPermuteDims, Attrs{"axes": []any{int64(0), int64(0), int64(1)}}, x), nil, "appears twice"},
		{"permute unknown rank", opCall(OpPermuteDims, Attrs{"axes": []any{int64(1), int64(0)}}, NewVar("y", TensorInfoNDim(Float32, -1))),
			TensorInfoNDim(Float32, 2), ""},
		{"expand_dims", opCall(OpExpandDims, Attrs{"axis": []any{int64(0), int64(-1)}}, tensorVar("y", Float32, symN, 4)),
			tinfo(Float32, 1, symN, 4, 1), ""},
		{"expand_dims range", opCall(OpExpandDims, Attrs{"axis": []any{int64(3)}}, tensorVar("y", Float32, symN, 4)),
			nil, "R.expand_dims: axis 3 is out of range for a tensor of rank 3"},
		{"squeeze all static", opCall(OpSqueeze, nil, tensorVar("y", Float32, 1, 3, 1)), tinfo(Float32, 3), ""},
		{"squeeze all symbolic", opCall(OpSqueeze, nil, tensorVar("y", Float32, 1, symN, 1)), TensorInfoNDim(Float32, -1), ""},
		{"squeeze axis", opCall(OpSqueeze, Attrs{"axis": []any{int64(0)}}, tensorVar("y", Float32, 1, symN, 1)), tinfo(Float32, symN, 1), ""},
		{"squeeze non-unit", opCall(OpSqueeze, Attrs{"axis": []any{int64(1)}}, tensorVar("y", Float32, 1, 3)),
			nil, "R.squeeze: cannot squeeze axis 1 of length 3"},
		{"flatten", opCall(OpFlatten, nil, tensorVar("y", Float32, symN, 4, 2)), tinfo(Float32, Mul(symN, I64(8))), ""},
		{"flatten scalar", opCall(OpFlatten, nil, tensorVar("y", Float32)), tinfo(Float32, 1), ""},
		{"flatten unknown", opCall(OpFlatten, nil, NewVar("y", TensorInfoNDim(Float32, 3))), TensorInfoNDim(Float32, 1), ""},
		{"broadcast_to", opCall(OpBroadcastTo, nil, tensorVar("y", Float32, 1, 4), shapeLit(symN, 4)), tinfo(Float32, symN, 4), ""},
		{"broadcast_to mismatch", opCall(OpBroadcastTo, nil, tensorVar("y", Float32, 3, 4), shapeLit(2, 4)),
			nil, "R.broadcast_to: cannot broadcast dimension 3 to 2"},
		{"broadcast_to rank", opCall(OpBroadcastTo, nil, tensorVar("y", Float32, 3, 4), shapeLit(4)),
			nil, "cannot broadcast a tensor of rank 2 to rank 1"},
	})
}

func TestInferConcatSplit(t *testing.T) {
	a := tensorVar("a", Float32, symN, 4)
	b := tensorVar("b", Float32, symM, 4)
	runInferCases(t, nil, []inferCase{
		{"concat axis 0", opCall(OpConcat, nil, NewTuple(a, b)), tinfo(Float32, Add(symN, symM), 4), ""},
		{"concat static", opCall(OpConcat, Attrs{"axis": int64(-1)}, NewTuple(tensorVar("c", Float32, 2, 3), tensorVar("d", Float32, 2, 5))),
			tinfo(Float32, 2, 8), ""},
		{"concat tuple var", opCall(OpConcat, nil, NewVar("t", NewTupleInfo(tinfo(Float32, 2), tinfo(Float32, 3)))), tinfo(Float32, 5), ""},
		{"concat axis None", opCall(OpConcat, Attrs{"axis": nil}, NewTuple(a, b)),
			tinfo(Float32, Add(Mul(symN, I64(4)), Mul(symM, I64(4)))), ""},
		{"concat dim mismatch", opCall(OpConcat, Attrs{"axis": int64(1)}, NewTuple(tensorVar("c", Float32, 2, 3), tensorVar("d", Float32, 4, 3))),
			nil, "R.concat: dimension 0 differs between tensors: 2 vs 4"},
		{"concat dtype", opCall(OpConcat, nil, NewTuple(a, tensorVar("d", Int32, 2, 4))), nil, "R.concat: data types float32 and int32 must be equal"},
		{"concat rank", opCall(OpConcat, nil, NewTuple(a, tensorVar("d", Float32, 4))), nil, "R.concat: tensors have ranks 2 and 1"},
		{"concat not tuple", opCall(OpConcat, nil, a), nil, "R.concat: tensors must be a tuple"},
		{"split sections", opCall(OpSplit, Attrs{"indices_or_sections": int64(3)}, tensorVar("x", Float32, 6, symN)),
			NewTupleInfo(tinfo(Float32, 2, symN), tinfo(Float32, 2, symN), tinfo(Float32, 2, symN)), ""},
		{"split indices", opCall(OpSplit, Attrs{"indices_or_sections": []any{int64(2), int64(5)}, "axis": int64(0)}, tensorVar("x", Float32, 8, symN)),
			NewTupleInfo(tinfo(Float32, 2, symN), tinfo(Float32, 3, symN), tinfo(Float32, 3, symN)), ""},
		{"split symbolic sections", opCall(OpSplit, Attrs{"indices_or_sections": int64(2), "axis": int64(1)}, tensorVar("x", Float32, 3, Mul(symN, I64(2)))),
			NewTupleInfo(tinfo(Float32, 3, symN), tinfo(Float32, 3, symN)), ""},
		{"split uneven", opCall(OpSplit, Attrs{"indices_or_sections": int64(4)}, tensorVar("x", Float32, 6)),
			nil, "R.split: axis 0 of length 6 does not split into 4 equal sections"},
		{"split bad attr", opCall(OpSplit, Attrs{"indices_or_sections": "two"}, tensorVar("x", Float32, 6)),
			nil, "indices_or_sections must be an int or a list of ints"},
	})
}

func TestInferIndexing(t *testing.T) {
	x := tensorVar("x", Float32, 10, symN)
	runInferCases(t, nil, []inferCase{
		{"strided_slice static", opCall(OpStridedSlice, nil, x, primTuple(0), primTuple(2), primTuple(8), primTuple(2)),
			tinfo(Float32, 3, symN), ""},
		{"strided_slice negative", opCall(OpStridedSlice, nil, x, primTuple(0), primTuple(-3), primTuple(100)),
			tinfo(Float32, 3, symN), ""},
		{"strided_slice reverse", opCall(OpStridedSlice, nil, x, primTuple(0), primTuple(9), primTuple(-11), primTuple(-1)),
			tinfo(Float32, 10, symN), ""},
		{"strided_slice symbolic inbound", opCall(OpStridedSlice, Attrs{"assume_inbound": true}, x, primTuple(1), primTuple(1), NewTuple(NewPrimValue(symN))),
			tinfo(Float32, 10, Sub(symN, I64(1))), ""},
		{"strided_slice symbolic", opCall(OpStridedSlice, nil, x, primTuple(1), primTuple(1), NewTuple(NewPrimValue(symN))),
			TensorInfoNDim(Float32, 2), ""},
		{"strided_slice lengths", opCall(OpStridedSlice, nil, x, primTuple(0, 1), primTuple(0), primTuple(1, 1)),
			nil, "R.strided_slice: axes, begin and end must have the same length"},
		{"strided_slice axis range", opCall(OpStridedSlice, nil, x, primTuple(2), primTuple(0), primTuple(1)),
			nil, "axis 2 is out of range"},
		{"strided_slice zero stride", opCall(OpStridedSlice, nil, x, primTuple(0), primTuple(0), primTuple(1), primTuple(0)),
			nil, "stride must not be zero"},
		{"take axis", opCall(OpTake, Attrs{"axis": int64(0)}, tensorVar("y", Float32, symN, 4), tensorVar("i", Int64, symK)),
			tinfo(Float32, symK, 4), ""},
		{"take axis 1 matrix indices", opCall(OpTake, Attrs{"axis": int64(1)}, tensorVar("y", Float32, symN, 4), tensorVar("i", Int32, 2, 3)),
			tinfo(Float32, symN, 2, 3), ""},
		{"take flat", opCall(OpTake, nil, tensorVar("y", Float32, symN, 4), tensorVar("i", Int64, symK)), tinfo(Float32, symK), ""},
		{"take float indices", opCall(OpTake, nil, tensorVar("y", Float32, 4), tensorVar("i", Float32, 2)),
			nil, "R.take: indices must be an integer tensor, got float32"},
		{"take bad mode", opCall(OpTake, Attrs{"mode": "fancy"}, tensorVar("y", Float32, 4), tensorVar("i", Int64, 2)),
			nil, "R.take: mode must be one of"},
	})
}
