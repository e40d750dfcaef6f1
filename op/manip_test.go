package op

import (
	"testing"

	"github.com/phasec/phasec/ir"
)

func TestInferLayoutOps(t *testing.T) {
	x := tensorVar("x", ir.Float32, symN, 3, 4)
	runInferCases(t, nil, []inferCase{
		{"permute reverse", opCall(PermuteDims, nil, x), tinfo(ir.Float32, 4, 3, symN), ""},
		{"permute axes", opCall(PermuteDims, ir.Attrs{"axes": []any{int64(0), int64(2), int64(1)}}, x), tinfo(ir.Float32, symN, 4, 3), ""},
		{"permute wrong length", opCall(PermuteDims, ir.Attrs{"axes": []any{int64(0), int64(1)}}, x), nil, "R.permute_dims: axes has 2 entries but x has rank 3"},
		{"permute repeat", opCall(PermuteDims, ir.Attrs{"axes": []any{int64(0), int64(0), int64(1)}}, x), nil, "appears twice"},
		{"permute unknown rank", opCall(PermuteDims, ir.Attrs{"axes": []any{int64(1), int64(0)}}, ir.NewVar("y", ir.TensorInfoNDim(ir.Float32, -1))),
			ir.TensorInfoNDim(ir.Float32, 2), ""},
		{"expand_dims", opCall(ExpandDims, ir.Attrs{"axis": []any{int64(0), int64(-1)}}, tensorVar("y", ir.Float32, symN, 4)),
			tinfo(ir.Float32, 1, symN, 4, 1), ""},
		{"expand_dims range", opCall(ExpandDims, ir.Attrs{"axis": []any{int64(3)}}, tensorVar("y", ir.Float32, symN, 4)),
			nil, "R.expand_dims: axis 3 is out of range for a tensor of rank 3"},
		{"squeeze all static", opCall(Squeeze, nil, tensorVar("y", ir.Float32, 1, 3, 1)), tinfo(ir.Float32, 3), ""},
		{"squeeze all symbolic", opCall(Squeeze, nil, tensorVar("y", ir.Float32, 1, symN, 1)), ir.TensorInfoNDim(ir.Float32, -1), ""},
		{"squeeze axis", opCall(Squeeze, ir.Attrs{"axis": []any{int64(0)}}, tensorVar("y", ir.Float32, 1, symN, 1)), tinfo(ir.Float32, symN, 1), ""},
		{"squeeze non-unit", opCall(Squeeze, ir.Attrs{"axis": []any{int64(1)}}, tensorVar("y", ir.Float32, 1, 3)),
			nil, "R.squeeze: cannot squeeze axis 1 of length 3"},
		{"flatten", opCall(Flatten, nil, tensorVar("y", ir.Float32, symN, 4, 2)), tinfo(ir.Float32, ir.Mul(symN, ir.I64(8))), ""},
		{"flatten scalar", opCall(Flatten, nil, tensorVar("y", ir.Float32)), tinfo(ir.Float32, 1), ""},
		{"flatten unknown", opCall(Flatten, nil, ir.NewVar("y", ir.TensorInfoNDim(ir.Float32, 3))), ir.TensorInfoNDim(ir.Float32, 1), ""},
		{"broadcast_to", opCall(BroadcastTo, nil, tensorVar("y", ir.Float32, 1, 4), shapeLit(symN, 4)), tinfo(ir.Float32, symN, 4), ""},
		{"broadcast_to mismatch", opCall(BroadcastTo, nil, tensorVar("y", ir.Float32, 3, 4), shapeLit(2, 4)),
			nil, "R.broadcast_to: cannot broadcast dimension 3 to 2"},
		{"broadcast_to rank", opCall(BroadcastTo, nil, tensorVar("y", ir.Float32, 3, 4), shapeLit(4)),
			nil, "cannot broadcast a tensor of rank 2 to rank 1"},
	})
}

