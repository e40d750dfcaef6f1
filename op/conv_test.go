package op

import (
	"testing"

	"github.com/phasec/phasec/ir"
)

func ints(v ...int64) []any {
	out := make([]any, len(v))
	for i, x := range v {
		out[i] = x
	}
	return out
}

func TestInferConvPoolPad(t *testing.T) {
	x := tensorVar("x", ir.Float32, symN, 4, 8, 8)
	w := tensorVar("w", ir.Float32, 6, 4, 3, 3)
	runInferCases(t, nil, []inferCase{
		// (8 + 0 - 3) / 1 + 1 = 6
		{"conv2d", opCall(Conv2D, nil, x, w), tinfo(ir.Float32, symN, 6, 6, 6), ""},
		// (8 + 1 + 1 - 2*2 - 1) / 2 + 1 = 3
		{"conv2d strided", opCall(Conv2D, ir.Attrs{"strides": ints(2), "padding": ints(1), "dilation": ints(2)}, x, w), tinfo(ir.Float32, symN, 6, 3, 3), ""},
		// rows: (8 + 1 + 0 - 3)/1 + 1 = 7; cols: (8 + 2 + 0 - 3)/1 + 1 = 8
		{"conv2d asymmetric padding", opCall(Conv2D, ir.Attrs{"padding": ints(1, 2, 0, 0)}, x, w), tinfo(ir.Float32, symN, 6, 7, 8), ""},
		{"conv2d groups", opCall(Conv2D, ir.Attrs{"groups": int64(2)}, x, tensorVar("g", ir.Float32, 6, 2, 1, 1)), tinfo(ir.Float32, symN, 6, 8, 8), ""},
		{"conv2d out_dtype", opCall(Conv2D, ir.Attrs{"out_dtype": ir.Float64}, x, w), tinfo(ir.Float64, symN, 6, 6, 6), ""},
		{"conv2d channels", opCall(Conv2D, nil, x, tensorVar("g", ir.Float32, 6, 3, 3, 3)), nil, "R.nn.conv2d: data has 4 channels but weight expects 3"},
		{"conv2d groups divide", opCall(Conv2D, ir.Attrs{"groups": int64(4)}, x, tensorVar("g", ir.Float32, 6, 1, 1, 1)), nil, "not divisible by groups=4"},
		{"conv2d rank", opCall(Conv2D, nil, tensorVar("y", ir.Float32, 4, 8, 8), w), nil, "R.nn.conv2d: data must be a 4-D tensor, got rank 3"},
		{"conv2d dtype", opCall(Conv2D, nil, x, tensorVar("g", ir.Int32, 6, 4, 3, 3)), nil, "must be equal"},
		// NHWC data (n, 8, 8, 4), HWIO weight (3, 3, 4, 6): NHWC output.
		{"conv2d NHWC", opCall(Conv2D, ir.Attrs{"data_layout": "NHWC", "kernel_layout": "HWIO"}, tensorVar("y", ir.Float32, symN, 8, 8, 4), tensorVar("k", ir.Float32, 3, 3, 4, 6)),
			tinfo(ir.Float32, symN, 6, 6, 6), ""},
		{"conv2d out_layout", opCall(Conv2D, ir.Attrs{"out_layout": "NHWC", "strides": ints(2)}, x, w), tinfo(ir.Float32, symN, 3, 3, 6), ""},
		{"conv2d NHWC channels", opCall(Conv2D, ir.Attrs{"data_layout": "NHWC"}, x, w), nil, "R.nn.conv2d: data has 8 channels but weight expects 4"},
		{"conv2d layout", opCall(Conv2D, ir.Attrs{"data_layout": "NCHW16c"}, x, w), nil, `data_layout "NCHW16c" is for 5-D tensors, got rank 4`},
		{"conv2d padding length", opCall(Conv2D, ir.Attrs{"padding": ints(1, 2, 3)}, x, w), nil, "padding must have 1, 2 or 4 entries"},
		{"conv2d kernel too large", opCall(Conv2D, nil, tensorVar("y", ir.Float32, 1, 4, 1, 1), w), nil, "is larger than the padded input"},
		// (8 + 1 + 2 - 3) / 2 + 1 = 5
		{"conv1d", opCall(Conv1D, ir.Attrs{"strides": ints(2), "padding": ints(1, 2)}, tensorVar("y", ir.Float32, symN, 4, 8), tensorVar("k", ir.Float32, 6, 4, 3)),
			tinfo(ir.Float32, symN, 6, 5), ""},
		{"conv1d rank", opCall(Conv1D, nil, x, w), nil, "R.nn.conv1d: data must be a 3-D tensor, got rank 4"},
		{"conv1d layout", opCall(Conv1D, ir.Attrs{"data_layout": "NCHW"}, x, w), nil, `data_layout "NCHW" is not convertible to NCW: it has the axis H, which NCW has not`},
		// (4 + 2 - 3)/1 + 1 = 4 on each axis
		{"conv3d", opCall(Conv3D, ir.Attrs{"padding": ints(1)}, tensorVar("y", ir.Float32, 1, 4, 4, 4, 4), tensorVar("k", ir.Float32, 2, 4, 3, 3, 3)),
			tinfo(ir.Float32, 1, 2, 4, 4, 4), ""},
		// ceil((8 + 0 - 3)/2) + 1 = 4 (floor: 3)
		{"max_pool2d ceil", opCall(MaxPool2D, ir.Attrs{"pool_size": ints(3), "strides": ints(2), "ceil_mode": true}, x), tinfo(ir.Float32, symN, 4, 4, 4), ""},
		{"avg_pool2d", opCall(AvgPool2D, ir.Attrs{"pool_size": ints(3), "strides": ints(2)}, x), tinfo(ir.Float32, symN, 4, 3, 3), ""},
		{"pool strides zero", opCall(MaxPool2D, ir.Attrs{"strides": ints(0)}, x), nil, "R.nn.max_pool2d: strides must be positive"},
		{"pad", opCall(Pad, ir.Attrs{"pad_width": ints(0, 0, 1, 2)}, tensorVar("y", ir.Float32, symN, 3)), tinfo(ir.Float32, symN, 6), ""},
		{"pad width", opCall(Pad, ir.Attrs{"pad_width": ints(1, 1)}, tensorVar("y", ir.Float32, symN, 3)), nil, "R.nn.pad: pad_width must have 2 entries per axis of data (4), got 2"},
		{"pad mode", opCall(Pad, ir.Attrs{"pad_width": ints(1, 1), "pad_mode": "wrap"}, tensorVar("y", ir.Float32, 3)), nil, `pad_mode must be "constant", "edge" or "reflect"`},
		{"pad negative", opCall(Pad, ir.Attrs{"pad_width": ints(-2, -2)}, tensorVar("y", ir.Float32, 3)), nil, "negative extent"},
	})
}

