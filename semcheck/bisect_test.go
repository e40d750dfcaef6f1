package semcheck

import (
	"errors"
	"os"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/phasec/phasec/ir"
	"github.com/phasec/phasec/passes"
	"github.com/phasec/phasec/phase"
	"github.com/phasec/phasec/syntax"
	"github.com/phasec/phasec/syntax/printer"
)

func TestBisectNamesAndReducesBrokenPass(t *testing.T) {
	mod, diags := syntax.Parse("small.tvms", []byte(smallModule))
	require.Empty(t, diags)
	p, diags := testPasses.ParseAndBuild("pipeline", "canonicalize,FlipSignForTest,lower,build")
	require.Empty(t, diags)
	in := Inputs{Seed: 4}
	cu, err := FindCulprit(mod, p, in)
	require.NoError(t, err)
	require.NotNil(t, cu)
	assert.Equal(t, "FlipSignForTest", cu.Name)
	assert.Equal(t, Semantic, cu.Kind)
	require.True(t, cu.Fails(cu.Input, in))

	small := cu.Reduce(in, 200)
	t.Logf("reduced from %d to %d bindings:\n%s", CountBindings(cu.Input), CountBindings(small), printer.Print(small))
	assert.Equal(t, 5, CountBindings(cu.Input))
	assert.Equal(t, 1, CountBindings(small), "only the flipped add is left")
	assert.True(t, cu.Fails(small, in), "the reduced module still fails")
	assert.Contains(t, printer.Print(small), "R.add(")
}

func TestBisectCorrectPipeline(t *testing.T) {
	mod, diags := syntax.Parse("small.tvms", []byte(smallModule))
	require.Empty(t, diags)
	p, diags := testPasses.ParseAndBuild("pipeline", "canonicalize,lower,build")
	require.Empty(t, diags)
	cu, err := FindCulprit(mod, p, Inputs{Seed: 4})
	require.NoError(t, err)
	assert.Nil(t, cu)
}

var (
	crashOnAddForTest = passes.Define(passes.Info{Name: "CrashOnAddForTest", Doc: "broken on purpose: fails on any module with an R.add"},
		passes.Module(func(_ *passes.Env, mod *ir.Module) (*ir.Module, error) {
			if strings.Contains(printer.Print(mod), "R.add(") {
				return nil, errors.New("cannot handle add")
			}
			return mod, nil
		}))
	claimsNoDataflowForTest = passes.Define(passes.Info{Name: "ClaimsNoDataflowForTest", Doc: "broken on purpose: claims NoDataflow but keeps the blocks",
		Establishes: phase.Of(phase.NoDataflow)},
		passes.Module(func(_ *passes.Env, mod *ir.Module) (*ir.Module, error) {
			return mod, nil
		}))
)

func TestBisectCrashAndMalformed(t *testing.T) {
	for _, tc := range []struct {
		pass string
		kind FailureKind
	}{{"CrashOnAddForTest", PassCrash}, {"ClaimsNoDataflowForTest", Malformed}} {
		t.Run(tc.pass, func(t *testing.T) {
			mod, diags := syntax.Parse("small.tvms", []byte(smallModule))
			require.Empty(t, diags)
			p, diags := testPasses.ParseAndBuild("pipeline", "canonicalize,"+tc.pass)
			require.Empty(t, diags)
			cu, err := FindCulprit(mod, p, Inputs{Seed: 4})
			require.NoError(t, err)
			require.NotNil(t, cu)
			assert.Equal(t, tc.pass, cu.Name)
			assert.Equal(t, tc.kind, cu.Kind)
			small := cu.Reduce(Inputs{Seed: 4}, 200)
			assert.True(t, cu.Fails(small, Inputs{Seed: 4}))
			assert.LessOrEqual(t, CountBindings(small), 1, printer.Print(small))
		})
	}
}

