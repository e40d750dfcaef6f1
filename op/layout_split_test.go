package op

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/phasec/phasec/ir"
)

func TestParseLayout(t *testing.T) {
	good := []struct {
		in, primal string
		rank       int
		split      bool
	}{
		{"NCHW", "NCHW", 4, false},
		{"NCHW16c", "NCHW", 5, true},
		{"OIHW16i16o", "OIHW", 6, true},
		{"N2nHWC4c", "NHWC", 6, true},
		{"NCW128c", "NCW", 4, true},
		{"", "", 0, false},
	}
	for _, g := range good {
		l, err := parseLayout(g.in)
		require.NoError(t, err, g.in)
		assert.Equal(t, g.primal, l.primal(), g.in)
		assert.Equal(t, g.rank, l.rank(), g.in)
		assert.Equal(t, g.split, l.split(), g.in)
	}
	bad := map[string]string{
		"NCHW16":   "the block size 16 at offset 4 ends the layout",
		"NCH16W":   "the block size 16 at offset 3 precedes the primal axis W",
		"NCHWc":    "the subordinate axis c at offset 4 has no block size",
		"NCHW0c":   "the subordinate axis c at offset 5 has block size 0",
		"NCHW-":    `'-' at offset 4 is not an axis`,
		"NCHWC":    "the axis C occurs twice",
		"NCHW4c4c": "the axis C is split twice",
		"NHW4c":    "the subordinate axis 4c has no primal axis C",
	}
	for in, want := range bad {
		_, err := parseLayout(in)
		require.Error(t, err, in)
		assert.Contains(t, err.Error(), want, in)
	}
}

func TestSplitLayoutShapesAndIndices(t *testing.T) {
	l, err := parseLayout("NHWC4c")
	require.NoError(t, err)
	c := symM
	// ForwardShape: (n, h, w, c, 4) -> (n, h, w, 4c) in primal (NHWC) order.
	got, err := l.unsplitShape(toDims([]any{2, 8, 8, c, 4}))
	require.NoError(t, err)
	assert.Empty(t, infoDiff(ir.TensorInfoOf(ir.Float32, got...), tinfo(ir.Float32, 2, 8, 8, ir.Mul(c, ir.I64(4)))))
	_, err = l.unsplitShape(toDims([]any{2, 8, 8, c, 8}))
	require.ErrorContains(t, err, "axis 4 (the block of C in NHWC4c) has extent 8, the layout says 4")
	// BackwardShape rounds up: 10 channels are 3 blocks of 4.
	assert.Equal(t, []int64{2, 8, 8, 3, 4}, l.splitInts([]int64{2, 8, 8, 10}))
	assert.Equal(t, []int64{2, 8, 8, 12}, l.unsplitInts([]int64{2, 8, 8, 3, 4}))
	// Indices: (0, 1, 2, 2, 3) holds channel 2*4+3 = 11.
	p := make([]int64, 4)
	l.primalIndexInts([]int64{0, 1, 2, 2, 3}, p)
	assert.Equal(t, []int64{0, 1, 2, 11}, p)
}

