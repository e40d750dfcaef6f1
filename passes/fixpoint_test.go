package passes

import (
	"context"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/phasec/phasec/diag"
	"github.com/phasec/phasec/ir"
	"github.com/phasec/phasec/phase"
)

// Fixpoint test passes: the module attribute "n" is their state.
var (
	// tCountDown decrements n until it is 0, then returns its input.
	tCountDown = modulePass(Info{Name: "TCountDown", Doc: "decrements attribute n down to 0"},
		func(_ *Env, mod *ir.Module) (*ir.Module, error) {
			n, _ := mod.Attrs.Int("n")
			if n <= 0 {
				return mod, nil
			}
			return withN(mod, n-1), nil
		})
	// tForever increments n: it never converges.
	tForever = modulePass(Info{Name: "TForever", Doc: "increments attribute n, always"},
		func(_ *Env, mod *ir.Module) (*ir.Module, error) {
			n, _ := mod.Attrs.Int("n")
			return withN(mod, n+1), nil
		})
	// tRebuild returns a new module equal to its input.
	tRebuild = modulePass(Info{Name: "TRebuild", Doc: "returns a structurally equal copy"},
		func(_ *Env, mod *ir.Module) (*ir.Module, error) { return mod.Clone(), nil })
	fixpointRegistry = testRegistry.With(tCountDown, tForever, tRebuild)
)

func withN(mod *ir.Module, n int64) *ir.Module {
	c := mod.Clone()
	c.Attrs = c.Attrs.With("n", n)
	return c
}

// runFixpoint runs pipeline text on a module with attribute n, returning
// the output, the passes run (with their depth), the warnings and the
// fixpoint's statistics.
func runFixpoint(t *testing.T, pc *PassContext, text string, n int64) (out *ir.Module, ran []string, warns diag.List, stats []Stat) {
	t.Helper()
	p, errs := fixpointRegistry.ParseAndBuild("--passes", text)
	require.Nil(t, errs)
	rec := &recordingInstrument{}
	pc.Instruments = append(pc.Instruments, rec)
	pc.Warn = func(d *diag.Diagnostic) { warns = append(warns, d) }
	out, err := pc.Run(context.Background(), p, withN(genModule(1, 2), n))
	require.NoError(t, err)
	return out, rec.ran, warns, rec.fixpointStats
}

// recordingInstrument records every executed pass (groups included) as
// "depth:name", and the statistics of fixpoints.
type recordingInstrument struct {
	BaseInstrument
	ran           []string
	fixpointStats []Stat
}

func (*recordingInstrument) Name() string { return "recording" }
func (r *recordingInstrument) BeforePass(ev *Event) error {
	r.ran = append(r.ran, strings.Repeat(" ", ev.Depth)+ev.Info.Name)
	return nil
}
func (r *recordingInstrument) AfterPass(ev *Event) error {
	if ev.Pass.IsFixpoint() {
		r.fixpointStats = append(r.fixpointStats, ev.Stats...)
	}
	return nil
}

func TestFixpointRunsUntilARoundChangesNothing(t *testing.T) {
	out, ran, warns, stats := runFixpoint(t, NewPassContext(), "TNoop,fixpoint(TCountDown,TNoop),TMark", 2)
	n, _ := out.Attrs.Int("n")
	assert.Equal(t, int64(0), n)
	assert.Empty(t, warns)
	// Two rounds that count down, a third that confirms; each round is a
	// group nested in the fixpoint, so instruments see every round's passes.
	assert.Equal(t, []string{
		"TNoop",
		"fixpoint",
		" round 1", "  TCountDown", "  TNoop",
		" round 2", "  TCountDown", "  TNoop",
		" round 3", "  TCountDown", "  TNoop",
		"TMark",
	}, ran)
	assert.Equal(t, []Stat{{Name: "rounds", Value: 3}}, stats)
}

func TestFixpointConvergesOnStructuralEquality(t *testing.T) {
	// TRebuild never returns its input pointer: the round is compared
	// structurally, so one round settles it.
	_, ran, warns, stats := runFixpoint(t, NewPassContext(), "fixpoint(TRebuild)", 0)
	assert.Empty(t, warns)
	assert.Equal(t, []string{"fixpoint", " round 1", "  TRebuild"}, ran)
	assert.Equal(t, []Stat{{Name: "rounds", Value: 1}}, stats)
}

