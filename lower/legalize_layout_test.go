package lower_test

import (
	"fmt"
	"os"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/phasec/phasec/eval/evaltest"
	"github.com/phasec/phasec/ir"
	"github.com/phasec/phasec/lower"
	"github.com/phasec/phasec/passes/passtest"
	"github.com/phasec/phasec/syntax/printer"
)

// Oracle tests of scatter_nd, dynamic_strided_slice, layout_transform and
// memory.view: each case is evaluated with the op's own semantics and
// through its legalized PrimFuncs (runFullyLegalized).

func TestLegalizeScatterNDOracle(t *testing.T) {
	var cases []legalCase
	for _, dt := range []string{"float32", "int32", "int64"} {
		for _, red := range []string{"update", "add", "mul", "max", "min"} {
			p := func(x, u string) []string { return []string{tensorParam("x", x, dt), tensorParam("u", u, dt)} }
			cases = append(cases,
				legalCase{name: "rows duplicate " + red + dt, params: p("(4, 3)", "(3, 3)"), body: fmt.Sprintf(`
					i = R.const([[1], [3], [1]], "int64")
					gv = R.scatter_nd(x, i, u, reduction=%q)`, red)},
				legalCase{name: "elements symbolic " + red + dt, params: p(`("n", 3)`, "(3,)"), body: fmt.Sprintf(`
					i = R.const([[0, 2], [-1, 0], [0, 2]], "int32")
					gv = R.scatter_nd(x, i, u, reduction=%q)`, red)},
				legalCase{name: "batched " + red + dt, params: p("(2, 3, 4)", "(2, 1, 4)"), body: fmt.Sprintf(`
					i = R.const([[[0, 1]], [[1, 2]]], "int64")
					gv = R.scatter_nd(x, i, u, reduction=%q)`, red)},
			)
		}
		cases = append(cases,
			legalCase{name: "rank-1 indices " + dt, params: []string{tensorParam("x", "(3, 2)", dt), tensorParam("u", "(2,)", dt)}, body: `
				i = R.const([2], "int64")
				gv = R.scatter_nd(x, i, u)`},
			legalCase{name: "extent 1 " + dt, params: []string{tensorParam("x", "(1, 1)", dt), tensorParam("u", "(1,)", dt)}, body: `
				i = R.const([[0, 0]], "int64")
				gv = R.scatter_nd(x, i, u, reduction="add")`},
			legalCase{name: "no updates " + dt, params: []string{tensorParam("x", `("n", 3)`, dt), tensorParam("i", "(0, 1)", "int64"), tensorParam("u", "(0, 3)", dt)},
				body: `gv = R.scatter_nd(x, i, u, reduction="mul")`},
			legalCase{name: "empty data " + dt, params: []string{tensorParam("x", "(2, 0)", dt), tensorParam("u", "(1, 0)", dt)}, body: `
				i = R.const([[1]], "int64")
				gv = R.scatter_nd(x, i, u)`},
		)
	}
	runFullyLegalized(t, cases)
}

// dynamic_strided_slice legalizes to a shape function, tensor_to_shape, a
// match_cast and the slice kernel; begin, end and strides are constants
// here so that no stride is 0.
func TestLegalizeDynamicStridedSliceOracle(t *testing.T) {
	var cases []legalCase
	bounds := func(b, e, s string) string {
		return fmt.Sprintf(`
			b = R.const(%s, "int64")
			e = R.const(%s, "int64")
			s = R.const(%s, "int64")
			gv = R.dynamic_strided_slice(x, b, e, s)`, b, e, s)
	}
	for _, dt := range []string{"float32", "int32", "bool"} {
		x := func(shape string) []string { return []string{tensorParam("x", shape, dt)} }
		cases = append(cases,
			legalCase{name: "steps " + dt, params: x("(4, 5)"), body: bounds("[1, -1]", "[4, -6]", "[2, -2]")},
			legalCase{name: "clamp symbolic " + dt, params: x(`("n", 5)`), body: bounds("[-100, 0]", "[100, 5]", "[1, 3]")},
			legalCase{name: "reverse " + dt, params: x(`(3, "n", 2)`), body: bounds("[-1, 0, 0]", "[-100, 100, 2]", "[-1, 1, 1]")},
			legalCase{name: "empty result " + dt, params: x("(4, 5)"), body: bounds("[3, 0]", "[1, 5]", "[1, 1]")},
			legalCase{name: "empty input " + dt, params: x("(0, 3)"), body: bounds("[0, 1]", "[2, 3]", "[1, 1]")},
			legalCase{name: "extent 1 " + dt, params: x("(1,)"), body: bounds("[0]", "[1]", "[1]")},
		)
	}
	runFullyLegalized(t, cases)
}

