package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/phasec/phasec/ir"
	"github.com/phasec/phasec/passes"
	"github.com/phasec/phasec/syntax"
	"github.com/phasec/phasec/syntax/printer"
	"github.com/phasec/phasec/tensor"
)

// semInput computes (x + y) * x: flipping its add changes every element
// where x and y are non-zero.
const semInput = `# from tvm.script import ir as I
# from tvm.script import tir as T
# from tvm.script import relax as R

@I.ir_module
class Module:
    @R.function
    def main(x: R.Tensor(("n", 3), dtype="float32"), y: R.Tensor(("n", 3), dtype="float32")) -> R.Tensor(("n", 3), dtype="float32"):
        n = T.int64()
        with R.dataflow():
            a = R.add(x, y)
            b = R.multiply(a, x)
            R.output(b)
        return b
`

func init() {
	// CLIFlipSign is broken on purpose: the first R.add becomes R.subtract.
	passRegistry = passRegistry.With(passes.Define(passes.Info{Name: "CLIFlipSign", Doc: "test pass that flips an add into a subtract"},
		passes.Module(func(env *passes.Env, mod *ir.Module) (*ir.Module, error) {
			text := printer.Print(mod)
			out, diags := syntax.Parse(mod.Source, []byte(strings.Replace(text, "R.add(", "R.subtract(", 1)))
			if len(diags) > 0 {
				return nil, diags
			}
			return out, nil
		})))
}

func TestOptVerifySemantics(t *testing.T) {
	dir := t.TempDir()
	in := filepath.Join(dir, "m.tvms")
	require.NoError(t, os.WriteFile(in, []byte(semInput), 0o644))

	code, _, stderr := runCLI(t, "", "opt", "--passes", "canonicalize,lower,build", "--verify-semantics",
		"--random-inputs", "--seed", "3", "--symbolic", "n=5", in)
	require.Equal(t, 0, code, stderr)
	assert.Contains(t, stderr, "verify-semantics: main keeps its result after every pass")

	// Inputs from an .npz: x = 1..6, y = 10 everywhere; after the flip
	// element [0 0] is (1 - 10) * 1 = -9 instead of (1 + 10) * 1 = 11.
	x, y := tensor.New(tensor.Float32, 2, 3), tensor.New(tensor.Float32, 2, 3)
	for i := range 6 {
		x.SetFloat64(i, float64(i+1))
		y.SetFloat64(i, 10)
	}
	npz := filepath.Join(dir, "in.npz")
	require.NoError(t, tensor.WriteNpz(npz, []tensor.Named{{Name: "x", Tensor: x}, {Name: "y", Tensor: y}}))
	out := filepath.Join(dir, "failure")
	code, _, stderr = runCLI(t, "", "opt", "--passes", "canonicalize,CLIFlipSign,lower,build", "--verify-semantics",
		"--inputs", npz, "--semantics-dir", out, in)
	require.Equal(t, 1, code, stderr)
	assert.Contains(t, stderr, "pass CLIFlipSign changed what main computes")
	assert.Contains(t, stderr, "result[0 0]: got -9, want 11")
	for _, f := range []string{"before.tvms", "after.tvms"} {
		_, err := os.Stat(filepath.Join(out, f))
		require.NoError(t, err)
	}

	// Usage errors.
	code, _, stderr = runCLI(t, "", "opt", "--passes", "canonicalize", "--verify-semantics", in)
	assert.Equal(t, 2, code)
	assert.Contains(t, stderr, "needs --input name=FILE.npy, --inputs FILE.npz or --random-inputs")
	code, _, stderr = runCLI(t, "", "opt", "--passes", "canonicalize", "--verify-semantics", "--random-inputs", "--symbolic", "n", in)
	assert.Equal(t, 2, code)
	assert.Contains(t, stderr, `--symbolic "n"`)
	// An .npz lacking a parameter, without --random-inputs.
	require.NoError(t, tensor.WriteNpz(npz, []tensor.Named{{Name: "x", Tensor: x}}))
	code, _, stderr = runCLI(t, "", "opt", "--passes", "canonicalize", "--verify-semantics", "--inputs", npz, in)
	assert.Equal(t, 1, code)
	assert.Contains(t, stderr, "parameter y of main has no input")
}

func TestBisectCommand(t *testing.T) {
	dir := t.TempDir()
	in := filepath.Join(dir, "m.tvms")
	require.NoError(t, os.WriteFile(in, []byte(semInput), 0o644))
	repro := filepath.Join(dir, "repro.tvms")

	code, stdout, stderr := runCLI(t, "", "bisect", "--passes", "canonicalize,lower,build", "-o", repro, in)
	require.Equal(t, 0, code, stderr)
	assert.Contains(t, stdout, "no pass of canonicalize,lower,build changes the result")

	code, stdout, stderr = runCLI(t, "", "bisect", "--passes", "canonicalize,CLIFlipSign,lower,build", "--seed", "7", "-o", repro, in)
	require.Equal(t, 1, code, stderr)
	assert.Contains(t, stdout, "first failing pass: CLIFlipSign (semantic failure")
	assert.Contains(t, stdout, "reduced main from 2 to 1 bindings")
	assert.Contains(t, stdout, "(CLIFlipSign) is the first whose run fails")
	t.Log(stdout)
	text, err := os.ReadFile(repro)
	require.NoError(t, err)
	assert.Contains(t, string(text), "# pipeline: canonicalize,CLIFlipSign,lower,build\n# culprit pass: CLIFlipSign (module in phase ingest)")
	assert.Contains(t, string(text), "R.add(")

	// The printed command replays the failure on the reproducer.
	_, replay, ok := strings.Cut(stdout, "replay: phasec ")
	require.True(t, ok, stdout)
	replayArgs := append(strings.Fields(strings.TrimSpace(replay)), "--semantics-dir", filepath.Join(dir, "replay"))
	// Flags must precede FILE: move the file to the end.
	n := len(replayArgs)
	replayArgs[n-3], replayArgs[n-2], replayArgs[n-1] = replayArgs[n-2], replayArgs[n-1], replayArgs[n-3]
	code, _, stderr = runCLI(t, "", replayArgs...)
	assert.Equal(t, 1, code)
	assert.Contains(t, stderr, "pass CLIFlipSign changed what main computes")

	code, _, stderr = runCLI(t, "", "bisect", in)
	assert.Equal(t, 2, code)
	assert.Contains(t, stderr, "want --passes SPEC")
}
