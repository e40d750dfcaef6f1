package passes

import (
	"cmp"
	"fmt"
	"slices"
	"strings"

	"github.com/phasec/phasec/diag"
	"github.com/phasec/phasec/phase"
)

// Check computes the phase/property flow of pipeline p statically, under
// pc's gating, starting from phase ph with properties props (see
// StartState), and reports as errors every pass that would not accept what
// it receives (naming the pass, its position, what it needs, what it would
// get and which passes or barriers would provide the difference) and every
// missing prerequisite (Info.Prerequisites). When that configuration is clean it
// checks the other opt levels 0..3 and reports, as warnings, the first
// problem each would have. No IR is touched.
func Check(p *Pass, pc *PassContext, ph phase.Phase, props phase.Set) diag.List {
	errs := simulate(p, pc, ph, props)
	if errs.HasErrors() {
		return errs
	}
	for level := range 4 {
		if level == pc.OptLevel {
			continue
		}
		alt := *pc
		alt.OptLevel = level
		if more := simulate(p, &alt, ph, props); len(more) > 0 {
			d := *more[0]
			d.Severity = diag.Warning
			d.Msg = fmt.Sprintf("at opt level %d: %s", level, d.Msg)
			errs = append(errs, &d)
		}
	}
	return errs
}

// flowState is the simulated state between passes.
type flowState struct {
	pc    *PassContext
	reg   *Registry // the passes hints may name
	ph    phase.Phase
	props phase.Set
	ran   map[string]bool
	// by names the pass that established each property, for the
	// diagnostics of Precedes (absent: it held of the input).
	by map[phase.Property]string
	// skipped are earlier pipeline passes gated off, for hints.
	skipped []*Pass
	pos     int // number of leaf steps seen, for "step N"
	errs    diag.List
}

func simulate(p *Pass, pc *PassContext, ph phase.Phase, props phase.Set) diag.List {
	s := &flowState{pc: pc, reg: pc.registryFor(p), ph: ph, props: props, ran: map[string]bool{}, by: map[phase.Property]string{}}
	if p.kind == KindSequential && p.step == nil && !p.fixpoint {
		s.seq(p)
	} else {
		s.visit(p, Reason{Kind: InPipeline})
	}
	return s.errs
}

func (s *flowState) seq(p *Pass) {
	if p.fixpoint {
		s.rounds(p)
		return
	}
	for _, c := range p.children {
		if c.kind == KindSequential {
			s.seq(c)
			continue
		}
		s.visit(c, s.pc.Gate(&c.info))
	}
}

// maxSimulatedRounds bounds the rounds of a fixpoint the check simulates:
// the states are few, and a contract sequence that has not settled after
// this many rounds cycles.
const maxSimulatedRounds = 4

// rounds simulates a fixpoint: its children as a seq run at least once,
// then again from the state each round leaves (numbered as the first
// round's steps) until the state repeats or a round finds an error. The
// run may stop after any round, so what follows the fixpoint gets what
// every simulated round's end state has: the properties common to all of
// them and the earliest of their phases.
func (s *flowState) rounds(p *Pass) {
	start := s.pos
	endPh, endProps := phase.Build, phase.Set(0)
	for round := range maxSimulatedRounds {
		ph, props, nerrs := s.ph, s.props, len(s.errs)
		s.pos = start
		for _, c := range p.children {
			if c.kind == KindSequential {
				s.seq(c)
				continue
			}
			s.visit(c, s.pc.Gate(&c.info))
		}
		if round == 0 {
			endPh, endProps = s.ph, s.props
		} else {
			endPh, endProps = min(endPh, s.ph), endProps.Intersect(s.props)
		}
		if len(s.errs) > nerrs || s.ph == ph && s.props == props {
			break
		}
	}
	s.ph, s.props = endPh, endProps
}

