package semcheck

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/phasec/phasec/barrier"
	"github.com/phasec/phasec/eval"
	"github.com/phasec/phasec/ir"
	"github.com/phasec/phasec/op"
	"github.com/phasec/phasec/passes"
	"github.com/phasec/phasec/syntax"
	"github.com/phasec/phasec/syntax/printer"
	"github.com/phasec/phasec/tensor"
)

// flipSign is the deliberately broken pass of the tests: it turns the
// first R.add of the module into R.subtract, keeping everything else.
func flipSign(_ *passes.Env, mod *ir.Module) (*ir.Module, error) {
	text := printer.Print(mod)
	if !strings.Contains(text, "R.add(") {
		return mod, nil
	}
	out, diags := syntax.Parse(mod.Source, []byte(strings.Replace(text, "R.add(", "R.subtract(", 1)))
	if len(diags) > 0 {
		return nil, diags
	}
	return out, nil
}

var flipSignForTest = passes.Define(passes.Info{Name: "FlipSignForTest", Doc: "broken on purpose: the first R.add becomes R.subtract"},
	passes.Module(flipSign))

// testPasses are phasec's passes and the ones these tests break on purpose.
var testPasses = barrier.Registry.With(flipSignForTest, crashOnAddForTest, claimsNoDataflowForTest,
	crashTwoWaysForTest, wrapsFlipSignForTest)

func parseFile(t *testing.T, path string) *ir.Module {
	t.Helper()
	src, err := os.ReadFile(path)
	require.NoError(t, err)
	mod, diags := syntax.Parse(path, src)
	require.Empty(t, diags)
	return mod
}

func runChecked(t *testing.T, mod *ir.Module, spec string, c *Checker) (*ir.Module, error) {
	t.Helper()
	p, diags := testPasses.ParseAndBuild("pipeline", spec)
	require.Empty(t, diags)
	pc := passes.NewPassContext()
	pc.Instruments = append(pc.Instruments, c)
	return pc.Run(context.Background(), p, mod)
}

// smallModule computes (x + y) * x - y: a flipped add changes every element.
const smallModule = `# from tvm.script import ir as I
# from tvm.script import tir as T
# from tvm.script import relax as R

@I.ir_module
class Module:
    @R.function
    def main(x: R.Tensor(("n", 4), dtype="float32"), y: R.Tensor(("n", 4), dtype="float32")) -> R.Tensor(("n", 4), dtype="float32"):
        n = T.int64()
        with R.dataflow():
            a = R.add(x, y)
            b = R.multiply(a, x)
            c = R.exp(x)
            d = R.subtract(b, y)
            e = R.multiply(d, c)
            R.output(e)
        return e
`

// TestCorrectPipelinesPass: canonicalize,lower,build keeps the answer of
// every bundled model, checked on the evaluator up to lower and on the VM
// after build.
func TestCorrectPipelinesPass(t *testing.T) {
	paths, err := filepath.Glob("../testdata/models/*.tvms")
	require.NoError(t, err)
	require.NotEmpty(t, paths)
	for _, path := range paths {
		t.Run(filepath.Base(path), func(t *testing.T) {
			c := &Checker{Inputs: Inputs{Seed: 1, Dim: 3}}
			out, err := runChecked(t, parseFile(t, path), "canonicalize,lower,build", c)
			require.NoError(t, err)
			require.Nil(t, c.Failure)
			require.Positive(t, c.Checked, "at least the build step changes the module")
			// The last check ran the VM: the module is in phase build.
			assert.Contains(t, printer.Print(out), `"build"`)
		})
	}
}

// TestBrokenPassIsNamed: a pass that flips the sign of one add is named,
// with the function and the first differing element, and the modules
// around it are written.
func TestBrokenPassIsNamed(t *testing.T) {
	// (Not the bundled MLP: its softmax saturates on random inputs, so a
	// flipped bias hardly moves the output.)
	mod, diags := syntax.Parse("small.tvms", []byte(smallModule))
	require.Empty(t, diags)
	dir := t.TempDir()
	c := &Checker{Inputs: Inputs{Seed: 2, Dims: map[string]int64{"n": 5}}, Dir: dir}
	_, err := runChecked(t, mod, "canonicalize,FlipSignForTest,lower,build", c)
	require.Error(t, err)
	var m *Mismatch
	require.True(t, errors.As(err, &m), "%v", err)
	assert.Equal(t, "FlipSignForTest", m.Pass)
	assert.Equal(t, "main", m.Func)
	assert.False(t, m.Crash)
	assert.Contains(t, m.Detail, "result")
	assert.Contains(t, err.Error(), "pass FlipSignForTest changed what main computes")

	// Independently: the two written modules evaluate differently on the
	// checker's arguments, and only the broken pass's output lost the add.
	before := parseFile(t, m.BeforePath)
	after := parseFile(t, m.AfterPath)
	assert.Contains(t, printer.Print(before), "R.add(")
	assert.NotContains(t, printer.Print(after), "R.add(")
	want, err := eval.New(before).Call("main", cloneArgs(c.args)...)
	require.NoError(t, err)
	got, err := eval.New(after).Call("main", cloneArgs(c.args)...)
	require.NoError(t, err)
	require.Error(t, eval.Compare(got, want, eval.Float32Tol))
}

// TestInputsGiven: a given tensor fixes the symbolic dimension it binds.
func TestInputsGiven(t *testing.T) {
	mod := parseFile(t, "../testdata/models/mlp.tvms")
	fn := mod.Func("main")
	require.NotNil(t, fn)
	in := Inputs{Seed: 3}
	args, err := in.Args(mod)
	require.NoError(t, err)
	x := args[0]
	in.Given = map[string]op.Value{fn.Params[0].Name: x}
	again, err := in.Args(mod)
	require.NoError(t, err)
	assert.Same(t, x, again[0])

	in.Given = map[string]op.Value{"nope": x}
	_, err = in.Args(mod)
	require.ErrorContains(t, err, "no parameter nope")
}

type tensorT = tensor.Tensor
