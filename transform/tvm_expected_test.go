package transform_test

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/phasec/phasec/barrier"
	"github.com/phasec/phasec/eval/evaltest"
	"github.com/phasec/phasec/ir"
	"github.com/phasec/phasec/passes"
)

// TestTVMExpected checks the whole of TVM's RemoveUnusedOutputs and
// ExpandTupleArguments, which TVM defines as their inner pass followed by
// CanonicalizeBindings and DeadCodeElimination({}), against TVM's expected
// modules: testdata/passes/<Pass>/NAME.tvms is TVM's Before and
// NAME.tvm.tvms its Expected, compared up to variable names (TVM's
// assert_structural_equal). It needs CanonicalizeBindings and
// DeadCodeElimination in barrier.Registry and skips until they are there.
func TestTVMExpected(t *testing.T) {
	for pass, pipeline := range map[string]string{
		"RemoveUnusedOutputs":  "RemoveUnusedOutputsInner,CanonicalizeBindings,DeadCodeElimination",
		"ExpandTupleArguments": "ExpandTupleArgumentsInner,CanonicalizeBindings,DeadCodeElimination",
	} {
		t.Run(pass, func(t *testing.T) {
			for _, name := range []string{"CanonicalizeBindings", "DeadCodeElimination"} {
				if _, ok := barrier.Registry.Lookup(name); !ok {
					t.Skipf("%s is not in barrier.Registry yet", name)
				}
			}
			p, diags := barrier.Registry.ParseAndBuild("pipeline", pipeline)
			require.False(t, diags.HasErrors(), "%v", diags)
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
					got, err := passes.NewPassContext().Run(context.Background(), p, before)
					require.NoError(t, err)
					if m := ir.Diff(stripPhase(got), stripPhase(want), ir.EqualOptions{}); m != nil {
						t.Errorf("%s differs from TVM's expected module: %v", pipeline, m)
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
