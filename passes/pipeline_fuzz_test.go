package passes

import (
	"testing"
	"time"
)

// FuzzPipeline: ParsePipeline never panics or hangs on any text, reports a
// positioned error when it fails, and when it succeeds the printed steps
// re-parse to the same steps (printing is a fixed point after one round).
//
//	go test ./passes -run='^$' -fuzz=FuzzPipeline -fuzztime=1m
func FuzzPipeline(f *testing.F) {
	for _, seed := range []string{
		"TNoop",
		"TNoop,TMark,seq(TO1,TO3),TOpts{max_depth=8}",
		"seq(seq(TNoop),TMark)",
		`TOpts{emit_err_ctx=false,mode="x,y}",ratio=0.25}`,
		"Normalize,TMark",
		" TNoop , seq( TMark ) ,TOpts{ max_depth = 2 }",
		"", "TNoop,", "TNoop,,TMark", "seq(TNoop", "TNoop)", "TOpts{max_depth}",
		"TOpts{max_depth=1", "TOpts(x)", `TOpts{mode="abc}`, `TOpts{mode="a\"b"}`,
		"canonicalize,lower,build", "Normalize,seq(FoldConstant,DeadCodeElimination),VMShapeLower{emit_err_ctx=false}",
	} {
		f.Add(seed)
	}
	f.Fuzz(func(t *testing.T, text string) {
		type result struct {
			steps Steps
			errs  int
			col   int
		}
		done := make(chan result, 1)
		go func() {
			steps, errs := ParsePipeline("p", text)
			r := result{steps: steps, errs: len(errs)}
			if len(errs) > 0 {
				r.col = errs[0].Span.Col
			}
			done <- r
		}()
		var r result
		select {
		case r = <-done:
		case <-time.After(5 * time.Second):
			t.Fatalf("ParsePipeline(%q) did not finish in 5s", text)
		}
		if r.errs > 0 {
			if r.steps != nil {
				t.Errorf("ParsePipeline(%q) returned steps and errors", text)
			}
			if r.col < 1 || r.col > len(text)+1 {
				t.Errorf("ParsePipeline(%q): error column %d outside 1..%d", text, r.col, len(text)+1)
			}
			return
		}
		if len(r.steps) == 0 {
			t.Fatalf("ParsePipeline(%q) succeeded with no steps", text)
		}
		printed := r.steps.String()
		again, errs := ParsePipeline("p", printed)
		if errs != nil {
			t.Fatalf("%q printed as %q, which does not parse: %v", text, printed, errs)
		}
		if got := again.String(); got != printed {
			t.Fatalf("%q printed as %q, re-parsed and printed as %q", text, printed, got)
		}
		if !sameSteps(r.steps, again) {
			t.Fatalf("%q printed as %q re-parses to different steps", text, printed)
		}
	})
}

// sameSteps compares names, options and nesting (not columns, which move
// when whitespace is dropped).
func sameSteps(a, b Steps) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		x, y := a[i], b[i]
		if x.Name != y.Name || x.IsSeq != y.IsSeq || len(x.Options) != len(y.Options) {
			return false
		}
		for j := range x.Options {
			if x.Options[j].Name != y.Options[j].Name || x.Options[j].Value != y.Options[j].Value {
				return false
			}
		}
		if !sameSteps(x.Children, y.Children) {
			return false
		}
	}
	return true
}
