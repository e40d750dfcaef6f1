package barrier

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/phasec/phasec/diag"
	"github.com/phasec/phasec/ir"
	"github.com/phasec/phasec/passes"
	"github.com/phasec/phasec/phase"
	"github.com/phasec/phasec/wellformed"
)

// Barrier is a phase transition: the passes it runs and the phase it leaves
// the module in.
type Barrier struct {
	// Name is the pipeline step name ("lower").
	Name string
	// Doc is a one-line description.
	Doc string
	// From are the phases accepted (empty: any well-formed module).
	From []phase.Phase
	// To is the phase recorded when every invariant holds.
	To phase.Phase
	// Steps are the passes the barrier runs, in order.
	Steps []*passes.Pass
	// OptLevel gates the barrier as a pipeline step, as TVM's PassContext
	// gates a pass: the lowering barriers have 0 and always run; the
	// optimize barrier has 1, so at opt level 0 it is skipped and the
	// module goes to the lower barrier in phase ingest.
	OptLevel int
	// Fixpoint runs Steps as one passes.Fixpoint (rounds until a round
	// changes nothing), each step gated by the context's opt level, as an
	// optimization sequence is; the lowering barriers run each step once,
	// ungated.
	Fixpoint bool
	// Then is a group of passes run once after Steps (after their
	// fixpoint), as one nested step, when the opt level reaches the
	// group's: the optimize barrier's fusion group.
	Then *Group
}

// The barriers, in pipeline order.
var (
	CanonicalizeBarrier = &Barrier{Name: "canonicalize", To: phase.Ingest, Steps: canonicalizeSteps,
		Doc: "barrier: normalize and lambda-lift any well-formed module, then check the ingest invariants"}
	OptimizeBarrier = &Barrier{Name: "optimize", From: []phase.Phase{phase.Ingest, phase.Optimize}, To: phase.Optimize, Steps: optimizeSteps,
		OptLevel: 1, Fixpoint: true, Then: FusionGroup,
		Doc: "barrier: run the optimization passes to a fixpoint, gated by the opt level, on an ingest module, then check the optimize invariants"}
	LowerBarrier = &Barrier{Name: "lower", From: []phase.Phase{phase.Ingest, phase.Optimize, phase.Lower}, To: phase.Lower, Steps: lowerSteps,
		Doc: "barrier: run the lowering passes on an ingest/optimize module, then check the lower invariants"}
	BuildBarrier = &Barrier{Name: "build", From: []phase.Phase{phase.Lower, phase.Build}, To: phase.Build, Steps: buildSteps,
		Doc: "barrier: run the builtin-lowering passes on a lower module, then check the build invariants"}
)

// Barriers returns the barriers in pipeline order.
func Barriers() []*Barrier {
	return []*Barrier{CanonicalizeBarrier, OptimizeBarrier, LowerBarrier, BuildBarrier}
}

// Pass returns the barrier as a pipeline step of its name (AlwaysRun).
func (b *Barrier) Pass() *passes.Pass { return barrierPasses[b] }

// barrierPasses holds each barrier's pipeline step: a module pass running
// the barrier's steps through Env.Run, so that instruments see every pass
// the barrier runs. The steps live apart from the Barrier values because
// running one reaches every barrier (a failure names the barrier that
// provides a missing property): as a field they would be an
// initialization cycle.
var barrierPasses = func() map[*Barrier]*passes.Pass {
	m := map[*Barrier]*passes.Pass{}
	for _, b := range Barriers() {
		m[b] = b.definePass()
	}
	return m
}()

// definePass defines the barrier's pipeline step.
func (b *Barrier) definePass() *passes.Pass {
	return passes.Define(b.Info(), passes.Module(func(env *passes.Env, mod *ir.Module) (*ir.Module, error) {
		return b.run(mod, env.PassContext().OptLevel, env.Run)
	}))
}

// Canonicalize takes any well-formed module to phase Ingest.
func Canonicalize(mod *ir.Module) (*ir.Module, error) {
	return CanonicalizeBarrier.Run(context.Background(), mod)
}

