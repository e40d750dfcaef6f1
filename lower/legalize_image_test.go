package lower_test

import (
	"fmt"
	"testing"
)

// TestLegalizeResize2DOracle checks R.image.resize2d's kernels (topi's
// image.resize2d) against the evaluator: every method, coordinate
// transformation and rounding method, up- and downscaling, extent-1 axes,
// NHWC, a batch bound only at run time, float and integer dtypes and
// out_dtype.
func TestLegalizeResize2DOracle(t *testing.T) {
	var cases []legalCase
	add := func(shape, size, attrs string, dtypes ...string) {
		for _, dt := range dtypes {
			cases = append(cases, legalCase{name: fmt.Sprintf("resize2d %s to %s %s %s", shape, size, attrs, dt), params: []string{tensorParam("x", shape, dt)},
				body: fmt.Sprintf("gv = R.image.resize2d(x, %s%s)", size, attrs)})
		}
	}
	modes := []string{"half_pixel", "align_corners", "asymmetric", "pytorch_half_pixel", "tf_half_pixel_for_nn", "tf_crop_and_resize"}
	for _, method := range []string{"nearest_neighbor", "linear", "cubic"} {
		for _, mode := range modes {
			attrs := fmt.Sprintf(", method=%q, coordinate_transformation_mode=%q", method, mode)
			if mode == "tf_crop_and_resize" {
				attrs += ", roi=[0.1, -0.2, 0.8, 1.3], extrapolation_value=-1.5"
			}
			for _, sz := range []struct{ shape, size string }{
				{"(1, 2, 3, 4)", "(6, 8)"},   // integer upscale
				{"(2, 1, 5, 7)", "(3, 2)"},   // downscale
				{`("n", 2, 4, 3)`, "(7, 5)"}, // fractional, symbolic batch
				{"(1, 1, 1, 3)", "(2, 5)"},   // extent-1 input axis
				{"(1, 2, 4, 5)", "(4, 5)"},   // same size
			} {
				add(sz.shape, sz.size, attrs, "float32", "int32")
			}
			add(`("n", 4, 3, 2)`, "(5, 6)", attrs+`, layout="NHWC"`, "float64", "uint8")
			if mode != "align_corners" {
				add("(1, 2, 3, 4)", "(1, 1)", attrs, "float32")
			}
		}
	}
	for _, rounding := range []string{"", "round", "round_prefer_floor", "round_prefer_ceil", "floor", "ceil"} {
		for _, mode := range []string{"half_pixel", "asymmetric", "align_corners"} {
			attrs := fmt.Sprintf(`, method="nearest_neighbor", coordinate_transformation_mode=%q, rounding_method=%q`, mode, rounding)
			add("(1, 2, 3, 5)", "(7, 4)", attrs, "float32", "int8")
			add("(1, 1, 3, 2)", "(6, 6)", attrs, "int32") // integer multiple: topi's integer-division shortcut for asymmetric
		}
	}
	for _, c := range []string{", cubic_alpha=-0.5", ", cubic_exclude=1", ", cubic_alpha=-0.6, cubic_exclude=1"} {
		add("(1, 2, 4, 4)", "(7, 3)", `, method="cubic"`+c, "float32", "float64")
	}
	add("(1, 2, 3, 3)", "(5, 4)", `, out_dtype="float64"`, "float32", "int32")
	add("(1, 2, 3, 3)", "(5, 4)", `, method="cubic", out_dtype="int32"`, "float32")
	add("(1, 2, 3, 3)", "(5, 4)", `, method="nearest_neighbor", out_dtype="float16"`, "int32")
	add("(1, 2, 3, 3)", "(0, 4)", "", "float32")
	runFullyLegalized(t, cases)
}