// The legalized form of testdata/relax_layout_ops.tvms is golden (TVM's
// shape function, tensor_to_shape and match_cast for dynamic_strided_slice)
// and computes what the source computes, through canonicalize,lower too.
func TestLegalizeLayoutOpsGolden(t *testing.T) {
	hi, got := legalizeFile(t, "../testdata/relax_layout_ops.tvms")
	passtest.CheckGolden(t, "testdata/legalize_layout_ops.tvms", got)
	for _, n := range []int64{1, 4} {
		evaltest.CheckSame(t, hi, got, evaltest.Options{Seed: uint64(n), Dims: map[string]int64{"n": n}})
		evaltest.CheckPipeline(t, hi, "canonicalize,lower", evaltest.Options{Seed: uint64(n), Dims: map[string]int64{"n": n}})
	}
}

// legalizeFile parses the module in path and runs LegalizeOps on it.
func legalizeFile(t *testing.T, path string) (src, legalized *ir.Module) {
	t.Helper()
	text, err := os.ReadFile(path)
	require.NoError(t, err)
	src = evaltest.Parse(t, path, string(text))
	legalized, errs := lower.LegalizeModule(src, lower.LegalizeOptions{})
	require.False(t, errs.HasErrors(), "%v", errs)
	return src, legalized
}

// layout_transform: permutations and splits legalize to one block reading
// through the inverse map (with a padding predicate where a split does not
// divide), other maps to a fill and a scatter.
func TestLegalizeLayoutTransformOracle(t *testing.T) {
	var cases []legalCase
	lt := func(m, rest string) string {
		return fmt.Sprintf("gv = R.layout_transform(x, index_map=%s%s)", m, rest)
	}
	for _, dt := range []string{"float32", "int32", "int8", "bool"} {
		x := func(shape string) []string { return []string{tensorParam("x", shape, dt)} }
		cases = append(cases,
			legalCase{name: "transpose " + dt, params: x(`("n", 3)`), body: lt("lambda i, j: (j, i)", "")},
			legalCase{name: "nchw4c " + dt, params: x("(1, 8, 2, 3)"), body: lt("lambda n, c, h, w: (n, c // 4, h, w, c % 4)", "")},
			legalCase{name: "nchw4c pad " + dt, params: x("(2, 6, 1, 2)"), body: lt("lambda n, c, h, w: (n, c // 4, h, w, c % 4)", "")},
			legalCase{name: "split symbolic " + dt, params: x(`(2, "n")`), body: lt("T.index_map(lambda i, j: (j // 3, i, j % 3))", "")},
			legalCase{name: "split symbolic pad " + dt, params: x(`(2, "n")`), body: lt("lambda i, j: (j // 4, i, j % 4)", ""), dims: map[string]int64{"n": 5}},
			legalCase{name: "fuse " + dt, params: x("(4, 3)"), body: lt("lambda i, j: (i * 3 + j,)", "")},
			// Two maps on one signature: LegalizeOps' kernel cache must tell them apart.
			legalCase{name: "two maps " + dt, params: x("(3, 3)"), body: `
				a = R.layout_transform(x, index_map=lambda i, j: (j, i))
				b = R.layout_transform(x, index_map=lambda i, j: (i, j))
				c = R.layout_transform(x, index_map=lambda p, q: (q, p))
				gv = (a, b, c)`},
			legalCase{name: "reverse " + dt, params: x("(5,)"), body: lt("lambda i: (4 - i,)", "")},
			legalCase{name: "extent 0 " + dt, params: x("(0, 3)"), body: lt("lambda i, j: (j, i)", "")},
			legalCase{name: "extent 1 " + dt, params: x("(1, 1)"), body: lt("lambda i, j: (i, j // 2, j % 2)", "")},
			legalCase{name: "scalar " + dt, params: x("()"), body: lt("lambda: ()", "")},
		)
	}
	for _, c := range []struct{ dt, pad string }{{"float32", "1.5"}, {"float64", "-2.0"}, {"int32", "7"}, {"int64", "-1"}, {"float32", "T.float32(3.25)"}} {
		for _, m := range []string{"lambda i, j: (j // 4, i, j % 4)", "lambda i, j: (i, (j + 1) // 4, (j + 1) % 4)"} {
			cases = append(cases, legalCase{name: "pad " + c.pad + " " + m + c.dt, params: []string{tensorParam("x", `("n", 6)`, c.dt)},
				body: lt(m, ", pad_value="+c.pad)})
		}
	}
	runFullyLegalized(t, cases)
}

