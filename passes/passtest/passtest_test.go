package passtest

import (
	"fmt"
	"strings"
	"testing"

	"github.com/phasec/phasec/diag"
)

// recorder is a testing.TB that collects Errorf messages instead of
// failing, so the harness itself can be tested.
type recorder struct {
	testing.TB
	errs []string
}

func (r *recorder) Helper() {}
func (r *recorder) Errorf(format string, args ...any) {
	r.errs = append(r.errs, fmt.Sprintf(format, args...))
}

const src = `x = 1  # want "WF030: dataflow block"
y = 2
# want "BAR001: lower barrier"
z = 3  # want "first" "second"
`

func TestParseWants(t *testing.T) {
	wants, errs := ParseWants("f.tvms", []byte(src))
	if len(errs) != 0 {
		t.Fatal(errs)
	}
	var got []string
	for _, w := range wants {
		got = append(got, fmt.Sprintf("%d:%s", w.Line, w.Re))
	}
	want := "1:WF030: dataflow block 0:BAR001: lower barrier 4:first 4:second"
	if strings.Join(got, " ") != want {
		t.Errorf("wants %q, want %q", strings.Join(got, " "), want)
	}
	if _, errs := ParseWants("f.tvms", []byte("a  # want nope\nb  # want\n")); len(errs) != 2 {
		t.Errorf("malformed wants gave %d errors, want 2: %v", len(errs), errs)
	}
}

// TestCheckWantsBothWays: a diagnostic no want matches and a want no
// diagnostic matches both fail; the position of a positioned want counts.
func TestCheckWantsBothWays(t *testing.T) {
	wants, _ := ParseWants("f.tvms", []byte(src))
	at := func(line int, code diag.Code, msg string) *diag.Diagnostic {
		return &diag.Diagnostic{Span: diag.Span{File: "f.tvms", Line: line, Col: 1}, Code: code, Msg: msg}
	}
	all := diag.List{
		at(1, "WF030", "dataflow block at main:1"),
		{Code: "BAR001", Msg: "lower barrier: missing Legalized"},
		at(4, "", "first thing"),
		at(4, "", "second thing"),
	}
	r := &recorder{}
	CheckWants(r, all, wants)
	if len(r.errs) != 0 {
		t.Fatalf("matching diagnostics reported: %v", r.errs)
	}

	r = &recorder{}
	CheckWants(r, append(all[:3:3], at(2, "WF001", "undefined variable q")), wants)
	if len(r.errs) != 2 || !strings.Contains(r.errs[0], "unexpected diagnostic") || !strings.Contains(r.errs[1], `missing diagnostic at line 4 matching "second"`) {
		t.Errorf("want one unexpected and one missing, got %q", r.errs)
	}

	r = &recorder{}
	moved := diag.List{at(2, "WF030", "dataflow block at main:2"), all[1], all[2], all[3]}
	CheckWants(r, moved, wants)
	if len(r.errs) != 2 {
		t.Errorf("a diagnostic on the wrong line must be unexpected and leave its want missing, got %q", r.errs)
	}
}
