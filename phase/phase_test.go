package phase

import (
	"testing"

	"github.com/phasec/phasec/ir"
)

func TestInvariantsGrow(t *testing.T) {
	prev := Set(0)
	for _, p := range Phases() {
		inv := p.Invariants()
		if !inv.Contains(prev) {
			t.Errorf("%v drops invariants of the phase before it: %v not in %v", p, prev, inv)
		}
		if !inv.Has(WellFormed) {
			t.Errorf("%v does not require WellFormed", p)
		}
		prev = inv
	}
	if !Optimize.Invariants().Contains(Ingest.Invariants()) || !Ingest.Invariants().Contains(Optimize.Invariants()) {
		t.Error("optimize must hold exactly ingest's invariants")
	}
}

func TestParseAndRecord(t *testing.T) {
	for _, p := range Phases() {
		q, err := Parse(p.String())
		if err != nil || q != p {
			t.Errorf("Parse(%q) = %v, %v", p.String(), q, err)
		}
		m := Record(ir.NewModule(), p)
		if got, err := Recorded(m); err != nil || got != p {
			t.Errorf("Recorded(Record(%v)) = %v, %v", p, got, err)
		}
	}
	if _, err := Parse("none"); err == nil {
		t.Error(`Parse("none") must fail: none is not a phase a module can claim`)
	}
	if _, err := Parse("lowered"); err == nil {
		t.Error(`Parse("lowered") must fail`)
	}
	bad := ir.NewModule()
	bad.Attrs = ir.Attrs{ir.AttrPhase: int64(3)}
	if _, err := Recorded(bad); err == nil {
		t.Error("a non-string phase attribute must be an error")
	}
	if got, _ := Recorded(Record(Record(ir.NewModule(), Lower), None)); got != None {
		t.Errorf("Record(None) kept phase %v", got)
	}
}

func TestPropertyNames(t *testing.T) {
	for _, p := range Properties() {
		q, ok := ParseProperty(p.String())
		if !ok || q != p {
			t.Errorf("ParseProperty(%q) = %v, %v", p.String(), q, ok)
		}
	}
	s := Of(NoDataflow, Normalized)
	if s.String() != "{Normalized, NoDataflow}" || s.Len() != 2 {
		t.Errorf("set formatting %q len %d", s.String(), s.Len())
	}
}

func TestIntroducedUptoSupported(t *testing.T) {
	for _, p := range Properties() {
		q := p.Introduced()
		if !q.Invariants().Has(p) || q > Ingest && (q-1).Invariants().Has(p) {
			t.Errorf("%v introduced by %v", p, q)
		}
	}
	if got := Upto(Lower); got != Lower.Invariants() {
		t.Errorf("Upto(Lower) = %v", got)
	}
	if got := Upto(Build); got != Of(Properties()...) {
		t.Errorf("Upto(Build) = %v", got)
	}
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
		if got := Supported(tt.p, tt.props); got != tt.want {
			t.Errorf("Supported(%v, %v) = %v, want %v", tt.p, tt.props, got, tt.want)
		}
	}
}
