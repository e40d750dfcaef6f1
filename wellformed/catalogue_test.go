package wellformed

import (
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/phasec/phasec/diag"
	"github.com/phasec/phasec/phase"
)

var update = flag.Bool("update", false, "rewrite golden files")

// TestCatalogueGolden pins every code to its property and title: codes are
// stable, so a change here must be deliberate (run with -update).
func TestCatalogueGolden(t *testing.T) {
	var b strings.Builder
	for _, r := range Rules() {
		fmt.Fprintf(&b, "%s %-8s %-20s %s\n", r.Code, r.Severity, r.Property, r.Title)
	}
	golden := filepath.Join("testdata", "rules.golden")
	if *update {
		if err := os.WriteFile(golden, []byte(b.String()), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want, err := os.ReadFile(golden)
	if err != nil {
		t.Fatal(err)
	}
	if got := b.String(); got != string(want) {
		t.Errorf("rule catalogue changed; codes are stable (rerun with -update if intended):\n--- got\n%s--- want\n%s", got, want)
	}
}

func TestCatalogueWellFormed(t *testing.T) {
	seen := map[diag.Code]bool{}
	for i, r := range Rules() {
		if want := diag.Code(fmt.Sprintf("WF%03d", i+1)); r.Code != want {
			t.Errorf("rule %d has code %q, want %q (codes are dense and in order)", i, r.Code, want)
		}
		if seen[r.Code] {
			t.Errorf("duplicate code %s", r.Code)
		}
		seen[r.Code] = true
		if r.Title == "" || r.Hint == "" || r.Family == "" {
			t.Errorf("%s lacks a title, hint or family", r.Code)
		}
		if !r.Structural() && !strings.Contains(r.Hint, "run ") {
			// Phase rules name the pass that establishes them, except
			// PrimFuncsViaCallTIR, which no pass establishes.
			if r.Property != phase.PrimFuncsViaCallTIR {
				t.Errorf("%s hint %q names no pass", r.Code, r.Hint)
			}
		}
		if got, ok := LookupRule(r.Code); !ok || got.Code != r.Code {
			t.Errorf("LookupRule(%s) = %v, %v", r.Code, got, ok)
		}
		// The registry of codes describes the rule by its title.
		if c, ok := diag.LookupCode(r.Code); !ok || c.Title != r.Title || c.Family.Prefix != "WF" {
			t.Errorf("diag.LookupCode(%s) = %+v, %v; want the rule's title in family WF", r.Code, c, ok)
		}
	}
	for _, p := range phase.Properties() {
		if len(RulesFor(p)) == 0 {
			t.Errorf("property %v has no rule", p)
		}
	}
}

// TestHintsNameTheBarrier checks that a phase rule's hint names the barrier
// of the first phase whose invariants include the rule's property.
func TestHintsNameTheBarrier(t *testing.T) {
	barrier := map[phase.Phase]string{phase.Ingest: "canonicalize barrier", phase.Lower: "lower barrier", phase.Build: "build barrier"}
	for _, r := range Rules() {
		if r.Structural() || r.Property == phase.PrimFuncsViaCallTIR {
			continue
		}
		for _, p := range phase.Phases() {
			if p.Invariants().Has(r.Property) {
				if !strings.Contains(r.Hint, barrier[p]) {
					t.Errorf("%s (%v, first required in %v): hint %q does not name the %s", r.Code, r.Property, p, r.Hint, barrier[p])
				}
				break
			}
		}
	}
}
