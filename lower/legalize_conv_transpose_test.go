package lower_test

import (
	"fmt"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/phasec/phasec/eval"
	"github.com/phasec/phasec/eval/evaltest"
	"github.com/phasec/phasec/lower"
	"github.com/phasec/phasec/op"
	"github.com/phasec/phasec/passes/passtest"
	"github.com/phasec/phasec/syntax/printer"
	"github.com/phasec/phasec/tensor"
)

// TestLegalizeConvTransposeOracle checks the legalized conv*d_transpose
// kernels against the evaluator's scatter definition: strides, the 1-, N-
// and 2N-entry padding forms, output_padding, dilation, groups, permuted
// layouts, out_dtype, extent-1 and extent-0 dims and a symbolic batch
// bound at run time, on every dtype family the op accepts.
func TestLegalizeConvTransposeOracle(t *testing.T) {
	var cases []legalCase
	for _, c := range []struct{ op, x, w, attrs string }{
		{"conv1d_transpose", "(2, 3, 4)", "(3, 2, 3)", ""},
		{"conv1d_transpose", `("n", 4, 5)`, "(4, 1, 3)", "strides=[2], padding=[1, 2], output_padding=[1], groups=2"},
		{"conv1d_transpose", "(1, 2, 3)", "(2, 3, 2)", "strides=3, padding=1, output_padding=2, dilation=2"},
		{"conv1d_transpose", "(1, 1, 1)", "(1, 1, 1)", ""},
		{"conv1d_transpose", "(2, 2, 0)", "(2, 1, 3)", ""},
		{"conv1d_transpose", "(1, 2, 0)", "(2, 2, 4)", "strides=2, output_padding=1"},
		{"conv1d_transpose", "(2, 5, 3)", "(2, 3, 2)", `strides=[2], data_layout="NWC", kernel_layout="WIO"`},
		{"conv2d_transpose", "(1, 3, 3, 3)", "(3, 2, 3, 3)", ""},
		{"conv2d_transpose", `("n", 2, 3, 4)`, "(2, 3, 2, 3)", "strides=[2, 1], padding=[1, 0, 2, 1], output_padding=[1, 0]"},
		{"conv2d_transpose", "(2, 4, 3, 3)", "(4, 2, 3, 2)", "strides=[2], padding=[1, 2], dilation=[2, 1], groups=2"},
		{"conv2d_transpose", "(1, 6, 2, 2)", "(6, 1, 2, 2)", "strides=[3, 2], output_padding=[2, 1], groups=3"},
		{"conv2d_transpose", "(1, 2, 1, 1)", "(2, 1, 1, 1)", ""},
		{"conv2d_transpose", "(0, 2, 3, 3)", "(2, 2, 3, 3)", "padding=[1]"},
		{"conv2d_transpose", `("n", 3, 4, 2)`, "(2, 2, 2, 3)", `strides=[2, 1], data_layout="NHWC", kernel_layout="HWIO", out_layout="NCHW"`},
		{"conv2d_transpose", "(1, 2, 3, 2)", "(2, 2, 1, 2)", `padding=[0, 1], data_layout="NCHW", kernel_layout="OIHW", out_layout="NHWC", groups=2`},
		{"conv3d_transpose", "(1, 2, 2, 3, 2)", "(2, 2, 2, 2, 2)", ""},
		{"conv3d_transpose", `("n", 2, 2, 2, 3)`, "(2, 1, 3, 1, 2)", "strides=[2, 1, 2], padding=[1, 0, 1], output_padding=[1, 0, 0], dilation=[1, 2, 1], groups=2"},
	} {
		for _, dt := range []string{"float32", "float64", "int32", "int64"} {
			sep := ""
			if c.attrs != "" {
				sep = ", "
			}
			cases = append(cases, legalCase{name: c.op + c.x + c.w + c.attrs + dt,
				params: []string{tensorParam("x", c.x, dt), tensorParam("w", c.w, dt)}, body: fmt.Sprintf("gv = R.nn.%s(x, w%s%s)", c.op, sep, c.attrs)})
		}
	}
	cases = append(cases,
		legalCase{name: "conv2d_transpose out_dtype", params: []string{tensorParam("x", "(1, 2, 3, 3)", "float32"), tensorParam("w", "(2, 1, 2, 2)", "float32")},
			body: `gv = R.nn.conv2d_transpose(x, w, strides=2, out_dtype="float64")`},
		legalCase{name: "conv1d_transpose int8 to int32", params: []string{tensorParam("x", "(1, 2, 4)", "int8"), tensorParam("w", "(2, 2, 3)", "int8")},
			body: `gv = R.nn.conv1d_transpose(x, w, strides=2, out_dtype="int32")`},
		legalCase{name: "conv1d_transpose symbolic width", params: []string{tensorParam("x", `(1, 2, "n")`, "float32"), tensorParam("w", "(2, 3, 3)", "float32")},
			body: "gv = R.nn.conv1d_transpose(x, w, strides=2, padding=1, output_padding=1)", dims: map[string]int64{"n": 4}},
		legalCase{name: "conv2d_transpose symbolic height and width", params: []string{tensorParam("x", `(1, 2, "n", "m")`, "float32"), tensorParam("w", "(2, 3, 3, 2)", "float32")},
			body: "gv = R.nn.conv2d_transpose(x, w, strides=[2, 1], dilation=2)", dims: map[string]int64{"n": 2, "m": 5}},
		legalCase{name: "conv2d_transpose symbolic kernel", params: []string{tensorParam("x", "(1, 2, 3, 2)", "float32"), tensorParam("w", `(2, 1, "n", "m")`, "float32")},
			body: "gv = R.nn.conv2d_transpose(x, w, strides=[2, 3], padding=[1, 0], dilation=[1, 2])", dims: map[string]int64{"n": 3, "m": 2}},
		legalCase{name: "conv1d_transpose symbolic channels", params: []string{tensorParam("x", `(1, "n", 4)`, "float32"), tensorParam("w", `("n", 2, 3)`, "float32")},
			body: "gv = R.nn.conv1d_transpose(x, w, strides=2)"},
		legalCase{name: "conv1d_transpose float16 to float32", params: []string{tensorParam("x", "(1, 2, 4)", "float16"), tensorParam("w", "(2, 2, 3)", "float16")},
			body: `gv = R.nn.conv1d_transpose(x, w, strides=2, out_dtype="float32")`},
		legalCase{name: "conv2d_transpose symbolic batch 5", params: []string{tensorParam("x", `("n", 2, 2, 3)`, "float32"), tensorParam("w", "(2, 2, 3, 3)", "float32")},
			body: "gv = R.nn.conv2d_transpose(x, w, strides=2, padding=1, output_padding=1)", dims: map[string]int64{"n": 5}},
	)
	for _, dt := range []string{"int8", "uint8"} {
		cases = append(cases, legalCase{name: "conv2d_transpose wrapping " + dt, params: []string{tensorParam("x", `("n", 4, 2, 3)`, dt), tensorParam("w", "(4, 1, 3, 2)", dt)},
			body: "gv = R.nn.conv2d_transpose(x, w, strides=[1, 2], output_padding=[0, 1], groups=2)"})
	}
	runFullyLegalized(t, cases)
}

