package lower_test

import (
	"fmt"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/phasec/phasec/eval"
	"github.com/phasec/phasec/eval/evaltest"
	"github.com/phasec/phasec/lower"
	"github.com/phasec/phasec/syntax/printer"
)

// TestLegalizePoolOracle checks max/avg pooling over 1, 2 and 3 spatial axes
// and adaptive average pooling (topi.nn.pool1d/2d/3d, adaptive_pool) against
// the evaluator: padding, dilation, ceil mode, count_include_pad, channel-
// last layouts, extent-1 axes and a batch bound only at run time.
func TestLegalizePoolOracle(t *testing.T) {
	var cases []legalCase
	add := func(op, shape, attrs string, dtypes ...string) {
		for _, dt := range dtypes {
			sep := ""
			if attrs != "" {
				sep = ", "
			}
			cases = append(cases, legalCase{name: op + " " + shape + " " + attrs + " " + dt, params: []string{tensorParam("x", shape, dt)},
				body: fmt.Sprintf("gv = R.nn.%s(x%s%s)", op, sep, attrs)})
		}
	}
	window1 := []string{"", "pool_size=[3], strides=[2]", "pool_size=[3], strides=[2], padding=[1, 2], ceil_mode=True",
		"pool_size=[2], dilation=[2], padding=[1]", "pool_size=[3], padding=[2, 0], count_include_pad=False",
		"pool_size=[2], strides=[3], ceil_mode=True, count_include_pad=True", `pool_size=[2], layout="NWC"`}
	window3 := []string{"", "pool_size=[2, 2, 2], strides=[2, 2, 2]", "pool_size=[3, 2, 1], strides=[2, 1, 1], padding=[1, 0, 0, 1, 1, 0], ceil_mode=True",
		"pool_size=[2, 1, 2], dilation=[1, 1, 2], padding=[1]", "pool_size=[2], count_include_pad=False, padding=[1, 0, 1]",
		`pool_size=[2, 2, 1], strides=[1, 2, 1], layout="NDHWC"`}
	for _, kind := range []string{"max", "avg"} {
		dtypes := []string{"float32", "float64", "int32", "uint8", "int8", "int64"}
		for _, a := range window1 {
			for _, shape := range []string{"(2, 3, 7)", `("n", 2, 5)`, "(1, 1, 4)"} {
				add(kind+"_pool1d", shape, a, dtypes...)
			}
		}
		for _, a := range window3 {
			for _, shape := range []string{"(1, 2, 4, 3, 5)", `("n", 1, 3, 3, 3)`, "(1, 1, 1, 2, 2)"} {
				add(kind+"_pool3d", shape, a, dtypes...)
			}
		}
		add(kind+"_pool2d", `("n", 5, 4, 2)`, `pool_size=[2, 3], strides=[2, 1], padding=[1, 1, 0, 1], layout="NHWC"`, dtypes...)
	}
	for _, a := range []string{"", "output_size=[3]", "output_size=[1]", "output_size=[5]", `output_size=[2], layout="NWC"`} {
		for _, shape := range []string{"(2, 3, 7)", `("n", 2, 5)`, "(1, 1, 1)"} {
			add("adaptive_avg_pool1d", shape, a, "float32", "float64", "int32", "int8")
		}
	}
	for _, a := range []string{"", "output_size=[2, 1, 3]", "output_size=[1]", `output_size=[2], layout="NDHWC"`} {
		for _, shape := range []string{"(1, 2, 4, 3, 5)", `("n", 1, 3, 3, 3)`} {
			add("adaptive_avg_pool3d", shape, a, "float32", "int64")
		}
	}
	add("adaptive_avg_pool2d", `("n", 5, 7, 2)`, `output_size=[2, 3], layout="NHWC"`, "float32")
	runFullyLegalized(t, cases)
}

