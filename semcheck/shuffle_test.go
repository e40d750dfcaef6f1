package semcheck

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/phasec/phasec/barrier"
	"github.com/phasec/phasec/diag"
	"github.com/phasec/phasec/ir"
	"github.com/phasec/phasec/ir/randmod"
	"github.com/phasec/phasec/passes"
	"github.com/phasec/phasec/phase"
	"github.com/phasec/phasec/syntax"
)

// The passes of the lower and build barriers, in the barriers' order.
var (
	lowerSteps = []string{"LegalizeOps", "RewriteDataflowReshape", "ToNonDataflow", "RemovePurityChecking", "CallTIRRewrite"}
	buildSteps = []string{"StaticPlanBlockMemory", "LowerAllocTensor", "KillAfterLastUse", "LowerRuntimeBuiltin",
		"ComputePrimValue", "VMShapeLower", "AttachGlobalSymbol"}
)

// optimizationPasses are the passes of reg the shuffle runs between
// canonicalize and the lowering steps, read from their contracts: every
// pass that accepts a module in phase ingest or optimize, names no later
// phase (its horizon: not a lowering or build step) and does not move the
// module to another phase (not a barrier: no Leaves, not AlwaysRun).
// Today Normalize and LambdaLift; every optimization pass registered in
// barrier.Registry joins them.
func optimizationPasses(reg *passes.Registry) []string {
	var out []string
	for _, p := range reg.Passes() {
		in := p.Info()
		if _, ok := notShuffled[p.Name()]; ok {
			continue
		}
		if in.AlwaysRun || in.Leaves != passes.Unchanged || in.Horizon() > phase.Optimize ||
			!in.AcceptsPhase(phase.Ingest) && !in.AcceptsPhase(phase.Optimize) {
			continue
		}
		if !in.Invalidates.Intersect(phase.Ingest.Invariants()).IsEmpty() {
			// It opens a group of passes (FuseOps: only FuseTIR may follow
			// it), which the optimize barrier runs as a unit: shuffled on
			// its own it only makes orders the static check rejects.
			continue
		}
		out = append(out, p.Name())
	}
	return out
}

// notShuffled are the passes the random orders and pipeline searches leave
// out, each with the reason: a semantic oracle that runs the public
// functions on the same arguments before and after cannot judge a pass
// that changes their signatures, and some need a module written for them.
var notShuffled = map[string]string{
	"LiftTransformParams":   "the public functions take the transformed weights after it (its own tests check transform then main)",
	"LazyTransformParams":   "its transform function takes get_item/set_item callbacks after it",
	"LazyGetInput":          "its functions take a get-input callback after it",
	"LazySetOutput":         "its functions take a set-output callback after it",
	"UpdateParamStructInfo": "it changes parameter struct info as its options say; with none it does nothing",
	"Gradient":              "it needs a function whose result is a scalar loss (func_name); other modules are refused (OPT302)",
}

// runWithDefaults keeps the passes that run with their default options
// on smallModule at ingest. The others fail on any module without options
// chosen for it (BindParams needs the function and the .npz file to bind),
// so no order of them says anything; they are logged, and must fail with
// an error, never a panic.
func runWithDefaults(t *testing.T, names []string) []string {
	t.Helper()
	mod, diags := syntax.Parse("small.tvms", []byte(smallModule))
	require.Empty(t, diags)
	var out []string
	for _, name := range names {
		p, diags := barrier.Registry.ParseAndBuild("pipeline", "canonicalize,"+name)
		require.Empty(t, diags)
		pc := passes.NewPassContext()
		pc.OptLevel = 3
		var err error
		require.NotPanics(t, func() { _, err = pc.Run(context.Background(), p, mod) }, name)
		if err != nil {
			t.Logf("%s is not shuffled: it needs options (with its defaults: %v)", name, err)
			continue
		}
		out = append(out, name)
	}
	return out
}

