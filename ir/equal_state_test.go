package ir

import (
	"testing"

	"github.com/stretchr/testify/require"
)

// TestRecycledStatesStartClean runs comparisons and hashes that stop
// half-way (leaving variable pairs and ordinals behind) before ones whose
// result depends on starting from empty tables.
func TestRecycledStatesStartClean(t *testing.T) {
	add := testOp("relax.add")
	x, y, p, q := NewVar("x", nil), NewVar("y", nil), NewVar("p", nil), NewVar("q", nil)
	mapFree := EqualOptions{MapFreeVars: true}
	for range 3 {
		// Pairs x↔p before failing on y vs p.
		require.NotNil(t, Diff(NewCall(add, x, y), NewCall(add, p, p), mapFree), "add(x, y) equal to add(p, p)")
		require.False(t, StructuralEqual(NewCall(add, x, y), NewCall(add, p, p), mapFree), "add(x, y) equal to add(p, p)")
		// Correct only if x↔p is gone.
		require.Nil(t, Diff(NewCall(add, x, y), NewCall(add, q, p), mapFree), "add(x, y) vs add(q, p)")
		require.True(t, StructuralEqual(NewCall(add, x, y), NewCall(add, q, p), mapFree), "add(x, y) not equal to add(q, p)")
	}
	// Hashes number free variables in the order first met, from zero, so
	// add(x, y) and add(y, x) hash alike unless x and y keep the ordinals
	// of the previous hash.
	for range 3 {
		require.Equal(t, StructuralHash(NewCall(add, x, y)), StructuralHash(NewCall(add, y, x)), "hash depends on the previous hash")
	}
}
