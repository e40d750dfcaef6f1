package passes

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/phasec/phasec/diag"
	"github.com/phasec/phasec/ir"
	"github.com/phasec/phasec/phase"
)

func checkText(t *testing.T, pc *PassContext, text string, ph phase.Phase, props phase.Set) diag.List {
	t.Helper()
	p, errs := parseAndBuild("--passes", text)
	require.Nil(t, errs)
	return Check(p, pc, ph, props)
}

func TestCheckMisorderedPipeline(t *testing.T) {
	ingest := phase.Ingest.Invariants()
	// The pass needing NoDataflow comes before the one establishing it.
	errs := checkText(t, NewPassContext(), "TNoop,TNeedsNoDataflow,TToNonDataflow", phase.Ingest, ingest)
	require.Len(t, errs, 1, "want one error")
	d := errs[0]
	for _, want := range []string{"pass TNeedsNoDataflow needs {NoDataflow}", "missing {NoDataflow}", "(step 2)",
		"would get {WellFormed, Normalized, NoNestedFunctions, PrimFuncsViaCallTIR, NoPrimitiveFunctions, NoOffloadGroups}"} {
		assert.Contains(t, d.Msg, want, "message")
	}
	assert.Equal(t, "--passes:1:7", d.Span.String(), "diagnostic span")
	assert.Equal(t, diag.Error, d.Severity, "diagnostic severity")
	for _, want := range []string{"provided by", "TToNonDataflow {NoDataflow}", "TLowerBarrier phase lower {NoDataflow}"} {
		assert.Contains(t, d.Hint, want, "hint")
	}
	// In the right order it is clean, at every opt level.
	assert.Empty(t, checkText(t, NewPassContext(), "TNoop,TToNonDataflow,TNeedsNoDataflow", phase.Ingest, ingest), "correct order rejected")
	// Invalidation is tracked.
	errs = checkText(t, NewPassContext(), "TToNonDataflow,TAddsDataflow,TNeedsNoDataflow", phase.Ingest, ingest)
	if assert.Len(t, errs, 1, "invalidated property not caught") {
		assert.Contains(t, errs[0].Msg, "(step 3)", "invalidated property not caught")
	}
}

func TestCheckPrecedes(t *testing.T) {
	ingest := phase.Ingest.Invariants()
	errs := checkText(t, NewPassContext(), "TNoop,TToNonDataflow,TPrecedesNoDataflow", phase.Ingest, ingest)
	require.Len(t, errs, 1, "a pass after the property it precedes")
	assert.Equal(t, codeTooLate, errs[0].Code, "code")
	for _, want := range []string{"pass TPrecedesNoDataflow must run before NoDataflow holds (it rewrites dataflow blocks)",
		"TToNonDataflow establishes it earlier in the pipeline", "(step 3)"} {
		assert.Contains(t, errs[0].Msg, want, "message")
	}
	assert.Contains(t, errs[0].Hint, "move TPrecedesNoDataflow before the step that establishes NoDataflow", "hint")
	assert.Equal(t, "--passes:1:22", errs[0].Span.String(), "span")
	// Before the establishing step, or once another pass broke the property again, it is clean.
	assert.Empty(t, checkText(t, NewPassContext(), "TPrecedesNoDataflow,TToNonDataflow", phase.Ingest, ingest), "right order rejected")
	assert.Empty(t, checkText(t, NewPassContext(), "TToNonDataflow,TAddsDataflow,TPrecedesNoDataflow", phase.Ingest, ingest),
		"property broken again, still rejected")
	// A property that held of the input says so.
	errs = checkText(t, NewPassContext(), "TPrecedesNoDataflow", phase.Lower, phase.Lower.Invariants())
	require.Len(t, errs, 1, "input already past the property")
	assert.Contains(t, errs[0].Msg, "it holds of the input module", "message")
	// A contract that both requires and precedes a property, or gives no reason, is rejected.
	assert.Panics(t, func() {
		Define(Info{Name: "TBad", Doc: "contradicts itself", Requires: needsNoDataflow,
			Precedes: map[phase.Property]string{phase.NoDataflow: "x"}}, Module(noop))
	})
	assert.Panics(t, func() {
		Define(Info{Name: "TBad2", Doc: "no reason", Precedes: map[phase.Property]string{phase.NoDataflow: ""}}, Module(noop))
	})
}

