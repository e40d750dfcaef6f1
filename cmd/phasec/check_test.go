package main

import (
	"bufio"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

const checkData = "testdata/check"

func TestCheckExitCodes(t *testing.T) {
	for _, tc := range []struct {
		name string
		args []string
		code int
	}{
		{"clean file", []string{"testdata/check/clean.tvms"}, 0},
		{"recorded phase verified", []string{"testdata/check/violations.tvms"}, 1},
		{"untagged is structural only", []string{"testdata/check/untagged.tvms"}, 0},
		{"untagged against a phase", []string{"--phase", "lower", "testdata/check/untagged.tvms"}, 1},
		{"explicit phase overrides the record", []string{"--phase", "optimize", "testdata/check/violations.tvms"}, 0},
		{"unparsable", []string{"testdata/check/broken/syntax_error.tvms"}, 2},
		// Parsing is not checking: an ill-formed module (contradicting
		// annotations, a call its op rejects) parses and fails the check.
		{"ill-formed but TVMScript", []string{"../../testdata/wellformed/fail/struct_info_contradictions.tvms"}, 1},
		{"unreadable", []string{"testdata/check/does_not_exist.tvms"}, 2},
		{"directory with a broken file", []string{checkData}, 2},
		{"no paths", nil, 2},
		{"bad phase", []string{"--phase", "lowered", "testdata/check/clean.tvms"}, 2},
		{"bad format", []string{"--format", "xml", "testdata/check/clean.tvms"}, 2},
	} {
		t.Run(tc.name, func(t *testing.T) {
			code, out, errOut := runCLI(t, "", append([]string{"check"}, tc.args...)...)
			assert.Equal(t, tc.code, code, "exit code\nstdout:\n%s\nstderr:\n%s", out, errOut)
			if tc.code == 0 {
				assert.Empty(t, out, "clean check printed")
			}
		})
	}
}

// TestCheckFormats pins each output format for a file with violations.
func TestCheckFormats(t *testing.T) {
	for _, f := range []string{"text", "json", "github", "sarif"} {
		t.Run(f, func(t *testing.T) {
			code, out, errOut := runCLI(t, "", "check", "--format", f, "testdata/check/violations.tvms")
			require.Equal(t, 1, code, "exit code; stderr:\n%s", errOut)
			compareGolden(t, filepath.Join(checkData, "golden", "violations."+f), out)
		})
	}
}

func TestCheckTextLines(t *testing.T) {
	_, out, _ := runCLI(t, "", "check", "testdata/check/violations.tvms")
	require.NotEmpty(t, strings.TrimSpace(out), "no output")
	lines := strings.Split(strings.TrimSpace(out), "\n")
	for _, l := range lines {
		// file:line:col: error WFnnn: message
		assert.True(t, strings.HasPrefix(l, "testdata/check/violations.tvms:"), "not a text diagnostic: %q", l)
		assert.Contains(t, l, ": error WF0", "not a text diagnostic")
	}
	assert.Contains(t, out, "is not allowed in phase lower: run ToNonDataflow, or the lower barrier", "dataflow violation missing or unexplained")
}

func TestCheckJSONOnePerLine(t *testing.T) {
	_, out, _ := runCLI(t, "", "check", "--format", "json", "testdata/check/violations.tvms")
	sc := bufio.NewScanner(strings.NewReader(out))
	n := 0
	for sc.Scan() {
		var d map[string]any
		require.NoError(t, json.Unmarshal(sc.Bytes(), &d), "line %d is not a JSON object", n+1)
		for _, k := range []string{"file", "line", "col", "severity", "code", "message", "path"} {
			assert.Contains(t, d, k, "line %d lacks %q: %s", n+1, k, sc.Text())
		}
		n++
	}
	assert.NotZero(t, n, "no diagnostics")
}

func TestCheckParseErrorsArePrinted(t *testing.T) {
	for _, f := range []string{"text", "github"} {
		code, out, _ := runCLI(t, "", "check", "--format", f, "testdata/check/broken/syntax_error.tvms")
		assert.Equal(t, 2, code, "%s: exit code", f)
		assert.Contains(t, out, "syntax_error.tvms", "%s: parse diagnostic not printed with its position", f)
		assert.Contains(t, out, "8", "%s: parse diagnostic not printed with its position", f)
	}
	code, out, _ := runCLI(t, "", "check", "testdata/check/does_not_exist.tvms")
	assert.Equal(t, 2, code, "exit code, output %q", out)
	assert.Contains(t, out, "does_not_exist.tvms: error: cannot read")
}

func TestCheckDirectoryRecurses(t *testing.T) {
	_, out, _ := runCLI(t, "", "check", checkData)
	for _, want := range []string{"violations.tvms:", "broken/syntax_error.tvms:"} {
		assert.Contains(t, out, want, "directory check did not reach %s", want)
	}
	assert.NotContains(t, out, "clean.tvms", "clean file reported")
}

// TestCheckGroupsRepeatedViolations: 60 bindings violating one rule print
// 20 diagnostics and a count in text, all 60 in JSON.
func TestCheckGroupsRepeatedViolations(t *testing.T) {
	var b strings.Builder
	b.WriteString("@I.ir_module\nclass Module:\n    @R.function\n    def main(x: R.Tensor((4,), dtype=\"float32\")) -> R.Tensor((4,), dtype=\"float32\"):\n")
	for i := range 60 {
		fmt.Fprintf(&b, "        y%d: R.Tensor((3,), dtype=\"float32\") = R.add(x, x)\n", i)
	}
	b.WriteString("        return x\n")
	path := filepath.Join(t.TempDir(), "many.tvms")
	require.NoError(t, os.WriteFile(path, []byte(b.String()), 0o644))
	code, out, _ := runCLI(t, "", "check", path)
	lines := strings.Split(strings.TrimSpace(out), "\n")
	assert.Equal(t, 1, code, "exit code, last line %q", lines[len(lines)-1])
	if assert.Len(t, lines, 21, "last line %q", lines[len(lines)-1]) {
		assert.Contains(t, lines[20], "40 more WF017 diagnostics not shown (60 in all")
	}
	_, out, _ = runCLI(t, "", "check", "--format", "json", path)
	assert.Equal(t, 60, strings.Count(out, `"code":"WF017"`), "json: WF017 lines")
}

// TestCheckTVMParity runs phasec check on the modules written as TVM v0.23
// prints them, one per check of its relax.analysis.well_formed and
// tir::VerifyWellFormed (testdata/wellformed/{fail,pass}/tvm_*.tvms): an
// ill-formed one exits 1 with every diagnostic carrying a WF rule code and a
// line, a well-formed one exits 0 silently. (wellformed's tests match each
// diagnostic to its line.)
func TestCheckTVMParity(t *testing.T) {
	for _, dir := range []string{"fail", "pass"} {
		files, err := filepath.Glob(filepath.Join("../../testdata/wellformed", dir, "tvm_*.tvms"))
		require.NoError(t, err, "no %s files", dir)
		require.NotEmpty(t, files, "no %s files", dir)
		for _, file := range files {
			t.Run(dir+"/"+filepath.Base(file), func(t *testing.T) {
				code, out, errOut := runCLI(t, "", "check", "--format", "json", file)
				if dir == "pass" {
					require.Equal(t, 0, code, "exit code\n%s%s", out, errOut)
					require.Empty(t, out, "exit %d\n%s", code, errOut)
					return
				}
				require.Equal(t, 1, code, "exit code\n%s%s", out, errOut)
				sc := bufio.NewScanner(strings.NewReader(out))
				n := 0
				for ; sc.Scan(); n++ {
					var d struct {
						Line int    `json:"line"`
						Code string `json:"code"`
					}
					require.NoError(t, json.Unmarshal(sc.Bytes(), &d), sc.Text())
					assert.True(t, strings.HasPrefix(d.Code, "WF"), "diagnostic without a rule code: %s", sc.Text())
					assert.Positive(t, d.Line, "diagnostic without a line: %s", sc.Text())
				}
				assert.NotZero(t, n, "no diagnostics")
			})
		}
	}
}

// TestCheckRelatedNotes pins each format's rendering of a diagnostic with a
// related note (a function defined twice: the note is at the first
// definition).
func TestCheckRelatedNotes(t *testing.T) {
	for _, f := range []string{"text", "json", "github", "sarif"} {
		t.Run(f, func(t *testing.T) {
			code, out, errOut := runCLI(t, "", "check", "--format", f, "testdata/related/duplicate_function.tvms")
			require.Equal(t, 2, code, "exit code (a file that does not parse); stderr:\n%s", errOut)
			assert.Contains(t, out, "first defined here", "no note")
			compareGolden(t, filepath.Join("testdata", "related", "duplicate_function."+f), out)
		})
	}
}
