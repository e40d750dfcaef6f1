package lower_test

import (
	"strings"
	"testing"

	"github.com/phasec/phasec/eval/evaltest"
	"github.com/phasec/phasec/syntax"
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
	text := syntax.Print(out)
	for _, want := range []string{
		"c = R.reshape(y, R.shape([24]))",
		"d = R.reshape(c, R.shape([1, 24]))",
		"g = R.reshape(d, R.shape([24]))",
		"f = R.reshape(e, R.shape([4, 6]))",
		"e = R.call_tir(cls.permute_dims",
		"s = R.call_tir(cls.shifted",
		"out = R.call_tir(cls.reshape",
	} {
		if !strings.Contains(text, want) {
			t.Errorf("missing %q in\n%s", want, text)
		}
	}
	// The lower barrier runs both, then lowers the views to builtins.
	evaltest.CheckPipeline(t, mod, "canonicalize,lower", evaltest.Options{Seed: 2})
}