// TestLegalizeConvTransposeHalfOracle checks the 16-bit float kernels,
// which round every partial sum to the dtype while the evaluator rounds
// each output once: with at most 2*3*3 = 18 terms of magnitude <= 1 the
// difference stays within 18 roundings of relative size 2^-11 (float16,
// ~0.009) or 2^-8 (bfloat16, ~0.07).
func TestLegalizeConvTransposeHalfOracle(t *testing.T) {
	for dt, tol := range map[string]float64{"float16": 0.01, "bfloat16": 0.08} {
		c := legalCase{name: "conv2d_transpose " + dt, params: []string{tensorParam("x", `("n", 2, 3, 3)`, dt), tensorParam("w", "(2, 2, 3, 3)", dt)},
			body: "gv = R.nn.conv2d_transpose(x, w, strides=2, padding=1, output_padding=1)"}
		t.Run(c.name, func(t *testing.T) {
			mod := evaltest.Parse(t, c.name, c.module())
			out := evaltest.CheckPipeline(t, mod, "LegalizeOps", evaltest.Options{Seed: 1, Tol: &eval.Tolerance{Rel: tol, Abs: tol}})
			require.Contains(t, printer.Print(out), "R.call_tir")
		})
	}
}

// TestConvTransposeHandDerived checks two small cases against values
// worked out by hand (not by either implementation), through the
// evaluator and through the legalized kernel.
func TestConvTransposeHandDerived(t *testing.T) {
	for _, c := range []struct {
		name, body string
		shape      []int64
		want       []float64
	}{{
		// Each x[i] scatters x[i]*w to positions 2i, 2i+1 (stride 2); padding
		// 1 drops position 0, output_padding 1 adds one position at the end:
		// full [1, 10, 2, 20, 3, 30], length (3-1)*2 - 2 + 1 + 1 + 1 = 5.
		name: "conv1d stride padding output_padding",
		body: `
			x = R.const([[[1, 2, 3]]], "float32")
			w = R.const([[[1, 10]]], "float32")
			gv = R.nn.conv1d_transpose(x, w, strides=[2], padding=[1], output_padding=[1])`,
		shape: []int64{1, 1, 5},
		want:  []float64{10, 2, 20, 3, 30},
	}, {
		// groups=2, one channel each, dilation 2: the output is 4x4 per
		// channel, out[i + 2t] += x[i]*w[t]. Channel 0: taps (0,0)=1 and
		// (1,1)=-1 put x top-left and -x bottom-right; channel 1: tap
		// (0,1)=2 puts 2*x at rows 0-1, columns 2-3.
		name: "conv2d groups dilation",
		body: `
			x = R.const([[[[1, 2], [3, 4]], [[0, 1], [1, 0]]]], "float32")
			w = R.const([[[[1, 0], [0, -1]]], [[[0, 2], [0, 0]]]], "float32")
			gv = R.nn.conv2d_transpose(x, w, dilation=[2, 2], groups=2)`,
		shape: []int64{1, 2, 4, 4},
		want: []float64{
			1, 2, 0, 0,
			3, 4, 0, 0,
			0, 0, -1, -2,
			0, 0, -3, -4,

			0, 0, 0, 2,
			0, 0, 2, 0,
			0, 0, 0, 0,
			0, 0, 0, 0},
	}} {
		t.Run(c.name, func(t *testing.T) {
			mod := evaltest.Parse(t, c.name, legalCase{params: nil, body: c.body}.module())
			legal, errs := lower.LegalizeModule(mod, lower.LegalizeOptions{})
			require.False(t, errs.HasErrors(), "%v", errs)
			for what, m := range map[string]*eval.Machine{"evaluator": eval.New(mod), "legalized kernel": eval.New(legal)} {
				got, err := m.Call("main")
				require.NoError(t, err, what)
				out, ok := got.(*tensor.Tensor)
				require.True(t, ok, "%s: %T", what, got)
				require.Equal(t, c.shape, out.Shape, what)
				for i, v := range c.want {
					require.InDelta(t, v, out.Float64At(i), 1e-5, "%s: element %d", what, i)
				}
			}
		})
	}
}