func TestInferConcatSplit(t *testing.T) {
	a := tensorVar("a", ir.Float32, symN, 4)
	b := tensorVar("b", ir.Float32, symM, 4)
	runInferCases(t, nil, []inferCase{
		{"concat axis 0", opCall(Concat, nil, ir.NewTuple(a, b)), tinfo(ir.Float32, ir.Add(symN, symM), 4), ""},
		{"concat static", opCall(Concat, ir.Attrs{"axis": int64(-1)}, ir.NewTuple(tensorVar("c", ir.Float32, 2, 3), tensorVar("d", ir.Float32, 2, 5))),
			tinfo(ir.Float32, 2, 8), ""},
		{"concat tuple var", opCall(Concat, nil, ir.NewVar("t", ir.NewTupleInfo(tinfo(ir.Float32, 2), tinfo(ir.Float32, 3)))), tinfo(ir.Float32, 5), ""},
		{"concat axis None", opCall(Concat, ir.Attrs{"axis": nil}, ir.NewTuple(a, b)),
			tinfo(ir.Float32, ir.Add(ir.Mul(symN, ir.I64(4)), ir.Mul(symM, ir.I64(4)))), ""},
		{"concat dim mismatch", opCall(Concat, ir.Attrs{"axis": int64(1)}, ir.NewTuple(tensorVar("c", ir.Float32, 2, 3), tensorVar("d", ir.Float32, 4, 3))),
			nil, "R.concat: dimension 0 differs between tensors: 2 vs 4"},
		{"concat dtype", opCall(Concat, nil, ir.NewTuple(a, tensorVar("d", ir.Int32, 2, 4))), nil, "R.concat: data types float32 and int32 must be equal"},
		{"concat rank", opCall(Concat, nil, ir.NewTuple(a, tensorVar("d", ir.Float32, 4))), nil, "R.concat: tensors have ranks 2 and 1"},
		{"concat not tuple", opCall(Concat, nil, a), nil, "R.concat: tensors must be a tuple"},
		{"split sections", opCall(Split, ir.Attrs{"indices_or_sections": int64(3)}, tensorVar("x", ir.Float32, 6, symN)),
			ir.NewTupleInfo(tinfo(ir.Float32, 2, symN), tinfo(ir.Float32, 2, symN), tinfo(ir.Float32, 2, symN)), ""},
		{"split indices", opCall(Split, ir.Attrs{"indices_or_sections": []any{int64(2), int64(5)}, "axis": int64(0)}, tensorVar("x", ir.Float32, 8, symN)),
			ir.NewTupleInfo(tinfo(ir.Float32, 2, symN), tinfo(ir.Float32, 3, symN), tinfo(ir.Float32, 3, symN)), ""},
		{"split symbolic sections", opCall(Split, ir.Attrs{"indices_or_sections": int64(2), "axis": int64(1)}, tensorVar("x", ir.Float32, 3, ir.Mul(symN, ir.I64(2)))),
			ir.NewTupleInfo(tinfo(ir.Float32, 3, symN), tinfo(ir.Float32, 3, symN)), ""},
		// TVM's InferStructInfoSplit: sections-1 parts of ceil(length /
		// sections), the last the rest.
		{"split uneven", opCall(Split, ir.Attrs{"indices_or_sections": int64(3)}, tensorVar("x", ir.Float32, 10)),
			ir.NewTupleInfo(tinfo(ir.Float32, 4), tinfo(ir.Float32, 4), tinfo(ir.Float32, 2)), ""},
		{"split uneven empty last", opCall(Split, ir.Attrs{"indices_or_sections": int64(4)}, tensorVar("x", ir.Float32, 6)),
			ir.NewTupleInfo(tinfo(ir.Float32, 2), tinfo(ir.Float32, 2), tinfo(ir.Float32, 2), tinfo(ir.Float32, 0)), ""},
		{"split negative last", opCall(Split, ir.Attrs{"indices_or_sections": int64(4)}, tensorVar("x", ir.Float32, 5)),
			nil, "R.split: axis 0 of length 5 does not split into 4 sections: 3 parts of 2 leave -1 for the last"},
		{"split bad attr", opCall(Split, ir.Attrs{"indices_or_sections": "two"}, tensorVar("x", ir.Float32, 6)),
			nil, "indices_or_sections must be an int or a list of ints"},
	})
}

func TestInferIndexing(t *testing.T) {
	x := tensorVar("x", ir.Float32, 10, symN)
	runInferCases(t, nil, []inferCase{
		{"strided_slice static", opCall(StridedSlice, nil, x, primTuple(0), primTuple(2), primTuple(8), primTuple(2)),
			tinfo(ir.Float32, 3, symN), ""},
		{"strided_slice negative", opCall(StridedSlice, nil, x, primTuple(0), primTuple(-3), primTuple(100)),
			tinfo(ir.Float32, 3, symN), ""},
		{"strided_slice reverse", opCall(StridedSlice, nil, x, primTuple(0), primTuple(9), primTuple(-11), primTuple(-1)),
			tinfo(ir.Float32, 10, symN), ""},
		{"strided_slice symbolic inbound", opCall(StridedSlice, ir.Attrs{"assume_inbound": true}, x, primTuple(1), primTuple(1), ir.NewTuple(ir.NewPrimValue(symN))),
			tinfo(ir.Float32, 10, ir.Sub(symN, ir.I64(1))), ""},
		{"strided_slice symbolic", opCall(StridedSlice, nil, x, primTuple(1), primTuple(1), ir.NewTuple(ir.NewPrimValue(symN))),
			ir.TensorInfoNDim(ir.Float32, 2), ""},
		{"strided_slice lengths", opCall(StridedSlice, nil, x, primTuple(0, 1), primTuple(0), primTuple(1, 1)),
			nil, "R.strided_slice: axes, begin and end must have the same length"},
		{"strided_slice axis range", opCall(StridedSlice, nil, x, primTuple(2), primTuple(0), primTuple(1)),
			nil, "axis 2 is out of range"},
		{"strided_slice zero stride", opCall(StridedSlice, nil, x, primTuple(0), primTuple(0), primTuple(1), primTuple(0)),
			nil, "stride must not be zero"},
		{"take axis", opCall(Take, ir.Attrs{"axis": int64(0)}, tensorVar("y", ir.Float32, symN, 4), tensorVar("i", ir.Int64, symK)),
			tinfo(ir.Float32, symK, 4), ""},
		{"take axis 1 matrix indices", opCall(Take, ir.Attrs{"axis": int64(1)}, tensorVar("y", ir.Float32, symN, 4), tensorVar("i", ir.Int32, 2, 3)),
			tinfo(ir.Float32, symN, 2, 3), ""},
		{"take flat", opCall(Take, nil, tensorVar("y", ir.Float32, symN, 4), tensorVar("i", ir.Int64, symK)), tinfo(ir.Float32, symK), ""},
		{"take float indices", opCall(Take, nil, tensorVar("y", ir.Float32, 4), tensorVar("i", ir.Float32, 2)),
			nil, "R.take: indices must be an integer tensor, got float32"},
		{"take bad mode", opCall(Take, ir.Attrs{"mode": "fancy"}, tensorVar("y", ir.Float32, 4), tensorVar("i", ir.Int64, 2)),
			nil, "R.take: mode must be one of"},
	})
}
