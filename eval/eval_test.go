package eval

import (
	"os"
	"testing"

	"github.com/phasec/phasec/ir"
	"github.com/phasec/phasec/syntax"
	"github.com/stretchr/testify/require"
)

func parseFile(t *testing.T, path string) *ir.Module {
	t.Helper()
	src, err := os.ReadFile(path)
	require.NoError(t, err)
	mod, diags := syntax.Parse(path, src)
	require.Empty(t, diags)
	return mod
}

func TestMLPHighLevelMatchesHandLegalized(t *testing.T) {
	hi := parseFile(t, "../testdata/models/mlp.tvms")
	lo := parseFile(t, "../testdata/models/mlp_legalized.tvms")
	args, err := RandomArgs(hi.Func("main"), 1, map[string]int64{"batch": 3}, 2)
	require.NoError(t, err)
	want, err := New(hi).Call("main", args...)
	require.NoError(t, err)
	got, err := New(lo).Call("main", args...)
	require.NoError(t, err)
	require.NoError(t, Compare(got, want, Float32Tol))
}
