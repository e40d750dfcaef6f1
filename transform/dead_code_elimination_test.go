package transform_test

import (
	"context"
	"fmt"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/phasec/phasec/barrier"
	"github.com/phasec/phasec/eval/evaltest"
	"github.com/phasec/phasec/ir"
	"github.com/phasec/phasec/ir/irgen"
	"github.com/phasec/phasec/passes"
	"github.com/phasec/phasec/syntax/printer"
	"github.com/phasec/phasec/transform"
)

func TestDeadCodeEliminationUnchangedIsSamePointer(t *testing.T) {
	mod := irgen.MustNormalize(irgen.Chain(50))
	out, err := transform.EliminateDeadCode(mod, []string{"main"})
	require.NoError(t, err)
	assert.Same(t, mod, out)
}

func TestDeadCodeEliminationLeavesInputAlone(t *testing.T) {
	mod := evaltest.Parse(t, "dead.tvms", `
@I.ir_module
class Module:
    @R.function(private=True)
    def unused(x: R.Tensor((4,), "float32")) -> R.Tensor((4,), "float32"):
        return x

    @R.function
    def main(x: R.Tensor((4,), "float32")) -> R.Tensor((4,), "float32"):
        with R.dataflow():
            a = R.exp(x)
            b = R.negative(x)
            R.output(a)
        return a
`)
	before := printer.Print(mod)
	out, err := transform.EliminateDeadCode(mod, nil)
	require.NoError(t, err)
	assert.Equal(t, before, printer.Print(mod), "the input module was edited")
	assert.Equal(t, []string{"main"}, out.Names())
	assert.NotContains(t, printer.Print(out), "R.negative")
}

// TestDeadCodeEliminationNestedFunction checks TVM's use rule for local
// functions, which the pass contract keeps out of pipelines (ingest has
// none) but EliminateDeadCode accepts: a var used inside a local function
// stays even when the function itself is removed, because UDChain charges
// uses inside a nested function to no binding.
func TestDeadCodeEliminationNestedFunction(t *testing.T) {
	mod := evaltest.Parse(t, "closure.tvms", `
@I.ir_module
class Module:
    @R.function
    def main(x: R.Tensor((4,), "float32")) -> R.Tensor((4,), "float32"):
        y = R.exp(x)
        @R.function
        def inner(a: R.Tensor((4,), "float32")) -> R.Tensor((4,), "float32"):
            b = R.add(a, y)
            unused = R.negative(a)
            return b
        z = R.negative(x)
        return z
`)
	out, err := transform.EliminateDeadCode(mod, nil)
	require.NoError(t, err)
	text := printer.Print(out)
	assert.Contains(t, text, "y: R.Tensor((4,), dtype=\"float32\") = R.exp(x)")
	assert.NotContains(t, text, "def inner")
	assert.Contains(t, text, "z: R.Tensor((4,), dtype=\"float32\") = R.negative(x)")
}

func TestDeadCodeEliminationBadOptions(t *testing.T) {
	for text, want := range map[string]string{
		`DeadCodeElimination{entry_functions=main}`:    `pipeline:1:37: error PIPE003: .*entry_functions: want a JSON array of strings, got main`,
		`DeadCodeElimination{entry_functions=[1]}`:     `pipeline:1:37: .*want a JSON array of strings`,
		`DeadCodeElimination{entry_function=["main"]}`: `pipeline:1:21: error PIPE002: .*unknown option "entry_function"`,
	} {
		_, errs := barrier.Registry.ParseAndBuild("pipeline", text)
		require.True(t, errs.HasErrors(), text)
		assert.Regexp(t, want, errs.Error(), text)
	}
}

// TestDeadCodeEliminationMissingEntryChangesNothing: a bad entry name is
// reported with every other problem and nothing is removed.
func TestDeadCodeEliminationMissingEntryChangesNothing(t *testing.T) {
	mod := irgen.MustNormalize(irgen.Chain(3))
	p, errs := barrier.Registry.ParseAndBuild("pipeline", `DeadCodeElimination{entry_functions=["a","main","b"]}`)
	require.Empty(t, errs)
	out, err := passes.NewPassContext().Run(context.Background(), p, mod)
	require.Error(t, err)
	assert.Nil(t, out)
	assert.Regexp(t, `(?s)OPT040.*"a" is not in the module.*OPT040.*"b" is not in the module`, err.Error())
}

// withDeadBindings returns the n-binding chain with a dead R.nn.relu after
// each binding: half of its bindings are dead.
func withDeadBindings(n int) *ir.Module {
	mod := irgen.MustNormalize(irgen.Chain(n))
	f := mod.Func("main")
	seq := f.Body.(*ir.SeqExpr)
	relu := ir.MustOp("relax.nn.relu")
	var binds []ir.Binding
	for i, b := range seq.Blocks[0].Bindings {
		binds = append(binds, b)
		v := b.BoundVar()
		call := ir.NewCall(relu, v)
		call.SetStructInfo(v.StructInfo())
		binds = append(binds, ir.NewVarBinding(ir.NewDataflowVar(fmt.Sprintf("dead%d", i), v.StructInfo()), call))
	}
	blk := &ir.BindingBlock{Bindings: binds, Dataflow: true}
	nseq := &ir.SeqExpr{Blocks: []*ir.BindingBlock{blk}, Body: seq.Body}
	nseq.SetStructInfo(seq.StructInfo())
	nf := *f
	nf.Body = nseq
	out := mod.Clone()
	out.Set("main", &nf)
	return out
}

// BenchmarkDeadCodeElimination removes the n dead bindings of a chain of
// 2n: the 100k/10k time and allocation ratios must stay within 11.
func BenchmarkDeadCodeElimination(b *testing.B) {
	benchLinear(b, func(n int) *ir.Module { return withDeadBindings(n / 2) }, func(b *testing.B, mod *ir.Module) {
		if out, err := transform.EliminateDeadCode(mod, nil); err != nil || out == mod {
			b.Fatal("nothing removed", err)
		}
	})
}
