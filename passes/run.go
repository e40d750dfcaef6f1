package passes

import (
	"context"
	"errors"
	"fmt"
	"runtime/debug"
	"weak"

	"github.com/phasec/phasec/diag"
	"github.com/phasec/phasec/ir"
	"github.com/phasec/phasec/phase"
	"github.com/phasec/phasec/wellformed"
)

// hashModule is the structural hash used for change detection; a variable
// so tests can count calls.
var hashModule = func(m *ir.Module) uint64 { return ir.StructuralHash(m) }

// StartState returns what holds of mod before any pass: the properties
// wellformed.Infer finds in its content (one linear walk) and its recorded
// phase. A recorded phase is a claim: when the content does not satisfy
// the phase's invariants, StartState refuses the module with a diag.List
// led by a CHK004 summary and followed by the checker's violations; the
// claim is never passed on.
func StartState(mod *ir.Module) (phase.Phase, phase.Set, error) {
	ph, err := phase.Recorded(mod)
	if err != nil {
		return phase.None, 0, err
	}
	props := wellformed.Infer(mod)
	if missing := ph.Invariants().Minus(props); !missing.IsEmpty() {
		// Only a false claim pays for the second walk that positions the
		// violations.
		errs := wellformed.Check(mod, ph)
		summary := &diag.Diagnostic{Span: diag.Span{File: mod.Source}, Severity: diag.Error, Code: CodeFalseClaim,
			Msg:  fmt.Sprintf("the module records phase %v but does not satisfy it: missing %v", ph, missing),
			Hint: "fix the module, or remove its phase attribute to have its properties inferred from its content"}
		return ph, props, append(diag.List{summary}, errs...)
	}
	return ph, props, nil
}

// Run validates the context, statically checks p against mod's start state
// (Check) and, when both pass, runs p. A root Sequential is transparent:
// its children are the top-level steps. Errors are diag.List (validation,
// static check), *PassError or *InstrumentError (joined with any exit-hook
// errors), or ctx's error on cancellation.
func (pc *PassContext) Run(ctx context.Context, p *Pass, mod *ir.Module) (*ir.Module, error) {
	if errs := pc.validate(pc.registryFor(p)); errs.HasErrors() {
		return nil, errs
	}
	ph, props, err := StartState(mod)
	if err != nil {
		return nil, err
	}
	errs := Check(p, pc, ph, props)
	var failed diag.List
	for _, d := range errs {
		if d.Severity == diag.Error {
			failed = append(failed, d)
		} else if pc.Warn != nil {
			pc.Warn(d)
		}
	}
	if failed != nil {
		return nil, failed
	}
	return pc.Execute(ctx, p, mod, props)
}

// Execute runs p without the static check (Run = Validate + Check +
// Execute); props is what holds of mod (see StartState).
func (pc *PassContext) Execute(ctx context.Context, p *Pass, mod *ir.Module, props phase.Set) (*ir.Module, error) {
	r := &runner{ctx: ctx, pc: pc, ran: map[string]bool{}, props: props}
	for _, in := range pc.Instruments {
		if _, blind := in.(ChangeBlind); !blind {
			r.track = true
		}
		if _, blind := in.(InputBlind); !blind {
			r.keepInput = true
		}
	}
	var entered []Instrument
	var runErr error
	for _, in := range pc.Instruments {
		if err := callHook(in, "EnterContext", "", func() error { return in.EnterContext(pc) }); err != nil {
			runErr = err
			break
		}
		entered = append(entered, in)
	}
	out := mod
	if runErr == nil {
		if p.kind == KindSequential && p.step == nil && !p.fixpoint {
			out, runErr = r.children(p, mod, 0)
		} else {
			out, runErr = r.step(p, mod, 0, Reason{Kind: InPipeline})
		}
	}
	errs := []error{runErr}
	for _, in := range entered {
		errs = append(errs, callHook(in, "ExitContext", "", func() error { return in.ExitContext(pc) }))
	}
	if err := errors.Join(errs...); err != nil {
		return nil, err
	}
	return out, nil
}

type runner struct {
	ctx   context.Context
	pc    *PassContext
	ran   map[string]bool
	seq   int
	props phase.Set
	// track: some instrument reads Event.Changed or hashes.
	track bool
	// keepInput: some instrument reads Event.Before after the pass ran.
	keepInput bool
	// The last hashed module and its hash: modules are immutable, so the
	// output hash of one pass is the input hash of the next.
	hashedMod  *ir.Module
	hashedHash uint64
}

func (r *runner) hash(m *ir.Module) uint64 {
	if m != r.hashedMod {
		r.hashedMod, r.hashedHash = m, hashModule(m)
	}
	return r.hashedHash
}

