package lower_test

import (
	"fmt"
	"strings"
	"testing"

	"github.com/phasec/phasec/eval/evaltest"
	"github.com/phasec/phasec/lower"
	"github.com/phasec/phasec/syntax"
)

// runFullyLegalized is runLegalCases plus the check that the op under test
// was legalized at all (an op left alone would agree with itself).
func runFullyLegalized(t *testing.T, cases []legalCase) {
	t.Helper()
	runLegalCases(t, cases)
	for _, c := range cases {
		mod := evaltest.Parse(t, c.name, c.module())
		got, errs := lower.LegalizeOps(mod, lower.LegalizeOptions{})
		if errs.HasErrors() {
			t.Fatalf("%s: %v", c.name, errs)
		}
		if text := syntax.Print(got); !strings.Contains(text, "R.call_tir") {
			t.Errorf("%s: not legalized:\n%s", c.name, text)
		}
	}
}

func TestLegalizeConvPoolPadOracle(t *testing.T) {
	var cases []legalCase
	conv := []struct{ x, w, attrs string }{
		{"(1, 3, 5, 5)", "(2, 3, 3, 3)", ""},
		{`("n", 2, 6, 5)`, "(3, 2, 2, 3)", "strides=[2, 1], padding=[1, 0, 2, 1]"},
		{"(2, 4, 5, 5)", "(4, 2, 3, 3)", "groups=2, padding=[1, 1], dilation=[2, 1]"},
		{"(1, 2, 1, 1)", "(1, 2, 1, 1)", ""},
		{"(0, 2, 3, 3)", "(2, 2, 3, 3)", "padding=[1]"},
	}
	for _, c := range conv {
		for _, dt := range []string{"float32", "int32"} {
			sep := ""
			if c.attrs != "" {
				sep = ", "
			}
			cases = append(cases, legalCase{name: "conv2d " + c.x + c.w + c.attrs + dt,
				params: []string{tensorParam("x", c.x, dt), tensorParam("w", c.w, dt)}, body: fmt.Sprintf("gv = R.nn.conv2d(x, w%s%s)", sep, c.attrs)})
		}
	}
	cases = append(cases, legalCase{name: "conv2d out_dtype", params: []string{tensorParam("x", "(1, 2, 4, 4)", "float32"), tensorParam("w", "(1, 2, 2, 2)", "float32")},
		body: `gv = R.nn.conv2d(x, w, out_dtype="float64")`})
	for _, o := range []string{"max_pool2d", "avg_pool2d"} {
		for _, attrs := range []string{"pool_size=[2, 2], strides=[2, 2]", "pool_size=[3, 3], strides=[2, 2], padding=[1, 1], ceil_mode=True",
			"pool_size=[3, 2], padding=[1, 0, 0, 1], count_include_pad=True", "pool_size=[2, 2], dilation=[2, 2], padding=[1]",
			"pool_size=[3, 3], strides=[2, 2], padding=[1, 1], ceil_mode=True, count_include_pad=True"} {
			for _, shape := range []string{"(1, 2, 5, 6)", `("n", 1, 4, 4)`} {
				cases = append(cases, legalCase{name: o + attrs + shape, params: []string{tensorParam("x", shape, "float32")},
					body: fmt.Sprintf("gv = R.nn.%s(x, %s)", o, attrs)})
			}
		}
	}
	cases = append(cases, legalCase{name: "max_pool2d int32", params: []string{tensorParam("x", "(1, 2, 4, 4)", "int32")},
		body: "gv = R.nn.max_pool2d(x, pool_size=[2, 2], padding=[1])"})
	for _, dt := range []string{"float32", "int32"} {
		for _, p := range []struct{ shape, attrs string }{
			{"(2, 3)", "pad_width=[1, 0, 2, 2]"},
			{`("n", 3)`, `pad_width=[0, 1, 1, 1], pad_value=1.5`},
			{"(3, 4)", `pad_width=[1, 2, 0, 3], pad_mode="edge"`},
			{`(3, "n")`, `pad_width=[2, 1, 0, 0], pad_mode="reflect"`},
			{"(0, 2)", "pad_width=[1, 1, 0, 0]"},
		} {
			cases = append(cases, legalCase{name: "pad " + p.shape + p.attrs + dt, params: []string{tensorParam("x", p.shape, dt)},
				body: fmt.Sprintf("gv = R.nn.pad(x, %s)", p.attrs)})
		}
	}
	runFullyLegalized(t, cases)
}

func TestLegalizeCreationOracle(t *testing.T) {
	x := func(shape, dt string) []string { return []string{tensorParam("x", shape, dt)} }
	cases := []legalCase{
		{name: "arange end", params: x("(2,)", "float32"), body: "gv = R.arange(5)"},
		{name: "arange step", params: x("(2,)", "float32"), body: `gv = R.arange(1, 10, 3, dtype="float32")`},
		{name: "arange negative step", params: x("(2,)", "float32"), body: `gv = R.arange(5, 0, -2, dtype="int32")`},
		{name: "arange empty", params: x("(2,)", "float32"), body: "gv = R.arange(3, 3)"},
		{name: "arange float", params: x("(2,)", "float32"),
			body: "gv = R.arange(R.prim_value(T.float32(0.5)), R.prim_value(T.float32(2.0)), R.prim_value(T.float32(0.25)))"},
		{name: "arange symbolic", params: x(`("n",)`, "float32"), body: "gv = R.arange(R.prim_value(1), R.prim_value(n + 1), R.prim_value(1))"},
		{name: "eye", params: x("(2,)", "float32"), body: "gv = R.eye(3)"},
		{name: "eye k", params: x("(2,)", "float32"), body: `gv = R.eye(2, 4, 1, dtype="int32")`},
		{name: "eye negative k", params: x("(2,)", "float32"), body: `gv = R.eye(4, 3, -2, dtype="float64")`},
		{name: "eye symbolic", params: x(`("n",)`, "float32"), body: "gv = R.eye(R.prim_value(n), R.prim_value(2), R.prim_value(0))"},
		{name: "eye empty", params: x("(2,)", "float32"), body: "gv = R.eye(0, 2)"},
		{name: "one_hot", params: x("(2, 3)", "int32"), body: `
			i = R.const([[0, 3, 1], [2, -1, 7]], "int32")
			gv = R.one_hot(i, R.prim_value(T.float32(1.0)), R.prim_value(T.float32(-0.5)), depth=4)`},
		{name: "one_hot axis 0", params: x("(2,)", "int32"), body: `
			i = R.const([2, 0, 1], "int64")
			gv = R.one_hot(i, R.prim_value(5), R.prim_value(0), depth=3, axis=0)`},
		{name: "one_hot middle", params: x("(2, 2)", "int32"), body: `
			i = R.const([[1, 0], [0, 1]], "int64")
			gv = R.one_hot(i, R.prim_value(T.float64(2.5)), R.prim_value(T.float64(0)), depth=2, axis=1)`},
	}
	runFullyLegalized(t, cases)
}
