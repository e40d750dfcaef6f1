package passtest

import (
	"fmt"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

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
	require.Empty(t, errs)
	var got []string
	for _, w := range wants {
		got = append(got, fmt.Sprintf("%d:%s", w.Line, w.Re))
	}
	assert.Equal(t, "1:WF030: dataflow block 0:BAR001: lower barrier 4:first 4:second", strings.Join(got, " "), "wants")
	_, errs = ParseWants("f.tvms", []byte("a  # want nope\nb  # want\n"))
	assert.Len(t, errs, 2, "malformed wants")
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
	require.Empty(t, r.errs, "matching diagnostics reported")

	r = &recorder{}
	CheckWants(r, append(all[:3:3], at(2, "WF001", "undefined variable q")), wants)
	if assert.Len(t, r.errs, 2, "want one unexpected and one missing") {
		assert.Contains(t, r.errs[0], "unexpected diagnostic")
		assert.Contains(t, r.errs[1], `missing diagnostic at line 4 matching "second"`)
	}

	r = &recorder{}
	moved := diag.List{at(2, "WF030", "dataflow block at main:2"), all[1], all[2], all[3]}
	CheckWants(r, moved, wants)
	assert.Len(t, r.errs, 2, "a diagnostic on the wrong line must be unexpected and leave its want missing")
}
