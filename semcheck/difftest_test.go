package semcheck

import (
	"flag"
	"fmt"
	"sort"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/phasec/phasec/ir"
	"github.com/phasec/phasec/ir/randmod"
	"github.com/phasec/phasec/op"
)

var difftestN = flag.Int("difftest.n", 60, "random modules the differential test runs (make difftest N=10000)")

// TestGeneratorUsesRegisteredOps: every op the generator emits is a
// registered Relax op with evaluator semantics and a legalization.
func TestGeneratorUsesRegisteredOps(t *testing.T) {
	for _, o := range randmod.Ops {
		name := "relax." + strings.TrimPrefix(o.Name, "R.")
		x, ok := ir.LookupOp(name)
		require.True(t, ok, name)
		d, ok := op.DefOf(x)
		require.True(t, ok, "%s has no op record", name)
		require.NotNil(t, d.Eval, "%s has no evaluator", name)
		require.NotNil(t, d.Legalize, "%s has no legalization", name)
	}
}

// TestDifferential pushes random modules through difftestPipeline
// (canonicalize,optimize,lower,build once the optimize step is registered)
// with the semantic Checker installed: the VM's result after build (and
// the evaluator's after every pass before) must equal the evaluator's on
// the input. The modules carry what the optimization passes remove
// (randmod.Cleanup: constant subexpressions, duplicates, dead bindings and
// functions, trivial rebindings and casts, private calls with unused
// parameters and outputs). A mismatch is bisected and reduced, and the reproducer is
// written under testdata/semcheck/regress (-difftest.regress), where
// TestRegressions replays it once the bug is fixed: commit it with the fix.
func TestDifferential(t *testing.T) {
	covered := map[string]int{}
	var ifs, nestedIfs, matchCasts, tuples, tupleValues, closures, dataflow, symbolic, int32s, float16s, failures int
	var cl randmod.Cleanup
	prog := newTestProgress()
	defer prog.done()
	for seed := range uint64(*difftestN) {
		prog.printf("difftest: %d/%d modules, %d failures", seed, *difftestN, failures)
		gm := randmod.Generate(seed)
		if !diffOne(t, gm, fmt.Sprintf("randmod seed %d", seed), Inputs{Seed: seed, Dim: 1 + int64(seed%4)}, *regressDir) {
			failures++
			continue
		}
		for k, v := range gm.Ops {
			covered[k] += v
		}
		ifs += b2i(gm.If)
		nestedIfs += b2i(gm.NestedIf)
		matchCasts += gm.MatchCasts
		tuples += b2i(gm.Tuple)
		tupleValues += gm.TupleValues
		closures += b2i(gm.Closure)
		int32s += b2i(gm.DType == "int32")
		float16s += b2i(gm.DType == "float16")
		dataflow += b2i(gm.Dataflow)
		symbolic += b2i(gm.Symbolic)
		cl = addCleanup(cl, gm.Cleanup)
	}
	var names []string
	for k, v := range covered {
		names = append(names, fmt.Sprintf("%s %d", strings.TrimPrefix(k, "R."), v))
	}
	sort.Strings(names)
	t.Logf("pipeline %s; cleanup patterns %+v", difftestPipeline, cl)
	t.Logf("%d modules, %d failures; If %d (nested %d), match_cast %d, tuple results %d, tuple values %d, closures %d, dataflow %d, symbolic %d, int32 %d, float16 %d; ops covered %d of %d (calls): %s",
		*difftestN, failures, ifs, nestedIfs, matchCasts, tuples, tupleValues, closures, dataflow, symbolic, int32s, float16s, len(covered), len(randmod.Ops), strings.Join(names, ", "))
}

func b2i(b bool) int {
	if b {
		return 1
	}
	return 0
}

func addCleanup(a, b randmod.Cleanup) randmod.Cleanup {
	return randmod.Cleanup{ConstExprs: a.ConstExprs + b.ConstExprs, Duplicates: a.Duplicates + b.Duplicates,
		DeadBindings: a.DeadBindings + b.DeadBindings, Rebindings: a.Rebindings + b.Rebindings,
		TrivialCasts: a.TrivialCasts + b.TrivialCasts, PrivateCalls: a.PrivateCalls + b.PrivateCalls,
		UnusedParams: a.UnusedParams + b.UnusedParams, UnusedOutputs: a.UnusedOutputs + b.UnusedOutputs,
		DeadFuncs: a.DeadFuncs + b.DeadFuncs}
}