// The canonical forms of these ops (as TVM prints them: every
// layout_transform attribute, pad_value=None included; index maps as
// T.index_map(lambda ...)) print back byte for byte.
func TestLayoutOpsPrintBack(t *testing.T) {
	const path = "../testdata/tvm_forms/layout_ops.tvms"
	src, err := os.ReadFile(path)
	require.NoError(t, err)
	assert.Equal(t, string(src), printer.Print(evaltest.Parse(t, path, string(src))), "%s does not print back as written", path)
}

// R.memory.view is not legalized (as in TVM it stays until
// LowerRuntimeBuiltin); the lower barrier keeps what it computes, for
// views that change the shape, the dtype (reinterpreting bytes) and the
// offset, of parameters and of intermediate tensors, with a symbolic
// dimension. testdata/relax_memory_view.tvms runs it on the VM.
func TestMemoryViewThroughLower(t *testing.T) {
	var cases []legalCase
	for _, dt := range []string{"float32", "int32", "float64", "int8"} {
		x := []string{tensorParam("x", `("n", 4)`, dt)}
		cases = append(cases,
			legalCase{name: "reshape " + dt, params: x, body: `gv = R.memory.view(x, R.shape([4, n]))`},
			legalCase{name: "same " + dt, params: x, body: `gv = R.memory.view(x)`},
			legalCase{name: "intermediate " + dt, params: x, body: `
				a = R.add(x, x)
				v = R.memory.view(a, R.shape([2, 2]), relative_byte_offset=R.prim_value(T.int64(0)))
				gv = R.multiply(v, v)`},
		)
	}
	cases = append(cases,
		legalCase{name: "bits", params: []string{tensorParam("x", "(2, 4)", "float32")}, body: `gv = R.memory.view(x, dtype="int32")`},
		legalCase{name: "offset", params: []string{tensorParam("x", "(2, 4)", "int32")},
			body: `gv = R.memory.view(x, R.shape([3]), R.dtype("int16"), R.prim_value(T.int64(10)))`},
		legalCase{name: "empty", params: []string{tensorParam("x", "(0, 4)", "float32")}, body: `gv = R.memory.view(x, R.shape([0]))`},
	)
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			mod := evaltest.Parse(t, c.name, c.module())
			evaltest.CheckPipeline(t, mod, "canonicalize,lower", evaltest.Options{Seed: 1, Dims: map[string]int64{"n": 2}})
		})
	}
}

// A layout_transform whose map may send two elements to one position (i + j
// over symbolic extents) is left to the evaluator, which reports the
// collision, rather than legalized into a kernel that would overwrite.
func TestLayoutTransformNotProvablyInjective(t *testing.T) {
	c := legalCase{name: "sum", params: []string{tensorParam("x", `("n", "m")`, "float32")}, body: "gv = R.layout_transform(x, index_map=lambda i, j: (i + j,))"}
	_, errs := lower.LegalizeModule(evaltest.Parse(t, c.name, c.module()), lower.LegalizeOptions{})
	require.Len(t, errs, 1, "want one %s", lower.DiagNoLegalization)
	require.Equal(t, lower.DiagNoLegalization, errs[0].Code)
}
