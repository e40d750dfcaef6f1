package op

import (
	"testing"

	"github.com/phasec/phasec/ir"
)

func TestInferAttention(t *testing.T) {
	q := tensorVar("q", ir.Float32, 2, symN, 4, 8)
	k := tensorVar("k", ir.Float32, 2, symM, 4, 8)
	v := tensorVar("v", ir.Float32, 2, symM, 4, 6)
	runInferCases(t, nil, []inferCase{
		{"attention", opCall(Attention, nil, q, k, v), tinfo(ir.Float32, 2, symN, 4, 6), ""},
		{"attention bias", opCall(Attention, ir.Attrs{"causal_mask": "TopLeft"}, q, k, v, tensorVar("b", ir.Float32, 1, 4, symN, symM)), tinfo(ir.Float32, 2, symN, 4, 6), ""},
		{"attention heads", opCall(Attention, nil, q, tensorVar("k", ir.Float32, 2, symM, 3, 8), v), nil, "R.nn.attention: query and key head counts differ: 4 vs 3"},
		{"attention head dim", opCall(Attention, nil, q, tensorVar("k", ir.Float32, 2, symM, 4, 7), v), nil, "query and key head dims differ: 8 vs 7"},
		{"attention rank", opCall(Attention, nil, tensorVar("x", ir.Float32, 2, 4, 8), k, v), nil, "query must be 4-D"},
		{"attention mask", opCall(Attention, ir.Attrs{"causal_mask": "Top"}, q, k, v), nil, `causal_mask must be "TopLeft" or "BottomRight"`},
		{"attention window", opCall(Attention, ir.Attrs{"window_size": int64(2)}, q, k, v), tinfo(ir.Float32, 2, symN, 4, 6), ""},
		{"attention window zero", opCall(Attention, ir.Attrs{"window_size": int64(0), "causal_mask": "TopLeft"}, q, k, v), nil, "R.nn.attention: window_size must be positive, got 0"},
		{"attention int", opCall(Attention, nil, tensorVar("x", ir.Int32, 2, 1, 4, 8), tensorVar("y", ir.Int32, 2, 1, 4, 8), tensorVar("z", ir.Int32, 2, 1, 4, 8)), nil, "R.nn.attention"},
	})
}
