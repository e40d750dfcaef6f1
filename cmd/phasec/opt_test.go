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
	if err := os.WriteFile(path, []byte(optInput), 0o644); err != nil {
		t.Fatal(err)
	}
	return path
}

func TestOptUsageErrors(t *testing.T) {
	in := writeInput(t)
	tests := []struct {
		args []string
		want string
	}{
		{[]string{"opt"}, "want exactly one FILE"},
		{[]string{"opt", "--frob", in}, "flag provided but not defined: -frob"},
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
		if code != 2 || out != "" || !strings.Contains(errOut, tt.want) {
			t.Errorf("%v: exit %d, stdout %q, stderr %q; want 2 and %q", tt.args, code, out, errOut, tt.want)
		}
	}
}

func TestOptFailures(t *testing.T) {
	in := writeInput(t)
	code, out, errOut := runCLI(t, "", "opt", "--passes", "Normalize,CLINeedsNoDataflow", in)
	if code != 1 || out != "" || !strings.Contains(errOut, "--passes:1:11: error CHK001: pass CLINeedsNoDataflow needs {NoDataflow}") {
		t.Errorf("static check: exit %d, stderr %q", code, errOut)
	}
	code, out, errOut = runCLI(t, "", "opt", "--passes", "CLIFail", in)
	if code != 1 || out != "" || !strings.Contains(errOut, "pass CLIFail failed (module in phase none): cli boom") {
		t.Errorf("failing pass: exit %d, stderr %q", code, errOut)
	}
	code, _, errOut = runCLI(t, "", "opt", filepath.Join(t.TempDir(), "missing.tvms"))
	if code != 1 || !strings.Contains(errOut, "no such file") {
		t.Errorf("missing file: exit %d, stderr %q", code, errOut)
	}
	code, _, errOut = runCLI(t, "@I.ir_module\nclass", "opt", "-")
	if code != 1 || !strings.Contains(errOut, "<stdin>:") {
		t.Errorf("parse error: exit %d, stderr %q", code, errOut)
	}
}

func TestOptRuns(t *testing.T) {
	in := writeInput(t)
	dir := t.TempDir()
	record := filepath.Join(dir, "run.jsonl")
	dump := filepath.Join(dir, "dump")
	code, out, errOut := runCLI(t, "", "opt", "--passes", "Normalize,seq(Normalize)", "--time-passes", "--summary",
		"--record", record, "--dump-dir", dump, "--verify-each", "--print-changed=diff", in)
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	if !strings.Contains(out, "def main(") {
		t.Errorf("stdout is not the module:\n%s", out)
	}
	for _, want := range []string{"pass timing:", "phase none:", "status", "// IR input (phase none)"} {
		if !strings.Contains(errOut, want) {
			t.Errorf("stderr lacks %q:\n%s", want, errOut)
		}
	}
	data, err := os.ReadFile(record)
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimSpace(string(data)), "\n")
	if len(lines) != 2 {
		t.Fatalf("record has %d lines:\n%s", len(lines), data)
	}
	var e passes.RecordEntry
	if err := json.Unmarshal([]byte(lines[1]), &e); err != nil || e.Pass != "Normalize" || e.Depth != 1 {
		t.Errorf("record line %q: %+v %v", lines[1], e, err)
	}
	names, _ := filepath.Glob(filepath.Join(dump, "*.tvms"))
	if len(names) != 3 || filepath.Base(names[0]) != "000_input.tvms" || filepath.Base(names[1]) != "001_none_Normalize.tvms" {
		t.Errorf("dump dir: %v", names)
	}
	// stdin and -o; at opt level 0 Normalize (opt level 1) is skipped.
	outFile := filepath.Join(dir, "out.tvms")
	code, out, errOut = runCLI(t, optInput, "opt", "--passes", "Normalize", "--opt-level", "0", "--bisect-limit", "0", "-o", outFile, "-")
	if code != 0 || out != "" {
		t.Fatalf("stdin run: exit %d, stdout %q, stderr %s", code, out, errOut)
	}
	if b, err := os.ReadFile(outFile); err != nil || !strings.Contains(string(b), "def main(") {
		t.Errorf("-o output: %v\n%s", err, b)
	}
}

func TestPassesCommand(t *testing.T) {
	code, out, _ := runCLI(t, "", "passes")
	if code != 0 || !strings.Contains(out, "Normalize (opt level 1)\n    put every Relax function") ||
		!strings.Contains(out, "contract: accepts any; establishes {Normalized}") ||
		!strings.Contains(out, "CLINeedsNoDataflow (opt level 0)") {
		t.Errorf("exit %d:\n%s", code, out)
	}
	code, out, _ = runCLI(t, "", "passes", "--json")
	var list []map[string]any
	if code != 0 || json.Unmarshal([]byte(out), &list) != nil || len(list) != len(passRegistry.Passes()) {
		t.Fatalf("--json: exit %d:\n%s", code, out)
	}
	for _, p := range list {
		if p["name"] == "CLINeedsNoDataflow" && p["requires_props"].([]any)[0] != "NoDataflow" {
			t.Errorf("contract missing from JSON: %v", p)
		}
	}
}
