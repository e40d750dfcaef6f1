package op

import (
	"testing"

	"github.com/phasec/phasec/ir"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestInferConvTranspose(t *testing.T) {
	x := tensorVar("x", ir.Float32, symN, 4, 5, 6)
	w := tensorVar("w", ir.Float32, 4, 3, 3, 3)
	runInferCases(t, nil, []inferCase{
		// (5-1)*1 + (3-1) + 1 = 7, (6-1) + 2 + 1 = 8; channels: O * groups
		{"conv2d_transpose", opCall(Conv2DTranspose, nil, x, w), tinfo(ir.Float32, symN, 3, 7, 8), ""},
		// rows: (5-1)*2 - 1 - 1 + 2*(3-1) + 1 + 1 = 12; cols: (6-1)*2 - 2 + 2*2 + 1 + 1 = 14
		{"conv2d_transpose strided", opCall(Conv2DTranspose, ir.Attrs{"strides": ints(2), "padding": ints(1), "dilation": ints(2), "output_padding": ints(1)}, x, w),
			tinfo(ir.Float32, symN, 3, 12, 14), ""},
		// rows: 4 + 2 + 1 - (1 + 0) = 6; cols: 5 + 2 + 1 - (2 + 3) = 3
		{"conv2d_transpose asymmetric padding", opCall(Conv2DTranspose, ir.Attrs{"padding": ints(1, 2, 0, 3)}, x, w), tinfo(ir.Float32, symN, 3, 6, 3), ""},
		{"conv2d_transpose groups", opCall(Conv2DTranspose, ir.Attrs{"groups": int64(2)}, x, tensorVar("g", ir.Float32, 4, 3, 1, 1)),
			tinfo(ir.Float32, symN, 6, 5, 6), ""},
		{"conv2d_transpose out_dtype", opCall(Conv2DTranspose, ir.Attrs{"out_dtype": ir.Float64}, x, w), tinfo(ir.Float64, symN, 3, 7, 8), ""},
		// NHWC data (n, 5, 6, 4), HWIO weight (3, 3, 4, 3), NHWC out by default.
		{"conv2d_transpose NHWC", opCall(Conv2DTranspose, ir.Attrs{"data_layout": "NHWC", "kernel_layout": "HWIO"},
			tensorVar("y", ir.Float32, symN, 5, 6, 4), tensorVar("k", ir.Float32, 3, 3, 4, 3)), tinfo(ir.Float32, symN, 7, 8, 3), ""},
		{"conv2d_transpose out_layout", opCall(Conv2DTranspose, ir.Attrs{"out_layout": "NHWC"}, x, w), tinfo(ir.Float32, symN, 7, 8, 3), ""},
		{"conv2d_transpose channels", opCall(Conv2DTranspose, nil, x, tensorVar("g", ir.Float32, 3, 4, 3, 3)), nil,
			"R.nn.conv2d_transpose: data has 4 channels but the weight has 3 input channels (axis I of IOHW)"},
		{"conv2d_transpose groups divide", opCall(Conv2DTranspose, ir.Attrs{"groups": int64(3)}, x, w), nil,
			"R.nn.conv2d_transpose: the weight's 4 input channels are not divisible by groups=3"},
		{"conv2d_transpose output_padding", opCall(Conv2DTranspose, ir.Attrs{"strides": ints(2, 1), "output_padding": ints(1)}, x, w), nil,
			"R.nn.conv2d_transpose: output_padding must be non-negative and less than strides, got output_padding [1 1] and strides [2 1]"},
		{"conv2d_transpose output_padding length", opCall(Conv2DTranspose, ir.Attrs{"output_padding": ints(0, 0, 0)}, x, w), nil,
			"output_padding must have 1 or 2 entries"},
		{"conv2d_transpose groups zero", opCall(Conv2DTranspose, ir.Attrs{"groups": int64(0)}, x, w), nil, "groups must be positive, got 0"},
		{"conv2d_transpose rank", opCall(Conv2DTranspose, nil, tensorVar("y", ir.Float32, 4, 5), w), nil, "R.nn.conv2d_transpose: data must be a 4-D tensor, got rank 2"},
		{"conv2d_transpose dtype", opCall(Conv2DTranspose, nil, x, tensorVar("g", ir.Int32, 4, 3, 3, 3)), nil, "must be equal"},
		{"conv2d_transpose layout", opCall(Conv2DTranspose, ir.Attrs{"data_layout": "NCHW4c"}, x, w), nil,
			`data_layout "NCHW4c" is for 5-D tensors, got rank 4`},
		{"conv2d_transpose kernel layout", opCall(Conv2DTranspose, ir.Attrs{"kernel_layout": "IOHH"}, x, w), nil,
			`kernel_layout "IOHH" is not a layout: the axis H occurs twice`},
		{"conv2d_transpose padding length", opCall(Conv2DTranspose, ir.Attrs{"padding": ints(1, 2, 3)}, x, w), nil, "padding must have 1, 2 or 4 entries"},
		// (1-1) - 2 + 0 + 0 + 1 = -1
		{"conv2d_transpose negative extent", opCall(Conv2DTranspose, ir.Attrs{"padding": ints(1)}, tensorVar("y", ir.Float32, 1, 4, 1, 1), tensorVar("k", ir.Float32, 4, 1, 1, 1)),
			nil, "leaves a negative output extent -1"},
		{"conv2d_transpose unknown shape", opCall(Conv2DTranspose, nil, ir.NewVar("u", ir.TensorInfoNDim(ir.Float32, 4)), w), ir.TensorInfoNDim(ir.Float32, 4), ""},
		// (8-1)*2 - 1 - 2 + 2 + 1 + 1 = 15
		{"conv1d_transpose", opCall(Conv1DTranspose, ir.Attrs{"strides": ints(2), "padding": ints(1, 2), "output_padding": ints(1)},
			tensorVar("y", ir.Float32, symN, 4, 8), tensorVar("k", ir.Float32, 4, 6, 3)), tinfo(ir.Float32, symN, 6, 15), ""},
		{"conv1d_transpose rank", opCall(Conv1DTranspose, nil, x, w), nil, "R.nn.conv1d_transpose: data must be a 3-D tensor, got rank 4"},
		{"conv1d_transpose output_padding", opCall(Conv1DTranspose, ir.Attrs{"output_padding": ints(1)}, tensorVar("y", ir.Float32, 1, 4, 8), tensorVar("k", ir.Float32, 4, 6, 3)),
			nil, "R.nn.conv1d_transpose: output_padding must be non-negative and less than strides"},
		// (4-1) - 2 + 2 + 1 = 4 on each axis
		{"conv3d_transpose", opCall(Conv3DTranspose, ir.Attrs{"padding": ints(1)}, tensorVar("y", ir.Float32, 1, 4, 4, 4, 4), tensorVar("k", ir.Float32, 4, 2, 3, 3, 3)),
			tinfo(ir.Float32, 1, 2, 4, 4, 4), ""},
		{"conv3d_transpose channels symbolic", opCall(Conv3DTranspose, nil, tensorVar("y", ir.Float32, 1, symM, 2, 2, 2), tensorVar("k", ir.Float32, symM, 2, 1, 1, 1)),
			tinfo(ir.Float32, 1, 2, 2, 2, 2), ""},
	})
}

// TestNormalizeConvTranspose checks TVM's canonical attribute lengths and
// the out_layout default (data_layout, not the canonical layout).
func TestNormalizeConvTranspose(t *testing.T) {
	x := tensorVar("x", ir.Float32, 1, 5, 6, 4)
	w := tensorVar("w", ir.Float32, 3, 3, 4, 3)
	call := opCall(Conv2DTranspose, ir.Attrs{"strides": ints(2), "padding": ints(1, 2), "output_padding": int64(1), "data_layout": "NHWC", "kernel_layout": "HWIO"}, x, w)
	got, err := Conv2DTranspose.Normalize(nil, call)
	require.NoError(t, err)
	c := got.(*ir.Call)
	for name, want := range map[string]any{"strides": ints(2, 2), "padding": ints(1, 2, 1, 2), "output_padding": ints(1, 1),
		"dilation": ints(1, 1), "out_layout": "NHWC", "groups": int64(1)} {
		assert.True(t, attrValueEqual(c.Attrs[name], want), "%s = %v, want %v", name, c.Attrs[name], want)
	}
}
