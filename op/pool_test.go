package op

import (
	endian "encoding/binary"
	"math"
	"testing"

	"github.com/phasec/phasec/ir"
	"github.com/stretchr/testify/assert"
)

func TestInferPool1D3DLayouts(t *testing.T) {
	x1 := tensorVar("x", ir.Float32, symN, 3, 9)
	x3 := tensorVar("y", ir.Int32, 2, 3, 5, 6, 7)
	nhwc := tensorVar("z", ir.Float32, symN, 8, 6, 3)
	runInferCases(t, nil, []inferCase{
		// (9 + 1 + 2 - 2*(3-1) - 1) / 2 + 1 = 4
		{"max_pool1d", opCall(MaxPool1D, ir.Attrs{"pool_size": ints(3), "strides": ints(2), "padding": ints(1, 2), "dilation": ints(2)}, x1),
			tinfo(ir.Float32, symN, 3, 4), ""},
		// ceil((9 - 4) / 3) + 1 = 3 (floor: 2)
		{"avg_pool1d ceil", opCall(AvgPool1D, ir.Attrs{"pool_size": ints(4), "strides": ints(3), "ceil_mode": true}, x1), tinfo(ir.Float32, symN, 3, 3), ""},
		{"avg_pool1d NWC", opCall(AvgPool1D, ir.Attrs{"pool_size": ints(2), "layout": "NWC"}, x1), tinfo(ir.Float32, symN, 2, 9), ""},
		// D: (5+2-3)/1+1 = 5; H: (6+2-3)+1 = 6; W: (7+2-3)+1 = 7, padding 1 everywhere
		{"max_pool3d", opCall(MaxPool3D, ir.Attrs{"pool_size": ints(3), "padding": ints(1)}, x3), tinfo(ir.Int32, 2, 3, 5, 6, 7), ""},
		// D: (5-1)/2+1 = 3; H: (6-2)/2+1 = 3; W: (7-3)/2+1 = 3
		{"avg_pool3d", opCall(AvgPool3D, ir.Attrs{"pool_size": ints(1, 2, 3), "strides": ints(2)}, x3), tinfo(ir.Int32, 2, 3, 3, 3, 3), ""},
		// NHWC: H=8 -> (8-2)/2+1 = 4, W=6 -> (6-3)/2+1 = 2 (floor of 1.5)
		{"max_pool2d NHWC", opCall(MaxPool2D, ir.Attrs{"pool_size": ints(2, 3), "strides": ints(2), "layout": "NHWC"}, nhwc), tinfo(ir.Float32, symN, 4, 2, 3), ""},
		// out_layout permutes the result, as TVM's InferStructInfoPool2D
		{"max_pool2d out_layout", opCall(MaxPool2D, ir.Attrs{"pool_size": ints(2), "layout": "NHWC", "out_layout": "NCHW"}, nhwc), tinfo(ir.Float32, symN, 3, 7, 5), ""},
		{"adaptive1d out_layout", opCall(AdaptiveAvgPool1D, ir.Attrs{"output_size": ints(2), "out_layout": "NWC"}, x1), tinfo(ir.Float32, symN, 2, 3), ""},
		{"max_pool2d bad out_layout", opCall(MaxPool2D, ir.Attrs{"layout": "NHWC", "out_layout": "NCDW"}, nhwc), nil,
			`R.nn.max_pool2d: out_layout "NCDW" is not convertible to NCHW: it has the axis D, which NCHW has not`},
		{"max_pool3d split layout", opCall(MaxPool3D, ir.Attrs{"layout": "NCDHW8c"}, x3), nil, `layout "NCDHW8c" is for 6-D tensors, got rank 5`},
		{"max_pool1d layout letters", opCall(MaxPool1D, ir.Attrs{"layout": "NCH"}, x1), nil, `layout "NCH" is not convertible to NCW: it has the axis H, which NCW has not`},
		{"max_pool1d rank", opCall(MaxPool1D, nil, x3), nil, "R.nn.max_pool1d: data must be a 3-D tensor, got rank 5"},
		{"avg_pool3d pool_size entries", opCall(AvgPool3D, ir.Attrs{"pool_size": ints(2, 2)}, x3), nil, "pool_size must have 1 or 3 entries"},
		{"avg_pool3d padding entries", opCall(AvgPool3D, ir.Attrs{"padding": ints(1, 1, 1, 1)}, x3), nil, "padding must have 1, 3 or 6 entries"},
		{"max_pool1d too large", opCall(MaxPool1D, ir.Attrs{"pool_size": ints(12)}, x1), nil, "pool_size [12] is larger than the padded input"},
		{"adaptive1d", opCall(AdaptiveAvgPool1D, ir.Attrs{"output_size": ints(4)}, x1), tinfo(ir.Float32, symN, 3, 4), ""},
		{"adaptive1d default", opCall(AdaptiveAvgPool1D, nil, x1), tinfo(ir.Float32, symN, 3, 9), ""},
		{"adaptive3d", opCall(AdaptiveAvgPool3D, ir.Attrs{"output_size": ints(1, 2, 3)}, x3), tinfo(ir.Int32, 2, 3, 1, 2, 3), ""},
		{"adaptive3d expand", opCall(AdaptiveAvgPool3D, ir.Attrs{"output_size": ints(2)}, x3), tinfo(ir.Int32, 2, 3, 2, 2, 2), ""},
		{"adaptive2d NHWC", opCall(AdaptiveAvgPool2D, ir.Attrs{"output_size": ints(2, 1), "layout": "NHWC"}, nhwc), tinfo(ir.Float32, symN, 2, 1, 3), ""},
		{"adaptive3d size entries", opCall(AdaptiveAvgPool3D, ir.Attrs{"output_size": ints(2, 2)}, x3), nil, "output_size must have 1 or 3 entries"},
	})
}