// TestConvLayoutsAgreeWithPermuteDims checks the layout attributes
// against R.permute_dims, an independent definition of what a layout
// means: a convolution in permuted layouts equals the canonical one on
// permuted inputs, before and after legalization.
func TestConvLayoutsAgreeWithPermuteDims(t *testing.T) {
	for _, c := range []struct{ name, params, body string }{
		{"conv2d NHWC HWIO", `x: R.Tensor((2, 5, 4, 3), dtype="float32"), w: R.Tensor((3, 2, 3, 4), dtype="float32")`, `
			a = R.nn.conv2d(x, w, strides=[2, 1], padding=[1, 0], data_layout="NHWC", kernel_layout="HWIO")
			xc = R.permute_dims(x, [0, 3, 1, 2])
			wc = R.permute_dims(w, [3, 2, 0, 1])
			bc = R.nn.conv2d(xc, wc, strides=[2, 1], padding=[1, 0])
			b = R.permute_dims(bc, [0, 2, 3, 1])`},
		{"conv2d_transpose NHWC HWIO to NCHW", `x: R.Tensor((1, 3, 4, 4), dtype="float32"), w: R.Tensor((2, 3, 4, 3), dtype="float32")`, `
			a = R.nn.conv2d_transpose(x, w, strides=[2, 1], output_padding=[1, 0], groups=2, data_layout="NHWC", kernel_layout="HWIO", out_layout="NCHW")
			xc = R.permute_dims(x, [0, 3, 1, 2])
			wc = R.permute_dims(w, [2, 3, 0, 1])
			b = R.nn.conv2d_transpose(xc, wc, strides=[2, 1], output_padding=[1, 0], groups=2)`},
		{"conv1d_transpose NWC WOI", `x: R.Tensor((2, 5, 2), dtype="float32"), w: R.Tensor((3, 4, 2), dtype="float32")`, `
			a = R.nn.conv1d_transpose(x, w, strides=2, padding=[1, 0], dilation=2, data_layout="NWC", kernel_layout="WOI")
			xc = R.permute_dims(x, [0, 2, 1])
			wc = R.permute_dims(w, [2, 1, 0])
			bc = R.nn.conv1d_transpose(xc, wc, strides=2, padding=[1, 0], dilation=2)
			b = R.permute_dims(bc, [0, 2, 1])`},
	} {
		t.Run(c.name, func(t *testing.T) {
			src := "@I.ir_module\nclass Module:\n    @R.function\n    def main(" + c.params + "):\n        with R.dataflow():\n"
			for _, line := range strings.Split(strings.TrimSpace(c.body), "\n") {
				src += "            " + strings.TrimSpace(line) + "\n"
			}
			src += "            gv = (a, b)\n            R.output(gv)\n        return gv\n"
			mod := evaltest.Parse(t, c.name, src)
			legal, errs := lower.LegalizeModule(mod, lower.LegalizeOptions{})
			require.False(t, errs.HasErrors(), "%v", errs)
			args, err := eval.RandomArgs(mod.Func("main"), 7, nil, 3)
			require.NoError(t, err)
			for what, m := range map[string]*eval.Machine{"evaluator": eval.New(mod), "legalized kernels": eval.New(legal)} {
				got, err := m.Call("main", args...)
				require.NoError(t, err, what)
				pair := got.(op.Tuple)
				require.NoError(t, eval.Compare(pair[0], pair[1], eval.Float32Tol), what)
			}
		})
	}
}

// The legalized form of testdata/relax_conv_transpose.tvms is golden
// (topi's data_pad, kernel_transform and compute stages; conv2d_nchw for
// the conv2d) and computes what the source computes, through
// canonicalize,lower too, for batch sizes 1 and 4.
func TestLegalizeConvTransposeGolden(t *testing.T) {
	hi, got := legalizeFile(t, "../testdata/relax_conv_transpose.tvms")
	passtest.CheckGolden(t, "testdata/legalize_conv_transpose.tvms", got)
	for _, n := range []int64{1, 4} {
		evaltest.CheckSame(t, hi, got, evaltest.Options{Seed: uint64(n), Dims: map[string]int64{"n": n}})
		evaltest.CheckPipeline(t, hi, "canonicalize,lower", evaltest.Options{Seed: uint64(n), Dims: map[string]int64{"n": n}})
	}
}
