package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/phasec/phasec/syntax"
	"github.com/phasec/phasec/syntax/printer"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
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
	require.NoError(t, os.WriteFile(path, []byte(text), 0o644))
	return path
}

func TestFmtFilePrintsCanonicalText(t *testing.T) {
	src, err := os.ReadFile(mlpPath)
	require.NoError(t, err)
	mod, diags := syntax.Parse(mlpPath, src)
	require.False(t, diags.HasErrors(), "%v", diags)
	code, out, errOut := runCLI(t, "", "fmt", mlpPath)
	require.Equal(t, 0, code, "exit code, stderr %q", errOut)
	require.Empty(t, errOut, "stderr")
	assert.Equal(t, printer.Print(mod), out, "fmt output is not printer.Print of the parsed file")
}

func TestFmtStdinAndIdempotence(t *testing.T) {
	for _, args := range [][]string{{"fmt"}, {"fmt", "-"}} {
		code, out, errOut := runCLI(t, fmtInput, args...)
		require.Equal(t, 0, code, "%v: exit code, stderr %q", args, errOut)
		require.Empty(t, errOut, "%v: stderr", args)
		assert.True(t, strings.HasPrefix(out, "# from tvm.script import ir as I\n"), "%v: not canonical (header):\n%s", args, out)
		assert.LessOrEqual(t, strings.Index(out, "def helper("), strings.Index(out, "def main("), "%v: not canonical (helper before main):\n%s", args, out)
		code, again, _ := runCLI(t, out, args...)
		assert.Equal(t, 0, code, "%v: fmt is not idempotent", args)
		assert.Equal(t, out, again, "%v: fmt is not idempotent", args)
	}
}

func TestFmtParseErrorExits2WithCaret(t *testing.T) {
	bad := strings.Replace(fmtInput, "R.nn.relu(a)", "R.nn.rleu(a)", 1)
	path := writeTemp(t, "bad.tvms", bad)
	code, out, errOut := runCLI(t, "", "fmt", path)
	assert.Equal(t, 2, code, "exit code")
	assert.Empty(t, out, "stdout should be empty on error")
	for _, want := range []string{path + ":11:", "R.nn.rleu", "^"} {
		assert.Contains(t, errOut, want, "stderr")
	}
}

func TestFmtMissingFileExits2(t *testing.T) {
	code, out, errOut := runCLI(t, "", "fmt", filepath.Join(t.TempDir(), "absent.tvms"))
	assert.Equal(t, 2, code, "exit code, stderr %q", errOut)
	assert.Empty(t, out, "stdout")
	assert.Contains(t, errOut, "absent.tvms", "stderr")
}

func TestFmtUsageErrorsExit2(t *testing.T) {
	for _, args := range [][]string{{"fmt", "a.tvms", "b.tvms"}, {"fmt", "--bogus"}} {
		code, out, errOut := runCLI(t, "", args...)
		assert.Equal(t, 2, code, "%v: exit code, stderr %q", args, errOut)
		assert.Empty(t, out, "%v: stdout", args)
		assert.Contains(t, errOut, "usage: phasec fmt", "%v: stderr", args)
	}
}
