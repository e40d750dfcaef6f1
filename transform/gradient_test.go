package transform_test

import (
	"fmt"
	"math"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/phasec/phasec/eval"
	"github.com/phasec/phasec/eval/evaltest"
	"github.com/phasec/phasec/ir"
	"github.com/phasec/phasec/op"
	"github.com/phasec/phasec/tensor"
	"github.com/phasec/phasec/transform"
)

// gradCase is one op's gradient check: body binds y from the parameters
// (float64 tensors), and the function differentiated is
// loss = sum(y * y), so the gradient flowing into the op is 2y, not ones
// (ones would hide a transposed or misplaced gradient).
type gradCase struct {
	op     string // the op whose rule the case checks
	name   string
	params string // "x: R.Tensor((2, 3), "float64"), ..."
	body   string // bindings, one a line; the last binds y
	wrt    []string
	// positive draws the inputs from [0.5, 1.5) instead of [-1, 1).
	positive bool
}

const f64 = `"float64"`

func t64(shape string) string { return "R.Tensor(" + shape + ", " + f64 + ")" }

// gradCases covers every op with a gradient rule (TestGradientCasesCoverEveryRule).
var gradCases = []gradCase{
	{op: "relax.add", params: "x: " + t64("(2, 3)") + ", b: " + t64("(3,)"), body: "y = R.add(x, b)", wrt: []string{"x", "b"}},
	{op: "relax.subtract", params: "x: " + t64("(2, 3)") + ", b: " + t64("(1, 3)"), body: "y = R.subtract(x, b)", wrt: []string{"x", "b"}},
	{op: "relax.multiply", params: "x: " + t64("(2, 3)") + ", b: " + t64("(2, 1)"), body: "y = R.multiply(x, b)", wrt: []string{"x", "b"}},
	{op: "relax.divide", params: "x: " + t64("(2, 3)") + ", b: " + t64("(3,)"), body: "y = R.divide(x, b)", wrt: []string{"x", "b"}, positive: true},
	{op: "relax.power", params: "x: " + t64("(2, 3)") + ", p: " + t64("(2, 3)"), body: "y = R.power(x, p)", wrt: []string{"x", "p"}, positive: true},
	{op: "relax.maximum", params: "x: " + t64("(2, 3)") + ", b: " + t64("(3,)"), body: "y = R.maximum(x, b)", wrt: []string{"x", "b"}},
	{op: "relax.minimum", params: "x: " + t64("(2, 3)") + ", b: " + t64("(2, 3)"), body: "y = R.minimum(x, b)", wrt: []string{"x", "b"}},
	cmpCase("relax.equal"), cmpCase("relax.not_equal"), cmpCase("relax.greater"),
	cmpCase("relax.greater_equal"), cmpCase("relax.less"), cmpCase("relax.less_equal"),
	{op: "relax.zeros_like", params: "x: " + t64("(2, 3)"), body: "z = R.zeros_like(x)\ny = R.add(x, z)", wrt: []string{"x"}},
	{op: "relax.ones_like", params: "x: " + t64("(2, 3)"), body: "z = R.ones_like(x)\ny = R.multiply(x, z)", wrt: []string{"x"}},
	{op: "relax.full_like", params: "x: " + t64("(2, 3)"), body: `z = R.full_like(x, R.const(2.5, "float64"))` + "\ny = R.multiply(x, z)", wrt: []string{"x"}},
	{op: "relax.zeros", params: "x: " + t64("(2, 3)"), body: `z = R.zeros(R.shape([2, 3]), "float64")` + "\ny = R.add(x, z)", wrt: []string{"x"}},
	{op: "relax.ones", params: "x: " + t64("(2, 3)"), body: `z = R.ones(R.shape([3]), "float64")` + "\ny = R.multiply(x, z)", wrt: []string{"x"}},
	{op: "relax.full", params: "x: " + t64("(2, 3)"), body: `z = R.full(R.shape([2, 3]), R.const(-1.5, "float64"), "float64")` + "\ny = R.multiply(x, z)", wrt: []string{"x"}},
	{op: "relax.triu", params: "x: " + t64("(3, 4)"), body: "y = R.triu(x, k=1)", wrt: []string{"x"}},
	unaryCase("relax.abs", false), unaryCase("relax.cos", false), unaryCase("relax.exp", false),
	unaryCase("relax.log", true), unaryCase("relax.negative", false), unaryCase("relax.sigmoid", false),
	unaryCase("relax.sin", false), unaryCase("relax.sqrt", true), unaryCase("relax.tanh", false),
	unaryCase("relax.nn.relu", false), unaryCase("relax.nn.silu", false),
	{op: "relax.sum", name: "axis", params: "x: " + t64("(2, 3, 4)"), body: "y = R.sum(x, axis=[1])", wrt: []string{"x"}},
	{op: "relax.sum", name: "all_keepdims", params: "x: " + t64("(2, 3)"), body: "s = R.sum(x, keepdims=True)\ny = R.multiply(x, s)", wrt: []string{"x"}},
	{op: "relax.mean", name: "axis", params: "x: " + t64("(2, 3, 4)"), body: "y = R.mean(x, axis=[0, 2])", wrt: []string{"x"}},
	{op: "relax.mean", name: "all", params: "x: " + t64("(2, 3)"), body: "m = R.mean(x)\ny = R.multiply(x, m)", wrt: []string{"x"}},
	{op: "relax.variance", name: "axis", params: "x: " + t64("(2, 3, 4)"), body: "y = R.variance(x, axis=[1])", wrt: []string{"x"}},
	{op: "relax.variance", name: "keepdims", params: "x: " + t64("(3, 4)"), body: "y = R.variance(x, axis=[-1], keepdims=True)", wrt: []string{"x"}},
	{op: "relax.cumsum", name: "axis", params: "x: " + t64("(2, 3)"), body: "y = R.cumsum(x, axis=1)", wrt: []string{"x"}},
	{op: "relax.cumsum", name: "flat", params: "x: " + t64("(2, 3)"), body: "y = R.cumsum(x)", wrt: []string{"x"}},
	{op: "relax.permute_dims", name: "axes", params: "x: " + t64("(2, 3, 4)"), body: "y = R.permute_dims(x, axes=[2, 0, 1])", wrt: []string{"x"}},
	{op: "relax.permute_dims", name: "reverse", params: "x: " + t64("(2, 3, 4)"), body: "y = R.permute_dims(x)", wrt: []string{"x"}},
	{op: "relax.concat", params: "x: " + t64("(2, 3)") + ", b: " + t64("(2, 2)"), body: "y = R.concat((x, b, x), axis=1)", wrt: []string{"x", "b"}},
	{op: "relax.split", params: "x: " + t64("(2, 6)"), body: "s = R.split(x, indices_or_sections=[1, 4], axis=1)\ns0 = s[0]\ns2 = s[2]\ny = R.multiply(s0, s2)", wrt: []string{"x"}},
	{op: "relax.expand_dims", params: "x: " + t64("(2, 3)"), body: "y = R.expand_dims(x, axis=[0, 2])", wrt: []string{"x"}},
	{op: "relax.reshape", params: "x: " + t64("(2, 3)"), body: "y = R.reshape(x, R.shape([3, 2]))", wrt: []string{"x"}},
	{op: "relax.broadcast_to", params: "x: " + t64("(3, 1)"), body: "y = R.broadcast_to(x, R.shape([2, 3, 4]))", wrt: []string{"x"}},
	{op: "relax.take", name: "repeated", params: "x: " + t64("(3, 4)"), body: `y = R.take(x, R.const([2, 0, 2], "int64"), axis=1)`, wrt: []string{"x"}},
	{op: "relax.take", name: "matrix_indices", params: "x: " + t64("(3, 4)"), body: `y = R.take(x, R.const([[2, 0], [1, 2]], "int64"), axis=0)`, wrt: []string{"x"}},
	{op: "relax.where", params: "x: " + t64("(2, 3)") + ", b: " + t64("(2, 3)"), body: `c = R.greater(x, b)` + "\ny = R.where(c, x, b)", wrt: []string{"x", "b"}},
	{op: "relax.astype", params: "x: " + t64("(2, 3)"), body: `a = R.astype(x, "float64")` + "\ny = R.multiply(a, x)", wrt: []string{"x"}},
	{op: "relax.matmul", name: "matrix", params: "a: " + t64("(2, 3)") + ", b: " + t64("(3, 4)"), body: "y = R.matmul(a, b)", wrt: []string{"a", "b"}},
	{op: "relax.matmul", name: "vector_matrix", params: "a: " + t64("(3,)") + ", b: " + t64("(2, 3, 4)"), body: "y = R.matmul(a, b)", wrt: []string{"a", "b"}},
	{op: "relax.matmul", name: "matrix_vector", params: "a: " + t64("(2, 3)") + ", b: " + t64("(3,)"), body: "y = R.matmul(a, b)", wrt: []string{"a", "b"}},
	{op: "relax.matmul", name: "vector_vector", params: "a: " + t64("(3,)") + ", b: " + t64("(3,)"), body: "y = R.matmul(a, b)", wrt: []string{"a", "b"}},
	{op: "relax.matmul", name: "batch_broadcast", params: "a: " + t64("(2, 2, 3)") + ", b: " + t64("(3, 4)"), body: "y = R.matmul(a, b)", wrt: []string{"a", "b"}},
	{op: "relax.nn.softmax", params: "x: " + t64("(2, 3)"), body: "y = R.nn.softmax(x, axis=0)", wrt: []string{"x"}},
	{op: "relax.nn.log_softmax", params: "x: " + t64("(2, 3)"), body: "y = R.nn.log_softmax(x)", wrt: []string{"x"}},
	{op: "relax.nn.cross_entropy_with_logits", name: "batch", params: "x: " + t64("(2, 3)") + ", l: " + t64("(2, 3)"), body: "y = R.nn.cross_entropy_with_logits(x, l)", wrt: []string{"x", "l"}},
	{op: "relax.nn.cross_entropy_with_logits", name: "vector", params: "x: " + t64("(3,)") + ", l: " + t64("(3,)"), body: "y = R.nn.cross_entropy_with_logits(x, l)", wrt: []string{"x", "l"}},
	{op: "relax.nn.nll_loss", name: "mean_weights", params: "x: " + t64("(3, 4)") + ", w: " + t64("(4,)"), body: `y = R.nn.nll_loss(x, R.const([3, 0, 3], "int64"), w)`, wrt: []string{"x"}, positive: true},
	{op: "relax.nn.nll_loss", name: "sum_ignore", params: "x: " + t64("(3, 4)"), body: `y = R.nn.nll_loss(x, R.const([1, 2, 1], "int64"), reduction="sum", ignore_index=2)`, wrt: []string{"x"}},
	{op: "relax.nn.nll_loss", name: "none_spatial", params: "x: " + t64("(2, 3, 2)"), body: `y = R.nn.nll_loss(x, R.const([[0, 2], [1, 1]], "int64"), reduction="none")`, wrt: []string{"x"}},
	{op: "relax.nn.nll_loss", name: "unbatched", params: "x: " + t64("(4,)"), body: `y = R.nn.nll_loss(x, R.const(2, "int64"))`, wrt: []string{"x"}},
	unaryCase("relax.nn.gelu", false),
	{op: "relax.tril", params: "x: " + t64("(3, 4)"), body: "y = R.tril(x, k=-1)", wrt: []string{"x"}},
	{op: "relax.strided_slice", params: "x: " + t64("(4, 5)"), body: "y = R.strided_slice(x, axes=[0, 1], begin=[1, -4], end=[3, 100])", wrt: []string{"x"}},
	{op: "relax.nn.conv2d", name: "stride_pad", params: "x: " + t64("(2, 2, 5, 5)") + ", w: " + t64("(3, 2, 3, 3)"), body: "y = R.nn.conv2d(x, w, strides=[2, 2], padding=[1, 1])", wrt: []string{"x", "w"}},
	{op: "relax.nn.conv2d", name: "uneven", params: "x: " + t64("(1, 2, 6, 5)") + ", w: " + t64("(2, 2, 2, 3)"), body: "y = R.nn.conv2d(x, w, strides=[2, 3], padding=[0, 1, 1, 0])", wrt: []string{"x", "w"}},
	{op: "relax.nn.conv2d", name: "groups", params: "x: " + t64("(1, 4, 4, 4)") + ", w: " + t64("(6, 2, 3, 3)"), body: "y = R.nn.conv2d(x, w, padding=[1, 1], groups=2)", wrt: []string{"x", "w"}},
	{op: "relax.nn.max_pool2d", name: "overlapping_pad", params: "x: " + t64("(2, 2, 5, 5)"), body: "y = R.nn.max_pool2d(x, pool_size=[3, 3], strides=[2, 2], padding=[1, 1])", wrt: []string{"x"}},
	{op: "relax.nn.max_pool2d", name: "ceil_dilation", params: "x: " + t64("(1, 1, 7, 8)"), body: "y = R.nn.max_pool2d(x, pool_size=[2, 2], strides=[2, 2], dilation=[1, 2], ceil_mode=True)", wrt: []string{"x"}},
	{op: "relax.nn.avg_pool2d", name: "exclude_pad", params: "x: " + t64("(2, 2, 5, 5)"), body: "y = R.nn.avg_pool2d(x, pool_size=[3, 3], strides=[2, 2], padding=[1, 1])", wrt: []string{"x"}},
	{op: "relax.nn.avg_pool2d", name: "include_pad_ceil", params: "x: " + t64("(1, 2, 7, 6)"), body: "y = R.nn.avg_pool2d(x, pool_size=[2, 3], strides=[2, 2], padding=[0, 1], ceil_mode=True, count_include_pad=True)", wrt: []string{"x"}},
	{op: "relax.nn.conv2d", name: "dilation", params: "x: " + t64("(1, 1, 6, 6)") + ", w: " + t64("(2, 1, 2, 2)"), body: "y = R.nn.conv2d(x, w, dilation=[2, 2])", wrt: []string{"x", "w"}},
}

