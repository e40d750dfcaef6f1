package main

import (
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/phasec/phasec/ir"
	"github.com/phasec/phasec/passes"
	"github.com/phasec/phasec/phase"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// A module with a dataflow block, so NoDataflow does not hold of it.
const optInput = `# from tvm.script import ir as I
# from tvm.script import relax as R

@I.ir_module
class Module:
    @R.function
    def main(x: R.Tensor((2, 3), dtype="float32")) -> R.Tensor((2, 3), dtype="float32"):
        with R.dataflow():
            lv = R.exp(x)
            gv = R.exp(lv)
            R.output(gv)
        return gv
`

func init() {
	noop := func(env *passes.Env, mod *ir.Module) (*ir.Module, error) { return mod, nil }
	passRegistry = passRegistry.With(
		passes.Define(passes.Info{Name: "CLINeedsNoDataflow", Doc: "test pass needing NoDataflow",
			Requires: map[phase.Property]string{phase.NoDataflow: "a test requirement"}}, passes.Module(noop)),
		passes.Define(passes.Info{Name: "CLIFail", Doc: "test pass that fails"},
			passes.Module(func(env *passes.Env, mod *ir.Module) (*ir.Module, error) { return nil, errors.New("cli boom") })))
}

func writeInput(t *testing.T) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), "in.tvms")
	require.NoError(t, os.WriteFile(path, []byte(optInput), 0o644))
	return path
}

func TestOptUsageErrors(t *testing.T) {
	in := writeInput(t)
	tests := []struct {
		args []string
		want string
	}{
		{[]string{"opt"}, "want exactly one FILE"},
		{[]string{"opt", "--frob", in}, "phasec opt: unknown flag: --frob"},
		{[]string{"opt", "--passes", "Normalize,,X", in}, "--passes:1:11: error PIPE000: expected a pass name"},
		{[]string{"opt", "--passes", "Normalise", in}, `unknown pass "Normalise" (did you mean "Normalize"?)`},
		{[]string{"opt", "--disable", "Normalze", in}, `disabled: unknown pass "Normalze" (did you mean "Normalize"?)`},
		{[]string{"opt", "--print-after", "Normalze", in}, `did you mean "Normalize"?`},
		{[]string{"opt", "--config", "no.such=1", in}, `unknown config key "no.such"`},
		{[]string{"opt", "--print-changed=fancy", in}, "want --print-changed or --print-changed=diff"},
		{[]string{"opt", "--opt-level", "7", in}, "opt level 7 outside 0..3"},
		{[]string{"passes", "extra"}, "usage: phasec passes"},
	}
	for _, tt := range tests {
		code, out, errOut := runCLI(t, "", tt.args...)
		assert.Equal(t, 2, code, "%v: exit code, stderr %q", tt.args, errOut)
		assert.Empty(t, out, "%v: stdout", tt.args)
		assert.Contains(t, errOut, tt.want, "%v: stderr", tt.args)
	}
}

func TestOptFailures(t *testing.T) {
	in := writeInput(t)
	code, out, errOut := runCLI(t, "", "opt", "--passes", "Normalize,CLINeedsNoDataflow", in)
	assert.Equal(t, 1, code, "static check: exit code, stderr %q", errOut)
	assert.Empty(t, out, "static check: stdout")
	assert.Contains(t, errOut, "--passes:1:11: error CHK001: pass CLINeedsNoDataflow needs {NoDataflow}", "static check: stderr")
	code, out, errOut = runCLI(t, "", "opt", "--passes", "CLIFail", in)
	assert.Equal(t, 1, code, "failing pass: exit code, stderr %q", errOut)
	assert.Empty(t, out, "failing pass: stdout")
	assert.Contains(t, errOut, "pass CLIFail failed (module in phase none): cli boom", "failing pass: stderr")
	code, _, errOut = runCLI(t, "", "opt", filepath.Join(t.TempDir(), "missing.tvms"))
	assert.Equal(t, 2, code, "missing file: exit code, stderr %q", errOut)
	assert.Contains(t, errOut, "no such file", "missing file: stderr")
	code, _, errOut = runCLI(t, "@I.ir_module\nclass", "opt", "-")
	assert.Equal(t, 2, code, "parse error: exit code, stderr %q", errOut)
	assert.Contains(t, errOut, "<stdin>:", "parse error: stderr")
}

func TestOptRuns(t *testing.T) {
	in := writeInput(t)
	dir := t.TempDir()
	record := filepath.Join(dir, "run.jsonl")
	dump := filepath.Join(dir, "dump")
	code, out, errOut := runCLI(t, "", "opt", "--passes", "Normalize,seq(Normalize)", "--time-passes", "--summary",
		"--record", record, "--dump-dir", dump, "--verify-each", "--print-changed=diff", in)
	require.Equal(t, 0, code, "exit code: %s", errOut)
	assert.Contains(t, out, "def main(", "stdout is not the module")
	for _, want := range []string{"pass timing:", "phase none:", "status", "// IR input (phase none)"} {
		assert.Contains(t, errOut, want, "stderr")
	}
	data, err := os.ReadFile(record)
	require.NoError(t, err)
	lines := strings.Split(strings.TrimSpace(string(data)), "\n")
	require.Len(t, lines, 2, "record:\n%s", data)
	var e passes.RecordEntry
	assert.NoError(t, json.Unmarshal([]byte(lines[1]), &e), "record line %q", lines[1])
	assert.Equal(t, "Normalize", e.Pass, "record line %q: %+v", lines[1], e)
	assert.Equal(t, 1, e.Depth, "record line %q: %+v", lines[1], e)
	names, _ := filepath.Glob(filepath.Join(dump, "*.tvms"))
	if assert.Len(t, names, 3, "dump dir: %v", names) {
		assert.Equal(t, "000_input.tvms", filepath.Base(names[0]), "dump dir: %v", names)
		assert.Equal(t, "001_none_Normalize.tvms", filepath.Base(names[1]), "dump dir: %v", names)
	}
	// stdin and -o; at opt level 0 Normalize (opt level 1) is skipped.
	outFile := filepath.Join(dir, "out.tvms")
	code, out, errOut = runCLI(t, optInput, "opt", "--passes", "Normalize", "--opt-level", "0", "--bisect-limit", "0", "-o", outFile, "-")
	require.Equal(t, 0, code, "stdin run: exit code, stdout %q, stderr %s", out, errOut)
	require.Empty(t, out, "stdin run: stdout")
	b, err := os.ReadFile(outFile)
	assert.NoError(t, err, "-o output")
	assert.Contains(t, string(b), "def main(", "-o output")
}

func TestPassesCommand(t *testing.T) {
	code, out, _ := runCLI(t, "", "passes")
	assert.Equal(t, 0, code, "exit code:\n%s", out)
	assert.Contains(t, out, "Normalize (opt level 1)\n    put every Relax function")
	assert.Contains(t, out, "contract: accepts any; establishes {Normalized}")
	assert.Contains(t, out, "CLINeedsNoDataflow (opt level 0)")
	code, out, _ = runCLI(t, "", "passes", "--json")
	var list []map[string]any
	require.Equal(t, 0, code, "--json: exit code:\n%s", out)
	require.NoError(t, json.Unmarshal([]byte(out), &list), "--json:\n%s", out)
	require.Len(t, list, len(passRegistry.Passes()), "--json")
	for _, p := range list {
		if p["name"] == "CLINeedsNoDataflow" {
			assert.Equal(t, "NoDataflow", p["requires_props"].([]any)[0], "contract missing from JSON: %v", p)
		}
	}
}
