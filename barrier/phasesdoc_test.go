package barrier_test

import (
	"os"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/phasec/phasec/barrier"
)

// TestPhasesMDInSync fails when the committed PHASES.md differs from the
// generated one, which is made from barrier.Registry and the barriers.
func TestPhasesMDInSync(t *testing.T) {
	want, err := os.ReadFile("../PHASES.md")
	require.NoError(t, err)
	if got := barrier.PhasesDoc(); got != string(want) {
		require.Failf(t, "PHASES.md is out of date: run `go run ./cmd/phasec doc phases`", "%s", unified(string(want), got))
	}
}