func TestInferSplitLayouts(t *testing.T) {
	// The symbolic dimensions are the test environments' (dimsEqual), each
	// standing for a few of TVM's; c16, the trusted block extent, does not
	// reach a result.
	n, c, ih, iw, c16 := symN, symM, symK, symK, ir.SymVar("c16")
	ko, kh, kw := symB, symB, ir.I64(1)
	c16x := ir.Mul(c, ir.I64(16))
	conv2d := func(attrs ir.Attrs, x, w *ir.Var) *ir.Call { return opCall(Conv2D, attrs, x, w) }
	// The cases of TVM v0.23's tests/python/relax/test_op_nn_convolution.py
	// and test_op_nn_pooling.py with split layouts.
	runInferCases(t, nil, []inferCase{
		{"conv1d NCW16c OIW16i NWC16c",
			opCall(Conv1D, ir.Attrs{"data_layout": "NCW16c", "kernel_layout": "OIW16i", "out_layout": "NWC16c"},
				tensorVar("x", ir.Float32, 2, 4, 28, 16), tensorVar("w", ir.Float32, 48, 4, 3, 16)),
			tinfo(ir.Float32, 2, 26, 3, 16), ""},
		{"conv2d NCHW16c OIHW16i NHWC16c",
			conv2d(ir.Attrs{"data_layout": "NCHW16c", "kernel_layout": "OIHW16i", "out_layout": "NHWC16c"},
				tensorVar("x", ir.Float32, 2, 4, 28, 28, 16), tensorVar("w", ir.Float32, 48, 4, 3, 3, 16)),
			tinfo(ir.Float32, 2, 26, 26, 3, 16), ""},
		{"conv2d symbolic NCHW16c to NCHW",
			conv2d(ir.Attrs{"data_layout": "NCHW16c", "kernel_layout": "OIHW16i", "out_layout": "NCHW"},
				tensorVar("x", ir.Float32, n, c, ih, iw, c16), tensorVar("w", ir.Float32, ko, c, kh, kw, c16)),
			tinfo(ir.Float32, n, ko, ir.Sub(ir.Add(ih, ir.I64(1)), kh), ir.Sub(ir.Add(iw, ir.I64(1)), kw)), ""},
		{"conv2d groups NCHW16c",
			conv2d(ir.Attrs{"data_layout": "NCHW16c", "groups": int64(8)},
				tensorVar("x", ir.Float32, 2, 8, 28, 28, 16), tensorVar("w", ir.Float32, 48, 16, 3, 3)),
			tinfo(ir.Float32, 2, 3, 26, 26, 16), ""},
		{"conv2d groups OIHW8i",
			conv2d(ir.Attrs{"kernel_layout": "OIHW8i", "groups": int64(8)},
				tensorVar("x", ir.Float32, 2, 128, 28, 28), tensorVar("w", ir.Float32, 48, 2, 3, 3, 8)),
			tinfo(ir.Float32, 2, 48, 26, 26), ""},
		{"conv2d OIHW16i16o", // the weight's 2x16 output channels, 2x16 input ones
			conv2d(ir.Attrs{"data_layout": "NCHW16c", "kernel_layout": "OIHW16i16o"},
				tensorVar("x", ir.Float32, 1, 2, 8, 8, 16), tensorVar("w", ir.Float32, 2, 2, 3, 3, 16, 16)),
			tinfo(ir.Float32, 1, 2, 6, 6, 16), ""},
		{"conv2d padded output", // 4 output channels fill one block of 16
			conv2d(ir.Attrs{"data_layout": "NCHW16c", "out_layout": "NCHW16c"},
				tensorVar("x", ir.Float32, 1, 2, 8, 8, 16), tensorVar("w", ir.Float32, 4, 32, 3, 3)),
			tinfo(ir.Float32, 1, 1, 6, 6, 16), ""},
		{"conv2d unknown shape", conv2d(ir.Attrs{"data_layout": "NCHW16c"}, ir.NewVar("x", ir.TensorInfoNDim(ir.Float32, 5)), tensorVar("w", ir.Float32, 4, 3, 3, 3)),
			ir.TensorInfoNDim(ir.Float32, 5), ""},
		{"conv2d unknown shape out", conv2d(ir.Attrs{"out_layout": "NCHW16c"}, ir.NewVar("x", ir.TensorInfoNDim(ir.Float32, 4)), tensorVar("w", ir.Float32, 4, 3, 3, 3)),
			ir.TensorInfoNDim(ir.Float32, 5), ""},
		{"conv2d_transpose NCHW16c IOHW16i NHWC16c",
			opCall(Conv2DTranspose, ir.Attrs{"data_layout": "NCHW16c", "kernel_layout": "IOHW16i", "out_layout": "NHWC16c"},
				tensorVar("x", ir.Float32, 2, 4, 28, 28, 16), tensorVar("w", ir.Float32, 4, 48, 3, 3, 16)),
			tinfo(ir.Float32, 2, 30, 30, 3, 16), ""},
		{"max_pool2d NCHW16c to NHWC16c", opCall(MaxPool2D, ir.Attrs{"layout": "NCHW16c", "out_layout": "NHWC16c"}, tensorVar("x", ir.Float32, 2, 4, 32, 32, 16)),
			tinfo(ir.Float32, 2, 32, 32, 4, 16), ""},
		{"max_pool2d symbolic NCHW16c to NHWC", opCall(MaxPool2D, ir.Attrs{"layout": "NCHW16c", "out_layout": "NHWC"}, tensorVar("x", ir.Float32, n, c, ih, iw, c16)),
			tinfo(ir.Float32, n, ih, iw, c16x), ""},
		{"avg_pool1d NCW16c to NWC", opCall(AvgPool1D, ir.Attrs{"layout": "NCW16c", "out_layout": "NWC"}, tensorVar("x", ir.Float32, n, c, iw, c16)),
			tinfo(ir.Float32, n, iw, c16x), ""},
		{"max_pool3d NCDHW16c to NDHWC16c", opCall(MaxPool3D, ir.Attrs{"layout": "NCDHW16c", "out_layout": "NDHWC16c"}, tensorVar("x", ir.Float32, 2, 4, 16, 32, 32, 16)),
			tinfo(ir.Float32, 2, 16, 32, 32, 4, 16), ""},
		{"adaptive_avg_pool2d NCHW16c to NHWC16c", opCall(AdaptiveAvgPool2D, ir.Attrs{"layout": "NCHW16c", "out_layout": "NHWC16c"}, tensorVar("x", ir.Float32, 2, 4, 32, 32, 16)),
			tinfo(ir.Float32, 2, 32, 32, 4, 16), ""},
		{"adaptive_avg_pool3d symbolic to NDHWC", opCall(AdaptiveAvgPool3D, ir.Attrs{"layout": "NCDHW16c", "out_layout": "NDHWC"}, tensorVar("x", ir.Float32, n, c, ih, ih, iw, c16)),
			tinfo(ir.Float32, n, ih, ih, iw, c16x), ""},

		// Bad input: the errors TVM raises, and the strings it rejects.
		{"conv2d rank", conv2d(ir.Attrs{"data_layout": "NCHW16c"}, tensorVar("x", ir.Float32, 2, 3, 28, 28), tensorVar("w", ir.Float32, 4, 3, 3, 3)),
			nil, `R.nn.conv2d: data_layout "NCHW16c" is for 5-D tensors, got rank 4`},
		{"conv2d block extent", conv2d(ir.Attrs{"data_layout": "NCHW16c"}, tensorVar("x", ir.Float32, 2, 3, 28, 28, 8), tensorVar("w", ir.Float32, 4, 48, 3, 3)),
			nil, `data_layout: axis 4 (the block of C in NCHW16c) has extent 8, the layout says 16`},
		{"conv2d channels", conv2d(ir.Attrs{"data_layout": "NCHW16c"}, tensorVar("x", ir.Float32, 2, 3, 28, 28, 16), tensorVar("w", ir.Float32, 4, 3, 3, 3)),
			nil, "data has 48 channels but weight expects 3"},
		{"conv2d bad layout string", conv2d(ir.Attrs{"kernel_layout": "OIHW16"}, tensorVar("x", ir.Float32, 2, 3, 28, 28), tensorVar("w", ir.Float32, 4, 3, 3, 3)),
			nil, `kernel_layout "OIHW16" is not a layout: the block size 16 at offset 4 ends the layout`},
		{"conv2d inconvertible", conv2d(ir.Attrs{"data_layout": "NCHD16c"}, tensorVar("x", ir.Float32, 2, 3, 28, 28, 16), tensorVar("w", ir.Float32, 4, 3, 3, 3)),
			nil, `data_layout "NCHD16c" is not convertible to NCHW: it has the axis D, which NCHW has not`},
		{"max_pool2d OIHW", opCall(MaxPool2D, ir.Attrs{"layout": "OIHW"}, tensorVar("x", ir.Float32, 2, 3, 28, 28)),
			nil, `layout "OIHW" is not convertible to NCHW: it has the axis O, which NCHW has not`},
		{"max_pool2d split out rank", opCall(MaxPool2D, ir.Attrs{"out_layout": "NCHW16c"}, tensorVar("x", ir.Float32, 2, 3, 28, 28, 3)),
			nil, "data must be a 4-D tensor, got rank 5"},
	})
}