// cmpCase: the comparison gates x, and no gradient flows through it.
func cmpCase(name string) gradCase {
	body := fmt.Sprintf("c = %s(x, b)\nm = R.astype(c, \"float64\")\ny = R.multiply(x, m)", strings.Replace(name, "relax.", "R.", 1))
	return gradCase{op: name, params: "x: " + t64("(2, 3)") + ", b: " + t64("(2, 3)"), body: body, wrt: []string{"x", "b"}}
}

func unaryCase(name string, positive bool) gradCase {
	return gradCase{op: name, params: "x: " + t64("(2, 3)"), body: "y = " + strings.Replace(name, "relax.", "R.", 1) + "(x)", wrt: []string{"x"}, positive: positive}
}

func (c gradCase) label() string {
	if c.name == "" {
		return c.op
	}
	return c.op + "/" + c.name
}

func (c gradCase) module() string {
	var b strings.Builder
	b.WriteString("@I.ir_module\nclass Module:\n    @R.function\n    def main(" + c.params + "):\n        with R.dataflow():\n")
	for _, line := range strings.Split(c.body, "\n") {
		b.WriteString("            " + line + "\n")
	}
	b.WriteString("            z = R.multiply(y, y)\n            loss = R.sum(z)\n            R.output(loss)\n        return loss\n")
	return b.String()
}