// One hand-derived value per pooling op, computed on paper (numpy/PyTorch
// give the same, except where noted).
func TestLegalizePoolHand(t *testing.T) {
	x1 := `x = R.const([[[1, 5, -2, 7, 3]]], "float32")`
	x3 := `x = R.const([[[[[1, 2], [3, 4]], [[5, 6], [7, 8]]]]], "float32")` // (1, 1, 2, 2, 2)
	runHandCases(t, []handCase{
		// windows [1 5 -2] [-2 7 3] (stride 2)
		{"max_pool1d", x1 + "\ngv = R.nn.max_pool1d(x, pool_size=[3], strides=[2])", `R.const([[[5, 7]]], "float32")`},
		// padded [p 1 5 -2 7 3 p], windows of 2 with stride 2 in ceil mode: [p 1] [5 -2] [7 3] [p]; TVM keeps
		// the last window, all padding, and yields float32's least finite value there (PyTorch drops it)
		{"max_pool1d ceil padding", x1 + "\ngv = R.nn.max_pool1d(x, pool_size=[2], strides=[2], padding=[1, 1], ceil_mode=True)",
			`R.const([[[1, 5, 7, -3.4028234663852886e+38]]], "float32")`},
		// dilation 2: taps {0, 2}, {1, 3}, {2, 4}
		{"max_pool1d dilation", x1 + "\ngv = R.nn.max_pool1d(x, pool_size=[2], dilation=[2])", `R.const([[[1, 7, 3]]], "float32")`},
		// count_include_pad defaults to True for avg_pool1d: [p 1 5] / 3, [-2 7 3] / 3, [p] ... padding [1, 1]
		{"avg_pool1d", x1 + "\ngv = R.nn.avg_pool1d(x, pool_size=[3], strides=[3], padding=[1, 1])", `R.const([[[2, 2.6666667]]], "float32")`},
		{"avg_pool1d exclude pad", x1 + "\ngv = R.nn.avg_pool1d(x, pool_size=[3], strides=[3], padding=[1, 1], count_include_pad=False)", `R.const([[[3, 2.6666667]]], "float32")`},
		// integer average truncates as TIR's Div: (-2 + 7 - 4) / 2 ... windows [-7 2] [-4 -1]
		{"avg_pool1d int", `x = R.const([[[-7, 2, -4, -1]]], "int32")` + "\ngv = R.nn.avg_pool1d(x, pool_size=[2], strides=[2])", `R.const([[[-2, -2]]], "int32")`},
		// topi sums in the data's dtype: 100 + 100 wraps to -56 in int8, 200 + 100 to 44 in uint8
		{"avg_pool1d int8 wraps", `x = R.const([[[100, 100]]], "int8")` + "\ngv = R.nn.avg_pool1d(x, pool_size=[2])", `R.const([[[-28]]], "int8")`},
		{"adaptive_avg_pool1d uint8 wraps", `x = R.const([[[200, 100]]], "uint8")` + "\ngv = R.nn.adaptive_avg_pool1d(x, output_size=[1])", `R.const([[[22]]], "uint8")`},
		{"max_pool3d", x3 + "\ngv = R.nn.max_pool3d(x, pool_size=[2, 1, 2])", `R.const([[[[[6], [8]]]]], "float32")`},
		// all eight: 36 / 8; with padding 1 on every side, the window of 2 at corner (0,0,0) sees only x[0,0,0] = 1
		{"avg_pool3d", x3 + "\ngv = R.nn.avg_pool3d(x, pool_size=[2, 2, 2])", `R.const([[[[[4.5]]]]], "float32")`},
		{"avg_pool3d padded corner", x3 + "\ngv = R.nn.avg_pool3d(x, pool_size=[2, 2, 2], strides=[2, 2, 2], padding=[1], count_include_pad=False)",
			`R.const([[[[[1, 2], [3, 4]], [[5, 6], [7, 8]]]]], "float32")`},
		{"avg_pool3d padded corner incl", x3 + "\ngv = R.nn.avg_pool3d(x, pool_size=[2, 2, 2], strides=[2, 2, 2], padding=[1])",
			`R.const([[[[[0.125, 0.25], [0.375, 0.5]], [[0.625, 0.75], [0.875, 1]]]]], "float32")`},
		{"max_pool2d NHWC", `x = R.const([[[[1, -1], [2, -2]], [[3, -3], [4, -4]]]], "float32")` + "\ngv = R.nn.max_pool2d(x, pool_size=[2, 2], layout=\"NHWC\")",
			`R.const([[[[4, -1]]]], "float32")`},
		// cells of 5 into 2: [0, 3) and [2, 5)
		{"adaptive_avg_pool1d", x1 + "\ngv = R.nn.adaptive_avg_pool1d(x, output_size=[2])", `R.const([[[1.3333334, 2.6666667]]], "float32")`},
		{"adaptive_avg_pool1d up", `x = R.const([[[2, 4]]], "float32")` + "\ngv = R.nn.adaptive_avg_pool1d(x, output_size=[3])", `R.const([[[2, 3, 4]]], "float32")`},
		{"adaptive_avg_pool3d", x3 + "\ngv = R.nn.adaptive_avg_pool3d(x, output_size=[1, 2, 1])", `R.const([[[[[3.5], [5.5]]]]], "float32")`},
		{"adaptive_avg_pool3d NDHWC", x3 + "\ngv = R.nn.adaptive_avg_pool3d(x, output_size=[1], layout=\"NDHWC\")", `R.const([[[[[4, 5]]]]], "float32")`},
	})
}

