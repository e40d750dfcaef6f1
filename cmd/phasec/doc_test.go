package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestDocPhasesWritesFile(t *testing.T) {
	out := filepath.Join(t.TempDir(), "P.md")
	var stdout, stderr strings.Builder
	if code := run([]string{"doc", "phases", "-o", out}, nil, &stdout, &stderr); code != 0 {
		t.Fatalf("exit %d: %s", code, stderr.String())
	}
	got, err := os.ReadFile(out)
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"## Phases and their invariants", "`WF030` no dataflow blocks remain",
		"### `lower`: ingest, optimize, lower → lower", "1. `LegalizeOps`: replace high-level tensor ops by call_tir to generated PrimFuncs",
		"`ToNonDataflow` before `RemovePurityChecking`: RemovePurityChecking requires NoDataflow", "## Adding a pass"} {
		if !strings.Contains(string(got), want) {
			t.Errorf("generated PHASES.md lacks %q", want)
		}
	}
	if code := run([]string{"doc", "nothing"}, nil, &stdout, &stderr); code != 2 {
		t.Errorf("doc nothing: exit %d, want 2", code)
	}
}
