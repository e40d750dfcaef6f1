package barrier_test

import (
	"errors"
	"os"
	"strings"
	"testing"

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
	if err != nil {
		t.Fatal(err)
	}
	return src
}

// TestGoFunctions drives the barriers as Go functions: each records its
// phase on success and never modifies its input; a failure is an *Error
// naming the last pass and the missing properties with their passes.
func TestGoFunctions(t *testing.T) {
	path := "../testdata/models/mlp_legalized.tvms"
	mod, errs := syntax.Parse(path, parse(t, path))
	if errs.HasErrors() {
		t.Fatal(errs)
	}
	before := printer.Print(mod)
	ing, err := barrier.Canonicalize(mod)
	if err != nil {
		t.Fatal(err)
	}
	if p, _ := phase.Recorded(ing); p != phase.Ingest {
		t.Errorf("canonicalize recorded %v", p)
	}
	low, err := barrier.Lower(ing)
	if err != nil {
		t.Fatal(err)
	}
	if p, _ := phase.Recorded(low); p != phase.Lower {
		t.Errorf("lower recorded %v", p)
	}
	built, err := barrier.Build(low)
	if err != nil {
		t.Fatalf("build: %v", err)
	}
	if p, _ := phase.Recorded(built); p != phase.Build {
		t.Errorf("build recorded %v", p)
	}
	if printer.Print(mod) != before {
		t.Error("a barrier modified its input")
	}
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
	if errs.HasErrors() {
		t.Fatal(errs)
	}
	_, err := barrier.Build(mod)
	var l diag.List
	if !errors.As(err, &l) || len(l) == 0 || l[0].Code != passes.CodeFalseClaim {
		t.Fatalf("build: got %v, want a CHK004 refusal", err)
	}
	hinted := 0
	for _, d := range l[1:] {
		if r, ok := wellformed.LookupRule(d.Code); ok && r.Property == phase.NoCallTIR {
			if !strings.Contains(d.Hint, "CallTIRRewrite") {
				t.Errorf("%s: hint %q does not name CallTIRRewrite", d, d.Hint)
			}
			hinted++
		}
	}
	if hinted != 2 {
		t.Fatalf("want 2 NoCallTIR diagnostics (one per call_tir) in:\n%s", l)
	}
}

// TestHintNeverNamesTheFailingStep: the lower barrier refuses a module with
// a local function, and the hint names the passes that can lift it as the
// module is, not the lower barrier itself (issue 15).
func TestHintNeverNamesTheFailingStep(t *testing.T) {
	path := "../testdata/relax_closure_capture.tvms"
	mod, errs := syntax.Parse(path, parse(t, path))
	if errs.HasErrors() {
		t.Fatal(errs)
	}
	p, errs := barrier.Registry.ParseAndBuild("--passes", "lower")
	if errs != nil {
		t.Fatal(errs)
	}
	ph, props, err := passes.StartState(mod)
	if err != nil {
		t.Fatal(err)
	}
	errs = passes.Check(p, passes.NewPassContext(), ph, props)
	if len(errs) != 1 || !strings.Contains(errs[0].Msg, "missing {NoNestedFunctions}") {
		t.Fatalf("want the lower barrier refused for NoNestedFunctions, got %v", errs)
	}
	if want := "provided by LambdaLift {NoNestedFunctions}, canonicalize phase ingest {NoNestedFunctions}"; errs[0].Hint != want {
		t.Errorf("hint %q, want %q", errs[0].Hint, want)
	}
}

// TestHintChainRuns: when no single pass provides what a step misses, the
// hint names the shortest chain, barriers first, and the chain followed by
// the step runs.
func TestHintChainRuns(t *testing.T) {
	path := "../testdata/relax_mlp_symbolic_batch.tvms"
	mod, errs := syntax.Parse(path, parse(t, path))
	if errs.HasErrors() {
		t.Fatal(errs)
	}
	ph, props, err := passes.StartState(mod)
	if err != nil {
		t.Fatal(err)
	}
	p, errs := barrier.Registry.ParseAndBuild("--passes", "VMShapeLower")
	if errs != nil {
		t.Fatal(errs)
	}
	errs = passes.Check(p, passes.NewPassContext(), ph, props)
	if len(errs) != 1 || !strings.Contains(errs[0].Hint, "; run lower,build first") {
		t.Fatalf("want the chain lower,build in the hint, got %v", errs)
	}
	p, errs = barrier.Registry.ParseAndBuild("--passes", "lower,build,VMShapeLower")
	if errs != nil {
		t.Fatal(errs)
	}
	if _, err := passes.NewPassContext().Run(t0, p, mod); err != nil {
		t.Errorf("the hinted chain fails: %v", err)
	}
}
