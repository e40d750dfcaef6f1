package op

import (
	"testing"

	"github.com/phasec/phasec/ir"
)

func pv(e ir.PrimExpr) *ir.PrimValue { return ir.NewPrimValue(e) }

func TestInferArangeEyeOneHot(t *testing.T) {
	idx := tensorVar("i", ir.Int32, symN, 3)
	f32 := func(v float64) ir.PrimExpr { return ir.NewFloat(ir.Float32, v) }
	runInferCases(t, nil, []inferCase{
		{"arange end", opCall(Arange, nil, primLit(5)), tinfo(ir.Int64, 5), ""},
		// ceil((10 - 1) / 3) = 3
		{"arange step", opCall(Arange, ir.Attrs{"dtype": ir.Float32}, primLit(1), primLit(10), primLit(3)), tinfo(ir.Float32, 3), ""},
		// ceil((0 - 5) / -2) = 3
		{"arange negative step", opCall(Arange, nil, primLit(5), primLit(0), primLit(-2)), tinfo(ir.Int64, 3), ""},
		{"arange empty", opCall(Arange, nil, primLit(5), primLit(1)), tinfo(ir.Int64, 0), ""},
		// ceil((2 - 0.5) / 0.25) = 6, float operands default to float32
		{"arange float", opCall(Arange, nil, pv(f32(0.5)), pv(f32(2)), pv(f32(0.25))), tinfo(ir.Float32, 6), ""},
		{"arange symbolic", opCall(Arange, nil, primLit(0), pv(symN), primLit(2)), tinfo(ir.Int64, ir.FloorDiv(ir.Add(symN, ir.I64(1)), ir.I64(2))), ""},
		{"arange zero step", opCall(Arange, nil, primLit(0), primLit(4), primLit(0)), nil, "R.arange: step must be nonzero"},
		{"arange tensor", opCall(Arange, nil, idx), nil, "R.arange: end must be an R.prim_value"},
		{"eye", opCall(Eye, nil, primLit(3)), tinfo(ir.Float32, 3, 3), ""},
		{"eye symbolic", opCall(Eye, ir.Attrs{"dtype": ir.Int32}, pv(symN), primLit(2), primLit(1)), tinfo(ir.Int32, symN, 2), ""},
		{"eye negative", opCall(Eye, nil, primLit(-1)), nil, "R.eye: n must be non-negative"},
		{"eye float", opCall(Eye, nil, pv(f32(2))), nil, "R.eye: n must be an integer"},
		{"one_hot", opCall(OneHot, ir.Attrs{"depth": int64(4)}, idx, pv(f32(1)), pv(f32(0))), tinfo(ir.Float32, symN, 3, 4), ""},
		{"one_hot axis", opCall(OneHot, ir.Attrs{"depth": int64(4), "axis": int64(0)}, idx, primLit(1), primLit(0)), tinfo(ir.Int64, 4, symN, 3), ""},
		{"one_hot dtypes", opCall(OneHot, ir.Attrs{"depth": int64(4)}, idx, pv(f32(1)), primLit(0)), nil, "R.one_hot: on_value and off_value must have one dtype, got float32 and int64"},
		{"one_hot float indices", opCall(OneHot, ir.Attrs{"depth": int64(4)}, tensorVar("y", ir.Float32, 3), primLit(1), primLit(0)), nil, "indices must be an integer tensor"},
		{"one_hot depth", opCall(OneHot, ir.Attrs{"depth": int64(0)}, idx, primLit(1), primLit(0)), nil, "depth must be positive"},
		{"one_hot axis range", opCall(OneHot, ir.Attrs{"depth": int64(2), "axis": int64(3)}, idx, primLit(1), primLit(0)), nil, "axis 3 is out of range"},
	})
}