// Numeric gradient checks: central differences of step gradStep in
// float64 agree with the adjoint within gradTol (absolute, plus the same
// relative to the value). The truncation error is O(step²) ≈ 1e-10 and
// the rounding error O(eps/step) ≈ 1e-11, far below the tolerance, while
// a wrong rule is off by O(1).
const (
	gradStep = 1e-5
	gradTol  = 1e-6
)

func TestGradientMatchesFiniteDifferences(t *testing.T) {
	for _, c := range gradCases {
		t.Run(c.label(), func(t *testing.T) {
			mod := evaltest.Parse(t, c.label(), c.module())
			out, err := transform.Differentiate(mod, "main", c.wrt, 0)
			require.NoError(t, err, "Gradient on\n%s", c.module())
			args := gradArgs(t, mod, c.positive)
			checkNumericGradient(t, out, args, c.wrt)
		})
	}
}

// gradArgs draws the arguments of main.
func gradArgs(t *testing.T, mod *ir.Module, positive bool) []op.Value {
	args, err := eval.RandomArgs(mod.Func("main"), 7, nil, 1)
	require.NoError(t, err)
	if positive {
		for _, a := range args {
			x := a.(*tensor.Tensor)
			for i := range int(x.NumElements()) {
				x.SetFloat64(i, 1+0.5*x.Float64At(i))
			}
		}
	}
	return args
}