// Hand-derived resize2d values (PyTorch/ONNX give the same where they
// share the rule; TVM's own quirks are noted).
func TestLegalizeResize2DHand(t *testing.T) {
	row := `x = R.const([[[[1, 3]]]], "float32")`
	ramp := `x = R.const([[[[0, 1, 2, 3, 4, 5]]]], "float32")`
	runHandCases(t, []handCase{
		// half_pixel: source x = (i + 0.5) / 2 - 0.5 = -0.25, 0.25, 0.75, 1.25, edges clamped
		{"linear half_pixel", row + "\ngv = R.image.resize2d(x, (1, 4))", `R.const([[[[1, 1.5, 2.5, 3]]]], "float32")`},
		// align_corners: source = i * (2 - 1) / (3 - 1) on both axes
		{"linear align_corners", `x = R.const([[[[1, 3], [5, 7]]]], "float32")` + "\ngv = R.image.resize2d(x, (3, 3), coordinate_transformation_mode=\"align_corners\")",
			`R.const([[[[1, 2, 3], [3, 4, 5], [5, 6, 7]]]], "float32")`},
		// 3 -> 6 is an integer multiple: topi indexes i / 2 and ignores rounding "round" (which would give 10 10 20 30 30 30)
		{"nearest asymmetric integer multiple", `x = R.const([[[[10, 20, 30]]]], "int32")` +
			"\ngv = R.image.resize2d(x, (1, 6), method=\"nearest_neighbor\", coordinate_transformation_mode=\"asymmetric\")", `R.const([[[[10, 10, 20, 20, 30, 30]]]], "int32")`},
		// 5 -> 3 is not: source i * 5/3 = 0, 1.67, 3.33 rounded half to even
		{"nearest asymmetric round", `x = R.const([[[[10, 20, 30, 40, 50]]]], "int32")` +
			"\ngv = R.image.resize2d(x, (1, 3), method=\"nearest_neighbor\", coordinate_transformation_mode=\"asymmetric\")", `R.const([[[[10, 30, 40]]]], "int32")`},
		// half_pixel 4 -> 2: source 0.5 and 2.5; round to even gives 0, 2; round_prefer_ceil 1, 3
		{"nearest round ties even", `x = R.const([[[[1, 2, 3, 4]]]], "float32")` + "\ngv = R.image.resize2d(x, (1, 2), method=\"nearest_neighbor\")", `R.const([[[[1, 3]]]], "float32")`},
		{"nearest round_prefer_ceil", `x = R.const([[[[1, 2, 3, 4]]]], "float32")` +
			"\ngv = R.image.resize2d(x, (1, 2), method=\"nearest_neighbor\", rounding_method=\"round_prefer_ceil\")", `R.const([[[[2, 4]]]], "float32")`},
		// cubic, alpha -0.75, t = 0.5: weights -0.09375, 0.59375, 0.59375, -0.09375 on taps base-1..base+2
		// (sources 0.5, 2.5, 4.5; taps clamped to [0, 5])
		{"cubic", ramp + "\ngv = R.image.resize2d(x, (1, 3), method=\"cubic\")", `R.const([[[[0.40625, 2.5, 4.59375]]]], "float32")`},
		// cubic_exclude drops the taps outside the image (at -1 for source 0.5: 0.40625 / 1.09375; at 6 for
		// source 4.5: (-0.09375*3 + 0.59375*4 + 0.59375*5) / 1.09375) and renormalises
		{"cubic exclude", ramp + "\ngv = R.image.resize2d(x, (1, 3), method=\"cubic\", cubic_exclude=1)", `R.const([[[[0.37142858, 2.5, 4.6285714]]]], "float32")`},
		// crop: source x = i * (end - start) * (2 - 1) / (3 - 1); beyond the image the extrapolation value
		{"crop_and_resize", row + "\ngv = R.image.resize2d(x, (1, 3), roi=[0, 0, 0, 1], coordinate_transformation_mode=\"tf_crop_and_resize\")",
			`R.const([[[[1, 2, 3]]]], "float32")`},
		{"crop_and_resize extrapolation", row + "\ngv = R.image.resize2d(x, (1, 3), roi=[0, 0, 0, 2], coordinate_transformation_mode=\"tf_crop_and_resize\", extrapolation_value=-1)",
			`R.const([[[[1, 3, -1]]]], "float32")`},
		// NHWC, out_dtype int32 truncates 1.5 and 2.5
		{"NHWC out_dtype", `x = R.const([[[[1], [3]]]], "float32")` + "\ngv = R.image.resize2d(x, (1, 4), layout=\"NHWC\", out_dtype=\"int32\")",
			`R.const([[[[1], [1], [2], [3]]]], "int32")`},
	})
}
