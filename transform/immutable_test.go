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
	"github.com/phasec/phasec/passes"
)

// TestPassesLeaveInputAlone runs each pass on its golden inputs under the
// ImmutableInput instrument, which fails the run when a pass edited the
// module it was given (shared nodes included).
func TestPassesLeaveInputAlone(t *testing.T) {
	for _, pass := range []string{"RemoveUnusedParameters", "RemoveUnusedOutputsInner", "ExpandTupleArgumentsInner", "NormalizeGlobalVar", "InlinePrivateFunctions"} {
		p, ok := barrier.Registry.Lookup(pass)
		require.True(t, ok)
		inputs, err := filepath.Glob(filepath.Join("..", "testdata", "passes", pass, "*.tvms"))
		require.NoError(t, err)
		for _, path := range inputs {
			name := strings.TrimSuffix(filepath.Base(path), ".tvms")
			if _, err := os.Stat(filepath.Join(filepath.Dir(path), name+".out.tvms")); err != nil {
				continue // an output, or an input expected to fail
			}
			t.Run(pass+"/"+name, func(t *testing.T) {
				src, err := os.ReadFile(path)
				require.NoError(t, err)
				pc := passes.NewPassContext()
				pc.Instruments = []passes.Instrument{&passes.ImmutableInput{}}
				_, err = pc.Run(context.Background(), p, evaltest.Parse(t, path, string(src)))
				require.NoError(t, err)
			})
		}
	}
}
