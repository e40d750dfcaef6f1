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
	if errs != nil {
		t.Fatal(errs)
	}
	return Check(p, pc, ph, props)
}

func TestCheckMisorderedPipeline(t *testing.T) {
	ingest := phase.Ingest.Invariants()
	// The pass needing NoDataflow comes before the one establishing it.
	errs := checkText(t, NewPassContext(), "TNoop,TNeedsNoDataflow,TToNonDataflow", phase.Ingest, ingest)
	if len(errs) != 1 {
		t.Fatalf("want one error, got %v", errs)
	}
	d := errs[0]
	for _, want := range []string{"pass TNeedsNoDataflow needs {NoDataflow}", "missing {NoDataflow}", "(step 2)",
		"would get {WellFormed, Normalized, NoNestedFunctions, PrimFuncsViaCallTIR}"} {
		if !strings.Contains(d.Msg, want) {
			t.Errorf("message %q lacks %q", d.Msg, want)
		}
	}
	if d.Span.String() != "--passes:1:7" || d.Severity != diag.Error {
		t.Errorf("diagnostic at %v severity %v", d.Span, d.Severity)
	}
	for _, want := range []string{"provided by", "TToNonDataflow {NoDataflow}", "TLowerBarrier phase lower {NoDataflow}"} {
		if !strings.Contains(d.Hint, want) {
			t.Errorf("hint %q lacks %q", d.Hint, want)
		}
	}
	// In the right order it is clean, at every opt level.
	if errs := checkText(t, NewPassContext(), "TNoop,TToNonDataflow,TNeedsNoDataflow", phase.Ingest, ingest); len(errs) != 0 {
		t.Errorf("correct order rejected: %v", errs)
	}
	// Invalidation is tracked.
	errs = checkText(t, NewPassContext(), "TToNonDataflow,TAddsDataflow,TNeedsNoDataflow", phase.Ingest, ingest)
	if len(errs) != 1 || !strings.Contains(errs[0].Msg, "(step 3)") {
		t.Errorf("invalidated property not caught: %v", errs)
	}
}

func TestCheckPhase(t *testing.T) {
	errs := checkText(t, NewPassContext(), "TAcceptsLower", phase.Optimize, phase.Optimize.Invariants())
	if len(errs) == 0 || !strings.Contains(errs[0].Msg, "pass TAcceptsLower accepts phase lower but would get a module in phase optimize") ||
		!strings.Contains(errs[0].Hint, "TLowerBarrier phase lower") {
		t.Errorf("phase mismatch: %v", errs)
	}
	if errs := checkText(t, NewPassContext(), "TLowerBarrier,TAcceptsLower", phase.Optimize, phase.Optimize.Invariants()); len(errs) != 0 {
		t.Errorf("barrier then lower pass rejected: %v", errs)
	}
	// A module with no recorded phase is judged on its properties.
	if errs := checkText(t, NewPassContext(), "TAcceptsLower", phase.None, phase.Lower.Invariants()); len(errs) != 0 {
		t.Errorf("unphased module with lower properties rejected: %v", errs)
	}
	errs = checkText(t, NewPassContext(), "TAcceptsLower", phase.None, phase.Optimize.Invariants())
	if len(errs) != 1 || !strings.Contains(errs[0].Msg, "missing {Legalized, NoDataflow, PurityRelaxed, NoCallTIR, ExplicitMemory}") {
		t.Errorf("unphased module lacking lower properties: %v", errs)
	}
}

