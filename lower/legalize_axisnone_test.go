package lower_test

import (
	"fmt"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/phasec/phasec/eval"
	"github.com/phasec/phasec/eval/evaltest"
	"github.com/phasec/phasec/lower"
	"github.com/phasec/phasec/syntax/printer"
)

// handCase is a module main() without parameters whose body computes gv
// from constants; want is gv's value derived by hand, as a TVMScript
// expression (R.const(...)).
type handCase struct {
	name, body, want string
}

// runHandCases legalizes each case, requires that it became a call_tir,
// runs the legalized module through the TIR interpreter and compares its
// result with the hand-derived value (integers exactly, floats 1e-5).
func runHandCases(t *testing.T, cases []handCase) {
	t.Helper()
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			mod := evaltest.Parse(t, c.name, legalCase{name: c.name, body: c.body}.module())
			got, errs := lower.LegalizeModule(mod, lower.LegalizeOptions{})
			require.False(t, errs.HasErrors(), "%v", errs)
			text := printer.Print(got)
			require.Contains(t, text, "R.call_tir", "not legalized")
			want := evaltest.Parse(t, c.name+" want", legalCase{name: c.name, body: "gv = " + c.want}.module())
			w, err := eval.New(want).Call("main")
			require.NoError(t, err)
			g, err := eval.New(got).Call("main")
			require.NoError(t, err, text)
			require.NoError(t, eval.Compare(g, w, eval.Float32Tol), text)
		})
	}
}

// The axis=None forms index, scan or reduce the flattened tensor.
func TestLegalizeAxisNoneOracle(t *testing.T) {
	shapes := []string{"()", "(1,)", "(0, 3)", "(2, 3, 4)", `("n", 3)`, `(2, "n", "m")`}
	var cases []legalCase
	for _, shape := range shapes {
		for _, dt := range []string{"float32", "float64", "float16", "int32", "int64", "int8", "uint8", "bool"} {
			x := []string{tensorParam("x", shape, dt)}
			for _, o := range []string{"cumsum", "cumprod"} {
				for _, attrs := range []string{"", ", exclusive=True", `, dtype="float64"`, `, dtype="int64"`} {
					cases = append(cases, legalCase{name: o + shape + dt + attrs, params: x, body: fmt.Sprintf("gv = R.%s(x%s)", o, attrs)})
				}
			}
			if !strings.Contains(shape, "0") { // no extreme of an empty sequence
				for _, o := range []string{"argmax", "argmin"} {
					for _, attrs := range []string{"", ", keepdims=True"} {
						cases = append(cases, legalCase{name: o + shape + dt + attrs, params: x, body: fmt.Sprintf("gv = R.%s(x%s)", o, attrs)})
					}
				}
			}
		}
		for _, dt := range []string{"float32", "float64", "float16", "int32", "int64", "int8", "uint8", "bool"} {
			x := []string{tensorParam("x", shape, dt)}
			for _, r := range []int{1, 3} {
				cases = append(cases, legalCase{name: fmt.Sprint("repeat", shape, dt, r), params: x, body: fmt.Sprintf("gv = R.repeat(x, repeats=%d)", r)})
			}
			cases = append(cases,
				legalCase{name: "concat" + shape + dt, params: append(x, tensorParam("y", "(2, 2)", dt), tensorParam("z", shape, dt)),
					body: "gv = R.concat((x, y, z), axis=None)"},
			)
			if !strings.Contains(shape, "0") { // indices into an empty tensor are out of range
				cases = append(cases,
					legalCase{name: "take clip" + shape + dt, params: x, body: `
						i = R.const([[-5, 1], [7, 0], [2, 3]], "int64")
						gv = R.take(x, i, mode="clip")`},
					legalCase{name: "take" + shape + dt, params: x, body: `
						i = R.const([0, 0], "int32")
						gv = R.take(x, i)`},
					legalCase{name: "take wrap" + shape + dt, params: x, body: `
						i = R.const([[-5, 1], [7, 0], [2, 3]], "int64")
						gv = R.take(x, i, mode="wrap")`},
					legalCase{name: "take prim" + shape + dt, params: x, body: `gv = R.take(x, R.prim_value(0))`},
				)
			}
		}
	}
	cases = append(cases,
		legalCase{name: "concat one input", params: []string{tensorParam("x", `("n", 2)`, "float32")}, body: "gv = R.concat((x,), axis=None)"},
		legalCase{name: "take symbolic in range", params: []string{tensorParam("x", `("n", "m")`, "int32")}, dims: map[string]int64{"n": 4, "m": 5}, body: `
			i = R.const([19, 0, 7], "int64")
			gv = R.take(x, i)`},
	)
	runFullyLegalized(t, cases)
}