func (r *runner) children(p *Pass, mod *ir.Module, depth int) (*ir.Module, error) {
	for _, c := range p.children {
		why := Reason{Kind: InPipeline}
		if c.kind != KindSequential {
			why = r.pc.Gate(&c.info)
		}
		var err error
		mod, err = r.step(c, mod, depth, why)
		if err != nil {
			return nil, err
		}
	}
	return mod, nil
}

// rounds runs the children of a Fixpoint in rounds, each a Sequential
// "round N" at depth, until a round returns its input or a module
// structurally equal to it, or the config's iteration cap is reached (a
// warning). The round count is the fixpoint's statistic "rounds".
func (r *runner) rounds(p *Pass, mod *ir.Module, depth int, ev *Event) (*ir.Module, error) {
	limit := r.pc.Config[FixpointMaxIterations]
	if limit == nil {
		k, _ := lookupConfig(FixpointMaxIterations)
		limit = k.Default
	}
	maxRounds := 1
	if n, ok := Int.check(limit); ok { // Run validated it; Execute alone may get a Go int
		maxRounds = max(1, int(n.(int64)))
	}
	for round := 1; ; round++ {
		rp := &Pass{info: Info{Name: fmt.Sprintf("round %d", round), Doc: "one round of a fixpoint"},
			impl: impl{kind: KindSequential}, children: p.children}
		out, err := r.step(rp, mod, depth, Reason{Kind: InPipeline})
		if err != nil {
			return nil, err
		}
		// Passes return their input when they change nothing, so the
		// pointer test settles the last round of a converging sequence
		// without walking it; the structural test catches passes that
		// rebuild an equal module.
		if out == mod || ir.StructuralEqual(out, mod, ir.EqualOptions{}) {
			ev.Stats = append(ev.Stats, Stat{Name: "rounds", Value: int64(round)})
			return out, nil
		}
		if round >= maxRounds {
			ev.Stats = append(ev.Stats, Stat{Name: "rounds", Value: int64(round)})
			if r.pc.Warn != nil {
				span := diag.Span{File: p.file}
				if p.step != nil {
					span.Line, span.Col = 1, p.step.Col
				}
				r.pc.Warn(&diag.Diagnostic{Span: span, Severity: diag.Warning, Code: CodeFixpointCap,
					Msg:  fmt.Sprintf("%v did not converge: round %d still changed the module (config %s=%d)", p, round, FixpointMaxIterations, maxRounds),
					Hint: "two of its passes may undo each other; raise the cap with --config " + FixpointMaxIterations + "=N"})
			}
			return out, nil
		}
		mod = out
	}
}

func (r *runner) hooks(hook string, ev *Event, f func(Instrument) error) error {
	for _, in := range r.pc.Instruments {
		if err := callHook(in, hook, ev.Info.Name, func() error { return f(in) }); err != nil {
			return err
		}
	}
	return nil
}