// Half-precision pooling and resizing. Max pooling and resize2d (which
// interpolates in float32 and rounds once) agree at float32 tolerance;
// the average kernels sum in the data's dtype, rounding each of at most 8
// partial sums (relative 2^-11 for float16, 2^-8 for bfloat16) where the
// evaluator rounds once, so they agree within 8 such roundings of values
// below 1 in magnitude plus the final division's.
func TestLegalizePoolResizeHalfOracle(t *testing.T) {
	for dt, tol := range map[string]float64{"float16": 0.005, "bfloat16": 0.04} {
		for _, c := range []struct {
			shape, body string
			exact       bool
		}{
			{"(2, 3, 7)", "gv = R.nn.max_pool1d(x, pool_size=[3], padding=[1], ceil_mode=True, strides=[2])", true},
			{"(1, 2, 3, 4, 3)", "gv = R.nn.max_pool3d(x, pool_size=[2], padding=[1])", true},
			{"(2, 3, 7)", "gv = R.nn.avg_pool1d(x, pool_size=[3], padding=[1])", false},
			{"(1, 2, 3, 4, 3)", "gv = R.nn.avg_pool3d(x, pool_size=[2], padding=[1], count_include_pad=False)", false},
			{"(2, 3, 7)", "gv = R.nn.adaptive_avg_pool1d(x, output_size=[3])", false},
			{"(1, 2, 4, 3, 5)", "gv = R.nn.adaptive_avg_pool3d(x, output_size=[2])", false},
			{"(2, 3, 4, 7)", `gv = R.image.resize2d(x, (5, 9))`, true},
			{"(2, 3, 4, 7)", `gv = R.image.resize2d(x, (5, 3), method="cubic", coordinate_transformation_mode="pytorch_half_pixel")`, true},
			{"(2, 3, 4, 7)", `gv = R.image.resize2d(x, (5, 9), method="nearest_neighbor", out_dtype="float32")`, true},
		} {
			t.Run(dt+" "+c.body, func(t *testing.T) {
				mod := evaltest.Parse(t, c.body, legalCase{params: []string{tensorParam("x", c.shape, dt)}, body: c.body}.module())
				opts := evaltest.Options{Seed: 1}
				if !c.exact {
					opts.Tol = &eval.Tolerance{Rel: tol, Abs: tol}
				}
				evaltest.CheckPipeline(t, mod, "LegalizeOps", opts)
			})
		}
	}
}

// Symbolic spatial extents, bound only at run time (5 and 6): output
// extents are expressions of them, and resize2d's size may be one too.
func TestLegalizePoolResizeSymbolicSpatial(t *testing.T) {
	d := map[string]int64{"n": 5, "m": 6}
	var cases []legalCase
	for _, b := range []string{
		"gv = R.nn.max_pool2d(x, pool_size=[3, 2], strides=[2, 2], padding=[1], ceil_mode=True)",
		"gv = R.nn.avg_pool2d(x, pool_size=[3, 2], strides=[2, 1], padding=[1, 0, 0, 1], count_include_pad=True)",
		"gv = R.nn.adaptive_avg_pool2d(x, output_size=[2, 4])",
		`gv = R.image.resize2d(x, (7, 3), method="cubic")`,
		`gv = R.image.resize2d(x, R.shape([m, n]), method="nearest_neighbor", coordinate_transformation_mode="asymmetric")`,
		`gv = R.image.resize2d(x, (4, 9), coordinate_transformation_mode="tf_crop_and_resize", roi=[0.2, 0.1, 0.7, 1.2])`,
	} {
		cases = append(cases, legalCase{name: b, params: []string{tensorParam("x", `(1, 2, "n", "m")`, "float32")}, body: b, dims: d})
	}
	runFullyLegalized(t, cases)
}

// A pool whose out_layout differs from its layout is left alone, as TVM's
// legalize_ops/nn.py leaves it (topi pools in one layout), with a
// diagnostic that says why.
func TestLegalizePoolOutLayoutLeftAlone(t *testing.T) {
	c := legalCase{params: []string{tensorParam("x", "(1, 4, 4, 2)", "float32")},
		body: `gv = R.nn.max_pool2d(x, pool_size=[2, 2], layout="NHWC", out_layout="NCHW")`}
	got, errs := lower.LegalizeModule(evaltest.Parse(t, "out_layout", c.module()), lower.LegalizeOptions{})
	require.Len(t, errs, 1, "want one LOW030 naming the reason")
	require.Contains(t, errs[0].Msg, "R.nn.max_pool2d cannot be legalized: topi pools in one layout, and out_layout differs")
	text := printer.Print(got)
	require.NotContains(t, text, "R.call_tir", "legalized")
	require.Contains(t, text, `R.nn.max_pool2d(x`, "lost")
}
