package main

import (
	"flag"
	"os"
	"testing"
)

// update rewrites golden files instead of comparing against them. Shared by
// every test of the command: go test ./cmd/phasec -update.
var update = flag.Bool("update", false, "rewrite golden files")

// compareGolden compares got with the golden file (rewriting it under -update).
func compareGolden(t *testing.T, golden, got string) {
	t.Helper()
	if *update {
		if err := os.WriteFile(golden, []byte(got), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want, err := os.ReadFile(golden)
	if err != nil {
		t.Fatalf("%v (run with -update to create it)", err)
	}
	if got != string(want) {
		t.Errorf("output differs from %s (rerun with -update if intended):\n%s", golden, got)
	}
}
