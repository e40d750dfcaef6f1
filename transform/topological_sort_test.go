package transform_test

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/phasec/phasec/barrier"
	"github.com/phasec/phasec/ir"
	"github.com/phasec/phasec/ir/irgen"
	"github.com/phasec/phasec/transform"
)

func TestTopologicalSortUnchangedIsSamePointer(t *testing.T) {
	mod := irgen.MustNormalize(irgen.Chain(50))
	f := mod.Func("main")
	for _, bfs := range []bool{false, true} {
		for _, fromOutputs := range []bool{false, true} {
			out, err := transform.SortTopologically(f, bfs, fromOutputs)
			require.NoError(t, err)
			assert.Same(t, f, out, "a chain has one order (breadth-first %v, from outputs %v)", bfs, fromOutputs)
		}
	}
}

func TestTopologicalSortBadOptions(t *testing.T) {
	for text, want := range map[string]string{
		`TopologicalSort{order=random}`:                `pipeline:1:1: error PIPE002: pass TopologicalSort: option order: want "depth-first" or "breadth-first", got "random"`,
		`TopologicalSort{direction=sideways}`:          `pipeline:1:1: error PIPE002: pass TopologicalSort: option direction: want "from-inputs" or "from-outputs", got "sideways"`,
		`Normalize,TopologicalSort{order=depth_first}`: `pipeline:1:11: error PIPE002: .*want "depth-first" or "breadth-first", got "depth_first"`,
		`TopologicalSort{order=["depth-first"]}`:       `pipeline:1:1: error PIPE002: .*option order: want .*, got "\[`,
		`TopologicalSort{ordre=depth-first}`:           `pipeline:1:17: error PIPE002: .*unknown option "ordre"`,
	} {
		_, errs := barrier.Registry.ParseAndBuild("pipeline", text)
		require.True(t, errs.HasErrors(), text)
		assert.Regexp(t, want, errs.Error(), text)
	}
}

// BenchmarkTopologicalSort sorts the chain breadth-first from the outputs
// (the search and the per-block sort run whatever the result): the
// 100k/10k time and allocation ratios must stay within 11.
func BenchmarkTopologicalSort(b *testing.B) {
	benchLinear(b, func(n int) *ir.Module { return irgen.MustNormalize(irgen.Chain(n)) }, func(b *testing.B, mod *ir.Module) {
		if _, err := transform.SortTopologically(mod.Func("main"), true, true); err != nil {
			b.Fatal(err)
		}
	})
}
