package passes

import (
	"strings"
	"testing"
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
		if errs != nil {
			t.Errorf("%s: %v", text, errs)
			continue
		}
		if got := steps.String(); got != text {
			t.Errorf("round trip of %q gave %q", text, got)
		}
		p, errs := testRegistry.Build("p", steps)
		if errs != nil {
			t.Errorf("%s: %v", text, errs)
			continue
		}
		if got := p.Children()[0].String(); !strings.HasPrefix(text, got) {
			t.Errorf("built pass prints %q, not a prefix of %q", got, text)
		}
	}
	// Whitespace is not significant and is dropped when printing.
	steps, errs := ParsePipeline("p", " TNoop , seq( TMark ) ,TOpts{ max_depth = 2 }")
	if errs != nil || steps.String() != "TNoop,seq(TMark),TOpts{max_depth=2}" {
		t.Errorf("spaces: %v %v", steps, errs)
	}
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
		{"TOpts(x)", "6: only seq takes a parenthesised pipeline"},
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
		if len(errs) == 0 {
			t.Errorf("%q: no error, want %s", tt.text, tt.want)
			continue
		}
		col, msg, _ := strings.Cut(tt.want, ": ")
		d := errs[0]
		if got := d.Span.String(); got != "--passes:1:"+col {
			t.Errorf("%q: error at %s, want column %s (%s)", tt.text, got, col, d.Msg)
		}
		if !strings.Contains(d.Msg, msg) {
			t.Errorf("%q: message %q lacks %q", tt.text, d.Msg, msg)
		}
	}
}

func TestNewChecksOptions(t *testing.T) {
	if _, err := testRegistry.New("TOpts", Options{"max_depth": "x"}); err == nil || !strings.Contains(err.Error(), "max_depth wants a int") {
		t.Errorf("New with a bad option type: %v", err)
	}
	if _, err := testRegistry.New("TOpts", Options{"max_dep": 1}); err == nil || !strings.Contains(err.Error(), `did you mean "max_depth"`) {
		t.Errorf("New with an unknown option: %v", err)
	}
	if _, err := testRegistry.New("TOpt", nil); err == nil || !strings.Contains(err.Error(), `did you mean "TOpts"`) {
		t.Errorf("New with an unknown pass: %v", err)
	}
}