func TestFixpointCapWarns(t *testing.T) {
	pc := NewPassContext()
	out, ran, warns, stats := runFixpoint(t, pc, "TNoop,fixpoint(TForever)", 0)
	n, _ := out.Attrs.Int("n")
	assert.Equal(t, int64(10), n, "the default cap is 10 rounds")
	assert.Len(t, ran, 1+1+2*10)
	assert.Equal(t, []Stat{{Name: "rounds", Value: 10}}, stats)
	require.Len(t, warns, 1)
	w := warns[0]
	assert.Equal(t, CodeFixpointCap, w.Code)
	assert.Equal(t, diag.Warning, w.Severity)
	assert.Equal(t, "--passes:1:7", w.Span.String(), "the warning points at the fixpoint")
	assert.Contains(t, w.Msg, "fixpoint(TForever) did not converge: round 10 still changed the module")
	assert.Contains(t, w.Hint, "--config "+FixpointMaxIterations+"=N")

	// The cap is a config key.
	pc = NewPassContext()
	pc.Config = map[string]any{FixpointMaxIterations: 3}
	out, _, warns, _ = runFixpoint(t, pc, "fixpoint(TForever)", 0)
	n, _ = out.Attrs.Int("n")
	assert.Equal(t, int64(3), n)
	assert.Len(t, warns, 1)

	pc = NewPassContext()
	pc.Config = map[string]any{FixpointMaxIterations: 0}
	assert.ErrorContains(t, pc.Validate(), "config "+FixpointMaxIterations+" wants at least 1 round, got 0")
}

func TestFixpointGatesItsChildren(t *testing.T) {
	pc := NewPassContext()
	pc.OptLevel = 0
	_, ran, _, _ := runFixpoint(t, pc, "fixpoint(TCountDown,TO1)", 1)
	assert.Equal(t, []string{"fixpoint", " round 1", "  TCountDown", " round 2", "  TCountDown"}, ran)
}

func TestFixpointBuiltInGoIsNotTransparent(t *testing.T) {
	// A Fixpoint run as the whole pipeline (no pipeline text) still runs
	// in rounds, and prints as pipeline text.
	p := Fixpoint(tCountDown, Sequential("", tNoop))
	assert.Equal(t, "fixpoint(TCountDown,seq(TNoop))", p.String())
	out, err := NewPassContext().Run(context.Background(), p, withN(genModule(1, 1), 3))
	require.NoError(t, err)
	n, _ := out.Attrs.Int("n")
	assert.Equal(t, int64(0), n)
}

func TestFixpointPrintsAsWritten(t *testing.T) {
	for _, text := range []string{
		"fixpoint(TNoop)",
		"TNoop,fixpoint(TCountDown,seq(TMark,TNoop)),TOpts{max_depth=3}",
		"fixpoint(fixpoint(TNoop),TOpts{mode=\"a,b\"})",
	} {
		steps, errs := ParsePipeline("p", text)
		require.Nil(t, errs, text)
		assert.Equal(t, text, steps.String())
		p, errs := fixpointRegistry.Build("p", steps)
		require.Nil(t, errs, text)
		assert.Equal(t, text, p.Children()[0].String()+strings.TrimPrefix(text, p.Children()[0].String()))
	}
	p, errs := fixpointRegistry.ParseAndBuild("p", "fixpoint( TNoop , TMark )")
	require.Nil(t, errs)
	assert.Equal(t, "fixpoint(TNoop,TMark)", p.Children()[0].String())
	assert.True(t, p.Children()[0].IsFixpoint())

	_, errs = ParsePipeline("p", "fixpoint(TNoop")
	require.Len(t, errs, 1)
	assert.Contains(t, errs[0].Error(), "p:1:15: error PIPE000: expected ',' or ')' in fixpoint(...), found end of pipeline")
	_, errs = fixpointRegistry.ParseAndBuild("p", "fixpoint(TNop)")
	require.Len(t, errs, 1)
	assert.Contains(t, errs[0].Error(), `p:1:10: error PIPE001: unknown pass "TNop" (did you mean "TNoop"?)`)
}

// TestFixpointCheckSimulatesLaterRounds: the static check treats a fixpoint
// as a seq run at least once, and also checks the later rounds, which start
// from what the previous round left: here round 2 starts without the
// NoDataflow that round 1's TAddsDataflow invalidated.
func TestFixpointCheckSimulatesLaterRounds(t *testing.T) {
	ingest := phase.Ingest.Invariants()
	check := func(text string) diag.List {
		p, errs := fixpointRegistry.ParseAndBuild("--passes", text)
		require.Nil(t, errs)
		return Check(p, NewPassContext(), phase.Ingest, ingest)
	}
	assert.Empty(t, check("TToNonDataflow,seq(TNeedsNoDataflow,TAddsDataflow)"), "as a seq, it runs once")
	errs := check("TToNonDataflow,fixpoint(TNeedsNoDataflow,TAddsDataflow)")
	require.Len(t, errs, 1)
	assert.Contains(t, errs[0].Msg, "pass TNeedsNoDataflow needs {NoDataflow}")
	assert.Contains(t, errs[0].Msg, "(step 2)", "later rounds are numbered as the first")
	assert.Equal(t, "--passes:1:25", errs[0].Span.String())

	// What follows the fixpoint gets what every round's end state has.
	assert.Empty(t, check("TToNonDataflow,fixpoint(TNeedsNoDataflow),TNeedsNoDataflow"))
	errs = check("TToNonDataflow,fixpoint(TAddsDataflow),TNeedsNoDataflow")
	require.Len(t, errs, 1)
	assert.Contains(t, errs[0].Msg, "(step 3)")
	// A fixpoint whose rounds establish a property passes it on.
	assert.Empty(t, check("fixpoint(TToNonDataflow),TNeedsNoDataflow"))
}
