package barrier_test

import (
	"context"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/phasec/phasec/barrier"
	"github.com/phasec/phasec/eval/evaltest"
	"github.com/phasec/phasec/ir"
	"github.com/phasec/phasec/passes"
	"github.com/phasec/phasec/phase"
	"github.com/phasec/phasec/syntax"
)

func parseModel(t *testing.T, path string) *ir.Module {
	t.Helper()
	mod, errs := syntax.Parse(path, parse(t, path))
	require.False(t, errs.HasErrors(), "%v", errs)
	return mod
}

func countFuncs(mod *ir.Module) (prim, primitive int) {
	for _, name := range mod.Names() {
		switch f, _ := mod.Lookup(name); f := f.(type) {
		case *ir.PrimFunc:
			prim++
		case *ir.Function:
			if _, ok := f.Attrs[ir.AttrPrimitive]; ok {
				primitive++
			}
		}
	}
	return prim, primitive
}

// TestOptimizeFusesAtO2: at the default opt level the optimize barrier runs
// the fusion group after its fixpoint (the module leaves it legalized and
// fused, with no Primitive function left, and computes the same); at O1 it
// does not legalize.
func TestOptimizeFusesAtO2(t *testing.T) {
	for _, path := range []string{"../testdata/models/mlp.tvms", "../testdata/models/transformer_block_hl.tvms"} {
		t.Run(path, func(t *testing.T) {
			mod := mustCanonicalize(t, parseModel(t, path))
			p, errs := barrier.Registry.ParseAndBuild("--passes", "optimize")
			require.Nil(t, errs)
			outs := map[int]*ir.Module{}
			for _, level := range []int{1, 2} {
				out, err := (&passes.PassContext{OptLevel: level}).Run(context.Background(), p, mod)
				require.NoError(t, err, "opt level %d", level)
				got, _ := phase.Recorded(out)
				assert.Equal(t, phase.Optimize, got)
				outs[level] = out
			}
			prim1, _ := countFuncs(outs[1])
			prim2, primitive2 := countFuncs(outs[2])
			assert.Zero(t, prim1, "O1 does not legalize")
			assert.Positive(t, prim2, "O2 legalizes and fuses")
			assert.Zero(t, primitive2, "FuseTIR consumed every Primitive function")
			evaltest.CheckSame(t, mod, outs[2], evaltest.Options{})

			// Legalizing first, then fusing, gives fewer kernels than
			// legalizing alone.
			legal, err := barrier.Lower(mod)
			require.NoError(t, err)
			primLegal, _ := countFuncs(legal)
			assert.Less(t, prim2, primLegal, "fusion merged kernels")
			// And the fused module still lowers and builds.
			lowered, err := barrier.Lower(outs[2])
			require.NoError(t, err)
			_, err = barrier.Build(lowered)
			require.NoError(t, err)
		})
	}
}

// TestFusionGroupIsClosed: a module between FuseOps and FuseTIR is inside
// the fusion group. The static check refuses a pipeline that hands it to
// the lower barrier (or to LegalizeOps) with a hint naming FuseTIR, and
// the barrier itself refuses it with WF043 naming the function and FuseTIR.
func TestFusionGroupIsClosed(t *testing.T) {
	mod := parseModel(t, "../testdata/models/mlp.tvms")
	for _, text := range []string{"canonicalize,LegalizeOps,AnnotateTIROpPattern,FuseOps,lower",
		"canonicalize,LegalizeOps,AnnotateTIROpPattern,FuseOps,LegalizeOps"} {
		p, errs := barrier.Registry.ParseAndBuild("--passes", text)
		require.Nil(t, errs)
		_, err := passes.NewPassContext().Run(context.Background(), p, mod)
		require.Error(t, err, text)
		assert.Contains(t, err.Error(), "missing {NoPrimitiveFunctions}", text)
		assert.Contains(t, err.Error(), "FuseTIR", "%s: the hint names the group's missing member", text)
	}

	p, errs := barrier.Registry.ParseAndBuild("--passes", "canonicalize,LegalizeOps,AnnotateTIROpPattern,FuseOps")
	require.Nil(t, errs)
	fused, err := passes.NewPassContext().Run(context.Background(), p, mod)
	require.NoError(t, err)
	_, primitive := countFuncs(fused)
	require.Positive(t, primitive)
	got, _ := phase.Recorded(fused)
	assert.Equal(t, phase.None, got, "inside the group the module records no phase")
	_, err = barrier.Lower(fused)
	require.Error(t, err)
	assert.Regexp(t, `WF043: function fused_\w+ is a fusion group \(attribute Primitive\) that FuseTIR has not turned into a PrimFunc`, err.Error())
	assert.Contains(t, err.Error(), "run FuseTIR")
}
