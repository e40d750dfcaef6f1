package lower_test

import (
	"fmt"
	"testing"
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
		dtypes := []string{"float32", "float64"}
		if kind == "max" {
			dtypes = append(dtypes, "int32", "uint8")
		}
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
			add("adaptive_avg_pool1d", shape, a, "float32", "float64")
		}
	}
	for _, a := range []string{"", "output_size=[2, 1, 3]", "output_size=[1]", `output_size=[2], layout="NDHWC"`} {
		for _, shape := range []string{"(1, 2, 4, 3, 5)", `("n", 1, 3, 3, 3)`} {
			add("adaptive_avg_pool3d", shape, a, "float32")
		}
	}
	add("adaptive_avg_pool2d", `("n", 5, 7, 2)`, `output_size=[2, 3], layout="NHWC"`, "float32")
	runFullyLegalized(t, cases)
}