// One hand-derived value per axis=None form (numpy gives the same).
func TestLegalizeAxisNoneHand(t *testing.T) {
	x := `x = R.const([[1, 5, 2], [7, 0, 7]], "int32")`
	runHandCases(t, []handCase{
		{"cumsum", x + "\ngv = R.cumsum(x)", `R.const([1, 6, 8, 15, 15, 22], "int32")`},
		{"cumsum exclusive", x + "\ngv = R.cumsum(x, exclusive=True)", `R.const([0, 1, 6, 8, 15, 15], "int32")`},
		{"cumprod", `x = R.const([[1.5, 2], [-1, 4]], "float32")` + "\ngv = R.cumprod(x)", `R.const([1.5, 3, -3, -12], "float32")`},
		{"argmax", x + "\ngv = R.argmax(x)", `R.const(3, "int64")`},
		{"argmax keepdims", x + "\ngv = R.argmax(x, keepdims=True)", `R.const([[3]], "int64")`},
		{"argmin", x + "\ngv = R.argmin(x)", `R.const(4, "int64")`},
		{"concat", x + "\ny = R.const([9], \"int32\")\ngv = R.concat((x, y), axis=None)", `R.const([1, 5, 2, 7, 0, 7, 9], "int32")`},
		{"take", x + "\ni = R.const([[5, 1], [3, 0]], \"int64\")\ngv = R.take(x, i)", `R.const([[7, 5], [7, 1]], "int32")`},
		// fast mode: negative indices count from the end of the flattened x
		{"take negative", x + "\ni = R.const([-1, -6, -4], \"int64\")\ngv = R.take(x, i)", `R.const([7, 1, 2], "int32")`},
		{"take wrap", x + "\ni = R.const([-1, 8], \"int64\")\ngv = R.take(x, i, mode=\"wrap\")", `R.const([7, 2], "int32")`},
		{"repeat", x + "\ngv = R.repeat(x, repeats=2)", `R.const([1, 1, 5, 5, 2, 2, 7, 7, 0, 0, 7, 7], "int32")`},
	})
}

// R.concat's axis defaults to 0, so an explicit axis=None must survive
// parsing and printing (it once fell back to the default).
func TestConcatAxisNoneRoundTrip(t *testing.T) {
	c := legalCase{params: []string{tensorParam("x", "(2, 3)", "float32"), tensorParam("y", "(4,)", "float32")},
		body: "gv = R.concat((x, y), axis=None)"}
	mod := evaltest.Parse(t, "concat", c.module())
	text := printer.Print(mod)
	require.Contains(t, text, "R.concat((x, y), axis=None)", "axis=None lost")
	require.Contains(t, text, `R.Tensor((10,), dtype="float32")`, "axis=None lost")
	require.Equal(t, text, printer.Print(evaltest.Parse(t, "printed", text)), "not a fixed point")
}

