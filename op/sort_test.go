package op

import (
	"testing"

	"github.com/phasec/phasec/ir"
)

func TestInferSort(t *testing.T) {
	x := tensorVar("x", ir.Float32, symN, 5)
	runInferCases(t, nil, []inferCase{
		{"sort", opCall(Sort, nil, x), tinfo(ir.Float32, symN, 5), ""},
		{"sort axis", opCall(Sort, ir.Attrs{"axis": int64(2)}, x), nil, "R.sort: axis 2 is out of range"},
		{"argsort", opCall(Argsort, nil, x), tinfo(ir.Int32, symN, 5), ""},
		{"argsort dtype", opCall(Argsort, ir.Attrs{"dtype": ir.Float32}, x), nil, "R.argsort: dtype must be an integer type, got float32"},
		{"topk", opCall(TopK, ir.Attrs{"k": int64(2)}, x), ir.NewTupleInfo(tinfo(ir.Float32, symN, 2), tinfo(ir.Int32, symN, 2)), ""},
		{"topk values", opCall(TopK, ir.Attrs{"k": int64(3), "ret_type": "values"}, x), tinfo(ir.Float32, symN, 3), ""},
		{"topk indices all", opCall(TopK, ir.Attrs{"k": int64(0), "ret_type": "indices", "dtype": ir.Int64}, x), tinfo(ir.Int64, symN, 5), ""},
		{"topk too many", opCall(TopK, ir.Attrs{"k": int64(6)}, x), nil, "R.topk: k=6 exceeds the 5 elements along axis -1"},
		{"topk ret_type", opCall(TopK, ir.Attrs{"ret_type": "all"}, x), nil, `ret_type must be "both", "values" or "indices"`},
	})
}
