package transform_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/phasec/phasec/barrier"
	"github.com/phasec/phasec/eval"
	"github.com/phasec/phasec/eval/evaltest"
	"github.com/phasec/phasec/ir"
	"github.com/phasec/phasec/ir/irgen"
	"github.com/phasec/phasec/op"
	"github.com/phasec/phasec/passes"
	"github.com/phasec/phasec/passes/passtest"
	"github.com/phasec/phasec/phase"
	"github.com/phasec/phasec/syntax"
	"github.com/phasec/phasec/syntax/printer"
	"github.com/phasec/phasec/tensor"
	"github.com/phasec/phasec/transform"
)

const foldConstantDir = "../testdata/passes/FoldConstant"

// TVM's test_transform_fold_constant.py, case by case, and phasec's own
// cases (bad kernels, limits, dead bindings), as goldens. TVM's 16x16
// constants are 4x4 here (the size changes nothing the pass decides): the
// whole testdata tree is the syntax package's corpus, whose participle
// cross-check diffs parse trees with go-cmp, seconds per 16x16 literal.
func TestFoldConstantGoldens(t *testing.T) {
	passtest.Run(t, passes.NewRegistry(transform.FoldConstant), foldConstantDir, "FoldConstant")
}

// The semantic oracle: every golden input computes the same before and
// after the pass.
func TestFoldConstantComputesTheSame(t *testing.T) {
	inputs, err := passtest.Inputs(foldConstantDir)
	require.NoError(t, err)
	// The evaluator cannot run these inputs either (that is why they
	// are not folded): TestFoldConstantLeavesWhatItCannotRun checks them.
	unevaluable := map[string]bool{"kernel_does_not_compile": true, "kernel_faults": true}
	args := map[string][]op.Value{
		// x must be 4x4 for the unfolded calls to run (TVM's test never
		// runs the module).
		"fold_mixed_case": {tensor.New(tensor.Float32, 4, 4)},
	}
	for _, path := range inputs {
		src, err := os.ReadFile(path)
		require.NoError(t, err)
		name := strings.TrimSuffix(filepath.Base(path), ".tvms")
		if strings.Contains(string(src), "# want") || unevaluable[name] {
			continue
		}
		t.Run(name, func(t *testing.T) {
			mod := evaltest.Parse(t, path, string(src))
			o := evaltest.Options{}
			if a, ok := args[name]; ok {
				o.Args = a
			}
			evaltest.CheckPipeline(t, mod, "FoldConstant", o)
		})
	}
}

func foldParse(t testing.TB, src string) *ir.Module {
	t.Helper()
	mod, diags := syntax.Parse("test.tvms", []byte(src))
	require.Empty(t, diags)
	return mod
}

func foldRun(t testing.TB, mod *ir.Module) *ir.Module {
	t.Helper()
	out, err := passes.NewPassContext().Run(context.Background(), transform.FoldConstant, mod)
	require.NoError(t, err)
	return out
}

// A module with nothing to fold and nothing dead comes back as the same
// pointer, and folding leaves the input module as it was.
func TestFoldConstantUnchangedAndInputIntact(t *testing.T) {
	nothing := foldParse(t, `
@I.ir_module
class Module:
    @R.function
    def main(x: R.Tensor((2,), dtype="float32")) -> R.Tensor((2,), dtype="float32"):
        with R.dataflow():
            gv = R.add(x, R.const([1.0, 2.0], "float32"))
            R.output(gv)
        return gv
`)
	assert.Same(t, nothing, foldRun(t, nothing))

	src, err := os.ReadFile(filepath.Join(foldConstantDir, "fold_multiple_relax_ops.tvms"))
	require.NoError(t, err)
	mod := foldParse(t, string(src))
	before := printer.Print(mod)
	out := foldRun(t, mod)
	assert.NotSame(t, mod, out)
	assert.Equal(t, before, printer.Print(mod), "the input module was edited")
	assert.Equal(t, 0, foldCountBindings(out), "everything folded:\n%s", printer.Print(out))
}