// scatter_elements reduction="mean": each element becomes the average of
// its original value and all updates scattered to it.
func TestLegalizeScatterMean(t *testing.T) {
	var cases []legalCase
	for _, dt := range []string{"float32", "float64", "int32", "int64", "int8", "uint8"} {
		cases = append(cases,
			legalCase{name: "duplicates " + dt, params: []string{tensorParam("x", "(3, 4)", dt), tensorParam("u", "(3, 4)", dt)}, body: `
				i = R.const([[2, 0, -1, 2], [2, 2, 0, 2], [2, 0, -3, 2]], "int64")
				gv = R.scatter_elements(x, i, u, reduction="mean")`},
			legalCase{name: "symbolic axis 1 " + dt, params: []string{tensorParam("x", `("n", 4)`, dt), tensorParam("u", `(1, 3)`, dt)}, body: `
				i = R.const([[3, 3, 0]], "int32")
				gv = R.scatter_elements(x, i, u, axis=1, reduction="mean")`},
			legalCase{name: "symbolic updates " + dt, params: []string{tensorParam("x", `("n", "m")`, dt), tensorParam("u", `("n", "m")`, dt)},
				dims: map[string]int64{"n": 3, "m": 1}, body: `
				i = R.zeros(R.shape([n, m]), "int64")
				gv = R.scatter_elements(x, i, u, reduction="mean")`},
			legalCase{name: "no updates " + dt, params: []string{tensorParam("x", "(2, 3)", dt), tensorParam("u", "(0, 3)", dt)}, body: `
				i = R.zeros(R.shape([0, 3]), "int64")
				gv = R.scatter_elements(x, i, u, reduction="mean")`},
			legalCase{name: "one element " + dt, params: []string{tensorParam("x", "(1,)", dt), tensorParam("u", "(1,)", dt)}, body: `
				i = R.const([0], "int64")
				gv = R.scatter_elements(x, i, u, reduction="mean")`},
		)
	}
	runFullyLegalized(t, cases)
	body := `
		x = R.const([[1, 2], [3, 4]], "%[1]s")
		i = R.const([[1, 0], [1, 0]], "int64")
		u = R.const([[10, 20], [30, 40]], "%[1]s")
		gv = R.scatter_elements(x, i, u, reduction="mean")`
	runHandCases(t, []handCase{
		// (2+20+40)/3 and (3+10+30)/3; the others keep their value.
		{"scatter mean float", fmt.Sprintf(body, "float32"), `R.const([[1, 20.666666], [14.333333, 4]], "float32")`},
		{"scatter mean int", fmt.Sprintf(body, "int32"), `R.const([[1, 20], [14, 4]], "int32")`},
		// (-7 + 0) / 2 rounds down to -4.
		{"scatter mean int floor", `
			x = R.const([-7, 5], "int32")
			i = R.const([0], "int64")
			u = R.const([0], "int32")
			gv = R.scatter_elements(x, i, u, reduction="mean")`, `R.const([-4, 5], "int32")`},
	})
}

// attention with window_size: a causal sliding window of window_size keys
// ending at each query's diagonal.
func TestLegalizeAttentionWindow(t *testing.T) {
	var cases []legalCase
	for _, dt := range []string{"float32", "float64"} {
		qkv := func(q, k, v string) []string {
			return []string{tensorParam("q", q, dt), tensorParam("k", k, dt), tensorParam("v", v, dt)}
		}
		for _, c := range []struct{ q, k, v, attrs string }{
			{"(2, 5, 2, 4)", "(2, 5, 2, 4)", "(2, 5, 2, 3)", `causal_mask="TopLeft", window_size=2`},
			{"(1, 4, 1, 2)", "(1, 4, 1, 2)", "(1, 4, 1, 2)", `causal_mask="TopLeft", window_size=1`},
			{"(1, 3, 2, 2)", "(1, 6, 2, 2)", "(1, 6, 2, 1)", `causal_mask="BottomRight", window_size=3`},
			{"(1, 3, 1, 2)", "(1, 6, 1, 2)", "(1, 6, 1, 2)", `window_size=2, scale=0.5`},
			{"(1, 4, 1, 2)", "(1, 4, 1, 2)", "(1, 4, 1, 2)", `causal_mask="TopLeft", window_size=100`},
			{"(1, 1, 1, 1)", "(1, 1, 1, 1)", "(1, 1, 1, 1)", `causal_mask="BottomRight", window_size=1`},
			{"(0, 3, 1, 2)", "(0, 3, 1, 2)", "(0, 3, 1, 2)", `causal_mask="TopLeft", window_size=2`},
			{`(1, "n", 2, 4)`, `(1, "n", 2, 4)`, `(1, "n", 2, 3)`, `causal_mask="TopLeft", window_size=2`},
			{`(2, "n", 1, 2)`, `(2, "m", 1, 2)`, `(2, "m", 1, 2)`, `causal_mask="BottomRight", window_size=3`},
		} {
			cases = append(cases, legalCase{name: c.q + c.k + c.attrs + dt, params: qkv(c.q, c.k, c.v), dims: map[string]int64{"n": 4, "m": 7},
				body: fmt.Sprintf("gv = R.nn.attention(q, k, v, %s)", c.attrs)})
		}
		cases = append(cases, legalCase{name: "window with bias " + dt, params: append(qkv("(2, 3, 2, 4)", "(2, 4, 2, 4)", "(2, 4, 2, 1)"), tensorParam("b", "(2, 1, 3, 4)", dt)),
			body: `gv = R.nn.attention(q, k, v, b, causal_mask="BottomRight", window_size=2)`})
	}
	runFullyLegalized(t, cases)
	// Zero queries give equal scores, so each output is the mean of the
	// values inside the window: v = 1, 2, 4, 8.
	v := `
		q = R.const([[[[0]], [[0]], [[0]], [[0]]]], "float32")
		k = R.const([[[[3]], [[1]], [[-2]], [[5]]]], "float32")
		v = R.const([[[[1]], [[2]], [[4]], [[8]]]], "float32")
		`
	runHandCases(t, []handCase{
		// keys {0}, {0,1}, {1,2}, {2,3}
		{"window top left", v + `gv = R.nn.attention(q, k, v, causal_mask="TopLeft", window_size=2)`,
			`R.const([[[[1]], [[1.5]], [[3]], [[6]]]], "float32")`},
		// two queries over four keys: diagonals 2 and 3, keys {0,1,2}, {1,2,3}
		{"window bottom right", strings.Replace(v, "[[[[0]], [[0]], [[0]], [[0]]]]", "[[[[0]], [[0]]]]", 1) +
			`gv = R.nn.attention(q, k, v, window_size=3)`, `R.const([[[[2.3333333]], [[4.6666667]]]], "float32")`},
	})
}

