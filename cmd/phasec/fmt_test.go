package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/phasec/phasec/syntax"
	"github.com/phasec/phasec/syntax/printer"
)

const mlpPath = "../../testdata/models/mlp.tvms"

// A small module in non-canonical spelling: keyword-free R.Tensor dtype,
// no header comments, functions out of printing order.
const fmtInput = `@I.ir_module
class Module:
    @R.function
    def main(x: R.Tensor((2, 3), "float32")) -> R.Tensor((2, 3), "float32"):
        cls = Module
        y = cls.helper(x)
        return y

    @R.function(private=True)
    def helper(a: R.Tensor((2, 3), "float32")) -> R.Tensor((2, 3), "float32"):
        b = R.nn.relu(a)
        return b
`

func writeTemp(t *testing.T, name, text string) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), name)
	if err := os.WriteFile(path, []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
	return path
}

func TestFmtFilePrintsCanonicalText(t *testing.T) {
	src, err := os.ReadFile(mlpPath)
	if err != nil {
		t.Fatal(err)
	}
	mod, diags := syntax.Parse(mlpPath, src)
	if diags.HasErrors() {
		t.Fatal(diags)
	}
	code, out, errOut := runCLI(t, "", "fmt", mlpPath)
	if code != 0 || errOut != "" {
		t.Fatalf("exit %d, stderr %q", code, errOut)
	}
	if want := printer.Print(mod); out != want {
		t.Errorf("fmt output is not printer.Print of the parsed file:\n%s", out)
	}
}

func TestFmtStdinAndIdempotence(t *testing.T) {
	for _, args := range [][]string{{"fmt"}, {"fmt", "-"}} {
		code, out, errOut := runCLI(t, fmtInput, args...)
		if code != 0 || errOut != "" {
			t.Fatalf("%v: exit %d, stderr %q", args, code, errOut)
		}
		if !strings.HasPrefix(out, "# from tvm.script import ir as I\n") ||
			strings.Index(out, "def helper(") > strings.Index(out, "def main(") {
			t.Errorf("%v: not canonical (header, helper before main):\n%s", args, out)
		}
		code, again, _ := runCLI(t, out, args...)
		if code != 0 || again != out {
			t.Errorf("%v: fmt is not idempotent:\n%s\n---\n%s", args, out, again)
		}
	}
}

func TestFmtParseErrorExits1WithCaret(t *testing.T) {
	bad := strings.Replace(fmtInput, "R.nn.relu(a)", "R.nn.rleu(a)", 1)
	path := writeTemp(t, "bad.tvms", bad)
	code, out, errOut := runCLI(t, "", "fmt", path)
	if code != 1 {
		t.Errorf("exit %d, want 1", code)
	}
	if out != "" {
		t.Errorf("stdout should be empty on error, got %q", out)
	}
	for _, want := range []string{path + ":11:", "R.nn.rleu", "^"} {
		if !strings.Contains(errOut, want) {
			t.Errorf("stderr lacks %q:\n%s", want, errOut)
		}
	}
}

func TestFmtMissingFileExits1(t *testing.T) {
	code, out, errOut := runCLI(t, "", "fmt", filepath.Join(t.TempDir(), "absent.tvms"))
	if code != 1 || out != "" || !strings.Contains(errOut, "absent.tvms") {
		t.Errorf("exit %d, stdout %q, stderr %q", code, out, errOut)
	}
}

func TestFmtUsageErrorsExit2(t *testing.T) {
	for _, args := range [][]string{{"fmt", "a.tvms", "b.tvms"}, {"fmt", "--bogus"}} {
		code, out, errOut := runCLI(t, "", args...)
		if code != 2 || out != "" || !strings.Contains(errOut, "usage: phasec fmt") {
			t.Errorf("%v: exit %d, stdout %q, stderr %q", args, code, out, errOut)
		}
	}
}
