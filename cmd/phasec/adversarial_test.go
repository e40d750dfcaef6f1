package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestAdversarialInputs: hostile arguments and input get a clear diagnostic
// and the documented exit code (0 ok, 1 failure, 2 usage or unreadable
// input where the command says so), never a panic or a Go stack trace.
func TestAdversarialInputs(t *testing.T) {
	dir := t.TempDir()
	write := func(name, text string) string {
		p := filepath.Join(dir, name)
		require.NoError(t, os.WriteFile(p, []byte(text), 0o644))
		return p
	}
	module := func(value string) string {
		return "@I.ir_module\nclass Module:\n    @R.function\n    def main(x: R.Tensor((2, 3), dtype=\"float32\")):\n" +
			"        y = " + value + "\n        return y\n"
	}
	model := "../../testdata/models/mlp_legalized.tvms"
	empty := write("empty.tvms", "")
	garbage := write("garbage.tvms", "\x00\xff\xfe\x01@I.ir_module\x00class \x80\x81:\n\t\t\x00")
	deepParens := write("parens.tvms", module(strings.Repeat("(", 10000)+"x"+strings.Repeat(")", 10000)))
	deepBrackets := write("brackets.tvms", module(strings.Repeat("[", 10000)+"x"+strings.Repeat("]", 10000)))
	longLine := write("long.tvms", module("x"+strings.Repeat(" ", 1<<20)))
	emptyDir := filepath.Join(dir, "nothing")
	require.NoError(t, os.Mkdir(emptyDir, 0o755))
	blocker := write("not_a_dir", "a file where --dump-dir wants a directory")

	tests := []struct {
		name   string
		args   []string
		stdin  string
		code   int
		stderr string // a fragment the diagnostic must contain ("" = not checked)
	}{
		{"unknown flag before command", []string{"--bogus"}, "", 2, "unknown flag: --bogus"},
		{"fmt unknown flag", []string{"fmt", "--bogus"}, "", 2, "phasec fmt: unknown flag: --bogus"},
		{"fmt -h is not an error", []string{"fmt", "-h"}, "", 0, "usage: phasec fmt"},
		{"check -h is not an error", []string{"check", "-h"}, "", 0, "usage: phasec check"},
		{"equal -h is not an error", []string{"equal", "-h"}, "", 0, "usage: phasec equal"},
		{"passes bad flag shows phasec usage", []string{"passes", "--bogus"}, "", 2, "usage: phasec passes"},
		{"doc bad flag shows phasec usage", []string{"doc", "phases", "--bogus"}, "", 2, "usage: phasec doc phases"},
		{"fmt missing file", []string{"fmt", filepath.Join(dir, "missing.tvms")}, "", 2, "no such file or directory"},
		{"fmt directory", []string{"fmt", dir}, "", 2, "is a directory"},
		{"fmt empty file", []string{"fmt", empty}, "", 2, "empty input: expected a TVMScript module"},
		{"fmt binary garbage", []string{"fmt", garbage}, "", 2, "binary input (byte 0x00 at offset 0)"},
		{"fmt garbage on stdin", []string{"fmt", "-"}, "\x00\x01\x02\xff", 2, "<stdin>: error: binary input"},
		{"fmt control bytes are escaped", []string{"fmt", "-"}, "@I.ir_module\nclass Module:\n    x\x01 = 1\n", 2, `unexpected character: "\x01"`},
		{"fmt 10000 nested parentheses", []string{"fmt", deepParens}, "", 2, "nested too deeply"},
		{"fmt 10000 nested brackets", []string{"fmt", deepBrackets}, "", 2, "nested too deeply"},
		{"fmt 1 MiB line", []string{"fmt", longLine}, "", 0, ""},
		{"check missing file", []string{"check", filepath.Join(dir, "missing.tvms")}, "", 2, "cannot read"},
		{"check binary garbage", []string{"check", garbage}, "", 2, "binary input"},
		{"check empty file", []string{"check", empty}, "", 2, "empty input"},
		{"check stdin", []string{"check", "-"}, "@I.ir_module\nclass Module:\n    x = 1\n", 2, "<stdin>"},
		{"check nesting", []string{"check", deepParens}, "", 2, ""}, // diagnostics go to stdout
		{"check directory without modules", []string{"check", emptyDir}, "", 2, ""},
		{"check --format nope", []string{"check", "--format", "nope", model}, "", 2, `unknown format "nope"`},
		{"equal - -", []string{"equal", "-", "-"}, "", 2, "only one of A and B may be -"},
		{"equal one file", []string{"equal", model}, "", 2, "usage: phasec equal"},
		{"equal missing file", []string{"equal", filepath.Join(dir, "missing.tvms"), model}, "", 2, "no such file"},
		{"opt unknown pass", []string{"opt", "--passes", "Nope", model}, "", 2, `unknown pass "Nope"`},
		{"opt unknown option", []string{"opt", "--passes", "canonicalize{bogus=1}", model}, "", 2, `unknown option "bogus"`},
		{"opt malformed pipeline", []string{"opt", "--passes", "seq(", model}, "", 2, "expected a pass name"},
		{"opt --config unknown key", []string{"opt", "--passes", "canonicalize", "--config", "nope=1", model}, "", 2, `unknown config key "nope"`},
		{"opt --config without =", []string{"opt", "--passes", "canonicalize", "--config", "nope", model}, "", 2, "want key=value"},
		{"opt --bisect-limit -1 is no limit", []string{"opt", "--passes", "canonicalize", "--bisect-limit", "-1", model}, "", 0, ""},
		{"opt --bisect-limit not a number", []string{"opt", "--passes", "canonicalize", "--bisect-limit", "x", model}, "", 2, `invalid argument "x" for "--bisect-limit"`},
		{"opt --dump-dir over a file", []string{"opt", "--passes", "canonicalize", "--dump-dir", blocker, model}, "", 1, "not a directory"},
		{"opt --opt-level out of range", []string{"opt", "--passes", "canonicalize", "--opt-level", "9", model}, "", 2, "outside 0..3"},
		{"opt empty stdin", []string{"opt", "--passes", "canonicalize", "-"}, "", 2, "<stdin>: error: empty input"},
		{"opt directory", []string{"opt", "--passes", "canonicalize", dir}, "", 2, "is a directory"},
		{"build empty file", []string{"build", "-o", filepath.Join(dir, "e.pvm"), empty}, "", 2, "empty input"},
		{"build syntax error exits 2 as check does", []string{"build", "-o", filepath.Join(dir, "g.pvm"), deepParens}, "", 2, "nested too deeply"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			code, out, errOut := runCLI(t, tt.stdin, tt.args...)
			assert.Equal(t, tt.code, code, "exit code\nstderr:\n%.2000s", errOut)
			if tt.stderr != "" {
				assert.True(t, strings.Contains(errOut, tt.stderr) || strings.Contains(out, tt.stderr), "output lacks %q\nstderr:\n%.2000s", tt.stderr, errOut)
			}
			if tt.code != 0 {
				assert.NotEmpty(t, strings.TrimSpace(errOut+out), "exit %d without any diagnostic", code)
			}
			for _, trace := range []string{"goroutine ", "panic:", "runtime error", "internal error"} {
				assert.False(t, strings.Contains(errOut, trace), "stderr contains %q:\n%.2000s", trace, errOut)
				assert.False(t, strings.Contains(out, trace), "stdout contains %q:\n%.2000s", trace, out)
			}
		})
	}
}
