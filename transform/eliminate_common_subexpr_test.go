package transform_test

import (
	"fmt"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/phasec/phasec/barrier"
	"github.com/phasec/phasec/eval/evaltest"
	"github.com/phasec/phasec/ir"
	"github.com/phasec/phasec/ir/irgen"
	"github.com/phasec/phasec/syntax/printer"
	"github.com/phasec/phasec/transform"
)

func TestEliminateCommonSubexprUnchangedIsSamePointer(t *testing.T) {
	mod := irgen.MustNormalize(irgen.Chain(50))
	f := mod.Func("main")
	out, errs := transform.EliminateCommonSubexprs(mod, f, false)
	require.Empty(t, errs)
	assert.Same(t, f, out)
}

// TestEliminateCommonSubexprInnerFunction is TVM's test_inner_function,
// which the pass contract keeps out of pipelines (ingest has no local
// functions): the local function is a scope of its own, and calls of it
// are shared like any pure call.
func TestEliminateCommonSubexprInnerFunction(t *testing.T) {
	before := evaltest.Parse(t, "before.tvms", `
@I.ir_module
class Module:
    @R.function
    def foo(x: R.Tensor((), dtype="int32")) -> R.Tensor((), dtype="int32"):
        with R.dataflow():
            @R.function
            def bar(y: R.Tensor((), dtype="int32")) -> R.Tensor((), dtype="int32"):
                with R.dataflow():
                    lv0 = R.add(y, y)
                    lv1 = R.add(y, y)
                    lv2 = R.add(lv0, lv1)
                    gv = lv2
                    R.output(gv)
                return R.add(gv, gv)

            lv0 = bar(x)
            lv1 = bar(x)
            lv2 = R.add(lv0, lv1)
            lv3 = bar(x)
            lv4 = bar(x)
            lv5 = R.add(lv3, lv4)
            lv6 = R.add(lv2, lv5)
            gv = lv6
            R.output(gv)
        return gv
`)
	want := evaltest.Parse(t, "expected.tvms", `
@I.ir_module
class Module:
    @R.function
    def foo(x: R.Tensor((), dtype="int32")) -> R.Tensor((), dtype="int32"):
        with R.dataflow():
            @R.function
            def bar(y: R.Tensor((), dtype="int32")) -> R.Tensor((), dtype="int32"):
                with R.dataflow():
                    lv0 = R.add(y, y)
                    lv1 = lv0
                    lv2 = R.add(lv0, lv0)
                    gv = lv2
                    R.output(gv)
                return R.add(gv, gv)

            lv0 = bar(x)
            lv1 = lv0
            lv2 = R.add(lv0, lv0)
            lv3 = lv0
            lv4 = lv0
            lv5 = lv2
            lv6 = R.add(lv2, lv2)
            gv = lv6
            R.output(gv)
        return gv
`)
	before, errs := ir.NormalizeModule(before)
	require.Empty(t, errs)
	want, errs = ir.NormalizeModule(want)
	require.Empty(t, errs)
	got, errs := transform.EliminateCommonSubexprs(before, before.Func("foo"), false)
	require.Empty(t, errs)
	out := before.Clone()
	out.Set("foo", got)
	if d := ir.Diff(want, out, ir.EqualOptions{}); d != nil {
		t.Fatalf("%v\n%s", d, printer.Print(out))
	}
}

func TestEliminateCommonSubexprLeavesInputAlone(t *testing.T) {
	mod := withDuplicates(20)
	before := printer.Print(mod)
	out := evaltest.CheckPipeline(t, mod, "EliminateCommonSubexpr", evaltest.Options{})
	assert.Equal(t, before, printer.Print(mod), "the input module was edited")
	assert.NotSame(t, mod, out)
}

func TestEliminateCommonSubexprBadOptions(t *testing.T) {
	for text, want := range map[string]string{
		`EliminateCommonSubexpr{call_only=yes}`:   `pipeline:1:34: error PIPE003: .*call_only: want true or false, got "yes"`,
		`EliminateCommonSubexpr{callonly=true}`:   `pipeline:1:24: error PIPE002: .*unknown option "callonly"`,
		`EliminateCommonSubexpr{call_only=["x"]}`: `pipeline:1:34: error PIPE003: .*want true or false`,
	} {
		_, errs := barrier.Registry.ParseAndBuild("pipeline", text)
		require.True(t, errs.HasErrors(), text)
		assert.Regexp(t, want, errs.Error(), text)
	}
}

// withDuplicates returns the n-binding chain with every binding repeated
// once (a new var bound to the same call): 2n bindings, n of them common
// subexpressions.
func withDuplicates(n int) *ir.Module {
	mod := irgen.MustNormalize(irgen.Chain(n))
	f := mod.Func("main")
	seq := f.Body.(*ir.SeqExpr)
	var binds []ir.Binding
	for i, b := range seq.Blocks[0].Bindings {
		binds = append(binds, b)
		vb := b.(*ir.VarBinding)
		dup := ir.NewVarBinding(ir.NewDataflowVar(fmt.Sprintf("dup%d", i), vb.Var.StructInfo()), vb.Value)
		binds = append(binds, dup)
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

// BenchmarkEliminateCommonSubexpr de-duplicates a chain of 2n bindings,
// half of them repeats: the 100k/10k time and allocation ratios must stay
// within 11.
func BenchmarkEliminateCommonSubexpr(b *testing.B) {
	benchLinear(b, func(n int) *ir.Module { return withDuplicates(n / 2) }, func(b *testing.B, mod *ir.Module) {
		f := mod.Func("main")
		if out, errs := transform.EliminateCommonSubexprs(mod, f, false); errs.HasErrors() || out == f {
			b.Fatal("nothing de-duplicated", errs)
		}
	})
}
