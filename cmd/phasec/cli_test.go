package main

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/phasec/phasec/tensor"
)

// TestFlagsGoAnywhere: every command takes its flags before or after its
// files (the README's usage lines put them after), and -- ends them.
func TestFlagsGoAnywhere(t *testing.T) {
	dir := t.TempDir()
	pvm := filepath.Join(dir, "m.pvm")
	code, _, errs := runCLI(t, "", "build", mlpModel, "-o", pvm)
	require.Equal(t, 0, code, errs)
	require.FileExists(t, pvm)

	code, _, errs = runCLI(t, "", "check", mlpModel, "--format", "json")
	require.Equal(t, 0, code, errs)
	assert.Empty(t, errs, "--format after the file is a flag, not a file name")

	code, out, errs := runCLI(t, "", "run", pvm, "--random-inputs", "--symbolic", "batch=2")
	require.Equal(t, 0, code, errs)
	assert.Contains(t, out, "float32 (2, 10)")

	code, _, errs = runCLI(t, "", "fmt", "--", "--not-a-flag.tvms")
	assert.Equal(t, 2, code)
	assert.Contains(t, errs, "--not-a-flag.tvms", "after --, a dash-name is a file")
}

func TestHelpVersionAndSuggestions(t *testing.T) {
	for _, args := range [][]string{{"--help"}, {"help"}, {"help", "build"}, {"build", "--help"}, {"doc", "phases", "--help"}} {
		code, out, errs := runCLI(t, "", args...)
		assert.Equal(t, 0, code, "%v: %s", args, errs)
		assert.Contains(t, out, "usage: phasec", "%v: help goes to stdout", args)
		assert.Empty(t, errs, "%v", args)
	}
	code, out, _ := runCLI(t, "", "--version")
	assert.Equal(t, 0, code)
	assert.Equal(t, "phasec "+version+"\n", out)

	code, _, errs := runCLI(t, "", "bild", mlpModel)
	assert.Equal(t, 2, code)
	assert.Contains(t, errs, `unknown command "bild" (did you mean "build"?)`)
	code, _, errs = runCLI(t, "", "doc", "phase")
	assert.Equal(t, 2, code)
	assert.Contains(t, errs, `unknown subcommand "phase" (did you mean "phases"?)`)
}

func TestCompletionScripts(t *testing.T) {
	for shell, marker := range map[string]string{"bash": "__start_phasec", "zsh": "#compdef phasec", "fish": "complete -c phasec"} {
		code, out, errs := runCLI(t, "", "completion", shell)
		require.Equal(t, 0, code, "%s: %s", shell, errs)
		assert.Contains(t, out, marker, shell)
	}
	// The scripts ask the binary; it completes command names and flags.
	code, out, _ := runCLI(t, "", "__complete", "bu")
	require.Equal(t, 0, code)
	assert.Contains(t, out, "build")
	code, out, _ = runCLI(t, "", "__complete", "run", "--max")
	require.Equal(t, 0, code)
	assert.Contains(t, out, "--max-memory")
}

func TestOutputToStdoutAndDefaultNames(t *testing.T) {
	dir := t.TempDir()
	src, err := os.ReadFile(mlpModel)
	require.NoError(t, err)
	model := filepath.Join(dir, "mlp.tvms")
	require.NoError(t, os.WriteFile(model, src, 0o644))

	code, out, errs := runCLI(t, "", "build", model)
	require.Equal(t, 0, code, errs)
	assert.Contains(t, out, "wrote "+filepath.Join(dir, "mlp.pvm"))
	require.FileExists(t, filepath.Join(dir, "mlp.pvm"))

	code, out, errs = runCLI(t, "", "build", "-o", "-", model)
	require.Equal(t, 0, code, errs)
	assert.True(t, strings.HasPrefix(out, "PHASECVM"), "the executable on stdout")
	assert.Contains(t, errs, "wrote -")
	assert.NoFileExists(t, filepath.Join(dir, "-"))

	code, out, errs = runCLI(t, "", "run", "--random-inputs", "-o", "-", model)
	require.Equal(t, 0, code, errs)
	arrays, err := tensor.ReadNpzFrom(bytes.NewReader([]byte(out)), int64(len(out)))
	require.NoError(t, err, "stdout is an .npz")
	require.Len(t, arrays, 1)
	assert.Equal(t, []int64{4, 10}, arrays[0].Tensor.Shape)
	assert.Contains(t, errs, "main: 1 output(s)", "the summary moves to stderr")

	code, out, errs = runCLI(t, "", "eval", "--random-inputs", "-o", "-", model)
	require.Equal(t, 0, code, errs)
	assert.True(t, strings.HasPrefix(out, "PK"), "an .npz (zip) on stdout")

	code, out, errs = runCLI(t, "", "opt", "--passes", "canonicalize", "-o", "-", model)
	require.Equal(t, 0, code, errs)
	assert.Contains(t, out, `"phase": "ingest"`)
	assert.NoFileExists(t, "-")
}

