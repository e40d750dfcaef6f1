package passes

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
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
		"seq(seq(TNoop),TMark)", "fixpoint(TNoop,seq(TMark)),fixpoint(TO1)",
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
			require.Failf(t, "timeout", "ParsePipeline(%q) did not finish in 5s", text)
		}
		if r.errs > 0 {
			assert.Nil(t, r.steps, "ParsePipeline(%q) returned steps and errors", text)
			assert.GreaterOrEqual(t, r.col, 1, "ParsePipeline(%q): error column", text)
			assert.LessOrEqual(t, r.col, len(text)+1, "ParsePipeline(%q): error column", text)
			return
		}
		require.NotEmpty(t, r.steps, "ParsePipeline(%q) succeeded with no steps", text)
		printed := r.steps.String()
		again, errs := ParsePipeline("p", printed)
		require.Nil(t, errs, "%q printed as %q, which does not parse", text, printed)
		require.Equal(t, printed, again.String(), "%q printed as %q, re-parsed and printed differently", text, printed)
		require.True(t, sameSteps(r.steps, again), "%q printed as %q re-parses to different steps", text, printed)
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