func TestCheckPhase(t *testing.T) {
	errs := checkText(t, NewPassContext(), "TAcceptsLower", phase.Optimize, phase.Optimize.Invariants())
	if assert.NotEmpty(t, errs, "phase mismatch") {
		assert.Contains(t, errs[0].Msg, "pass TAcceptsLower accepts phase lower but would get a module in phase optimize", "phase mismatch")
		assert.Contains(t, errs[0].Hint, "TLowerBarrier phase lower", "phase mismatch")
	}
	assert.Empty(t, checkText(t, NewPassContext(), "TLowerBarrier,TAcceptsLower", phase.Optimize, phase.Optimize.Invariants()),
		"barrier then lower pass rejected")
	// A module with no recorded phase is judged on its properties.
	assert.Empty(t, checkText(t, NewPassContext(), "TAcceptsLower", phase.None, phase.Lower.Invariants()),
		"unphased module with lower properties rejected")
	errs = checkText(t, NewPassContext(), "TAcceptsLower", phase.None, phase.Optimize.Invariants())
	if assert.Len(t, errs, 1, "unphased module lacking lower properties") {
		assert.Contains(t, errs[0].Msg, "missing {Legalized, NoDataflow, PurityRelaxed, NoCallTIR, ExplicitMemory}",
			"unphased module lacking lower properties")
	}
}

func TestCheckOtherOptLevels(t *testing.T) {
	// NoDataflow is established only by an opt-level-3 pass: fine at O3,
	// broken at O0..O2.
	pc := NewPassContext()
	pc.OptLevel = 3
	errs := checkText(t, pc, "TO3ToNonDataflow,TNeedsNoDataflow", phase.Ingest, phase.Ingest.Invariants())
	require.False(t, errs.HasErrors(), "O3 should pass: %v", errs)
	require.Len(t, errs, 3, "want warnings for O0, O1, O2")
	for i, d := range errs {
		assert.Equal(t, diag.Warning, d.Severity, "warning %d: %v", i, d)
		assert.True(t, strings.HasPrefix(d.Msg, "at opt level "+string(rune('0'+i))+": pass TNeedsNoDataflow needs {NoDataflow}"), "warning %d: %v", i, d)
		assert.Contains(t, d.Hint, "TO3ToNonDataflow earlier in the pipeline would provide it but does not run (opt level 3 > "+string(rune('0'+i))+")", "warning %d", i)
	}
	// Disabling the provider is an error under the actual configuration.
	pc.Disabled = []string{"TO3ToNonDataflow"}
	errs = checkText(t, pc, "TO3ToNonDataflow,TNeedsNoDataflow", phase.Ingest, phase.Ingest.Invariants())
	if assert.True(t, errs.HasErrors(), "disabled provider: %v", errs) {
		assert.Contains(t, errs[0].Hint, "does not run (disabled)", "disabled provider")
	}
}

func TestCheckPrerequisites(t *testing.T) {
	errs := checkText(t, NewPassContext(), "TPrereq", phase.Ingest, phase.Ingest.Invariants())
	if assert.Len(t, errs, 1, "missing prerequisite") {
		assert.Contains(t, errs[0].Msg, "pass TPrereq requires TMark to have run before it, but it does not run earlier in the pipeline", "missing prerequisite")
	}
	pc := NewPassContext()
	pc.Disabled = []string{"TMark"}
	errs = checkText(t, pc, "TMark,TPrereq", phase.Ingest, phase.Ingest.Invariants())
	if assert.NotEmpty(t, errs, "disabled prerequisite") {
		assert.Contains(t, errs[0].Msg, "it does not run here (disabled)", "disabled prerequisite")
	}
	assert.Empty(t, checkText(t, NewPassContext(), "TMark,TPrereq", phase.Ingest, phase.Ingest.Invariants()), "satisfied prerequisite rejected")
	pc = NewPassContext()
	pc.RunPrerequisites = true
	assert.Empty(t, checkText(t, pc, "TPrereq", phase.Ingest, phase.Ingest.Invariants()), "auto prerequisites rejected")
}