// float16Tol allows two float16 ulps (2^-10 relative each): the kernels
// round every step to float16, the evaluator once.
var float16Tol = eval.Tolerance{Rel: 2e-3, Abs: 1e-3}

func TestLegalizeFloat16WindowAndMean(t *testing.T) {
	qkv := []string{tensorParam("q", `(1, "n", 2, 4)`, "float16"), tensorParam("k", `(1, "n", 2, 4)`, "float16"), tensorParam("v", `(1, "n", 2, 3)`, "float16")}
	runFullyLegalized(t, []legalCase{
		{name: "attention window", params: qkv, dims: map[string]int64{"n": 5}, tol: &float16Tol, body: `gv = R.nn.attention(q, k, v, causal_mask="TopLeft", window_size=2)`},
		{name: "attention window bottom right", params: qkv, dims: map[string]int64{"n": 4}, tol: &float16Tol, body: `gv = R.nn.attention(q, k, v, window_size=3)`},
		{name: "scatter mean", params: []string{tensorParam("x", "(3, 4)", "float16"), tensorParam("u", "(3, 4)", "float16")}, tol: &float16Tol, body: `
			i = R.const([[2, 0, -1, 2], [2, 2, 0, 2], [2, 0, -3, 2]], "int64")
			gv = R.scatter_elements(x, i, u, reduction="mean")`},
	})
}

// The axis=None forms pass the whole lower barrier (their kernels'
// intermediate T_reshape buffers included) and compute the same.
func TestAxisNoneThroughLower(t *testing.T) {
	c := legalCase{name: "axis None", params: []string{tensorParam("x", `("n", 3)`, "float32"), tensorParam("y", `(2, "n")`, "float32")}, body: `
		a = R.cumsum(x)
		b = R.argmax(y, keepdims=True)
		c = R.concat((x, y), axis=None)
		i = R.const([0, 4, 2], "int64")
		d = R.take(c, i)
		e = R.repeat(x, repeats=2)
		f = R.cumprod(y, exclusive=True)
		gv = (a, b, d, e, f)`}
	mod := evaltest.Parse(t, c.name, c.module())
	for _, n := range []int64{1, 3} {
		evaltest.CheckPipeline(t, mod, "canonicalize,lower", evaltest.Options{Seed: uint64(n), Dims: map[string]int64{"n": n}})
	}
}
