package main

import (
	"bufio"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
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
			if code != tc.code {
				t.Errorf("exit %d, want %d\nstdout:\n%s\nstderr:\n%s", code, tc.code, out, errOut)
			}
			if tc.code == 0 && out != "" {
				t.Errorf("clean check printed:\n%s", out)
			}
		})
	}
}

// TestCheckFormats pins each output format for a file with violations.
func TestCheckFormats(t *testing.T) {
	for _, f := range []string{"text", "json", "github", "sarif"} {
		t.Run(f, func(t *testing.T) {
			code, out, errOut := runCLI(t, "", "check", "--format", f, "testdata/check/violations.tvms")
			if code != 1 {
				t.Fatalf("exit %d, want 1; stderr:\n%s", code, errOut)
			}
			compareGolden(t, filepath.Join(checkData, "golden", "violations."+f), out)
		})
	}
}

func TestCheckTextLines(t *testing.T) {
	_, out, _ := runCLI(t, "", "check", "testdata/check/violations.tvms")
	lines := strings.Split(strings.TrimSpace(out), "\n")
	if len(lines) == 0 {
		t.Fatal("no output")
	}
	for _, l := range lines {
		// file:line:col: error WFnnn: message
		if !strings.HasPrefix(l, "testdata/check/violations.tvms:") || !strings.Contains(l, ": error WF0") {
			t.Errorf("not a text diagnostic: %q", l)
		}
	}
	if !strings.Contains(out, "is not allowed in phase lower: run ToNonDataflow, or the lower barrier") {
		t.Errorf("dataflow violation missing or unexplained:\n%s", out)
	}
}

func TestCheckJSONOnePerLine(t *testing.T) {
	_, out, _ := runCLI(t, "", "check", "--format", "json", "testdata/check/violations.tvms")
	sc := bufio.NewScanner(strings.NewReader(out))
	n := 0
	for sc.Scan() {
		var d map[string]any
		if err := json.Unmarshal(sc.Bytes(), &d); err != nil {
			t.Fatalf("line %d is not a JSON object: %v", n+1, err)
		}
		for _, k := range []string{"file", "line", "col", "severity", "code", "message", "path"} {
			if _, ok := d[k]; !ok {
				t.Errorf("line %d lacks %q: %s", n+1, k, sc.Text())
			}
		}
		n++
	}
	if n == 0 {
		t.Error("no diagnostics")
	}
}

func TestCheckParseErrorsArePrinted(t *testing.T) {
	for _, f := range []string{"text", "github"} {
		code, out, _ := runCLI(t, "", "check", "--format", f, "testdata/check/broken/syntax_error.tvms")
		if code != 2 {
			t.Errorf("%s: exit %d, want 2", f, code)
		}
		if !strings.Contains(out, "syntax_error.tvms") || !strings.Contains(out, "8") {
			t.Errorf("%s: parse diagnostic not printed with its position:\n%s", f, out)
		}
	}
	code, out, _ := runCLI(t, "", "check", "testdata/check/does_not_exist.tvms")
	if code != 2 || !strings.Contains(out, "does_not_exist.tvms: error: cannot read") {
		t.Errorf("exit %d, output %q", code, out)
	}
}

func TestCheckDirectoryRecurses(t *testing.T) {
	_, out, _ := runCLI(t, "", "check", checkData)
	for _, want := range []string{"violations.tvms:", "broken/syntax_error.tvms:"} {
		if !strings.Contains(out, want) {
			t.Errorf("directory check did not reach %s:\n%s", want, out)
		}
	}
	if strings.Contains(out, "clean.tvms") {
		t.Errorf("clean file reported:\n%s", out)
	}
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
	if err := os.WriteFile(path, []byte(b.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	code, out, _ := runCLI(t, "", "check", path)
	lines := strings.Split(strings.TrimSpace(out), "\n")
	if code != 1 || len(lines) != 21 || !strings.Contains(lines[20], "40 more WF017 diagnostics not shown (60 in all") {
		t.Errorf("exit %d, %d lines, last %q", code, len(lines), lines[len(lines)-1])
	}
	_, out, _ = runCLI(t, "", "check", "--format", "json", path)
	if n := strings.Count(out, `"code":"WF017"`); n != 60 {
		t.Errorf("json: %d WF017 lines, want 60", n)
	}
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
		if err != nil || len(files) == 0 {
			t.Fatalf("no %s files (%v)", dir, err)
		}
		for _, file := range files {
			t.Run(dir+"/"+filepath.Base(file), func(t *testing.T) {
				code, out, errOut := runCLI(t, "", "check", "--format", "json", file)
				if dir == "pass" {
					if code != 0 || out != "" {
						t.Fatalf("exit %d, want 0\n%s%s", code, out, errOut)
					}
					return
				}
				if code != 1 {
					t.Fatalf("exit %d, want 1\n%s%s", code, out, errOut)
				}
				sc := bufio.NewScanner(strings.NewReader(out))
				n := 0
				for ; sc.Scan(); n++ {
					var d struct {
						Line int    `json:"line"`
						Code string `json:"code"`
					}
					if err := json.Unmarshal(sc.Bytes(), &d); err != nil {
						t.Fatalf("%v: %s", err, sc.Text())
					}
					if !strings.HasPrefix(d.Code, "WF") || d.Line <= 0 {
						t.Errorf("diagnostic without a rule code or a line: %s", sc.Text())
					}
				}
				if n == 0 {
					t.Error("no diagnostics")
				}
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
			if code != 2 {
				t.Fatalf("exit %d, want 2 (a file that does not parse); stderr:\n%s", code, errOut)
			}
			if !strings.Contains(out, "first defined here") {
				t.Errorf("no note in:\n%s", out)
			}
			compareGolden(t, filepath.Join("testdata", "related", "duplicate_function."+f), out)
		})
	}
}
