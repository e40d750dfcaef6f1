package transform_test

import (
	"context"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/phasec/phasec/barrier"
	"github.com/phasec/phasec/eval/evaltest"
	"github.com/phasec/phasec/ir"
	"github.com/phasec/phasec/ir/irgen"
	"github.com/phasec/phasec/lower"
	"github.com/phasec/phasec/passes"
	"github.com/phasec/phasec/syntax/printer"
	"github.com/phasec/phasec/transform"
)

// checkFunction runs fn on the function name of the module in src and
// compares the result with the module in want (TVM's expected output).
func checkFunction(t *testing.T, src, want, name string, fn func(*ir.Module, *ir.Function) *ir.Function) {
	t.Helper()
	mod, errs := ir.NormalizeModule(evaltest.Parse(t, "before.tvms", src))
	require.Empty(t, errs)
	expected, errs := ir.NormalizeModule(evaltest.Parse(t, "expected.tvms", want))
	require.Empty(t, errs)
	out := mod.Clone()
	out.Set(name, fn(mod, mod.Func(name)))
	if d := ir.Diff(expected, out, ir.EqualOptions{}); d != nil {
		t.Fatalf("%v\n%s", d, printer.Print(out))
	}
}

func convert(mod *ir.Module, f *ir.Function) *ir.Function {
	return transform.ConvertFunctionToDataflow(mod, f, 2)
}

// TestConvertToDataflowInnerFunctions are TVM's TestPureInnerFunction and
// TestImpureInnerFunction, which the pass contract keeps out of pipelines
// (ingest has no local functions): a local function's body is converted,
// its binding is a dataflow binding, and a var it captures stays an output.
func TestConvertToDataflowInnerFunctions(t *testing.T) {
	checkFunction(t, `
@I.ir_module
class Module:
    @R.function
    def main(x: R.Tensor, y: R.Tensor) -> R.Tensor:
        @R.function
        def inner_func(x: R.Tensor, y: R.Tensor) -> R.Tensor:
            z = R.add(x, y)
            w = R.multiply(x, z)
            v = R.add(y, w)
            return v

        z = R.add(x, y)
        w = R.multiply(z, z)
        v = R.divide(w, z)
        q = inner_func(w, v)
        return q
`, `
@I.ir_module
class Module:
    @R.function
    def main(x: R.Tensor, y: R.Tensor) -> R.Tensor:
        with R.dataflow():
            @R.function
            def inner_func(x: R.Tensor, y: R.Tensor) -> R.Tensor:
                with R.dataflow():
                    z = R.add(x, y)
                    w = R.multiply(x, z)
                    v = R.add(y, w)
                    R.output(v)
                return v

            z = R.add(x, y)
            w = R.multiply(z, z)
            v = R.divide(w, z)
            q = inner_func(w, v)
            R.output(q)
        return q
`, "main", convert)

	// The impure case is checked on the printed text: phasec's parser
	// makes a local function defined in a dataflow block a dataflow var
	// even when R.output lists it, so TVM's expected module cannot be
	// written in phasec's text.
	mod, errs := ir.NormalizeModule(evaltest.Parse(t, "impure.tvms", `
@I.ir_module
class Module:
    @R.function(pure=False)
    def main(x: R.Tensor, y: R.Tensor) -> R.Tensor:
        @R.function(pure=False)
        def inner_func(x: R.Tensor, y: R.Tensor) -> R.Tensor:
            z = R.add(x, y)
            w = R.multiply(x, z)
            v = R.add(y, w)
            _ = R.print(format="oops")
            a = R.multiply(v, v)
            b = R.add(a, a)
            c = R.multiply(a, b)
            return c

        z = R.add(x, y)
        w = R.multiply(z, z)
        v = R.divide(w, z)
        q = inner_func(w, v)
        a = R.multiply(q, q)
        b = R.add(a, a)
        c = R.multiply(b, a)
        return c
`))
	require.Empty(t, errs)
	out := mod.Clone()
	out.Set("main", convert(mod, mod.Func("main")))
	got := printer.Print(out)
	for _, want := range []string{
		"R.output(v)\n                R.print(format=R.str(\"oops\"))",
		"R.output(inner_func, w, v)\n        q: R.Tensor = inner_func(w, v)\n        with R.dataflow():",
		"c: R.Tensor = R.multiply(b, a)\n            R.output(c)",
	} {
		assert.Contains(t, got, want)
	}
}

func TestConvertToDataflowUnchangedIsSamePointer(t *testing.T) {
	mod := irgen.MustNormalize(irgen.Chain(50))
	f := mod.Func("main")
	assert.Same(t, f, transform.ConvertFunctionToDataflow(mod, f, 2))
}

func TestConvertToDataflowBadOptions(t *testing.T) {
	for text, want := range map[string]string{
		`ConvertToDataflow{min_size=-1}`:  `pipeline:1:1: error PIPE002: pass ConvertToDataflow: option min_size: want a count of bindings, 0 or more`,
		`ConvertToDataflow{min_size=two}`: `pipeline:1:28: error PIPE003: .*min_size: want an int, got "two"`,
	} {
		_, errs := barrier.Registry.ParseAndBuild("pipeline", text)
		require.True(t, errs.HasErrors(), text)
		assert.Regexp(t, want, errs.Error(), text)
	}
}

// plainChain is the n-binding chain without its dataflow block.
func plainChain(n int) *ir.Module {
	mod := irgen.MustNormalize(irgen.Chain(n))
	out, err := passes.NewPassContext().Run(context.Background(), lower.ToNonDataflow, mod)
	if err != nil {
		panic(err)
	}
	return out
}

// BenchmarkConvertToDataflow turns a chain of plain bindings into one
// dataflow block: the 100k/10k time and allocation ratios must stay
// within 11.
func BenchmarkConvertToDataflow(b *testing.B) {
	benchLinear(b, plainChain, func(b *testing.B, mod *ir.Module) {
		f := mod.Func("main")
		if transform.ConvertFunctionToDataflow(mod, f, 2) == f {
			b.Fatal("nothing converted")
		}
	})
}