// The static check runs before any IR is touched: a misordered pipeline
// never calls a pass.
func TestRunRejectsBeforeTouchingIR(t *testing.T) {
	p, _ := parseAndBuild("--passes", "TMark,TNeedsNoDataflow")
	called := false
	pc := NewPassContext()
	pc.Trace = func(*ir.Module, *Info, bool) { called = true }
	_, err := pc.Run(t.Context(), p, phase.Record(genModule(1, 1), phase.Ingest))
	assert.ErrorContains(t, err, "needs {NoDataflow}")
	assert.False(t, called, "pass called")
}

func TestDefineRejectsBadDeclarations(t *testing.T) {
	for _, tc := range []struct {
		info Info
		want string
	}{
		{Info{Name: "9x", Doc: "d"}, `pass name "9x" is not identifier-like`},
		{Info{Name: "Y"}, "pass Y: Doc must be one non-empty line"},
		{Info{Name: "Z", Doc: "d", Requires: map[phase.Property]string{phase.NoDataflow: ""}},
			"pass Z: requirement NoDataflow needs a one-line reason (why the pass needs it)"},
		{Info{Name: "W", Doc: "d", Options: []Option{{Name: "n", Type: Int, Default: "x", Doc: "d"}}},
			"pass W: default of option n is not a int"},
		{Info{Name: "V", Doc: "d", Prerequisites: []*Pass{nil}}, "pass V: prerequisite 0 is nil"},
	} {
		require.PanicsWithValue(t, "passes.Define: "+tc.want, func() { Define(tc.info, Module(noop)) }, tc.info.Name)
	}
	require.Panics(t, func() { Define(Info{Name: "NoImpl", Doc: "d"}, Impl{}) })
}

func TestRegistry(t *testing.T) {
	a := Define(Info{Name: "A", Doc: "d"}, Module(noop))
	b := Define(Info{Name: "B", Doc: "d", Prerequisites: []*Pass{a}}, Module(noop))
	reg := NewRegistry(b, b)
	assert.Equal(t, []string{"A", "B"}, reg.Names(), "prerequisites join the registry")
	got, ok := reg.Lookup("A")
	require.True(t, ok)
	assert.Same(t, a, got)
	assert.PanicsWithValue(t, "passes.Registry: two passes named A", func() {
		reg.With(Define(Info{Name: "A", Doc: "another"}, Module(noop)))
	})
	assert.Equal(t, []string{"A", "B"}, reg.Names(), "With leaves the registry unchanged")
	assert.EqualError(t, reg.UnknownPass("Bx"), `unknown pass "Bx" (did you mean "B"?)`)
	assert.NoError(t, reg.UnknownPass("B"))
}

// A hint names only passes that can run on the module as it is, never the
// failing pass; when none provides the missing property from here, it
// names the shortest chain that does.
func TestHintsAreNotCircular(t *testing.T) {
	ingest := phase.Ingest.Invariants()
	errs := checkText(t, NewPassContext(), "TNeedsBuiltins", phase.Ingest, ingest)
	require.Len(t, errs, 1, "want one error")
	hint := errs[0].Hint
	// TChainStep establishes BuiltinsLowered but needs NoDataflow, which
	// the module lacks: it is not offered alone.
	assert.NotContains(t, hint, "provided by", "hint offers a pass that cannot run here")
	assert.NotContains(t, hint, "TNeedsBuiltins", "hint offers the failing pass")
	assert.Contains(t, hint, "run TLowerBarrier,TChainStep first")
	// With NoDataflow present, TChainStep can run and is named alone.
	errs = checkText(t, NewPassContext(), "TNeedsBuiltins", phase.None, ingest.With(phase.NoDataflow))
	if assert.Len(t, errs, 1, "hint with NoDataflow") {
		assert.Equal(t, "provided by TChainStep {BuiltinsLowered}", errs[0].Hint, "hint with NoDataflow")
	}
}