// checkNumericGradient compares main_adjoint's gradients of the
// parameters named wrt with central differences of main.
func checkNumericGradient(t *testing.T, mod *ir.Module, args []op.Value, wrt []string) {
	t.Helper()
	m := eval.New(mod)
	res, err := m.Call("main_adjoint", args...)
	require.NoError(t, err)
	pair := res.(op.Tuple)
	grads := pair[1].(op.Tuple)
	require.Len(t, grads, len(wrt))
	want, err := m.Call("main", args...)
	require.NoError(t, err)
	require.InDelta(t, scalarOf(want), scalarOf(pair[0]), 0, "the adjoint's first result is main's")

	params := mod.Func("main").Params
	for gi, name := range wrt {
		pi := -1
		for i, p := range params {
			if p.Name == name {
				pi = i
			}
		}
		require.GreaterOrEqual(t, pi, 0, name)
		x := args[pi].(*tensor.Tensor)
		g := grads[gi].(*tensor.Tensor)
		require.Equal(t, x.Shape, g.Shape, "the gradient of %s has its shape", name)
		for i := range int(x.NumElements()) {
			orig := x.Float64At(i)
			x.SetFloat64(i, orig+gradStep)
			up, err := m.Call("main", args...)
			require.NoError(t, err)
			x.SetFloat64(i, orig-gradStep)
			down, err := m.Call("main", args...)
			require.NoError(t, err)
			x.SetFloat64(i, orig)
			numeric := (scalarOf(up) - scalarOf(down)) / (2 * gradStep)
			require.InDelta(t, numeric, g.Float64At(i), gradTol*(1+math.Abs(numeric)), "d loss / d %s[%d]", name, i)
		}
	}
}

func scalarOf(v op.Value) float64 { return v.(*tensor.Tensor).Float64At(0) }

// TestGradientCasesCoverEveryRule: every op with a gradient rule has a
// numeric case, and every case's op has a rule.
func TestGradientCasesCoverEveryRule(t *testing.T) {
	covered := map[string]bool{}
	for _, c := range gradCases {
		covered[c.op] = true
	}
	var rules []string
	for _, d := range op.Defs() {
		if d.Gradient != nil {
			rules = append(rules, d.Op.Name)
			require.True(t, covered[d.Op.Name], "op %s has a gradient rule but no numeric case", d.Op.Name)
		}
	}
	for name := range covered {
		require.Contains(t, rules, name, "a case checks %s, which has no gradient rule", name)
	}
}
