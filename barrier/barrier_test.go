package barrier_test

import (
	"os"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/phasec/phasec/barrier"
	"github.com/phasec/phasec/diag"
	"github.com/phasec/phasec/passes"
	"github.com/phasec/phasec/passes/passtest"
	"github.com/phasec/phasec/phase"
	"github.com/phasec/phasec/syntax"
	"github.com/phasec/phasec/syntax/printer"
	"github.com/phasec/phasec/wellformed"
)

func TestLowerGolden(t *testing.T) {
	passtest.Run(t, barrier.Registry, "../testdata/passes/barriers/lower", "canonicalize,lower")
}

func TestRefusedStatically(t *testing.T) {
	passtest.Run(t, barrier.Registry, "../testdata/passes/barriers/refused", "lower,canonicalize")
}

func parse(t *testing.T, path string) []byte {
	t.Helper()
	src, err := os.ReadFile(path)
	require.NoError(t, err)
	return src
}

// TestGoFunctions drives the barriers as Go functions: each records its
// phase on success and never modifies its input; a failure is an *Error
// naming the last pass and the missing properties with their passes.
func TestGoFunctions(t *testing.T) {
	path := "../testdata/models/mlp_legalized.tvms"
	mod, errs := syntax.Parse(path, parse(t, path))
	require.False(t, errs.HasErrors(), "%v", errs)
	before := printer.Print(mod)
	ing, err := barrier.Canonicalize(mod)
	require.NoError(t, err)
	p, _ := phase.Recorded(ing)
	assert.Equal(t, phase.Ingest, p, "canonicalize recorded")
	low, err := barrier.Lower(ing)
	require.NoError(t, err)
	p, _ = phase.Recorded(low)
	assert.Equal(t, phase.Lower, p, "lower recorded")
	built, err := barrier.Build(low)
	require.NoError(t, err, "build")
	p, _ = phase.Recorded(built)
	assert.Equal(t, phase.Build, p, "build recorded")
	assert.Equal(t, before, printer.Print(mod), "a barrier modified its input")
}

// TestBuildRefusesFalseClaim: a module that claims phase lower but still
// calls call_tir is refused before the build barrier runs anything (a
// recorded phase is a claim, verified when a pipeline starts), and the
// diagnostics of the property an earlier barrier establishes point at
// that barrier's pass.
func TestBuildRefusesFalseClaim(t *testing.T) {
	path := "../testdata/passes/CallTIRRewrite/call_tir.tvms"
	src := strings.Replace(string(parse(t, path)), "class Module:\n", "class Module:\n    I.module_attrs({\"phase\": \"lower\"})\n", 1)
	mod, errs := syntax.Parse(path, []byte(src))
	require.False(t, errs.HasErrors(), "%v", errs)
	_, err := barrier.Build(mod)
	var l diag.List
	require.ErrorAs(t, err, &l, "build: want a CHK004 refusal")
	require.NotEmpty(t, l, "build: want a CHK004 refusal")
	require.Equal(t, passes.CodeFalseClaim, l[0].Code, "build: got %v, want a CHK004 refusal", err)
	hinted := 0
	for _, d := range l[1:] {
		if r, ok := wellformed.LookupRule(d.Code); ok && r.Property == phase.NoCallTIR {
			assert.Contains(t, d.Hint, "CallTIRRewrite", "%s: hint does not name CallTIRRewrite", d)
			hinted++
		}
	}
	require.Equal(t, 2, hinted, "want 2 NoCallTIR diagnostics (one per call_tir) in:\n%s", l)
}

// TestHintNeverNamesTheFailingStep: the lower barrier refuses a module with
// a local function, and the hint names the passes that can lift it as the
// module is, not the lower barrier itself (issue 15).
func TestHintNeverNamesTheFailingStep(t *testing.T) {
	path := "../testdata/relax_closure_capture.tvms"
	mod, errs := syntax.Parse(path, parse(t, path))
	require.False(t, errs.HasErrors(), "%v", errs)
	p, errs := barrier.Registry.ParseAndBuild("--passes", "lower")
	require.Nil(t, errs)
	ph, props, err := passes.StartState(mod)
	require.NoError(t, err)
	errs = passes.Check(p, passes.NewPassContext(), ph, props)
	require.Len(t, errs, 1, "want the lower barrier refused for NoNestedFunctions")
	require.Contains(t, errs[0].Msg, "missing {NoNestedFunctions}", "want the lower barrier refused for NoNestedFunctions")
	// RunCodegen ends the offload sub-phase, whose nested functions are
	// Codegen functions' composites, so its contract establishes the property too.
	assert.Equal(t, "provided by LambdaLift {NoNestedFunctions}, RunCodegen {NoNestedFunctions}, canonicalize phase ingest {NoNestedFunctions}", errs[0].Hint, "hint")
}

// TestHintChainRuns: when no single pass provides what a step misses, the
// hint names the shortest chain, barriers first, and the chain followed by
// the step runs.
func TestHintChainRuns(t *testing.T) {
	path := "../testdata/relax_mlp_symbolic_batch.tvms"
	mod, errs := syntax.Parse(path, parse(t, path))
	require.False(t, errs.HasErrors(), "%v", errs)
	ph, props, err := passes.StartState(mod)
	require.NoError(t, err)
	p, errs := barrier.Registry.ParseAndBuild("--passes", "VMShapeLower")
	require.Nil(t, errs)
	errs = passes.Check(p, passes.NewPassContext(), ph, props)
	require.Len(t, errs, 1, "want the chain lower,build in the hint")
	require.Contains(t, errs[0].Hint, "; run lower,build first", "want the chain lower,build in the hint")
	p, errs = barrier.Registry.ParseAndBuild("--passes", "lower,build,VMShapeLower")
	require.Nil(t, errs)
	_, err = passes.NewPassContext().Run(t0, p, mod)
	assert.NoError(t, err, "the hinted chain fails")
}