// TestBisectLimits: opt-bisect limits agree with the checked run: the
// broken optional pass is optional pass number Limit, and with one optional
// pass fewer the pipeline keeps every property.
func TestBisectLimits(t *testing.T) {
	mod, diags := syntax.Parse("small.tvms", []byte(smallModule))
	require.Empty(t, diags)
	p, diags := testPasses.ParseAndBuild("pipeline", "canonicalize,FlipSignForTest,lower,build")
	require.Empty(t, diags)
	res, err := BisectLimits(mod, p, Inputs{Seed: 4})
	require.NoError(t, err)
	assert.Equal(t, "FlipSignForTest", res.Pass)
	assert.Positive(t, res.Limit)
	assert.GreaterOrEqual(t, res.Optional, res.Limit)
	_, failed, err := limitRun(mod, p, Inputs{Seed: 4}, res.Limit-1)
	require.NoError(t, err)
	assert.False(t, failed)

	// A correct pipeline: no limit fails.
	p, _ = testPasses.ParseAndBuild("pipeline", "canonicalize,lower,build")
	res, err = BisectLimits(mod, p, Inputs{Seed: 4})
	require.NoError(t, err)
	assert.Equal(t, 0, res.Limit)
	assert.Empty(t, res.Pass)
}

// TestShrinkDims: the flipped add fails at every size, so the symbolic
// dimension shrinks to 1, named explicitly.
func TestShrinkDims(t *testing.T) {
	mod, diags := syntax.Parse("small.tvms", []byte(smallModule))
	require.Empty(t, diags)
	p, diags := testPasses.ParseAndBuild("pipeline", "canonicalize,FlipSignForTest,lower,build")
	require.Empty(t, diags)
	cu, err := FindCulprit(mod, p, Inputs{Seed: 4})
	require.NoError(t, err)
	require.NotNil(t, cu)
	in := cu.ShrinkDims(cu.Input, Inputs{Seed: 4})
	assert.Equal(t, map[string]int64{"n": 1}, in.Dims)
	args, err := in.Args(cu.Input)
	require.NoError(t, err)
	assert.Equal(t, []int64{1, 4}, args[0].(*tensorT).Shape)
}

// Building a module twice must not change what it computes: the build
// barrier once re-ran VMShapeLower on its own output, and the VM then read a
// shape heap nobody had filled (match_shape ... got null).
func TestBuildTwiceKeepsResults(t *testing.T) {
	src, err := os.ReadFile("../testdata/relax_shape_and_prim_values.tvms")
	require.NoError(t, err)
	mod, diags := syntax.Parse("relax_shape_and_prim_values.tvms", src)
	require.Empty(t, diags)
	p, diags := testPasses.ParseAndBuild("pipeline", "canonicalize,lower,build,build")
	require.Empty(t, diags)
	cu, err := FindCulprit(mod, p, Inputs{Seed: 1})
	require.NoError(t, err)
	require.Nil(t, cu, "a culprit was found")
}

// TestReduceThroughRebindingsAndRoundTrips: the reducer forwards a trivial
// rebinding's var and an earlier value of the same struct info, so the
// rebinding and the expand_dims/squeeze round trip after the flipped add
// go and the add alone remains.
func TestReduceThroughRebindingsAndRoundTrips(t *testing.T) {
	mod, diags := syntax.Parse("roundtrip.tvms", []byte(`# from tvm.script import ir as I
# from tvm.script import tir as T
# from tvm.script import relax as R

@I.ir_module
class Module:
    @R.function
    def main(x: R.Tensor(("n", 3), dtype="float32")):
        n = T.int64()
        a = R.add(x, x)
        b = a
        c = R.expand_dims(b, axis=[1])
        d = R.squeeze(c, axis=[1])
        return d
`))
	require.Empty(t, diags)
	p, diags := testPasses.ParseAndBuild("pipeline", "canonicalize,FlipSignForTest")
	require.Empty(t, diags)
	in := Inputs{Seed: 4}
	cu, err := FindCulprit(mod, p, in)
	require.NoError(t, err)
	require.NotNil(t, cu)
	small := cu.Reduce(in, 100)
	assert.Equal(t, 1, CountBindings(small), printer.Print(small))
	assert.Contains(t, printer.Print(small), "R.add(")
}
