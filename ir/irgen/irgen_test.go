package irgen

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/phasec/phasec/ir"
)

func TestChainNormalizes(t *testing.T) {
	for _, n := range []int{1, 4, 9} {
		mod := MustNormalize(Chain(n))
		f := mod.Func("main")
		seq := f.Body.(*ir.SeqExpr)
		require.Len(t, seq.Blocks, 1, "n=%d: want one dataflow block of %d bindings", n, n)
		require.True(t, seq.Blocks[0].Dataflow, "n=%d: want one dataflow block of %d bindings", n, n)
		require.Len(t, seq.Blocks[0].Bindings, n, "n=%d: want one dataflow block of %d bindings", n, n)
		last := seq.Blocks[0].Bindings[n-1].BoundVar()
		assert.False(t, last.Dataflow, "n=%d: the last binding must be the block's output", n)
		assert.Same(t, last, seq.Body, "n=%d: the last binding must be the result", n)
		assert.Equal(t, ir.FormatStructInfo(f.Ret, nil), ir.FormatStructInfo(last.StructInfo(), nil), "n=%d: result info", n)
	}
}

func TestMultiFuncNormalizes(t *testing.T) {
	mod := MustNormalize(MultiFunc(3, 5))
	require.Equal(t, 4, mod.Len(), "want 3 functions and main")
	main := mod.Func("main")
	binds := main.Body.(*ir.SeqExpr).Blocks[0].Bindings
	require.Len(t, binds, 3, "main should call each function once")
	// The callee's batch is bound to main's at each call.
	assert.Equal(t, ir.FormatStructInfo(main.Ret, nil), ir.FormatStructInfo(binds[2].BoundVar().StructInfo(), nil), "call result")
}

func TestDeterministic(t *testing.T) {
	a, b := Chain(12), Chain(12)
	assert.True(t, ir.StructuralEqual(a, b, ir.EqualOptions{}), "two runs of Chain differ: %v", ir.Diff(a, b, ir.EqualOptions{}))
}

func TestDNNGeneratorsNormalize(t *testing.T) {
	for _, sym := range []bool{false, true} {
		opts := DNNOptions{Batch: 4, Symbolic: sym}
		for name, gen := range map[string]func() *ir.Module{
			"resnet":      func() *ir.Module { return ResNet(3, 2, opts) },
			"transformer": func() *ir.Module { return Transformer(2, opts) },
			"chain":       func() *ir.Module { return LegalizedChain(9, opts) },
			"dag":         func() *ir.Module { return RandomDAG(3, 30, opts) },
		} {
			mod := MustNormalize(gen())
			main := mod.Func("main")
			require.NotNil(t, main, "%s: no main", name)
			_, bounded := main.Attrs[ir.AttrTIRVarUpperBound]
			assert.Equal(t, sym, bounded, "%s symbolic=%v: tir_var_upper_bound present", name, sym)
			assert.True(t, ir.StructuralEqual(MustNormalize(gen()), mod, ir.EqualOptions{}), "%s: two runs differ", name)
		}
	}
}
