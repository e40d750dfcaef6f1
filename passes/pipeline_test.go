package passes

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
)

func TestPipelineRoundTrip(t *testing.T) {
	for _, text := range []string{
		"TNoop",
		"TNoop,TMark,seq(TO1,TO3),TOpts{max_depth=8}",
		"seq(seq(TNoop),TMark)",
		`TOpts{emit_err_ctx=false,mode="x,y}",ratio=0.25}`,
		"Normalize,TMark",
	} {
		steps, errs := ParsePipeline("p", text)
		if !assert.Nil(t, errs, text) {
			continue
		}
		assert.Equal(t, text, steps.String(), "round trip of %q", text)
		p, errs := testRegistry.Build("p", steps)
		if !assert.Nil(t, errs, text) {
			continue
		}
		got := p.Children()[0].String()
		assert.True(t, strings.HasPrefix(text, got), "built pass prints %q, not a prefix of %q", got, text)
	}
	// Whitespace is not significant and is dropped when printing.
	steps, errs := ParsePipeline("p", " TNoop , seq( TMark ) ,TOpts{ max_depth = 2 }")
	assert.Nil(t, errs, "spaces")
	assert.Equal(t, "TNoop,seq(TMark),TOpts{max_depth=2}", steps.String(), "spaces")
}

func TestPipelineErrors(t *testing.T) {
	tests := []struct {
		text string
		want string // "col: message fragment"
	}{
		{"", "1: expected a pass name, found end of pipeline"},
		{"TNoop,", "7: expected a pass name, found end of pipeline"},
		{"TNoop,,TMark", "7: expected a pass name, found ','"},
		{"seq(TNoop", "10: expected ',' or ')' in seq(...), found end of pipeline"},
		{"TNoop)", "6: unexpected ')' after the pipeline"},
		{"TOpts{max_depth}", "16: expected '=' after option max_depth"},
		{"TOpts{max_depth=1", "18: expected ',' or '}' in options"},
		{"TOpts(x)", "6: only seq and fixpoint take a parenthesised pipeline"},
		{`TOpts{mode="abc}`, `12: unterminated string`},
		{"TNop", `1: unknown pass "TNop" (did you mean "TNoop"?)`},
		{"TNoop,seq(TMrk)", `11: unknown pass "TMrk" (did you mean "TMark"?)`},
		{"TOpts{max_dept=3}", `7: pass TOpts: unknown option "max_dept" (did you mean "max_depth"?)`},
		{"TOpts{max_depth=deep}", `17: pass TOpts: option max_depth: want an int, got "deep"`},
		{"TOpts{emit_err_ctx=1}", `20: pass TOpts: option emit_err_ctx: want true or false`},
		{"TOpts{ratio=x,ratio=1}", `13: pass TOpts: option ratio: want a float`},
		{"TOpts{ratio=1,ratio=1}", `15: pass TOpts: option ratio given twice`},
		{"Xyzzy", `1: unknown pass "Xyzzy"`},
	}
	for _, tt := range tests {
		_, errs := parseAndBuild("--passes", tt.text)
		if !assert.NotEmpty(t, errs, "%q: no error, want %s", tt.text, tt.want) {
			continue
		}
		col, msg, _ := strings.Cut(tt.want, ": ")
		d := errs[0]
		assert.Equal(t, "--passes:1:"+col, d.Span.String(), "%q: error column (%s)", tt.text, d.Msg)
		assert.Contains(t, d.Msg, msg, "%q: message", tt.text)
	}
}

func TestNewChecksOptions(t *testing.T) {
	_, err := testRegistry.New("TOpts", Options{"max_depth": "x"})
	assert.ErrorContains(t, err, "max_depth wants a int", "New with a bad option type")
	_, err = testRegistry.New("TOpts", Options{"max_dep": 1})
	assert.ErrorContains(t, err, `did you mean "max_depth"`, "New with an unknown option")
	_, err = testRegistry.New("TOpt", nil)
	assert.ErrorContains(t, err, `did you mean "TOpts"`, "New with an unknown pass")
}