// shuffle returns a random order of steps respecting every documented
// ordering constraint between two of them (barrier.Constraints: derived
// from the contracts or stated with a reason), the steps'
// prerequisites, and, among steps no barrier runs, A before B when B
// requires a property A establishes that the module entering the steps
// (in phase ingest) may lack. Whatever else the contracts forbid, the
// static check of the pipeline rejects.
func shuffle(rng *rand.Rand, steps []string) []string {
	after := map[string][]string{} // pass -> passes that must precede it
	in := map[string]*passes.Pass{}
	for _, s := range steps {
		p, ok := barrier.Registry.Lookup(s)
		if !ok {
			panic("shuffle: no pass " + s)
		}
		in[s] = p
	}
	for _, c := range barrier.Constraints() {
		if before, then := c.Before.Name(), c.After.Name(); in[before] != nil && in[then] != nil {
			after[then] = append(after[then], before)
		}
	}
	held := phase.Ingest.Invariants()
	for _, b := range steps {
		bi := in[b].Info()
		for _, q := range bi.Prerequisites {
			if in[q.Name()] != nil {
				after[b] = append(after[b], q.Name())
			}
		}
		for _, prop := range bi.RequiredProps().Minus(held).List() {
			for _, a := range steps {
				if a != b && in[a].Info().Establishes.Has(prop) {
					after[b] = append(after[b], a)
				}
			}
		}
	}
	placed := map[string]bool{}
	var out []string
	for len(out) < len(steps) {
		var ready, rest []string
		for _, s := range steps {
			if placed[s] {
				continue
			}
			rest = append(rest, s)
			ok := true
			for _, b := range after[s] {
				ok = ok && placed[b]
			}
			if ok {
				ready = append(ready, s)
			}
		}
		if len(ready) == 0 {
			ready = rest[:1] // contradictory constraints: the static check decides
		}
		s := ready[rng.IntN(len(ready))]
		placed[s] = true
		out = append(out, s)
	}
	return out
}

// TestShuffledPipelinesKeepResults is the pass-shuffling mode: the
// optimization passes (optimizationPasses), the lower and build passes run
// in random orders that the contracts' static check
// and the documented ordering constraints allow, each with the semantic,
// well-formedness and crash checks after every pass. An allowed order that
// breaks a module would be an undeclared ordering dependence (a missing
// contract declaration or constraint).
var shuffleRandom = flag.Int("shuffle.random", 20, "random modules the pass-shuffling test also runs (3 orders each)")

