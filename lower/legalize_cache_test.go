package lower

import (
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/phasec/phasec/ir"
	"github.com/phasec/phasec/syntax"
	"github.com/phasec/phasec/syntax/printer"
)

// legalizeBothWays legalizes mod with and without the kernel cache and
// returns both results printed with their diagnostics, after checking they
// are structurally equal (struct info included, which printing may omit).
func legalizeBothWays(t *testing.T, mod *ir.Module, o LegalizeOptions) (cached, built string) {
	t.Helper()
	legalize := func(on bool) (*ir.Module, string) {
		cacheKernels = on
		defer func() { cacheKernels = true }()
		out, errs := LegalizeModule(mod, o)
		return out, printer.Print(out) + "\n" + errs.Error()
	}
	withCache, cached := legalize(true)
	without, built := legalize(false)
	assert.Nil(t, ir.Diff(without, withCache, ir.EqualOptions{}), "%s: legalized with the kernel cache differs structurally", mod.Source)
	return cached, built
}

// The kernel cache changes nothing but the work done: every module of the
// repository's corpus legalizes to the same text and diagnostics with it
// and without it (building every kernel and deduplicating).
func TestKernelCacheChangesNothing(t *testing.T) {
	n := 0
	err := filepath.WalkDir("../testdata", func(path string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() || !strings.HasSuffix(path, ".tvms") {
			return err
		}
		src, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		mod, diags := syntax.Parse(path, src)
		if mod == nil || diags.HasErrors() {
			return nil
		}
		n++
		for _, allow := range []bool{false, true} {
			cached, built := legalizeBothWays(t, mod, LegalizeOptions{AllowUnlegalized: allow})
			require.Equal(t, built, cached, "%s (AllowUnlegalized=%v)", path, allow)
		}
		return nil
	})
	require.NoError(t, err)
	require.Greater(t, n, 100, "the corpus should hold well over 100 parsable modules")
}

// Calls of one shape share a kernel only with the same symbolic variables
// and the same argument pattern: f's and g's own n are passed to their own
// R.add(w, n) kernel calls, add(x, x) takes x twice, and a call whose result or
// attributes differ is legalized on its own.
func TestKernelCacheSignatures(t *testing.T) {
	const src = `@I.ir_module
class Module:
    @R.function
    def f(x: R.Tensor(("n", 4), dtype="float32"), y: R.Tensor(("n", 4), dtype="float32"), w: R.Tensor((4,), dtype="int64")) -> R.Tensor(("n", 4), dtype="float32"):
        n = T.int64()
        with R.dataflow():
            a = R.add(x, y)
            b = R.add(x, x)
            c = R.add(a, b)
            d = R.sum(c, axis=[0])
            e = R.sum(c, axis=[1])
            h = R.sum(a, axis=[1])
            z = R.add(w, R.prim_value(n))
            z1 = R.add(w, R.prim_value(n))
            gv = R.add(c, y)
            R.output(gv, d, e, h, z, z1)
        return gv

    @R.function
    def g(x: R.Tensor(("n", 4), dtype="float32"), y: R.Tensor(("n", 4), dtype="float32"), w: R.Tensor((4,), dtype="int64")) -> R.Tensor(("n", 4), dtype="float32"):
        n = T.int64()
        with R.dataflow():
            a = R.add(x, y)
            z = R.add(w, R.prim_value(n))
            gv = R.add(a, x)
            R.output(gv, z)
        return gv
`
	mod, diags := syntax.Parse("sig.tvms", []byte(src))
	require.False(t, diags.HasErrors(), "%v", diags)
	cached, built := legalizeBothWays(t, mod, LegalizeOptions{})
	require.Equal(t, built, cached)
	// Each function's call_tir passes its own n: g's calls name g's n.
	out, errs := LegalizeModule(mod, LegalizeOptions{})
	require.False(t, errs.HasErrors(), "%v", errs)
	nOf := func(fn string) *ir.PrimVar {
		return mod.Func(fn).Params[0].StructInfo().(*ir.TensorInfo).Shape.(*ir.ShapeExpr).Values[0].(*ir.PrimVar)
	}
	for fn, zeros := range map[string]int{"f": 2, "g": 1} {
		passed := 0
		ir.Inspect(out.Func(fn).Body, func(e ir.Expr) bool {
			if c, ok := e.(*ir.Call); ok && len(c.Args) == 3 {
				require.Same(t, nOf(fn), c.Args[2].(*ir.ShapeExpr).Values[0], "%s passes another function's n", fn)
				passed++
			}
			return true
		})
		require.Equal(t, zeros, passed, "%s: each R.add(w, R.prim_value(n)) passes n", fn)
	}
}