// The pass's contract is the one every optimization pass has.
func TestFoldConstantContract(t *testing.T) {
	info := transform.FoldConstant.Info()
	assert.Equal(t, 0, info.OptLevel, "TVM creates FoldConstant at opt level 0")
	assert.ElementsMatch(t, info.Accepts, []phase.Phase{phase.Ingest, phase.Optimize})
	assert.Contains(t, info.Requires, phase.Normalized)
	assert.Empty(t, info.Options, "TVM's FoldConstant() takes no parameters")
	_, found := barrier.Registry.Lookup("FoldConstant")
	assert.True(t, found, "FoldConstant is registered in barrier.Registry")
}

// Folded values match a direct computation, for each path: the kernel
// compiler (call_tir), the evaluator (a high-level op), and the shape
// rules.
func TestFoldConstantValues(t *testing.T) {
	src, err := os.ReadFile(filepath.Join(foldConstantDir, "two_hop_addone.tvms"))
	require.NoError(t, err)
	out := foldRun(t, foldParse(t, string(src)))
	c := foldReturnedConstant(t, out)
	assert.Equal(t, []int64{2, 2}, c.Data.Shape)
	for i := 0; i < 4; i++ {
		assert.Equal(t, float64(i+2), c.Data.Float(i))
	}

	src, err = os.ReadFile(filepath.Join(foldConstantDir, "fold_shape_computation.tvms"))
	require.NoError(t, err)
	c = foldReturnedConstant(t, foldRun(t, foldParse(t, string(src))))
	assert.Equal(t, ir.Int64, c.Data.DType)
	assert.Equal(t, []int64{1, 1}, c.Data.Shape)
	assert.Equal(t, int64(5), c.Data.Int(0))
}

// A kernel the compiler rejects, a kernel that faults, call_tir with
// tir_vars and a tensor above the evaluator's limit are left as they were,
// with no diagnostic (TVM logs a build failure and moves on).
func TestFoldConstantLeavesWhatItCannotRun(t *testing.T) {
	for _, name := range []string{"kernel_does_not_compile", "kernel_faults", "call_tir_with_tir_vars"} {
		t.Run(name, func(t *testing.T) {
			src, err := os.ReadFile(filepath.Join(foldConstantDir, name+".tvms"))
			require.NoError(t, err)
			mod := foldParse(t, string(src))
			out := foldRun(t, mod)
			assert.Positive(t, foldCountCalls(out, op.CallTIR), "the call_tir stays:\n%s", printer.Print(out))
		})
	}
	saved := op.MaxElements
	op.MaxElements = 8
	defer func() { op.MaxElements = saved }()
	mod := foldParse(t, `
@I.ir_module
class Module:
    @R.function
    def main() -> R.Tensor((4, 4), dtype="float32"):
        with R.dataflow():
            gv = R.zeros(R.shape([4, 4]), dtype="float32")
            R.output(gv)
        return gv
`)
	assert.Same(t, mod, foldRun(t, mod), "16 elements are above the limit of 8")
}

// Folding is linear in the function length: a chain of n bindings where
// every fourth adds a constant subexpression.
func BenchmarkFoldConstant(b *testing.B) {
	benchPass(b, transform.FoldConstant, func(n int) *ir.Module { return foldConstChain(b, n) })
}

// On irgen's chain there is nothing to fold: the cost of a pass over a
// model without constant subexpressions (the input comes back as is).
func BenchmarkFoldConstantNothingToFold(b *testing.B) {
	benchLinear(b, func(n int) *ir.Module { return irgen.MustNormalize(irgen.Chain(n)) }, func(b *testing.B, mod *ir.Module) {
		out, err := passes.NewPassContext().Run(context.Background(), transform.FoldConstant, mod)
		if err != nil || out != mod {
			b.Fatal("the chain changed", err)
		}
	})
}