func TestShuffledPipelinesKeepResults(t *testing.T) {
	rng := rand.New(rand.NewPCG(14, 15))
	optSteps := runWithDefaults(t, optimizationPasses(barrier.Registry))
	t.Logf("optimization passes shuffled: %s", strings.Join(optSteps, ", "))
	paths := []string{"../testdata/models/mlp.tvms", "../testdata/relax_closure_capture.tvms",
		"../testdata/relax_if_local_function.tvms", "../testdata/relax_tuples.tvms",
		"../testdata/relax_shape_and_prim_values.tvms", "../testdata/lowered_call_tir_inplace.tvms"}
	accepted, rejected, incomplete, built := 0, 0, 0, 0
	orders := map[string]bool{}
	type subject struct {
		path   string
		mod    *ir.Module
		orders int
	}
	var subjects []subject
	for _, path := range paths {
		subjects = append(subjects, subject{path, parseFile(t, path), 12})
	}
	// Random modules (ir/randmod) widen what the orders run on: If,
	// closures, tuples, shape-changing ops, float16 and int32.
	for seed := range uint64(*shuffleRandom) {
		mod, diags := syntax.Parse("randmod.tvms", []byte(randmod.Generate(seed).Text))
		require.Empty(t, diags)
		subjects = append(subjects, subject{fmt.Sprintf("randmod seed %d", seed), mod, 3})
	}
	for _, sub := range subjects {
		path, mod := sub.path, sub.mod
		for range sub.orders {
			// The build steps run explicitly and the build barrier's
			// checks follow without re-running them: the phase is recorded
			// and VM code generation checks the build invariants.
			spec := "canonicalize," + strings.Join(shuffle(rng, optSteps), ",") + "," +
				strings.Join(shuffle(rng, lowerSteps), ",") + ",lower," + strings.Join(shuffle(rng, buildSteps), ",")
			p, diags := testPasses.ParseAndBuild("pipeline", spec)
			require.Empty(t, diags)
			c := &Checker{Inputs: Inputs{Seed: 1, Dim: 3, TolFor: HalfComputeTol}}
			require.NoError(t, c.Reference(mod))
			w, last := &watch{}, &lastProps{}
			pc := passes.NewPassContext()
			pc.OptLevel = 3 // every optimization pass runs, whatever its opt level
			pc.Instruments = []passes.Instrument{w, c, last}
			out, err := pc.Run(context.Background(), p, mod)
			var dl diag.List
			if w.first == nil && c.Failure == nil && errors.As(err, &dl) {
				rejected++ // the contracts reject this order statically
				continue
			}
			accepted++
			orders[spec] = true
			switch {
			case w.first != nil:
				assert.Failf(t, "an allowed order fails", "%s: the order %s is allowed but %s fails (%s): %s", path, spec, w.first.Name, w.first.Kind, w.first.Detail)
			case c.Failure != nil:
				assert.Failf(t, "an allowed order fails", "%s: the order %s is allowed but %v", path, spec, c.Failure)
			case err != nil:
				assert.Failf(t, "an allowed order fails", "%s: the order %s is allowed but fails: %v", path, spec, err)
			case !last.props.Contains(phase.Build.Invariants()):
				// The contracts do not claim the build invariants (e.g. a
				// kill emitted after LowerRuntimeBuiltin): only the build
				// barrier, re-running its steps, would finish the module.
				incomplete++
			default:
				assert.Nil(t, c.Check("the build checks", out, phase.Record(out, phase.Build)), "%s: the order %s is allowed but fails the build checks", path, spec)
				built++
			}
		}
	}
	t.Logf("%d orders accepted by the contracts (%d distinct), %d rejected statically; %d run on the VM, %d end without the build invariants claimed",
		accepted, len(orders), rejected, built, incomplete)
	require.Positive(t, built)
	require.GreaterOrEqual(t, len(orders), 8, "the shuffle explores more than the default order")
}

// lastProps remembers what the contracts claim after the last pass.
type lastProps struct {
	passes.BaseInstrument
	props phase.Set
}

func (*lastProps) Name() string { return "last-props" }

func (l *lastProps) AfterPass(ev *passes.Event) error {
	if ev.Pass.Kind() != passes.KindSequential {
		l.props = ev.PropsAfter
	}
	return nil
}

// TestOptimizationPassesFromContracts: the shuffled optimization passes
// are read from the registry's contracts: the ingest passes are among
// them, no barrier and no lowering or build step is, and a pass declared
// the way an optimization pass is (accepts ingest|optimize) joins them.
func TestOptimizationPassesFromContracts(t *testing.T) {
	got := optimizationPasses(barrier.Registry)
	assert.Subset(t, got, []string{"Normalize", "LambdaLift"})
	for _, b := range barrier.Barriers() {
		assert.NotContains(t, got, b.Name)
		for _, s := range b.Steps {
			if b != barrier.CanonicalizeBarrier && b != barrier.OptimizeBarrier {
				assert.NotContains(t, got, s.Name(), "a %s step", b.Name)
			}
		}
	}
	opt := passes.Define(passes.Info{Name: "OptimizeForTest", Doc: "an optimization pass's contract", OptLevel: 3,
		Accepts:  []phase.Phase{phase.Ingest, phase.Optimize},
		Requires: map[phase.Property]string{phase.Normalized: "it reads A-normal form"}},
		passes.Module(func(_ *passes.Env, mod *ir.Module) (*ir.Module, error) { return mod, nil }))
	lowering := passes.Define(passes.Info{Name: "LowerForTest", Doc: "a lowering step's contract",
		Requires: map[phase.Property]string{phase.Legalized: "it reads call_tir"}},
		passes.Module(func(_ *passes.Env, mod *ir.Module) (*ir.Module, error) { return mod, nil }))
	withOpt := optimizationPasses(barrier.Registry.With(opt, lowering))
	assert.Contains(t, withOpt, "OptimizeForTest")
	assert.NotContains(t, withOpt, "LowerForTest")
	assert.Len(t, withOpt, len(got)+1)
}