func (s *flowState) visit(p *Pass, why Reason) {
	if p.kind == KindSequential {
		s.seq(p)
		return
	}
	s.pos++
	pos := s.pos
	if !why.Ran() {
		s.skipped = append(s.skipped, p)
		return
	}
	in := &p.info
	for _, rp := range in.Prerequisites {
		req := rp.info.Name
		if s.ran[req] {
			continue
		}
		if s.pc.RunPrerequisites {
			if slices.Contains(s.pc.Disabled, req) {
				s.report(p, pos, codeReqDisabled, "pass %s needs its prerequisite %s, which is disabled", in.Name, req)
				continue
			}
			s.pos--
			s.visit(rp, Reason{Kind: Prerequisite, Of: in.Name})
			s.pos++
			continue
		}
		d := s.report(p, pos, codeNotRunYet, "pass %s requires %s to have run before it, but %s", in.Name, req, s.whyNotRun(req))
		d.Hint = fmt.Sprintf("put %s earlier in the pipeline, or let the context run prerequisites", req)
	}
	if !in.AcceptsPhase(s.ph) {
		d := s.report(p, pos, codeNotAccepted, "pass %s accepts %s but would get a module in phase %v", in.Name, phaseList(in.Accepts), s.ph)
		d.Hint = s.providers(in, in.Needs().Minus(s.props), in.Accepts)
	}
	needs := in.Needs()
	if missing := needs.Minus(s.props); !missing.IsEmpty() {
		shown := needs
		if !missing.Has(phase.WellFormed) {
			shown = shown.Minus(phase.Of(phase.WellFormed)) // every pass needs it; say so only when it is missing
		}
		d := s.report(p, pos, codeNotAccepted, "pass %s needs %v but would get %v: missing %v", in.Name, shown, s.props, missing)
		d.Hint = s.providers(in, missing, nil)
		s.props = s.props.Union(missing) // report the cause once, not every consequence
	}
	for _, prop := range in.PrecededProps().Intersect(s.props).List() {
		where := "it holds of the input module"
		if by, ok := s.by[prop]; ok {
			where = by + " establishes it earlier in the pipeline"
		}
		d := s.report(p, pos, codeTooLate, "pass %s must run before %v holds (%s), but %s", in.Name, prop, in.Precedes[prop], where)
		d.Hint = fmt.Sprintf("move %s before the step that establishes %v", in.Name, prop)
	}
	before := s.props
	s.ph, s.props = in.Apply(s.ph, s.props)
	for level, props := range in.EstablishesAt {
		if s.pc.OptLevel >= level {
			s.props = s.props.Union(props)
		}
	}
	for _, prop := range s.props.Minus(before).List() {
		s.by[prop] = in.Name
	}
	s.ran[in.Name] = true
}

func (s *flowState) report(p *Pass, pos int, code diag.Code, format string, args ...any) *diag.Diagnostic {
	span := diag.Span{File: p.file}
	if p.step != nil {
		span.Line, span.Col = 1, p.step.Col
	}
	d := s.errs.Add(span, code, format, args...)
	d.Msg += fmt.Sprintf(" (step %d)", pos)
	return d
}

// whyNotRun explains why a required pass has not run.
func (s *flowState) whyNotRun(req string) string {
	for _, q := range s.skipped {
		if q.info.Name == req {
			return "it does not run here (" + s.pc.Gate(&q.info).String() + ")"
		}
	}
	return "it does not run earlier in the pipeline"
}

