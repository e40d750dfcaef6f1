package phase

import (
	"testing"

	"github.com/stretchr/testify/assert"

	"github.com/phasec/phasec/ir"
)

func TestInvariantsGrow(t *testing.T) {
	prev := Set(0)
	for _, p := range Phases() {
		inv := p.Invariants()
		assert.True(t, inv.Contains(prev), "%v drops invariants of the phase before it: %v not in %v", p, prev, inv)
		assert.True(t, inv.Has(WellFormed), "%v does not require WellFormed", p)
		prev = inv
	}
	assert.True(t, Optimize.Invariants().Contains(Ingest.Invariants()) && Ingest.Invariants().Contains(Optimize.Invariants()),
		"optimize must hold exactly ingest's invariants")
}

func TestParseAndRecord(t *testing.T) {
	for _, p := range Phases() {
		q, err := Parse(p.String())
		if assert.NoError(t, err, "Parse(%q)", p.String()) {
			assert.Equal(t, p, q, "Parse(%q)", p.String())
		}
		got, err := Recorded(Record(ir.NewModule(), p))
		if assert.NoError(t, err, "Recorded(Record(%v))", p) {
			assert.Equal(t, p, got, "Recorded(Record(%v))", p)
		}
	}
	_, err := Parse("none")
	assert.Error(t, err, `Parse("none") must fail: none is not a phase a module can claim`)
	_, err = Parse("lowered")
	assert.Error(t, err, `Parse("lowered") must fail`)
	bad := ir.NewModule()
	bad.Attrs = ir.Attrs{ir.AttrPhase: int64(3)}
	_, err = Recorded(bad)
	assert.Error(t, err, "a non-string phase attribute must be an error")
	got, _ := Recorded(Record(Record(ir.NewModule(), Lower), None))
	assert.Equal(t, None, got, "Record(None) kept a phase")
}

func TestPropertyNames(t *testing.T) {
	for _, p := range Properties() {
		q, ok := ParseProperty(p.String())
		if assert.True(t, ok, "ParseProperty(%q)", p.String()) {
			assert.Equal(t, p, q, "ParseProperty(%q)", p.String())
		}
	}
	s := Of(NoDataflow, Normalized)
	assert.Equal(t, "{Normalized, NoDataflow}", s.String(), "set formatting")
	assert.Equal(t, 2, s.Len(), "set length")
}

func TestIntroducedUptoSupported(t *testing.T) {
	for _, p := range Properties() {
		q := p.Introduced()
		assert.True(t, q.Invariants().Has(p), "%v introduced by %v, which does not hold it", p, q)
		if q > Ingest {
			assert.False(t, (q - 1).Invariants().Has(p), "%v introduced by %v, but the phase before holds it", p, q)
		}
	}
	assert.Equal(t, Lower.Invariants(), Upto(Lower), "Upto(Lower)")
	assert.Equal(t, Of(Properties()...), Upto(Build), "Upto(Build)")
	tests := []struct {
		p     Phase
		props Set
		want  Phase
	}{
		{Build, Build.Invariants(), Build},
		{Build, Lower.Invariants(), Lower},
		{Build, Ingest.Invariants(), Optimize},
		{Lower, Build.Invariants(), Lower}, // never promotes
		{Ingest, Of(WellFormed), None},
		{None, Build.Invariants(), None},
	}
	for _, tt := range tests {
		assert.Equal(t, tt.want, Supported(tt.p, tt.props), "Supported(%v, %v)", tt.p, tt.props)
	}
}
