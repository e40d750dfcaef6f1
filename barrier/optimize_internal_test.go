package barrier

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/phasec/phasec/ir"
	"github.com/phasec/phasec/passes"
	"github.com/phasec/phasec/phase"
)

// An optimize-like barrier over test passes (the real sequence lives in
// package transform): the module attribute "n" is their state.
var (
	tCountDown = passes.Define(passes.Info{Name: "TCountDown", Doc: "decrements attribute n down to 0",
		Accepts: []phase.Phase{phase.Ingest, phase.Optimize}},
		passes.Module(func(_ *passes.Env, mod *ir.Module) (*ir.Module, error) {
			n, _ := mod.Attrs.Int("n")
			if n <= 0 {
				return mod, nil
			}
			c := mod.Clone()
			c.Attrs = c.Attrs.With("n", n-1)
			return c, nil
		}))
	tO2 = passes.Define(passes.Info{Name: "TO2", Doc: "opt level 2 no-op", OptLevel: 2, Accepts: []phase.Phase{phase.Ingest, phase.Optimize}},
		passes.Module(func(_ *passes.Env, mod *ir.Module) (*ir.Module, error) { return mod, nil }))
	tO3 = passes.Define(passes.Info{Name: "TO3", Doc: "opt level 3 no-op", OptLevel: 3, Accepts: []phase.Phase{phase.Ingest, phase.Optimize}},
		passes.Module(func(_ *passes.Env, mod *ir.Module) (*ir.Module, error) { return mod, nil }))
	tFailing = passes.Define(passes.Info{Name: "TFailing", Doc: "fails", Accepts: []phase.Phase{phase.Ingest, phase.Optimize}},
		passes.Module(func(_ *passes.Env, mod *ir.Module) (*ir.Module, error) { return nil, errors.New("boom") }))

	testOptimize = &Barrier{Name: "toptimize", From: []phase.Phase{phase.Ingest, phase.Optimize}, To: phase.Optimize,
		Steps: []*passes.Pass{tCountDown, tO2, tO3}, OptLevel: 1, Fixpoint: true, Doc: "a test optimize barrier"}
	testOptimizePass = testOptimize.definePass()
)

// smallModule is an ingest module, main(x) = x, with attribute n.
func smallModule(t *testing.T, n int64) *ir.Module {
	t.Helper()
	x := ir.NewVar("x", ir.TensorInfoNDim(ir.Float32, 1))
	m := ir.NewModule()
	m.Set("main", &ir.Function{Params: []*ir.Var{x}, Body: &ir.SeqExpr{Body: x}, Ret: ir.TensorInfoNDim(ir.Float32, 1), Pure: true, Attrs: ir.Attrs{}})
	m, errs := ir.NormalizeModule(m)
	require.Empty(t, errs)
	m.Attrs = m.Attrs.With("n", n)
	return phase.Record(m, phase.Ingest)
}

// trace records executed passes as "depth:name" and skipped ones with why.
type trace struct {
	passes.BaseInstrument
	lines []string
}

func (*trace) Name() string { return "trace" }
func (tr *trace) BeforePass(ev *passes.Event) error {
	tr.lines = append(tr.lines, strings.Repeat(" ", ev.Depth)+ev.Info.Name)
	return nil
}
func (tr *trace) PassSkipped(ev *passes.Event) error {
	tr.lines = append(tr.lines, strings.Repeat(" ", ev.Depth)+ev.Info.Name+" skipped: "+ev.Why.String())
	return nil
}

func runOptimizeAt(t *testing.T, pc *passes.PassContext, mod *ir.Module) (*ir.Module, []string) {
	t.Helper()
	tr := &trace{}
	pc.Instruments = append(pc.Instruments, tr)
	out, err := pc.Run(context.Background(), passes.Sequential("pipeline", testOptimizePass), mod)
	require.NoError(t, err)
	return out, tr.lines
}

