package barrier_test

import (
	"errors"
	"os"
	"strings"
	"testing"

	"github.com/phasec/phasec/barrier"
	"github.com/phasec/phasec/passes/passtest"
	"github.com/phasec/phasec/phase"
	"github.com/phasec/phasec/syntax"
	"github.com/phasec/phasec/wellformed"
)

func TestLowerGolden(t *testing.T) {
	passtest.Run(t, "../testdata/passes/barriers/lower", "canonicalize,lower")
}

func TestRefusedStatically(t *testing.T) {
	passtest.Run(t, "../testdata/passes/barriers/refused", "lower,canonicalize")
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
	before := syntax.Print(mod)
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
	_, err = barrier.Build(low)
	var be *barrier.Error
	if !errors.As(err, &be) {
		t.Fatalf("build: got %v, want a *barrier.Error", err)
	}
	if be.LastPass != "AttachGlobalSymbol" || be.Failed {
		t.Errorf("build error: last pass %q failed=%v", be.LastPass, be.Failed)
	}
	got := map[phase.Property]string{}
	for _, m := range be.Missing {
		if m.Implemented {
			t.Errorf("missing %v attributed to implemented %s", m.Property, m.By)
		}
		got[m.Property] = m.By
	}
	// LowerRuntimeBuiltin is implemented; only VMShapeLower is missing.
	want := map[phase.Property]string{phase.ShapesLowered: "VMShapeLower"}
	if len(got) != len(want) || got[phase.ShapesLowered] != want[phase.ShapesLowered] {
		t.Errorf("missing = %v, want %v", got, want)
	}
	if syntax.Print(mod) != before {
		t.Error("a barrier modified its input")
	}
}

// TestHintNamesEarlierBarrier: a module that claims phase lower but still
// calls call_tir fails the build barrier, and the diagnostics of the
// property an earlier barrier establishes point at that barrier's pass.
func TestHintNamesEarlierBarrier(t *testing.T) {
	path := "../testdata/passes/CallTIRRewrite/call_tir.tvms"
	src := strings.Replace(string(parse(t, path)), "class Module:\n", "class Module:\n    I.module_attrs({\"phase\": \"lower\"})\n", 1)
	mod, errs := syntax.Parse(path, []byte(src))
	if errs.HasErrors() {
		t.Fatal(errs)
	}
	_, err := barrier.Build(mod)
	var be *barrier.Error
	if !errors.As(err, &be) {
		t.Fatalf("build: got %v, want a *barrier.Error", err)
	}
	hinted := 0
	for _, d := range be.Diags[1:] {
		if r, ok := wellformed.LookupRule(d.Code); ok && r.Property == phase.NoCallTIR {
			if want := "run CallTIRRewrite, or the lower barrier, first"; d.Hint != want {
				t.Errorf("%s: hint %q, want %q", d, d.Hint, want)
			}
			hinted++
		}
	}
	if hinted == 0 {
		t.Fatalf("no NoCallTIR diagnostic in:\n%s", be.Diags)
	}
}
