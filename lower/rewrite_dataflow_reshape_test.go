package lower_test

import (
	"fmt"
	"regexp"
	"testing"

	"github.com/stretchr/testify/assert"

	"github.com/phasec/phasec/eval/evaltest"
	"github.com/phasec/phasec/syntax/printer"
)

const reshapeModule = `
@I.ir_module
class Module:
    @T.prim_func(private=True)
    def shifted(A: T.Buffer((T.int64(2), T.int64(3)), "float32"), B: T.Buffer((T.int64(6),), "float32")):
        for i in T.serial(T.int64(6)):
            with T.block("B"):
                v = T.axis.spatial(T.int64(6), i)
                B[v] = A[(v + 1) % T.int64(6) // T.int64(3), (v + 1) % T.int64(3)]

    @R.function
    def main(x: R.Tensor(("n", 3, 4), dtype="float32"), y: R.Tensor((2, 3, 4), dtype="float32"), z: R.Tensor((2, 3), dtype="float32")):
        n = T.int64()
        cls = Module
        with R.dataflow():
            a = R.reshape(x, R.shape([n, 12]))
            b = R.exp(a)
            c = R.flatten(y)
            d = R.expand_dims(c, axis=[0])
            e = R.permute_dims(y)
            f = R.reshape(e, R.shape([4, 6]))
            s = R.call_tir(cls.shifted, (z,), out_sinfo=R.Tensor((6,), dtype="float32"))
            g = R.squeeze(d)
            out = R.reshape(f, R.shape([24]))
            gv = (b, g, f, s)
            R.output(gv, out)
        return (gv, out)
`

// Reshape-pattern kernels become R.reshape; the others (a transpose, a
// rotation that looks like a reshape) stay; an output var's binding stays;
// the results do not change.
func TestRewriteDataflowReshape(t *testing.T) {
	mod := evaltest.Parse(t, "reshape", reshapeModule)
	out := evaltest.CheckPipeline(t, mod, "LegalizeOps,RewriteDataflowReshape", evaltest.Options{Seed: 1, Dims: map[string]int64{"n": 2}})
	requireLines(t, printer.Print(out),
		"c = R.reshape(y, R.shape([24]))",
		"d = R.reshape(c, R.shape([1, 24]))",
		"g = R.reshape(d, R.shape([24]))",
		"f = R.reshape(e, R.shape([4, 6]))",
		"e = R.call_tir(cls.permute_dims",
		"s = R.call_tir(cls.shifted",
		"out = R.call_tir(cls.reshape",
	)
	// The lower barrier runs both, then lowers the views to builtins.
	evaltest.CheckPipeline(t, mod, "canonicalize,lower", evaltest.Options{Seed: 2})
}

// copyKernel is a PrimFunc copying A (n, 3) into B (n * 3,), reading
// A[index] for B[v].
func copyKernel(name, index string) string {
	return fmt.Sprintf(`
    @T.prim_func(private=True)
    def %s(var_A: T.handle, var_B: T.handle):
        n = T.int64()
        A = T.match_buffer(var_A, (n, T.int64(3)), "float32")
        B = T.match_buffer(var_B, (n * T.int64(3),), "float32")
        for i in T.serial(n * T.int64(3)):
            with T.block("B"):
                v = T.axis.spatial(n * T.int64(3), i)
                B[v] = A[%s]
`, name, index)
}

var symbolicReshapeModule = "@I.ir_module\nclass Module:" +
	copyKernel("rotated", "(v + T.int64(1)) % (n * T.int64(3)) // T.int64(3), (v + T.int64(1)) % T.int64(3)") +
	copyKernel("column_major", "v % n, v // n") +
	copyKernel("hand_flatten", "v // T.int64(3), v % T.int64(3)") + `
    @R.function
    def main(x: R.Tensor(("n", "m"), dtype="float32"), y: R.Tensor(("n", 3, 4), dtype="float32"), z: R.Tensor(("n", 3), dtype="float32")):
        n = T.int64()
        m = T.int64()
        cls = Module
        with R.dataflow():
            a = R.reshape(x, R.shape([n * m]))
            b = R.reshape(a, R.shape([m, n]))
            c = R.flatten(y)
            d = R.reshape(y, R.shape([n, 2, 6]))
            e = R.expand_dims(x, axis=[1])
            f = R.squeeze(e, axis=[1])
            g = R.permute_dims(x)
            h = R.reshape(g, R.shape([n * m]))
            r = R.call_tir(cls.rotated, (z,), out_sinfo=R.Tensor((n * 3,), dtype="float32"))
            s = R.call_tir(cls.column_major, (z,), out_sinfo=R.Tensor((n * 3,), dtype="float32"))
            u = R.call_tir(cls.hand_flatten, (z,), out_sinfo=R.Tensor((n * 3,), dtype="float32"))
            gv = (b, c, d, f, h, r, s, u)
            R.output(gv)
        return gv
`

// Symbolic reshapes are proven too: the kernels LegalizeOps builds for
// reshape, flatten, expand_dims and squeeze on symbolic shapes, and a
// hand-written flatten, become R.reshape; a transpose, a column-major copy
// and a rotation, of the right shapes, stay copies; results do not change.
func TestRewriteDataflowReshapeSymbolic(t *testing.T) {
	mod := evaltest.Parse(t, "symbolic reshape", symbolicReshapeModule)
	for _, dims := range []map[string]int64{{"n": 2, "m": 3}, {"n": 1, "m": 4}, {"n": 0, "m": 2}} {
		out := evaltest.CheckPipeline(t, mod, "LegalizeOps,RewriteDataflowReshape", evaltest.Options{Seed: 1, Dims: dims})
		requireLines(t, printer.Print(out),
			"a = R.reshape(x, R.shape([m * n]))",
			"b = R.reshape(a, R.shape([m, n]))",
			"c = R.reshape(y, R.shape([n * 12]))",
			"d = R.reshape(y, R.shape([n, 2, 6]))",
			"e = R.reshape(x, R.shape([n, 1, m]))",
			"f = R.reshape(e, R.shape([n, m]))",
			"g = R.call_tir(cls.permute_dims",
			"h = R.reshape(g, R.shape([m * n]))",
			"r = R.call_tir(cls.rotated",
			"s = R.call_tir(cls.column_major",
			"u = R.reshape(z, R.shape([n * 3]))",
		)
		// The views lower to builtins and still compute the same.
		evaltest.CheckPipeline(t, mod, "canonicalize,lower", evaltest.Options{Seed: 2, Dims: dims})
	}
}

// requireLines reports each wanted fragment text lacks.
func requireLines(t *testing.T, text string, wants ...string) {
	t.Helper()
	// The wanted lines leave out binding annotations (the printer writes
	// one on every binding but call_tir's).
	text = bindingAnnotation.ReplaceAllString(text, "$1 = ")
	for _, want := range wants {
		assert.Contains(t, text, want)
	}
}

// bindingAnnotation matches "name: <struct info> = " at the start of a line.
var bindingAnnotation = regexp.MustCompile(`(?m)^(\s*\w+): .*?\) = `)