// The evaluator on the cases where TVM's semantics are easy to get wrong,
// derived by hand: integer sums wrap in the data's dtype and divide
// truncating, a ceil-mode window wholly in padding yields the least finite
// value, adaptive cells overlap.
func TestEvalPoolHand(t *testing.T) {
	i8 := tens(t, ir.Int8, []int64{1, 1, 4}, 100, 100, -7, 2)
	avg := elems(evalT(t, AvgPool1D, ir.Attrs{"pool_size": ints(2), "strides": ints(2), "count_include_pad": false}, i8))
	assert.Equal(t, []float64{-28, -2}, avg) // (200 wraps to -56) / 2; -5 / 2 truncates
	f := tens(t, ir.Float32, []int64{1, 1, 3}, 1, 5, -2)
	mx := elems(evalT(t, MaxPool1D, ir.Attrs{"pool_size": ints(2), "strides": ints(2), "padding": ints(0, 2), "ceil_mode": true}, f))
	assert.Equal(t, []float64{5, -2, -math.MaxFloat32}, mx)
	ncw := tens(t, ir.Float32, []int64{1, 2, 3}, 1, 2, 3, 4, 5, 6)
	nwc := evalT(t, MaxPool1D, ir.Attrs{"pool_size": ints(2), "out_layout": "NWC"}, ncw) // NCW [[2, 3], [5, 6]]
	assert.Equal(t, []int64{1, 2, 2}, nwc.Shape)
	assert.Equal(t, []float64{2, 5, 3, 6}, elems(nwc))
	// out_layout NWC: the (1, 1, 2) result (3, 1.5) read as (N, W, C)
	re := evalT(t, AdaptiveAvgPool1D, ir.Attrs{"output_size": ints(2), "out_layout": "NWC"}, f)
	assert.Equal(t, []int64{1, 2, 1}, re.Shape)
	assert.InDeltaSlice(t, []float64{3, 1.5}, elems(re), 1e-6)
	ad := elems(evalT(t, AdaptiveAvgPool1D, ir.Attrs{"output_size": ints(2)}, f)) // cells [0, 2) and [1, 3)
	assert.InDeltaSlice(t, []float64{3, 1.5}, ad, 1e-6)
	i64 := tens(t, ir.Int64, []int64{1, 1, 2}, 0, 0)
	endian.LittleEndian.PutUint64(i64.Bytes()[8:], math.MaxInt64-1)
	got := evalT(t, MaxPool1D, ir.Attrs{"pool_size": ints(2)}, i64).Bytes()
	assert.Equal(t, uint64(math.MaxInt64-1), endian.LittleEndian.Uint64(got)) // exact, not via float64
}
