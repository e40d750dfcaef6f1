package barrier_test

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/phasec/phasec/barrier"
)

// TestRegistryHoldsEveryStep: every barrier and every pass a barrier runs
// resolves, by its name, to the very value the barrier lists, so a textual
// pipeline runs what the barriers run.
func TestRegistryHoldsEveryStep(t *testing.T) {
	for _, b := range barrier.Barriers() {
		got, ok := barrier.Registry.Lookup(b.Name)
		require.True(t, ok, "barrier %s", b.Name)
		assert.Same(t, b.Pass(), got, "barrier %s", b.Name)
		assert.Equal(t, b.OptLevel == 0, got.Info().AlwaysRun, "barrier %s: the lowering barriers always run, optimize is gated", b.Name)
		for _, s := range b.Steps {
			got, ok := barrier.Registry.Lookup(s.Name())
			require.True(t, ok, "step %s of %s", s.Name(), b.Name)
			assert.Same(t, s, got, "step %s of %s", s.Name(), b.Name)
		}
	}
}

// TestDerivedConstraintsGiveTheContractsReason: each ordering derived from
// the contracts carries the reason the later pass's contract gives for the
// property, never a made-up one.
func TestDerivedConstraintsGiveTheContractsReason(t *testing.T) {
	derived := 0
	for _, c := range barrier.Constraints() {
		require.NotEmpty(t, c.Why, "%s before %s", c.Before.Name(), c.After.Name())
		if !c.Derived {
			continue
		}
		derived++
		assert.True(t, c.Before.Info().Establishes.Has(c.Property), "%s does not establish %v", c.Before.Name(), c.Property)
		assert.Equal(t, c.After.Info().Requires[c.Property], c.Why, "%s before %s", c.Before.Name(), c.After.Name())
	}
	assert.Greater(t, derived, 30, "the barrier steps' contracts imply many orderings")
}
