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

// shuffle returns a random order of steps respecting every documented
// ordering constraint between two of them (barrier.Constraints: derived
// from the contracts or stated with a reason).
func shuffle(rng *rand.Rand, steps []string) []string {
	after := map[string][]string{} // pass -> passes that must precede it
	in := map[string]bool{}
	for _, s := range steps {
		in[s] = true
	}
	for _, c := range barrier.Constraints() {
		if before, then := c.Before.Name(), c.After.Name(); in[before] && in[then] {
			after[then] = append(after[then], before)
		}
	}
	placed := map[string]bool{}
	var out []string
	for len(out) < len(steps) {
		var ready []string
		for _, s := range steps {
			if placed[s] {
				continue
			}
			ok := true
			for _, b := range after[s] {
				ok = ok && placed[b]
			}
			if ok {
				ready = append(ready, s)
			}
		}
		s := ready[rng.IntN(len(ready))]
		placed[s] = true
		out = append(out, s)
	}
	return out
}

// TestShuffledPipelinesKeepResults is the pass-shuffling mode: the lower
// and build passes run in random orders that the contracts' static check
// and the documented ordering constraints allow, each with the semantic,
// well-formedness and crash checks after every pass. An allowed order that
// breaks a module would be an undeclared ordering dependence (a missing
// contract declaration or constraint).
var shuffleRandom = flag.Int("shuffle.random", 20, "random modules the pass-shuffling test also runs (3 orders each)")

func TestShuffledPipelinesKeepResults(t *testing.T) {
	rng := rand.New(rand.NewPCG(14, 15))
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
			spec := "canonicalize," + strings.Join(shuffle(rng, lowerSteps), ",") + ",lower," +
				strings.Join(shuffle(rng, buildSteps), ",")
			p, diags := testPasses.ParseAndBuild("pipeline", spec)
			require.Empty(t, diags)
			c := &Checker{Inputs: Inputs{Seed: 1, Dim: 3}}
			require.NoError(t, c.Reference(mod))
			w, last := &watch{}, &lastProps{}
			pc := passes.NewPassContext()
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