func TestInferNormDropoutAdaptive(t *testing.T) {
	x := tensorVar("x", ir.Float32, symN, 4, 6, 6)
	v4 := tensorVar("v", ir.Float32, 4)
	v3 := tensorVar("u", ir.Float32, 3)
	runInferCases(t, nil, []inferCase{
		{"batch_norm", opCall(BatchNorm, ir.Attrs{"axis": int64(1)}, x, v4, v4, v4, v4),
			ir.NewTupleInfo(tinfo(ir.Float32, symN, 4, 6, 6), tinfo(ir.Float32, 4), tinfo(ir.Float32, 4)), ""},
		{"batch_norm channels", opCall(BatchNorm, ir.Attrs{"axis": int64(1)}, x, v4, v3, v4, v4), nil, "R.nn.batch_norm: beta has 3 entries but data has 4 along axis 1"},
		{"batch_norm axis", opCall(BatchNorm, ir.Attrs{"axis": int64(4)}, x, v4, v4, v4, v4), nil, "out of range"},
		{"batch_norm int", opCall(BatchNorm, ir.Attrs{"axis": int64(0)}, tensorVar("y", ir.Int32, 4), v4, v4, v4, v4), nil, "R.nn.batch_norm"},
		{"group_norm", opCall(GroupNorm, ir.Attrs{"num_groups": int64(2), "channel_axis": int64(1), "axes": ints(2, 3)}, x, v4, v4),
			tinfo(ir.Float32, symN, 4, 6, 6), ""},
		{"group_norm groups", opCall(GroupNorm, ir.Attrs{"num_groups": int64(3), "channel_axis": int64(1), "axes": ints(2, 3)}, x, v4, v4),
			nil, "R.nn.group_norm: 4 channels do not split into num_groups=3 groups"},
		{"group_norm channel in axes", opCall(GroupNorm, ir.Attrs{"num_groups": int64(2), "channel_axis": int64(1), "axes": ints(1, 3)}, x, v4, v4),
			nil, "axes must not contain the channel axis 1"},
		{"group_norm gamma", opCall(GroupNorm, ir.Attrs{"num_groups": int64(2), "channel_axis": int64(1), "axes": ints(2)}, x, v3, v4),
			nil, "gamma has 3 entries but data has 4 channels"},
		{"dropout", opCall(Dropout, nil, x), ir.NewTupleInfo(tinfo(ir.Float32, symN, 4, 6, 6), tinfo(ir.Float32, symN, 4, 6, 6)), ""},
		{"dropout rate", opCall(Dropout, ir.Attrs{"rate": 1.0}, x), nil, "R.nn.dropout: rate must be in [0, 1)"},
		{"adaptive default", opCall(AdaptiveAvgPool2D, nil, x), tinfo(ir.Float32, symN, 4, 6, 6), ""},
		{"adaptive size", opCall(AdaptiveAvgPool2D, ir.Attrs{"output_size": ints(1)}, x), tinfo(ir.Float32, symN, 4, 1, 1), ""},
		{"adaptive size zero", opCall(AdaptiveAvgPool2D, ir.Attrs{"output_size": ints(0, 2)}, x), nil, "output_size must be positive"},
		{"adaptive layout", opCall(AdaptiveAvgPool2D, ir.Attrs{"layout": "NCHW4c"}, x), nil, `layout "NCHW4c" is for 5-D tensors, got rank 4`},
	})
}
