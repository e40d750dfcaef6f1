package transform_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/phasec/phasec/barrier"
	"github.com/phasec/phasec/eval/evaltest"
	"github.com/phasec/phasec/ir"
)

// TestTVMExpected checks RemoveUnusedOutputs and ExpandTupleArguments,
// which TVM defines as their inner pass followed by CanonicalizeBindings
// and DeadCodeElimination({}), against TVM's expected modules:
// testdata/passes/<Pass>/NAME.tvms is TVM's Before and NAME.tvm.tvms its
// Expected, compared up to variable names (TVM's assert_structural_equal).
func TestTVMExpected(t *testing.T) {
	for _, pass := range []string{"RemoveUnusedOutputs", "ExpandTupleArguments"} {
		t.Run(pass, func(t *testing.T) {
			p, ok := barrier.Registry.Lookup(pass)
			require.True(t, ok, "%s is not in barrier.Registry", pass)
			dir := filepath.Join("..", "testdata", "passes", pass)
			inputs, err := filepath.Glob(filepath.Join(dir, "*.tvms"))
			require.NoError(t, err)
			checked := 0
			for _, path := range inputs {
				if strings.HasSuffix(path, ".tvm.tvms") {
					continue
				}
				t.Run(filepath.Base(path), func(t *testing.T) {
					before := parseFile(t, path)
					want := parseFile(t, strings.TrimSuffix(path, ".tvms")+".tvm.tvms")
					got := run(t, p, before)
					if m := ir.Diff(stripPhase(got), stripPhase(want), ir.EqualOptions{}); m != nil {
						t.Errorf("%s differs from TVM's expected module: %v", pass, m)
					}
				})
				checked++
			}
			require.NotZero(t, checked)
		})
	}
}

func parseFile(t *testing.T, path string) *ir.Module {
	t.Helper()
	src, err := os.ReadFile(path)
	require.NoError(t, err)
	mod, diags := ir.NormalizeModule(evaltest.Parse(t, path, string(src)))
	require.Empty(t, diags)
	return mod
}

// stripPhase drops module attributes (the recorded phase), which TVM's
// modules do not have.
func stripPhase(m *ir.Module) *ir.Module {
	c := m.Clone()
	c.Attrs = nil
	return c
}