// foldConstChain builds
//
//	def main(x: R.Tensor((4,), "float32")):
//	    with R.dataflow():
//	        c0 = R.multiply(R.const([...]), R.const([...]))   # folds
//	        lv1 = R.add(x, c0)
//	        lv2 = R.nn.relu(lv1)
//	        lv3 = R.multiply(lv2, x)
//	        c4 = ...
//
// with n bindings.
func foldConstChain(t testing.TB, n int) *ir.Module {
	t.Helper()
	ti := ir.TensorInfoOf(ir.Float32, ir.I64(4))
	x := ir.NewVar("x", ti)
	k := &ir.Constant{Data: &ir.NDArray{DType: ir.Float32, Shape: []int64{4}, Data: make([]byte, 16)}}
	add, mul, relu := ir.MustOp("relax.add"), ir.MustOp("relax.multiply"), ir.MustOp("relax.nn.relu")
	binds := make([]ir.Binding, 0, n)
	prev := ir.Expr(x)
	var c ir.Expr = k
	var last *ir.Var
	for i := 0; i < n; i++ {
		var call *ir.Call
		switch i % 4 {
		case 0:
			call = ir.NewCall(mul, k, k)
		case 1:
			call = ir.NewCall(add, prev, c)
		case 2:
			call = ir.NewCall(relu, prev)
		case 3:
			call = ir.NewCall(mul, prev, x)
		}
		if i == n-1 {
			last = ir.NewVar("gv", nil)
		} else {
			last = ir.NewDataflowVar(fmt.Sprintf("lv%d", i), nil)
		}
		binds = append(binds, ir.NewVarBinding(last, call))
		if i%4 == 0 {
			c = last
		} else {
			prev = last
		}
	}
	mod := ir.NewModule()
	mod.Set("main", &ir.Function{
		Params: []*ir.Var{x},
		Body:   &ir.SeqExpr{Blocks: []*ir.BindingBlock{{Dataflow: true, Bindings: binds}}, Body: last},
		Ret:    ti,
		Pure:   true,
		Attrs:  ir.Attrs{ir.AttrGlobalSymbol: "main"},
	})
	out, diags := ir.NormalizeModule(mod)
	require.Empty(t, diags)
	return out
}

func foldReturnedConstant(t *testing.T, mod *ir.Module) *ir.Constant {
	t.Helper()
	seq := mod.Func("main").Body.(*ir.SeqExpr)
	c, ok := seq.Body.(*ir.Constant)
	require.True(t, ok, "main returns a constant:\n%s", printer.Print(mod))
	return c
}

func foldCountBindings(mod *ir.Module) int {
	n := 0
	ir.Walk(mod.Func("main"), &ir.Visitor{Binding: func(ir.Binding) bool { n++; return true }})
	return n
}

func foldCountCalls(mod *ir.Module, o *ir.Op) int {
	n := 0
	ir.Inspect(mod.Func("main"), func(e ir.Expr) bool {
		if c, ok := e.(*ir.Call); ok && c.Op == o {
			n++
		}
		return true
	})
	return n
}

// FoldConstant takes no options: one given is a positioned pipeline
// diagnostic, and nothing runs.
func TestFoldConstantRejectsOptions(t *testing.T) {
	_, diags := passes.NewRegistry(transform.FoldConstant).ParseAndBuild("--passes", "FoldConstant{limit=1}")
	require.True(t, diags.HasErrors())
	assert.Contains(t, diags[0].Error(), "limit")
	assert.Positive(t, diags[0].Span.Col)
}

// On the corpus (the models and the modules of testdata/), every function
// FoldConstant changes computes what it computed, where the evaluator can
// run it on random inputs.
func TestFoldConstantCorpusComputesTheSame(t *testing.T) {
	paths, err := filepath.Glob("../testdata/*.tvms")
	require.NoError(t, err)
	models, err := filepath.Glob("../testdata/models/*.tvms")
	require.NoError(t, err)
	changed := 0
	for _, path := range append(paths, models...) {
		src, err := os.ReadFile(path)
		require.NoError(t, err)
		res := passtest.Execute(passes.NewRegistry(transform.FoldConstant), path, src, "FoldConstant", passtest.Options{})
		if res.Input == nil || res.Err != nil || res.Output == res.Input {
			continue
		}
		changed++
		for _, name := range res.Input.Names() {
			f := res.Input.Func(name)
			if f == nil || res.Output.Func(name) == f {
				continue
			}
			args, err := eval.RandomArgs(f, 1, nil, 3)
			if err != nil {
				continue
			}
			want, err := eval.New(res.Input).Call(name, args...)
			if err != nil {
				continue
			}
			t.Run(filepath.Base(path)+"/"+name, func(t *testing.T) {
				got, err := eval.New(res.Output).Call(name, args...)
				require.NoError(t, err)
				require.NoError(t, eval.Compare(got, want, eval.Float32Tol))
			})
		}
	}
	t.Logf("%d corpus modules changed", changed)
}