func TestRunInputsInUserTerms(t *testing.T) {
	dir := t.TempDir()
	x := filepath.Join(dir, "x.npy")
	wrong, err := tensor.NewChecked(tensor.Float64, []int64{2, 784})
	require.NoError(t, err)
	require.NoError(t, tensor.WriteNpyFile(x, wrong))
	code, _, errs := runCLI(t, "", "run", "--random-inputs", "--input", "x="+x, mlpModel)
	assert.Equal(t, 1, code)
	assert.Contains(t, errs, "parameter x has dtype float64, expected float32")

	short, err := tensor.NewChecked(tensor.Float32, []int64{2, 783})
	require.NoError(t, err)
	require.NoError(t, tensor.WriteNpyFile(x, short))
	code, _, errs = runCLI(t, "", "run", "--random-inputs", "--input", "x="+x, mlpModel)
	assert.Equal(t, 1, code)
	assert.Contains(t, errs, "parameter x has shape (2, 783), expected 784 in dimension 1")

	npz := filepath.Join(dir, "in.npz")
	good, err := tensor.NewChecked(tensor.Float32, []int64{3, 784})
	require.NoError(t, err)
	require.NoError(t, tensor.WriteNpz(npz, []tensor.Named{{Name: "x", Tensor: good}}))
	for _, cmd := range []string{"run", "eval"} {
		code, out, errs := runCLI(t, "", cmd, "--inputs", npz, "--random-inputs", mlpModel)
		require.Equal(t, 0, code, "%s: %s", cmd, errs)
		assert.Contains(t, out, "(3, 10)", "%s takes x from the .npz", cmd)
	}
}

func TestRandomInputsForEveryTypableParameter(t *testing.T) {
	src := `# from tvm.script import ir as I
# from tvm.script import relax as R

@I.ir_module
class Module:
    @R.function
    def main(x: R.Tensor((2,), "float32"), c: R.Tensor((), "bool"), n: R.Prim("int64"), s: R.Shape(["k", 2])) -> R.Tensor((2,), "float32"):
        k = T.int64()
        y = R.where(c, x, R.negative(x))
        return y
`
	model := filepath.Join(t.TempDir(), "typed.tvms")
	require.NoError(t, os.WriteFile(model, []byte(strings.Replace(src, "# from tvm.script import relax as R", "# from tvm.script import relax as R\n# from tvm.script import tir as T", 1)), 0o644))
	for _, cmd := range []string{"run", "eval"} {
		code, out, errs := runCLI(t, "", cmd, "--random-inputs", model)
		require.Equal(t, 0, code, "%s: %s", cmd, errs)
		assert.Contains(t, out, "(2,)", cmd)
	}
}

func TestMaxMemory(t *testing.T) {
	code, _, errs := runCLI(t, "", "run", "--random-inputs", "--symbolic", "batch=100000000", mlpModel)
	assert.Equal(t, 1, code)
	assert.Contains(t, errs, "random input x needs 292.1 GiB")
	assert.Contains(t, errs, "over --max-memory")
	assert.NotContains(t, errs, "goroutine")

	// The inputs fit; the first matmul's output does not.
	code, _, errs = runCLI(t, "", "run", "--random-inputs", "--symbolic", "batch=100", "--max-memory", "740KB", mlpModel)
	assert.Equal(t, 1, code)
	assert.Contains(t, errs, "a storage of the run needs")

	code, _, errs = runCLI(t, "", "run", "--max-memory", "lots", mlpModel)
	assert.Equal(t, 2, code)
	assert.Contains(t, errs, `want a positive size such as 4GiB or 500MB, got "lots"`)
}

func TestEvalPointsBuildModulesToRun(t *testing.T) {
	dir := t.TempDir()
	built := filepath.Join(dir, "built.tvms")
	code, _, errs := runCLI(t, "", "opt", "--passes", "canonicalize,lower,build", "-o", built, mlpModel)
	require.Equal(t, 0, code, errs)
	code, _, errs = runCLI(t, "", "eval", "--random-inputs", built)
	assert.Equal(t, 2, code)
	assert.Contains(t, errs, "is in phase build")
	assert.Contains(t, errs, "use phasec run "+built)

	code, out, errs := runCLI(t, "", "eval", "--random-inputs", "--symbolic", "batch=3", mlpModel)
	require.Equal(t, 0, code, errs)
	assert.Contains(t, out, "(3, 10)")
	code, out, errs = runCLI(t, "", "eval", "--random-inputs", "--dim", "batch=3", mlpModel)
	require.Equal(t, 0, code, errs)
	assert.Contains(t, out, "(3, 10)", "--dim still works")
}

// TestBisectReplayReproduces: bisect prints a replay command only after
// running it on the reproducer; here the culprit's damage shows only in its
// claimed property (LegalizeOps{skip=R.add} claims Legalized), which
// --verify-each now checks even when the reduced module is unchanged.
func TestBisectReplayReproduces(t *testing.T) {
	dir := t.TempDir()
	repro := filepath.Join(dir, "repro.tvms")
	code, out, errs := runCLI(t, "", "bisect", "--passes", "canonicalize,LegalizeOps{skip=R.add},lower", "-o", repro, mlpModel)
	require.Equal(t, 1, code, errs)
	assert.Contains(t, out, "wrote "+repro)
	_, replay, ok := strings.Cut(out, "replay: phasec ")
	require.True(t, ok, "a replay command: %s", out)
	args := splitShell(t, strings.TrimSpace(replay))
	assert.Equal(t, []string{"opt", "--passes", "LegalizeOps{skip=R.add}", "--verify-each", repro}, args)
	code, _, errs = runCLI(t, "", args...)
	assert.Equal(t, 1, code, "the replay reproduces: %s", errs)
	assert.Contains(t, errs, "WF029")
}

// splitShell undoes shellJoin's single quotes.
func splitShell(t *testing.T, s string) []string {
	var out []string
	for s != "" {
		if s[0] == '\'' {
			end := strings.Index(s[1:], "'")
			require.GreaterOrEqual(t, end, 0, "unterminated quote in %q", s)
			out = append(out, s[1:1+end])
			s = strings.TrimSpace(s[end+2:])
			continue
		}
		word, rest, _ := strings.Cut(s, " ")
		out = append(out, word)
		s = strings.TrimSpace(rest)
	}
	return out
}