// Optimize takes an Ingest module to phase Optimize, running the
// optimization sequence at the default opt level (passes.DefaultOptLevel).
func Optimize(mod *ir.Module) (*ir.Module, error) {
	return OptimizeBarrier.Run(context.Background(), mod)
}

// Lower takes an Ingest or Optimize module to phase Lower.
func Lower(mod *ir.Module) (*ir.Module, error) { return LowerBarrier.Run(context.Background(), mod) }

// Build takes a Lower module to phase Build.
func Build(mod *ir.Module) (*ir.Module, error) { return BuildBarrier.Run(context.Background(), mod) }

// Info is the barrier's pass contract: it accepts its From phases, runs at
// its OptLevel (always, at 0), and leaves the module in its To phase.
func (b *Barrier) Info() passes.Info {
	in := passes.Info{Name: b.Name, Doc: b.Doc, OptLevel: b.OptLevel, AlwaysRun: b.OptLevel == 0, Accepts: b.From, Leaves: b.To}
	if b.Then != nil {
		// What the gated group leaves established (the optimize barrier's
		// fusion group legalizes): a pass that must precede it is
		// rejected after the barrier at that opt level.
		var net phase.Set
		for _, st := range b.Then.Steps {
			net = net.Minus(st.Info().Invalidates).Union(st.Info().Establishes)
		}
		in.EstablishesAt = map[int]phase.Set{b.Then.OptLevel: net}
	}
	if len(b.From) == 0 {
		in.Requires = map[phase.Property]string{
			phase.WellFormed: "it accepts a module in any phase but repairs nothing: no pass restores the structural rules",
			// A module inside the fusion or offload group is finished by
			// the group's last member, never by a barrier.
			phase.NoPrimitiveFunctions: "it does not fuse: a fusion group needs FuseTIR (a pattern group FuseTIR or RunCodegen)",
			phase.NoOffloadGroups:      "it does not offload: an offload group needs RunCodegen",
		}
	}
	return in
}

// Run runs the barrier's passes in order, then checks the
// invariants of b.To. It returns the module with its phase recorded, or an
// *Error. The input is not modified. A Fixpoint barrier's steps are gated
// at the default opt level (passes.DefaultOptLevel).
func (b *Barrier) Run(ctx context.Context, mod *ir.Module) (*ir.Module, error) {
	_, props, err := passes.StartState(mod)
	if err != nil {
		return nil, err
	}
	pc := passes.NewPassContext()
	return b.run(mod, pc.OptLevel, func(p *passes.Pass, m *ir.Module) (*ir.Module, error) {
		out, err := pc.Execute(ctx, p, m, props)
		if err == nil {
			_, props = p.Info().Apply(phase.None, props)
		}
		return out, err
	})
}

// run runs the steps through exec, then checks the invariants
// of b.To. As a pipeline step, exec is Env.Run, so instruments (timing,
// printing, dumps) see every pass the barrier runs.
//
// A module that already records b.To passes through unchanged: barriers are
// idempotent, which TVM's passes are not (a second VMShapeLower would
// re-lower the shape checks VMShapeLower already emitted, and the VM would
// read an empty shape heap). The recorded phase is trustworthy here because
// every pipeline verifies it at its start (passes.StartState).
func (b *Barrier) run(mod *ir.Module, optLevel int, exec func(*passes.Pass, *ir.Module) (*ir.Module, error)) (*ir.Module, error) {
	if p, err := phase.Recorded(mod); err == nil && p == b.To {
		return mod, nil
	}
	steps := b.Steps
	if b.Fixpoint && len(steps) > 0 {
		steps = []*passes.Pass{passes.Fixpoint(b.Steps...)}
	}
	if b.Then != nil && optLevel >= b.Then.OptLevel {
		steps = append(steps[:len(steps):len(steps)], b.Then.pass)
	}
	out, last := mod, ""
	for _, s := range steps {
		next, err := exec(s, out)
		if err != nil {
			failed := s.Name()
			if pe := (*passes.PassError)(nil); errors.As(err, &pe) {
				failed = pe.Pass // the step itself, or the pass of a fixpoint that failed
			}
			return nil, &Error{Barrier: b, LastPass: failed, Failed: true, Err: err}
		}
		out, last = next, s.String()
	}
	if errs := wellformed.Check(out, b.To); errs.HasErrors() {
		return nil, b.failure(out, last, errs)
	}
	return phase.Record(out, b.To), nil
}

