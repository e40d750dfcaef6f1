package transform_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/phasec/phasec/barrier"
	"github.com/phasec/phasec/eval/evaltest"
	"github.com/phasec/phasec/ir"
	"github.com/phasec/phasec/passes"
	"github.com/phasec/phasec/transform"
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

// stepLog records the name and depth of every pass that ran.
type stepLog struct {
	passes.BaseInstrument
	steps []string
}

func (*stepLog) Name() string { return "steps" }

func (l *stepLog) AfterPass(ev *passes.Event) error {
	l.steps = append(l.steps, fmt.Sprintf("%d %s", ev.Depth, ev.Info.Name))
	return nil
}

// The full passes run their three steps nested, whatever the opt level
// (TVM's Sequential runs at 0 and DeadCodeElimination's own level 1 does
// not gate it inside), so instruments see each step under the pass.
func TestTidiedPassesRunTheirStepsNested(t *testing.T) {
	for _, tc := range []struct {
		pass  *passes.Pass
		input string
	}{
		{transform.RemoveUnusedOutputs, "../testdata/passes/RemoveUnusedOutputs/simple.tvms"},
		{transform.ExpandTupleArguments, "../testdata/passes/ExpandTupleArguments/simple.tvms"},
	} {
		t.Run(tc.pass.Name(), func(t *testing.T) {
			log := &stepLog{}
			pc := passes.NewPassContext()
			pc.OptLevel = 0
			pc.Instruments = []passes.Instrument{log}
			_, err := pc.Run(context.Background(), tc.pass, parseFile(t, tc.input))
			require.NoError(t, err)
			inner := tc.pass.Name() + "Inner"
			assert.Equal(t, []string{"1 " + inner, "1 CanonicalizeBindings", "1 DeadCodeElimination", "0 " + tc.pass.Name()}, log.steps)
		})
	}
}