// step runs (or skips) one pass of a pipeline.
func (r *runner) step(p *Pass, mod *ir.Module, depth int, why Reason) (*ir.Module, error) {
	if err := r.ctx.Err(); err != nil {
		return nil, err
	}
	ph, _ := phase.Recorded(mod)
	ev := &Event{Pass: p, Info: &p.info, Depth: depth, Why: why, Before: mod, PhaseBefore: ph, PropsBefore: r.props}
	if !why.Ran() {
		return mod, r.hooks("PassSkipped", ev, func(in Instrument) error { return in.PassSkipped(ev) })
	}
	if why.Kind == InPipeline && p.kind != KindSequential {
		for _, in := range r.pc.Instruments {
			var ok bool
			err := callHook(in, "ShouldRun", p.info.Name, func() (e error) { ok, e = in.ShouldRun(ev); return })
			if err != nil {
				return nil, err
			}
			if !ok {
				ev.Why = Reason{Kind: ByInstrument, Of: in.Name()}
				return mod, r.hooks("PassSkipped", ev, func(in Instrument) error { return in.PassSkipped(ev) })
			}
		}
	}
	if p.kind != KindSequential && r.pc.RunPrerequisites {
		for _, req := range p.info.Prerequisites {
			if r.ran[req.info.Name] {
				continue
			}
			var err error
			mod, err = r.step(req, mod, depth, Reason{Kind: Prerequisite, Of: p.info.Name})
			if err != nil {
				return nil, err
			}
			ev.Before, ev.PropsBefore = mod, r.props
			ev.PhaseBefore, _ = phase.Recorded(mod)
		}
	}
	if p.kind != KindSequential {
		r.seq++
		ev.Seq = r.seq
	}
	if r.track {
		ev.HashBefore, ev.Hashed = r.hash(mod), true
	}
	if err := r.hooks("BeforePass", ev, func(in Instrument) error { return in.BeforePass(ev) }); err != nil {
		return nil, err
	}
	if r.pc.Trace != nil {
		r.pc.Trace(mod, &p.info, true)
	}
	// From here on the input is referenced only through the pass's own
	// argument, so that once the pass no longer reads it (a barrier's first
	// step is done with it) it can be collected; input still tells whether
	// the pass returned it unchanged.
	input := weak.Make(mod)
	if !r.keepInput {
		ev.Before = nil
	}
	start := r.pc.now()
	var out *ir.Module
	var err error
	if p.kind == KindSequential {
		if p.fixpoint {
			out, err = r.rounds(p, mod, depth+1, ev)
		} else {
			out, err = r.children(p, mod, depth+1)
		}
		var ie *InstrumentError
		if err != nil && (errors.As(err, &ie) || r.ctx.Err() != nil) {
			return nil, err
		}
	} else {
		out, err = r.invoke(p, mod, ph, depth, ev)
	}
	ev.Duration = r.pc.now().Sub(start)
	var props phase.Set
	if err == nil && p.kind != KindSequential {
		var want phase.Phase
		want, props = p.info.Apply(ph, r.props)
		out, err = r.settlePhase(p, out, ph, want)
	}
	if err != nil {
		ev.Err = err
		if herr := r.hooks("AfterPassFailed", ev, func(in Instrument) error { return in.AfterPassFailed(ev) }); herr != nil {
			return nil, errors.Join(err, herr)
		}
		return nil, err
	}
	ev.After = out
	ev.PhaseAfter, _ = phase.Recorded(out)
	if p.kind != KindSequential {
		r.props = props
		r.ran[p.info.Name] = true
	}
	ev.PropsAfter = r.props
	switch {
	case out == input.Value():
		ev.HashAfter = ev.HashBefore
	case r.track:
		ev.HashAfter = r.hash(out)
		ev.Changed = ev.HashAfter != ev.HashBefore
	default:
		ev.Changed = true
	}
	if err := r.hooks("AfterPass", ev, func(in Instrument) error { return in.AfterPass(ev) }); err != nil {
		return nil, err
	}
	if r.pc.Trace != nil {
		r.pc.Trace(out, &p.info, false)
	}
	return out, nil
}

// invoke runs a non-sequential pass body, recovering a panic into a
// PassError that names the pass and the phase.
func (r *runner) invoke(p *Pass, mod *ir.Module, ph phase.Phase, depth int, ev *Event) (out *ir.Module, err error) {
	defer func() {
		if rec := recover(); rec != nil {
			out, err = nil, &PassError{Pass: p.info.Name, Phase: ph, Err: fmt.Errorf("%v", rec), Panic: true, Stack: debug.Stack()}
		}
	}()
	env := &Env{ctx: r.ctx, pc: r.pc, info: &p.info, opts: p.opts, r: r, depth: depth, ev: ev}
	switch p.kind {
	case KindModule:
		out, err = p.module(env, mod)
	default:
		out, err = runPerFunction(env, p, mod)
	}
	if err != nil {
		var pe *panicError
		if errors.As(err, &pe) {
			return nil, &PassError{Pass: p.info.Name, Phase: ph, Err: pe, Panic: true, Stack: pe.stack}
		}
		return nil, &PassError{Pass: p.info.Name, Phase: ph, Err: err}
	}
	if out == nil {
		return nil, &PassError{Pass: p.info.Name, Phase: ph, Err: errors.New("pass returned a nil module")}
	}
	return out, nil
}

// settlePhase enforces Info.Leaves: the output must record that phase; when
// the pass left the phase as it was, the framework records it. A pass that
// leaves the phase unchanged may still lose the claim to it (Info.Apply
// computed want): the framework records the phase its contract vouches for.
func (r *runner) settlePhase(p *Pass, out *ir.Module, before, want phase.Phase) (*ir.Module, error) {
	got, err := phase.Recorded(out)
	if err != nil {
		return nil, &PassError{Pass: p.info.Name, Phase: before, Err: err}
	}
	switch {
	case p.info.Leaves == Unchanged && got != before:
		return nil, &PassError{Pass: p.info.Name, Phase: before,
			Err: fmt.Errorf("pass changed the module's phase from %v to %v but declares Leaves: Unchanged", before, got)}
	case got == want:
		return out, nil
	case p.info.Leaves == Unchanged || got == before:
		return phase.Record(out, want), nil
	}
	return nil, &PassError{Pass: p.info.Name, Phase: before,
		Err: fmt.Errorf("pass recorded phase %v but declares it leaves the module in %v", got, want)}
}
