package lower_test

import (
	"fmt"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/phasec/phasec/eval/evaltest"
	"github.com/phasec/phasec/lower"
	"github.com/phasec/phasec/syntax/printer"
)

// runFullyLegalized is runLegalCases plus the check that the op under test
// was legalized at all (an op left alone would agree with itself).
func runFullyLegalized(t *testing.T, cases []legalCase) {
	t.Helper()
	runLegalCases(t, cases)
	for _, c := range cases {
		mod := evaltest.Parse(t, c.name, c.module())
		got, errs := lower.LegalizeModule(mod, lower.LegalizeOptions{})
		require.False(t, errs.HasErrors(), "%s: %v", c.name, errs)
		assert.Contains(t, printer.Print(got), "R.call_tir", "%s: not legalized", c.name)
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
	for _, c := range []struct{ op, x, w, attrs string }{
		{"conv1d", "(2, 3, 7)", "(4, 3, 3)", ""},
		{"conv1d", `("n", 4, 6)`, "(2, 2, 2)", "strides=[2], padding=[1, 2], dilation=[2], groups=2"},
		{"conv1d", "(1, 2, 5)", "(3, 2, 1)", "padding=[1]"},
		{"conv3d", "(1, 2, 4, 3, 3)", "(2, 2, 2, 2, 2)", ""},
		{"conv3d", `("n", 2, 3, 4, 3)`, "(2, 1, 3, 2, 1)", "strides=[1, 2, 1], padding=[1, 0, 1], groups=2"},
		// Permuted layouts: topi's conv2d_nhwc / HWIO, a layout change, and
		// a grouped NWC conv1d with OWI weights.
		{"conv2d", `("n", 5, 4, 3)`, "(3, 2, 3, 4)", `padding=[1, 0], strides=[2, 1], data_layout="NHWC", kernel_layout="HWIO"`},
		{"conv2d", "(1, 2, 5, 4)", "(3, 2, 2, 2)", `dilation=[2, 1], out_layout="NHWC"`},
		{"conv1d", "(2, 6, 4)", "(4, 3, 2)", `padding=[2, 1], groups=2, data_layout="NWC", kernel_layout="OWI", out_layout="NCW"`},
		{"conv3d", "(1, 3, 2, 3, 2)", "(2, 2, 1, 2, 2)", `data_layout="NDHWC", kernel_layout="OIDHW"`},
	} {
		for _, dt := range []string{"float32", "int32"} {
			sep := ""
			if c.attrs != "" {
				sep = ", "
			}
			cases = append(cases, legalCase{name: c.op + c.x + c.w + c.attrs + dt,
				params: []string{tensorParam("x", c.x, dt), tensorParam("w", c.w, dt)}, body: fmt.Sprintf("gv = R.nn.%s(x, w%s%s)", c.op, sep, c.attrs)})
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

func TestLegalizeNormDropoutOracle(t *testing.T) {
	var cases []legalCase
	for _, dt := range []string{"float32", "float64"} {
		vec := func(name, n string) string { return tensorParam(name, "("+n+",)", dt) }
		bn := func(x, c string) []string {
			return []string{tensorParam("x", x, dt), vec("g", c), vec("b", c), vec("m", c), tensorParam("v", "("+c+",)", dt)}
		}
		cases = append(cases,
			legalCase{name: "batch_norm training " + dt, params: bn(`("n", 3, 2, 2)`, "3"), body: "gv = R.nn.batch_norm(x, g, b, m, v, axis=1)"},
			legalCase{name: "batch_norm inference " + dt, params: bn("(2, 3, 4)", "4"),
				body: "gv = R.nn.batch_norm(x, g, b, m, v, axis=-1, epsilon=0.001, training=False)"},
			legalCase{name: "batch_norm no affine " + dt, params: bn("(4, 2)", "2"),
				body: "gv = R.nn.batch_norm(x, g, b, m, v, axis=1, center=False, scale=False, momentum=0.3)"},
			legalCase{name: "group_norm " + dt, params: []string{tensorParam("x", `("n", 4, 3, 2)`, dt), vec("g", "4"), vec("b", "4")},
				body: "gv = R.nn.group_norm(x, g, b, num_groups=2, channel_axis=1, axes=[2, 3])"},
			legalCase{name: "group_norm last channel " + dt, params: []string{tensorParam("x", "(2, 3, 6)", dt), vec("g", "6"), vec("b", "6")},
				body: "gv = R.nn.group_norm(x, g, b, num_groups=3, channel_axis=-1, axes=[1], epsilon=0.01, center=False)"},
			legalCase{name: "group_norm one group " + dt, params: []string{tensorParam("x", "(2, 4, 1)", dt), vec("g", "4"), vec("b", "4")},
				body: "gv = R.nn.group_norm(x, g, b, num_groups=1, channel_axis=1, axes=[2], scale=False)"},
			legalCase{name: "dropout " + dt, params: []string{tensorParam("x", `("n", 3)`, dt)}, body: "gv = R.nn.dropout(x, rate=0.25)"},
		)
	}
	for _, attrs := range []string{"", "output_size=[2, 3]", "output_size=[1]", "output_size=[4, 4]"} {
		for _, shape := range []string{"(1, 2, 5, 7)", `("n", 1, 4, 4)`} {
			sep := ""
			if attrs != "" {
				sep = ", "
			}
			cases = append(cases, legalCase{name: "adaptive_avg_pool2d " + attrs + shape, params: []string{tensorParam("x", shape, "float32")},
				body: fmt.Sprintf("gv = R.nn.adaptive_avg_pool2d(x%s%s)", sep, attrs)})
		}
	}
	runFullyLegalized(t, cases)
}

func TestLegalizeSortOracle(t *testing.T) {
	var cases []legalCase
	for _, dt := range []string{"float32", "int32"} {
		for _, shape := range []string{"(2, 5)", `("n", 4)`, "(3, 1)", "(0, 3)"} {
			x := []string{tensorParam("x", shape, dt)}
			cases = append(cases,
				legalCase{name: "sort " + shape + dt, params: x, body: "gv = R.sort(x)"},
				legalCase{name: "sort desc axis 0 " + shape + dt, params: x, body: "gv = R.sort(x, axis=0, descending=True)"},
				legalCase{name: "argsort " + shape + dt, params: x, body: "gv = R.argsort(x)"},
				legalCase{name: "argsort desc int64 " + shape + dt, params: x, body: `gv = R.argsort(x, axis=0, descending=True, dtype="int64")`},
				legalCase{name: "topk " + shape + dt, params: x, body: "gv = R.topk(x, k=1, axis=1)"},
				legalCase{name: "topk smallest values " + shape + dt, params: x, body: `gv = R.topk(x, k=1, axis=-1, ret_type="values", largest=False)`},
				legalCase{name: "topk all indices " + shape + dt, params: x, body: `gv = R.topk(x, k=0, ret_type="indices", dtype="int64")`},
			)
		}
		// Ties: the sort is stable.
		cases = append(cases, legalCase{name: "sort ties " + dt, params: []string{tensorParam("x", "(1,)", dt)}, body: fmt.Sprintf(`
			c = R.const([[3, 1, 3, 1, 2], [0, 0, 0, 0, 0]], %q)
			gv = (R.argsort(c), R.argsort(c, descending=True), R.topk(c, k=3), R.sort(c, axis=0))`, dt)})
	}
	runFullyLegalized(t, cases)
}

func TestLegalizeGatherNDCollapseOracle(t *testing.T) {
	var cases []legalCase
	for _, dt := range []string{"float32", "int32"} {
		cases = append(cases,
			legalCase{name: "gather_nd " + dt, params: []string{tensorParam("x", "(3, 4, 2)", dt)}, body: `
				i = R.const([[0, 3], [2, 1], [1, 0]], "int64")
				gv = R.gather_nd(x, i)`},
			legalCase{name: "gather_nd full " + dt, params: []string{tensorParam("x", "(3, 4)", dt)}, body: `
				i = R.const([[[0, 3]], [[2, 1]]], "int32")
				gv = R.gather_nd(x, i)`},
			legalCase{name: "gather_nd batch " + dt, params: []string{tensorParam("x", `(2, 3, "n")`, dt)}, body: `
				i = R.const([[2], [0]], "int64")
				gv = R.gather_nd(x, i, batch_dims=1)`},
			legalCase{name: "collapse_sum_to " + dt, params: []string{tensorParam("x", "(2, 3, 4)", dt)}, body: "gv = R.collapse_sum_to(x, R.shape([3, 1]))"},
			legalCase{name: "collapse_sum_to same " + dt, params: []string{tensorParam("x", `("n", 3)`, dt)}, body: "gv = R.collapse_sum_to(x, R.shape([3]))"},
			legalCase{name: "collapse_sum_to scalar " + dt, params: []string{tensorParam("x", `("n", 3)`, dt)}, body: "gv = R.collapse_sum_to(x, R.shape([]))"},
			legalCase{name: "collapse_sum_like " + dt, params: []string{tensorParam("x", "(2, 3, 4)", dt), tensorParam("y", "(2, 1, 4)", dt)}, body: "gv = R.collapse_sum_like(x, y)"},
			legalCase{name: "collapse_sum_like copy " + dt, params: []string{tensorParam("x", `(2, "n")`, dt), tensorParam("y", `(2, "n")`, dt)}, body: "gv = R.collapse_sum_like(x, y)"},
		)
	}
	runFullyLegalized(t, cases)
}

func TestLegalizeScatterElementsOracle(t *testing.T) {
	var cases []legalCase
	for _, dt := range []string{"float32", "int32"} {
		for _, red := range []string{"update", "add", "mul", "mean", "max", "min"} {
			cases = append(cases,
				legalCase{name: "scatter_elements axis 0 " + red + dt, params: []string{tensorParam("x", "(3, 4)", dt), tensorParam("u", "(2, 3)", dt)}, body: fmt.Sprintf(`
					i = R.const([[2, 0, -1], [2, 1, 0]], "int64")
					gv = R.scatter_elements(x, i, u, reduction=%q)`, red)},
				legalCase{name: "scatter_elements axis 1 " + red + dt, params: []string{tensorParam("x", `("n", 4)`, dt), tensorParam("u", "(1, 3)", dt)}, body: fmt.Sprintf(`
					i = R.const([[3, 3, 0]], "int32")
					gv = R.scatter_elements(x, i, u, axis=-1, reduction=%q)`, red)},
			)
		}
	}
	runFullyLegalized(t, cases)
}

func TestLegalizeAttentionOracle(t *testing.T) {
	var cases []legalCase
	for _, dt := range []string{"float32", "float64"} {
		qkv := func(q, k, v string) []string {
			return []string{tensorParam("q", q, dt), tensorParam("k", k, dt), tensorParam("v", v, dt)}
		}
		cases = append(cases,
			legalCase{name: "attention " + dt, params: qkv("(2, 3, 2, 4)", "(2, 5, 2, 4)", "(2, 5, 2, 3)"), body: "gv = R.nn.attention(q, k, v)"},
			legalCase{name: "attention symbolic " + dt, params: qkv(`(1, "n", 2, 4)`, `(1, "n", 2, 4)`, `(1, "n", 2, 4)`),
				body: `gv = R.nn.attention(q, k, v, causal_mask="TopLeft")`},
			legalCase{name: "attention bottom right " + dt, params: qkv("(1, 3, 1, 2)", "(1, 5, 1, 2)", "(1, 5, 1, 2)"),
				body: `gv = R.nn.attention(q, k, v, scale=0.3, causal_mask="BottomRight")`},
			legalCase{name: "attention bias " + dt, params: append(qkv("(2, 3, 2, 4)", "(2, 4, 2, 4)", "(2, 4, 2, 1)"), tensorParam("b", "(2, 1, 3, 4)", dt)),
				body: "gv = R.nn.attention(q, k, v, b)"},
		)
	}
	runFullyLegalized(t, cases)
}

func TestLegalizeLossOracle(t *testing.T) {
	var cases []legalCase
	for _, dt := range []string{"float32", "float64"} {
		cases = append(cases,
			legalCase{name: "cross_entropy " + dt, params: []string{tensorParam("p", `("n", 4)`, dt), tensorParam("l", `("n", 4)`, dt)},
				body: "gv = R.nn.cross_entropy_with_logits(p, l)"},
			legalCase{name: "cross_entropy vector " + dt, params: []string{tensorParam("p", "(5,)", dt), tensorParam("l", "(5,)", dt)},
				body: "gv = R.nn.cross_entropy_with_logits(p, l)"},
		)
		for _, red := range []string{"mean", "sum", "none"} {
			cases = append(cases,
				legalCase{name: "nll_loss " + red + dt, params: []string{tensorParam("p", "(3, 4)", dt), tensorParam("w", "(4,)", dt)}, body: fmt.Sprintf(`
					t = R.const([3, 0, 3], "int64")
					gv = R.nn.nll_loss(p, t, w, reduction=%q)`, red)},
				legalCase{name: "nll_loss spatial ignore " + red + dt, params: []string{tensorParam("p", "(2, 3, 2)", dt)}, body: fmt.Sprintf(`
					t = R.const([[0, 2], [1, -1]], "int32")
					gv = R.nn.nll_loss(p, t, reduction=%q, ignore_index=-1)`, red)},
				legalCase{name: "nll_loss single " + red + dt, params: []string{tensorParam("p", "(4,)", dt)}, body: fmt.Sprintf(`
					t = R.const(2, "int64")
					gv = R.nn.nll_loss(p, t, reduction=%q)`, red)},
			)
		}
	}
	runFullyLegalized(t, cases)
}

func TestLegalizeEinsumOracle(t *testing.T) {
	var cases []legalCase
	for _, dt := range []string{"float32", "int32"} {
		two := func(a, b string) []string { return []string{tensorParam("x", a, dt), tensorParam("y", b, dt)} }
		cases = append(cases,
			legalCase{name: "einsum matmul " + dt, params: two(`("n", 3)`, "(3, 4)"), body: `gv = R.einsum((x, y), "ij,jk->ik")`},
			legalCase{name: "einsum implicit " + dt, params: two("(2, 3)", "(3, 4)"), body: `gv = R.einsum((x, y), "ij,jk")`},
			legalCase{name: "einsum batch transpose " + dt, params: two("(2, 3, 4)", "(2, 5, 4)"), body: `gv = R.einsum((x, y), "bik,bjk->bji")`},
			legalCase{name: "einsum trace " + dt, params: []string{tensorParam("x", "(3, 3)", dt)}, body: `gv = R.einsum((x,), "ii->")`},
			legalCase{name: "einsum diagonal " + dt, params: []string{tensorParam("x", "(3, 3)", dt)}, body: `gv = R.einsum((x,), "ii->i")`},
			legalCase{name: "einsum outer three " + dt, params: []string{tensorParam("x", "(2,)", dt), tensorParam("y", "(3,)", dt), tensorParam("z", "(2,)", dt)},
				body: `gv = R.einsum((x, y, z), "i,j,k->ijk")`},
			legalCase{name: "einsum empty " + dt, params: two("(2, 0)", "(0, 3)"), body: `gv = R.einsum((x, y), "ij,jk->ik")`},
		)
	}
	runFullyLegalized(t, cases)
}
