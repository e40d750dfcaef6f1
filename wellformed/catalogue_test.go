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

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
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
		require.NoError(t, os.WriteFile(golden, []byte(b.String()), 0o644))
	}
	want, err := os.ReadFile(golden)
	require.NoError(t, err)
	assert.Equal(t, string(want), b.String(), "rule catalogue changed; codes are stable (rerun with -update if intended)")
}

func TestCatalogueWellFormed(t *testing.T) {
	seen := map[diag.Code]bool{}
	for i, r := range Rules() {
		assert.Equal(t, diag.Code(fmt.Sprintf("WF%03d", i+1)), r.Code, "rule %d code (codes are dense and in order)", i)
		assert.False(t, seen[r.Code], "duplicate code %s", r.Code)
		seen[r.Code] = true
		assert.NotEmpty(t, r.Title, "%s lacks a title", r.Code)
		assert.NotEmpty(t, r.Hint, "%s lacks a hint", r.Code)
		assert.NotEmpty(t, r.Family, "%s lacks a family", r.Code)
		if !r.Structural() && r.Property != phase.PrimFuncsViaCallTIR {
			// Phase rules name the pass that establishes them, except
			// PrimFuncsViaCallTIR, which no pass establishes.
			assert.Contains(t, r.Hint, "run ", "%s hint names no pass", r.Code)
		}
		if got, ok := LookupRule(r.Code); assert.True(t, ok, "LookupRule(%s)", r.Code) {
			assert.Equal(t, r.Code, got.Code, "LookupRule(%s) = %v", r.Code, got)
		}
		// The registry of codes describes the rule by its title.
		if c, ok := diag.LookupCode(r.Code); assert.True(t, ok, "diag.LookupCode(%s)", r.Code) {
			assert.Equal(t, r.Title, c.Title, "diag.LookupCode(%s) = %+v; want the rule's title", r.Code, c)
			assert.Equal(t, "WF", c.Family.Prefix, "diag.LookupCode(%s) = %+v; want family WF", r.Code, c)
		}
	}
	for _, p := range phase.Properties() {
		assert.NotEmpty(t, RulesFor(p), "property %v has no rule", p)
	}
}

// TestHintsNameTheBarrier checks that a phase rule's hint names the barrier
// of the first phase whose invariants include the rule's property.
func TestHintsNameTheBarrier(t *testing.T) {
	barrier := map[phase.Phase]string{phase.Ingest: "canonicalize barrier", phase.Lower: "lower barrier", phase.Build: "build barrier"}
	for _, r := range Rules() {
		if r.Structural() || r.Property == phase.PrimFuncsViaCallTIR || r.Property == phase.NoPrimitiveFunctions || r.Property == phase.NoOffloadGroups {
			// No barrier establishes PrimFuncsViaCallTIR; NoPrimitiveFunctions
			// and NoOffloadGroups are broken and restored inside a group of
			// passes (FuseOps .. FuseTIR, FuseOpsByPattern .. RunCodegen),
			// whose missing member the hint names.
			continue
		}
		for _, p := range phase.Phases() {
			if p.Invariants().Has(r.Property) {
				assert.Contains(t, r.Hint, barrier[p], "%s (%v, first required in %v): hint does not name the %s", r.Code, r.Property, p, barrier[p])
				break
			}
		}
	}
}
