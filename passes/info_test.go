package passes

import (
	"strings"
	"testing"

	"github.com/phasec/phasec/diag"
	"github.com/phasec/phasec/phase"
)

func TestHorizon(t *testing.T) {
	tests := []struct {
		name string
		in   Info
		want phase.Phase
	}{
		{"names nothing", Info{}, phase.Ingest},
		{"establishes an ingest property", Info{Establishes: phase.Of(phase.Normalized)}, phase.Ingest},
		{"requires a lower property", Info{Requires: because(phase.Normalized, phase.NoDataflow)}, phase.Lower},
		{"establishes a build property", Info{Establishes: phase.Of(phase.GlobalSymbols)}, phase.Build},
		{"accepts build", Info{Accepts: []phase.Phase{phase.Lower, phase.Build}}, phase.Build},
		{"leaves lower", Info{Leaves: phase.Lower}, phase.Lower},
		// Invalidating never extends the horizon: it is never a claim.
		{"invalidates a build property", Info{Invalidates: phase.Of(phase.GlobalSymbols)}, phase.Ingest},
		{"preserves a build property", Info{Preserves: phase.Of(phase.BuiltinsLowered)}, phase.Ingest},
	}
	for _, tt := range tests {
		if got := tt.in.Horizon(); got != tt.want {
			t.Errorf("%s: horizon %v, want %v", tt.name, got, tt.want)
		}
	}
}

func TestApply(t *testing.T) {
	build := phase.Build.Invariants()
	ingest := phase.Ingest.Invariants()
	tests := []struct {
		name      string
		in        Info
		ph        phase.Phase
		props     phase.Set
		wantPhase phase.Phase
		wantProps phase.Set
	}{
		{"an ingest-horizon pass drops later properties and demotes the claim",
			Info{}, phase.Build, build, phase.Optimize, ingest},
		{"a lower-horizon pass keeps lower's properties",
			Info{Requires: because(phase.NoDataflow)}, phase.Build, build, phase.Lower, phase.Lower.Invariants()},
		{"a build-horizon pass keeps everything",
			Info{Establishes: phase.Of(phase.GlobalSymbols)}, phase.Build, build, phase.Build, build},
		{"invalidated properties go, established ones come",
			Info{Requires: because(phase.NoDataflow), Invalidates: phase.Of(phase.NoCallTIR), Establishes: phase.Of(phase.PurityRelaxed)},
			phase.Lower, phase.Lower.Invariants().Minus(phase.Of(phase.PurityRelaxed)), phase.Optimize,
			phase.Lower.Invariants().Minus(phase.Of(phase.NoCallTIR))},
		{"Preserves keeps a property beyond the horizon",
			Info{Preserves: phase.Of(phase.BuiltinsLowered)}, phase.None, ingest.With(phase.BuiltinsLowered).With(phase.ShapesLowered),
			phase.None, ingest.With(phase.BuiltinsLowered)},
		{"Leaves adds the phase's invariants",
			Info{Leaves: phase.Lower}, phase.Ingest, ingest.With(phase.GlobalSymbols), phase.Lower, phase.Lower.Invariants()},
		{"a module without a phase stays without one",
			Info{Requires: because(phase.NoDataflow)}, phase.None, phase.Lower.Invariants(), phase.None, phase.Lower.Invariants()},
	}
	for _, tt := range tests {
		ph, props := tt.in.Apply(tt.ph, tt.props)
		if ph != tt.wantPhase || props != tt.wantProps {
			t.Errorf("%s: Apply = %v %v, want %v %v", tt.name, ph, props, tt.wantPhase, tt.wantProps)
		}
	}
}

func TestValidateRejectsRedundantPreserves(t *testing.T) {
	in := Info{Name: "P", Doc: "d", Requires: because(phase.NoDataflow), Preserves: phase.Of(phase.NoCallTIR)}
	if err := in.Validate(); err == nil || !strings.Contains(err.Error(), "within its horizon") {
		t.Errorf("Preserves within the horizon: %v", err)
	}
	in = Info{Name: "P", Doc: "d", Preserves: phase.Of(phase.BuiltinsLowered), Invalidates: phase.Of(phase.BuiltinsLowered)}
	if err := in.Validate(); err == nil || !strings.Contains(err.Error(), "preserves and invalidates") {
		t.Errorf("Preserves and Invalidates: %v", err)
	}
	in = Info{Name: "P", Doc: "d", Preserves: phase.Of(phase.BuiltinsLowered)}
	if err := in.Validate(); err != nil {
		t.Errorf("Preserves beyond the horizon: %v", err)
	}
}

// A recorded phase is a claim: StartState verifies it and refuses a false
// one with the violations; a true one starts from what the content has.
func TestStartStateVerifiesTheRecordedPhase(t *testing.T) {
	ph, props, err := StartState(phase.Record(genModule(1, 2), phase.Optimize))
	if err != nil || ph != phase.Optimize || !props.Contains(phase.Optimize.Invariants()) {
		t.Errorf("true optimize claim: %v %v %v", ph, props, err)
	}
	_, _, err = StartState(phase.Record(genModule(1, 2), phase.Lower))
	l, ok := err.(diag.List)
	if !ok || len(l) < 2 || l[0].Code != CodeFalseClaim ||
		!strings.Contains(l[0].Msg, "records phase lower but does not satisfy it: missing {NoDataflow, PurityRelaxed}") {
		t.Fatalf("false lower claim: %v", err)
	}
	for _, d := range l[1:] {
		if d.Code != "WF030" && d.Code != "WF031" && d.Code != "WF032" {
			t.Errorf("unexpected violation %v", d)
		}
	}
	// Run refuses it before any pass.
	if _, err := NewPassContext().Run(t.Context(), testPass("TNoop"), phase.Record(genModule(1, 2), phase.Lower)); err == nil {
		t.Error("Run accepted a false claim")
	}
}