// TestOptimizeBarrierGating: the barrier is gated as a whole (opt level 1)
// and runs its steps to a fixpoint, each gated by its own opt level;
// instruments see every round's passes nested in the barrier.
func TestOptimizeBarrierGating(t *testing.T) {
	pc := passes.NewPassContext()
	out, lines := runOptimizeAt(t, pc, smallModule(t, 1))
	assert.Equal(t, []string{
		"toptimize",
		" fixpoint",
		"  round 1", "   TCountDown", "   TO2", "   TO3 skipped: opt level 3 > 2",
		"  round 2", "   TCountDown", "   TO2", "   TO3 skipped: opt level 3 > 2",
	}, lines)
	got, _ := phase.Recorded(out)
	assert.Equal(t, phase.Optimize, got)
	n, _ := out.Attrs.Int("n")
	assert.Equal(t, int64(0), n)

	// At opt level 0 the barrier is skipped: the module stays ingest.
	pc = &passes.PassContext{OptLevel: 0}
	in := smallModule(t, 1)
	out, lines = runOptimizeAt(t, pc, in)
	assert.Equal(t, []string{"toptimize skipped: opt level 1 > 0"}, lines)
	assert.Same(t, in, out)

	// Required at opt level 0, it runs only the steps of opt level 0.
	pc = &passes.PassContext{OptLevel: 0, Required: []string{"toptimize"}}
	_, lines = runOptimizeAt(t, pc, smallModule(t, 0))
	assert.Equal(t, []string{"toptimize", " fixpoint", "  round 1", "   TCountDown",
		"   TO2 skipped: opt level 2 > 0", "   TO3 skipped: opt level 3 > 0"}, lines)
}

// TestOptimizeBarrierIdempotent: a module already in phase optimize passes
// through, as with every barrier.
func TestOptimizeBarrierIdempotent(t *testing.T) {
	once, err := testOptimize.Run(context.Background(), smallModule(t, 2))
	require.NoError(t, err)
	twice, err := testOptimize.Run(context.Background(), once)
	require.NoError(t, err)
	assert.Same(t, once, twice)
}

// TestOptimizeBarrierFailureNamesThePass: a pass failing inside the
// fixpoint is the barrier error's LastPass.
func TestOptimizeBarrierFailureNamesThePass(t *testing.T) {
	b := &Barrier{Name: "tfailing", From: []phase.Phase{phase.Ingest}, To: phase.Optimize,
		Steps: []*passes.Pass{tCountDown, tFailing}, OptLevel: 1, Fixpoint: true, Doc: "fails"}
	_, err := b.Run(context.Background(), smallModule(t, 1))
	var be *Error
	require.ErrorAs(t, err, &be)
	assert.Equal(t, "TFailing", be.LastPass)
	assert.True(t, be.Failed)
	assert.ErrorContains(t, err, "tfailing barrier: pass TFailing failed: pass TFailing failed (module in phase ingest): boom")
}

// TestOptimizeBarrierContract: the real barrier accepts ingest and
// optimize, records optimize, is gated at opt level 1, and its steps are
// registered.
func TestOptimizeBarrierContract(t *testing.T) {
	in := OptimizeBarrier.Pass().Info()
	assert.Equal(t, []phase.Phase{phase.Ingest, phase.Optimize}, in.Accepts)
	assert.Equal(t, phase.Optimize, in.Leaves)
	assert.Equal(t, 1, in.OptLevel)
	assert.False(t, in.AlwaysRun)
	assert.True(t, LowerBarrier.Pass().Info().AcceptsPhase(phase.Optimize))
	for _, s := range optimizeSteps {
		got, ok := Registry.Lookup(s.Name())
		require.True(t, ok, s.Name())
		assert.Same(t, s, got)
		assert.Subset(t, s.Info().Accepts, []phase.Phase{phase.Ingest, phase.Optimize}, "%s: an optimization pass accepts ingest|optimize", s.Name())
	}
}