// providers names the passes of the registry (barriers included) that
// establish some of the missing properties (or move the module to an
// accepted phase) and can run on the module as it is, and the earlier
// pipeline passes gated off that would have. A hint never names the failing pass itself, nor a pass
// that would need the missing properties to run: when no provider can run
// as things are, it names the shortest chain of passes that gets the
// module to a state the failing pass accepts (chainTo).
func (s *flowState) providers(failing *Info, missing phase.Set, phases []phase.Phase) string {
	var names []string
	var covered phase.Set
	coversPhase := len(phases) == 0
	for _, r := range s.reg.sorted {
		in := &r.info
		if in.Name == failing.Name || !in.AcceptsPhase(s.ph) || !s.props.Contains(in.Needs()) {
			continue
		}
		gives := in.Establishes
		if in.Leaves != Unchanged {
			gives = gives.Union(in.Leaves.Invariants())
		}
		if !gives.Intersect(missing).IsEmpty() || in.Leaves != Unchanged && slices.Contains(phases, in.Leaves) {
			what := gives.Intersect(missing).String()
			if in.Leaves != Unchanged {
				what = "phase " + in.Leaves.String() + " " + what
			}
			names = append(names, in.Name+" "+what)
			covered = covered.Union(gives)
			coversPhase = coversPhase || in.Leaves != Unchanged && slices.Contains(phases, in.Leaves)
		}
	}
	var hint []string
	if len(names) > 0 {
		hint = append(hint, "provided by "+strings.Join(names, ", "))
	}
	if !covered.Contains(missing) || !coversPhase {
		// No single pass runnable here provides everything: name a chain.
		if chain := chainTo(s.reg, failing, s.ph, s.props); len(chain) > 1 {
			hint = append(hint, "run "+strings.Join(chain, ",")+" first")
		}
	}
	for _, q := range s.skipped {
		if !q.info.Establishes.Intersect(missing).IsEmpty() {
			hint = append(hint, fmt.Sprintf("%s earlier in the pipeline would provide it but does not run (%v)", q.info.Name, s.pc.Gate(&q.info)))
		}
	}
	if len(hint) == 0 {
		return "no registered pass establishes it"
	}
	return strings.Join(hint, "; ")
}

// maxChain bounds the chains chainTo searches: a hint naming more steps
// than the barriers have would not help anyone.
const maxChain = 4

// chainTo returns the shortest sequence of reg's passes (barriers
// included) that, each accepting what it gets, takes a module in phase ph
// with properties props to a state target accepts; nil when there is none
// within maxChain steps. It searches breadth-first over the (phase,
// properties) states, which are few.
func chainTo(reg *Registry, target *Info, ph phase.Phase, props phase.Set) []string {
	type state struct {
		ph    phase.Phase
		props phase.Set
	}
	type node struct {
		state
		prev *node
		pass string
	}
	// Barriers (passes that leave a phase) are tried first, so that of two
	// chains of the same length the one made of barriers wins: a barrier
	// also runs the orderings no property expresses (LowerAllocTensor
	// before LowerRuntimeBuiltin), which a chain of single passes may miss.
	regs := reg.Passes()
	slices.SortStableFunc(regs, func(a, b *Pass) int {
		return cmp.Compare(btoi(a.info.Leaves == Unchanged), btoi(b.info.Leaves == Unchanged))
	})
	seen := map[state]bool{{ph, props}: true}
	frontier := []*node{{state: state{ph, props}}}
	for range maxChain {
		var next []*node
		for _, n := range frontier {
			for _, r := range regs {
				in := &r.info
				if in.Name == target.Name || !in.AcceptsPhase(n.ph) || !n.props.Contains(in.Needs()) {
					continue
				}
				p2, props2 := in.Apply(n.ph, n.props)
				st := state{p2, props2}
				if seen[st] {
					continue
				}
				seen[st] = true
				m := &node{state: st, prev: n, pass: in.Name}
				if target.AcceptsPhase(p2) && props2.Contains(target.Needs()) {
					var chain []string
					for c := m; c.prev != nil; c = c.prev {
						chain = append([]string{c.pass}, chain...)
					}
					return chain
				}
				next = append(next, m)
			}
		}
		frontier = next
	}
	return nil
}

func btoi(b bool) int {
	if b {
		return 1
	}
	return 0
}

func phaseList(ps []phase.Phase) string {
	names := make([]string, len(ps))
	for i, p := range ps {
		names[i] = p.String()
	}
	return "phase " + strings.Join(names, "|")
}