func TestSplitLayoutDecisions(t *testing.T) {
	// TVM's TransposeSubLayoutStrLike, as its ConvertLayout tests use it.
	assert.Equal(t, "ABCD4b", transposeSubLayoutLike("ABCD", "NCHW", "NCHW4c"))
	assert.Equal(t, "ACDB4b", transposeSubLayoutLike("ABCD", "NCHW", "NHWC4c"))
	assert.Equal(t, "A2aBCD4d", transposeSubLayoutLike("ABCD", "NHWC", "N2nHWC4c"))
	assert.Equal(t, "NCHW4c", transposeSubLayoutLike("NCHW", "ABCD", "ABCD4b"))

	n := symN
	assert.True(t, canProveLayoutTransform("NCHW", "NCHW4c", toDims([]any{2, 16, 28, 28}), false))
	assert.False(t, canProveLayoutTransform("NCHW", "NCHW4c", toDims([]any{2, 15, 28, 28}), false))
	assert.True(t, canProveLayoutTransform("NCHW", "NCHW4c", toDims([]any{2, n, 28, 28}), false), "TVM trusts a symbolic extent")
	assert.False(t, canProveLayoutTransform("NCHW", "NCHW4c", toDims([]any{2, n, 28, 28}), true))
	assert.True(t, canProveLayoutTransform("NCHW", "NCHW4c", toDims([]any{2, ir.Mul(n, ir.I64(8)), 28, 28}), true))
	assert.True(t, canProveLayoutTransform("NCHW4c", "NCHW2c", toDims([]any{2, 3, 28, 28, 4}), true), "12 channels in blocks of 2")
	assert.False(t, canProveLayoutTransform("NCHW4c", "NCHW8c", toDims([]any{2, 3, 28, 28, 4}), false), "12 channels in blocks of 8")
	assert.False(t, canProveLayoutTransform("NCHW", "NCDW4c", toDims([]any{2, 16, 28, 28}), false), "other axes")

	for _, c := range []struct{ from, to, want string }{
		{"ABCD", "ABCD4b", "lambda i0, i1, i2, i3: (i0, i1 // 4, i2, i3, i1 % 4)"},
		{"ABCD4b", "ABCD", "lambda i0, i1, i2, i3, i4: (i0, i1 * 4 + i4, i2, i3)"},
		{"ABCD", "A2aBCD4d", "lambda i0, i1, i2, i3: (i0 // 2, i0 % 2, i1, i2, i3 // 4, i3 % 4)"},
		{"ACDB4b", "ABCD", "lambda i0, i1, i2, i3, i4: (i0, i3 * 4 + i4, i1, i2)"},
	} {
		m, ok := LayoutTransformMap(c.from, c.to)
		require.True(t, ok, c.from)
		assert.Equal(t, c.want, m.Lambda(nil), "%s to %s", c.from, c.to)
	}
	_, ok := LayoutTransformMap("ABCD", "ABC4c")
	assert.False(t, ok, "different axes")

	// The struct info of a converted value, back in its initial layout.
	got := InitialInfo(LeafLayout("ACDB4b"), tinfo(ir.Float32, 2, 26, 26, 1, 4))
	assert.Empty(t, infoDiff(got, tinfo(ir.Float32, 2, 4, 26, 26)))
	assert.Equal(t, LeafLayout("ABCD"), InitialOf(LeafLayout("A2aBCD4d"), nil))
}
