package transform_test

import (
	"context"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/phasec/phasec/barrier"
	"github.com/phasec/phasec/eval/evaltest"
	"github.com/phasec/phasec/passes"
	"github.com/phasec/phasec/passes/passtest"
)

// TestPassesLeaveInputAlone runs each golden directory's pipeline on its
// inputs under the ImmutableInput instrument, which fails the run when a
// pass edited the module it was given (shared nodes included).
func TestPassesLeaveInputAlone(t *testing.T) {
	for dir, pipeline := range goldens {
		p, diags := barrier.Registry.ParseAndBuild("pipeline", pipeline)
		require.False(t, diags.HasErrors(), "%v", diags)
		inputs, err := passtest.Inputs(filepath.Join("..", "testdata", "passes", dir))
		require.NoError(t, err)
		for _, path := range inputs {
			src, err := os.ReadFile(path)
			require.NoError(t, err)
			if _, err := os.Stat(path[:len(path)-len(".tvms")] + ".out.tvms"); err != nil {
				continue // an input expected to fail
			}
			t.Run(dir+"/"+filepath.Base(path), func(t *testing.T) {
				pc := passes.NewPassContext()
				pc.Instruments = []passes.Instrument{&passes.ImmutableInput{}}
				_, err = pc.Run(context.Background(), p, evaltest.Parse(t, path, string(src)))
				require.NoError(t, err)
			})
		}
	}
}
