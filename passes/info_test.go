package passes

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

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
		assert.Equal(t, tt.want, tt.in.Horizon(), "%s: horizon", tt.name)
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
		assert.Equal(t, tt.wantPhase, ph, "%s: Apply phase", tt.name)
		assert.Equal(t, tt.wantProps, props, "%s: Apply properties", tt.name)
	}
}

func TestValidateRejectsRedundantPreserves(t *testing.T) {
	in := Info{Name: "P", Doc: "d", Requires: because(phase.NoDataflow), Preserves: phase.Of(phase.NoCallTIR)}
	assert.ErrorContains(t, in.Validate(), "within its horizon", "Preserves within the horizon")
	in = Info{Name: "P", Doc: "d", Preserves: phase.Of(phase.BuiltinsLowered), Invalidates: phase.Of(phase.BuiltinsLowered)}
	assert.ErrorContains(t, in.Validate(), "preserves and invalidates", "Preserves and Invalidates")
	in = Info{Name: "P", Doc: "d", Preserves: phase.Of(phase.BuiltinsLowered)}
	assert.NoError(t, in.Validate(), "Preserves beyond the horizon")
}

// A recorded phase is a claim: StartState verifies it and refuses a false
// one with the violations; a true one starts from what the content has.
func TestStartStateVerifiesTheRecordedPhase(t *testing.T) {
	ph, props, err := StartState(phase.Record(genModule(1, 2), phase.Optimize))
	assert.NoError(t, err, "true optimize claim")
	assert.Equal(t, phase.Optimize, ph, "true optimize claim")
	assert.True(t, props.Contains(phase.Optimize.Invariants()), "true optimize claim: properties %v", props)
	_, _, err = StartState(phase.Record(genModule(1, 2), phase.Lower))
	l, ok := err.(diag.List)
	require.True(t, ok, "false lower claim: %v", err)
	require.GreaterOrEqual(t, len(l), 2, "false lower claim: %v", err)
	require.Equal(t, CodeFalseClaim, l[0].Code, "false lower claim: %v", err)
	require.Contains(t, l[0].Msg, "records phase lower but does not satisfy it: missing {NoDataflow, PurityRelaxed}", "false lower claim")
	for _, d := range l[1:] {
		assert.Contains(t, []diag.Code{"WF030", "WF031", "WF032"}, d.Code, "unexpected violation %v", d)
	}
	// Run refuses it before any pass.
	_, err = NewPassContext().Run(t.Context(), testPass("TNoop"), phase.Record(genModule(1, 2), phase.Lower))
	assert.Error(t, err, "Run accepted a false claim")
}
