package dpl_test

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/phasec/phasec/ir"
	"github.com/phasec/phasec/syntax"
	"github.com/phasec/phasec/transform/dpl"
)

func parseModule(t *testing.T, src string) *ir.Module {
	t.Helper()
	mod, diags := syntax.Parse("test.tvms", []byte(strings.TrimSpace(src)+"\n"))
	require.Empty(t, diags)
	return mod
}

// opsOf lists the ops main's bindings call, in order.
func opsOf(f *ir.Function) []string {
	var out []string
	for _, blk := range f.Body.(*ir.SeqExpr).Blocks {
		for _, b := range blk.Bindings {
			if c, ok := b.(*ir.VarBinding).Value.(*ir.Call); ok {
				if o, ok := c.Op.(*ir.Op); ok {
					out = append(out, strings.TrimPrefix(o.Name, "relax."))
				}
			}
		}
	}
	return out
}

// negNeg rewrites -(-x) to x's exp: a replacement that differs from the
// matched value, so the test sees where rewrites happened.
func negNeg() (dpl.Pattern, dpl.RewriteFunc) {
	x := dpl.Wildcard()
	p := dpl.IsOp("relax.negative")(dpl.IsOp("relax.negative")(x))
	return p, func(_ ir.Expr, m dpl.Match) ir.Expr {
		exp, _ := ir.LookupOp("relax.exp")
		return ir.NewCall(exp, m[x])
	}
}

func TestRewriteCallFollowsBindingsOfTheBlock(t *testing.T) {
	mod := parseModule(t, `
@I.ir_module
class Module:
    @R.function
    def main(x: R.Tensor((4,), "float32")) -> R.Tensor((4,), "float32"):
        with R.dataflow():
            a = R.negative(x)
            b = R.negative(a)
            c = R.add(b, b)
            R.output(c)
        return c
`)
	p, rw := negNeg()
	f := mod.Func("main")
	out, errs := dpl.RewriteCall(mod, f, p, rw)
	require.Empty(t, errs)
	// a is left for dead code elimination, b is rewritten, c uses it.
	assert.Equal(t, []string{"negative", "exp", "add"}, opsOf(out))
}

func TestRewriteCallReturnsItsInputWhenNothingMatches(t *testing.T) {
	mod := parseModule(t, `
@I.ir_module
class Module:
    @R.function
    def main(x: R.Tensor((4,), "float32")) -> R.Tensor((4,), "float32"):
        with R.dataflow():
            a = R.negative(x)
            b = R.exp(a)
            R.output(b)
        return b
`)
	p, rw := negNeg()
	f := mod.Func("main")
	out, errs := dpl.RewriteCall(mod, f, p, rw)
	require.Empty(t, errs)
	assert.Same(t, f, out)
}

func TestRewriteCallDoesNotFollowAcrossBlocksOrImpureCalls(t *testing.T) {
	mod := parseModule(t, `
@I.ir_module
class Module:
    @R.function(pure=False)
    def main(x: R.Tensor((4,), "float32")) -> R.Tensor((4,), "float32"):
        with R.dataflow():
            a = R.negative(x)
            R.output(a)
        b = R.negative(a)
        c = R.negative(b)
        d = R.print(format="{}")
        e = R.negative(c)
        return e
`)
	p, rw := negNeg()
	out, errs := dpl.RewriteCall(mod, mod.Func("main"), p, rw)
	require.Empty(t, errs)
	// b does not see a (another block); c sees b; e does not see c (the
	// impure print between them).
	assert.Equal(t, []string{"negative", "negative", "exp", "print", "negative"}, opsOf(out))
}

func TestRewriteCallRewritesAReplacementAgain(t *testing.T) {
	mod := parseModule(t, `
@I.ir_module
class Module:
    @R.function
    def main(x: R.Tensor((4,), "float32")) -> R.Tensor((4,), "float32"):
        with R.dataflow():
            a = R.negative(x)
            R.output(a)
        return a
`)
	// negative(y) -> negative(negative(negative(y)))... would never stop;
	// the local bound ends it after a fixed number of rewrites.
	y := dpl.Wildcard()
	p := dpl.IsOp("relax.negative")(y)
	n := 0
	neg, _ := ir.LookupOp("relax.negative")
	out, errs := dpl.RewriteCall(mod, mod.Func("main"), p, func(_ ir.Expr, m dpl.Match) ir.Expr {
		n++
		return ir.NewCall(neg, ir.NewCall(neg, m[y]))
	})
	require.Empty(t, errs)
	assert.Equal(t, 16, n)
	assert.NotEmpty(t, opsOf(out))
}