func TestCheckOtherOptLevels(t *testing.T) {
	// NoDataflow is established only by an opt-level-3 pass: fine at O3,
	// broken at O0..O2.
	pc := NewPassContext()
	pc.OptLevel = 3
	errs := checkText(t, pc, "TO3ToNonDataflow,TNeedsNoDataflow", phase.Ingest, phase.Ingest.Invariants())
	if errs.HasErrors() {
		t.Fatalf("O3 should pass: %v", errs)
	}
	if len(errs) != 3 {
		t.Fatalf("want warnings for O0, O1, O2, got %v", errs)
	}
	for i, d := range errs {
		if d.Severity != diag.Warning || !strings.HasPrefix(d.Msg, "at opt level "+string(rune('0'+i))+": pass TNeedsNoDataflow needs {NoDataflow}") ||
			!strings.Contains(d.Hint, "TO3ToNonDataflow earlier in the pipeline would provide it but does not run (opt level 3 > "+string(rune('0'+i))+")") {
			t.Errorf("warning %d: %v", i, d)
		}
	}
	// Disabling the provider is an error under the actual configuration.
	pc.Disabled = []string{"TO3ToNonDataflow"}
	errs = checkText(t, pc, "TO3ToNonDataflow,TNeedsNoDataflow", phase.Ingest, phase.Ingest.Invariants())
	if !errs.HasErrors() || !strings.Contains(errs[0].Hint, "does not run (disabled)") {
		t.Errorf("disabled provider: %v", errs)
	}
}

func TestCheckPrerequisites(t *testing.T) {
	errs := checkText(t, NewPassContext(), "TPrereq", phase.Ingest, phase.Ingest.Invariants())
	if len(errs) != 1 || !strings.Contains(errs[0].Msg, "pass TPrereq requires TMark to have run before it, but it does not run earlier in the pipeline") {
		t.Errorf("missing prerequisite: %v", errs)
	}
	pc := NewPassContext()
	pc.Disabled = []string{"TMark"}
	errs = checkText(t, pc, "TMark,TPrereq", phase.Ingest, phase.Ingest.Invariants())
	if len(errs) == 0 || !strings.Contains(errs[0].Msg, "it does not run here (disabled)") {
		t.Errorf("disabled prerequisite: %v", errs)
	}
	if errs := checkText(t, NewPassContext(), "TMark,TPrereq", phase.Ingest, phase.Ingest.Invariants()); len(errs) != 0 {
		t.Errorf("satisfied prerequisite rejected: %v", errs)
	}
	pc = NewPassContext()
	pc.RunPrerequisites = true
	if errs := checkText(t, pc, "TPrereq", phase.Ingest, phase.Ingest.Invariants()); len(errs) != 0 {
		t.Errorf("auto prerequisites rejected: %v", errs)
	}
}

// The static check runs before any IR is touched: a misordered pipeline
// never calls a pass.
func TestRunRejectsBeforeTouchingIR(t *testing.T) {
	p, _ := parseAndBuild("--passes", "TMark,TNeedsNoDataflow")
	called := false
	pc := NewPassContext()
	pc.Trace = func(*ir.Module, *Info, bool) { called = true }
	_, err := pc.Run(t.Context(), p, phase.Record(genModule(1, 1), phase.Ingest))
	if err == nil || !strings.Contains(err.Error(), "needs {NoDataflow}") || called {
		t.Errorf("err %v, pass called %v", err, called)
	}
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
	if len(errs) != 1 {
		t.Fatalf("want one error, got %v", errs)
	}
	hint := errs[0].Hint
	// TChainStep establishes BuiltinsLowered but needs NoDataflow, which
	// the module lacks: it is not offered alone.
	if strings.Contains(hint, "provided by") || strings.Contains(hint, "TNeedsBuiltins") {
		t.Errorf("hint %q offers a pass that cannot run here, or the failing pass", hint)
	}
	if want := "run TLowerBarrier,TChainStep first"; !strings.Contains(hint, want) {
		t.Errorf("hint %q lacks %q", hint, want)
	}
	// With NoDataflow present, TChainStep can run and is named alone.
	errs = checkText(t, NewPassContext(), "TNeedsBuiltins", phase.None, ingest.With(phase.NoDataflow))
	if len(errs) != 1 || errs[0].Hint != "provided by TChainStep {BuiltinsLowered}" {
		t.Errorf("hint with NoDataflow: %v", errs)
	}
}
