package main

import (
	"flag"
	"os"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// update rewrites golden files instead of comparing against them. Shared by
// every test of the command: go test ./cmd/phasec -update.
var update = flag.Bool("update", false, "rewrite golden files")

// compareGolden compares got with the golden file (rewriting it under -update).
func compareGolden(t *testing.T, golden, got string) {
	t.Helper()
	if *update {
		require.NoError(t, os.WriteFile(golden, []byte(got), 0o644))
	}
	want, err := os.ReadFile(golden)
	require.NoError(t, err, "run with -update to create it")
	assert.Equal(t, string(want), got, "output differs from %s (rerun with -update if intended)", golden)
}