// Error is a barrier that could not establish its phase.
type Error struct {
	Barrier *Barrier
	// LastPass is the last pass that ran ("" when none did).
	LastPass string
	// Failed: LastPass itself failed (Err); otherwise the passes ran and
	// the phase check found Diags.
	Failed bool
	Err    error
	// Missing are the target phase's properties that do not hold, each
	// with the pass that would establish it.
	Missing []Missing
	// Diags are the checker's diagnostics, led by one summary diagnostic
	// (code BAR001) without a position; hints name the missing passes.
	Diags diag.List
}

// Missing is a property the barrier could not establish.
type Missing struct {
	Property phase.Property
	// By is the pass that establishes it ("" when none is known).
	By string
	// Barrier is the barrier whose sequence holds By.
	Barrier string
}

// Reason says why the property is missing, e.g. "Legalized: LegalizeOps
// (in the lower barrier) did not establish it".
func (m Missing) Reason() string {
	if m.By == "" {
		return m.Property.String() + ": no pass establishes it"
	}
	return m.Property.String() + ": " + m.By + " (in the " + m.Barrier + " barrier) did not establish it"
}

// CodeBarrier is the code of a barrier's summary diagnostic.
var CodeBarrier = barCodes.Define("BAR001", "a barrier could not establish its phase (a pass failed, or the module still violates the phase's rules)")

func (e *Error) Error() string {
	if e.Failed {
		return fmt.Sprintf("%s barrier: pass %s failed: %v", e.Barrier.Name, e.LastPass, e.Err)
	}
	return e.Diags.Error()
}

// Unwrap exposes the diagnostics (or the failed pass's error).
func (e *Error) Unwrap() error {
	if e.Failed {
		return e.Err
	}
	return e.Diags
}

// provider finds the step (in any barrier) establishing p.
func provider(p phase.Property) (*passes.Pass, *Barrier, bool) {
	for _, b := range Barriers() {
		for _, s := range b.Steps {
			if s.Info().Establishes.Has(p) {
				return s, b, true
			}
		}
	}
	return nil, nil, false
}

func (b *Barrier) failure(out *ir.Module, last string, errs diag.List) *Error {
	e := &Error{Barrier: b, LastPass: last}
	// The properties that do not hold are those the checker's errors belong
	// to: no second walk of the module is needed to find them.
	var missing phase.Set
	for _, d := range errs {
		if r, ok := wellformed.LookupRule(d.Code); ok && d.Severity == diag.Error {
			missing = missing.With(r.Property)
		}
	}
	missing = missing.Intersect(b.To.Invariants())
	hints := map[phase.Property]string{}
	var reasons []string
	for _, p := range missing.List() {
		m := Missing{Property: p}
		if s, pb, ok := provider(p); ok {
			m.By, m.Barrier = s.Name(), pb.Name
			if pb != b {
				hints[p] = "run " + s.Name() + ", or the " + pb.Name + " barrier, first"
			}
		}
		e.Missing = append(e.Missing, m)
		reasons = append(reasons, m.Reason())
	}
	after := "before any pass ran"
	if last != "" {
		after = "after " + last
	}
	summary := &diag.Diagnostic{Span: diag.Span{File: out.Source}, Severity: diag.Error, Code: CodeBarrier,
		Msg: fmt.Sprintf("%s barrier: the module is not in phase %v %s: missing %s", b.Name, b.To, after, strings.Join(reasons, "; "))}
	if len(reasons) == 0 {
		summary.Msg = fmt.Sprintf("%s barrier: the module is not well-formed %s", b.Name, after)
	}
	e.Diags = append(diag.List{summary}, errs...)
	for i, d := range e.Diags[1:] {
		r, ok := wellformed.LookupRule(d.Code)
		if !ok {
			continue
		}
		if h, ok := hints[r.Property]; ok {
			c := *d
			c.Hint = h
			e.Diags[i+1] = &c
		}
	}
	return e
}
