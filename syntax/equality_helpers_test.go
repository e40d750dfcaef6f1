package syntax

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/phasec/phasec/ir"
)

// requireSame checks that m is structurally equal to base (no difference,
// same hash): what a renaming of bound variables must keep.
func requireSame(t *testing.T, base, m *ir.Module, msgAndArgs ...any) {
	t.Helper()
	require.Nil(t, ir.Diff(base, m, ir.EqualOptions{}), msgAndArgs...)
	require.Equal(t, ir.StructuralHash(base), ir.StructuralHash(m), msgAndArgs...)
}

// requireDistinct checks that m differs from base in equality and in hash.
func requireDistinct(t *testing.T, base, m *ir.Module, msgAndArgs ...any) {
	t.Helper()
	require.NotNil(t, ir.Diff(base, m, ir.EqualOptions{}), msgAndArgs...)
	require.NotEqual(t, ir.StructuralHash(base), ir.StructuralHash(m), msgAndArgs...)
}
