package semcheck

import (
	"context"
	"fmt"
	"slices"
	"strings"

	"github.com/phasec/phasec/ir"
	"github.com/phasec/phasec/op"
	"github.com/phasec/phasec/passes"
	"github.com/phasec/phasec/phase"
	"github.com/phasec/phasec/syntax"
	"github.com/phasec/phasec/syntax/printer"
	"github.com/phasec/phasec/wellformed"
)

// FailureKind is the property a module fails after the culprit pass.
type FailureKind string

const (
	Semantic  FailureKind = "semantic"        // the result changed
	Malformed FailureKind = "well-formedness" // the module breaks an invariant its contracts claim
	PassCrash FailureKind = "crash"           // the pass failed or panicked
	// EvalCrash: the module after the pass can no longer be evaluated (the
	// evaluator or, in phase build, code generation or the VM fails).
	EvalCrash FailureKind = "evaluation"
)

// Culprit is the first pass after which a pipeline's module fails a
// property, with the module the pass received.
type Culprit struct {
	Pass   *passes.Pass
	Name   string
	Kind   FailureKind
	Detail string
	// Input is the module the pass received; Props what its contracts claim
	// of it, PropsAfter what they claim after the pass.
	Input             *ir.Module
	Phase             phase.Phase
	Props, PropsAfter phase.Set
}

// watch records the first failure of a run: a well-formedness violation
// after a pass, or a pass that failed. It is installed before the Checker so
// that it sees every pass first.
type watch struct {
	passes.BaseInstrument
	first *Culprit
	// c is the run's Checker: once it has failed a pass, the enclosing
	// passes (a barrier around the step) fail with its error, which is
	// not a crash of theirs.
	c *Checker
}

func (*watch) Name() string { return "bisect-watch" }

func (w *watch) AfterPass(ev *passes.Event) error {
	// Checked even when the pass changed nothing: what its contract claims
	// must hold of its result either way.
	if w.first != nil || ev.Pass.Kind() == passes.KindSequential {
		return nil
	}
	if errs := wellformed.CheckProperties(ev.After, ev.PropsAfter); errs.HasErrors() {
		w.first = culpritOf(ev, Malformed, errs.Error())
		return errs
	}
	return nil
}

func (w *watch) AfterPassFailed(ev *passes.Event) error {
	if w.first == nil && ev.Pass.Kind() != passes.KindSequential && (w.c == nil || w.c.Failure == nil) {
		w.first = culpritOf(ev, PassCrash, ev.Err.Error())
	}
	return nil
}

func culpritOf(ev *passes.Event, kind FailureKind, detail string) *Culprit {
	return &Culprit{Pass: ev.Pass, Name: ev.Info.Name, Kind: kind, Detail: detail, Input: ev.Before,
		Phase: ev.PhaseBefore, Props: ev.PropsBefore, PropsAfter: ev.PropsAfter}
}

// semWatch remembers the event of the Checker's mismatch (the Checker
// reports the modules, not the pass value and its properties).
type semWatch struct {
	passes.BaseInstrument
	c    *Checker
	last *passes.Event
}

func (*semWatch) Name() string { return "bisect-semantics" }

// AfterPass runs before the Checker's (semWatch is installed first), so
// when the Checker fails a pass, last is that pass's event.
func (s *semWatch) AfterPass(ev *passes.Event) error {
	if ev.Pass.Kind() != passes.KindSequential {
		s.last = ev
	}
	return nil
}

// progressWatch reports each pass FindCulprit checks.
type progressWatch struct {
	passes.BaseInstrument
	in *Inputs
}

func (*progressWatch) Name() string { return "bisect-progress" }
func (*progressWatch) ChangeBlind() {}
func (*progressWatch) InputBlind()  {}

func (p *progressWatch) BeforePass(ev *passes.Event) error {
	if ev.Pass.Kind() != passes.KindSequential {
		p.in.progress("checking pass %d: %s", ev.Seq, ev.Info.Name)
	}
	return nil
}

// FindCulprit runs pipeline on mod, checking after every pass that changed
// the module its result (Checker), its well-formedness against what the
// contracts claim, and that the pass did not fail. It returns the first
// failing pass (the innermost: a step of a barrier rather than the
// barrier), or nil when the pipeline keeps every property. err reports
// what prevents the check itself (bad inputs, a pipeline the static check
// rejects).
func FindCulprit(mod *ir.Module, pipeline *passes.Pass, in Inputs) (*Culprit, error) {
	c := &Checker{Inputs: in}
	if err := c.Reference(mod); err != nil {
		return nil, err
	}
	w := &watch{c: c}
	sw := &semWatch{c: c}
	pc := passes.NewPassContext()
	pc.Instruments = []passes.Instrument{&progressWatch{in: &in}, sw, w, c}
	_, err := pc.Run(context.Background(), pipeline, mod)
	switch {
	case w.first != nil:
		return w.first, nil
	case c.Failure != nil:
		m := c.Failure
		kind := Semantic
		if m.Crash {
			kind = EvalCrash
		}
		cu := &Culprit{Name: m.Pass, Kind: kind, Detail: m.Detail, Input: m.Before}
		if ev := sw.last; ev != nil && ev.Info.Name == m.Pass {
			cu.Pass, cu.Phase, cu.Props, cu.PropsAfter = ev.Pass, ev.PhaseBefore, ev.PropsBefore, ev.PropsAfter
		}
		return cu, nil
	case err != nil:
		return nil, err // e.g. the static check rejected the pipeline
	}
	return nil, nil
}

// Fails reports whether running the culprit's pass on mod fails the
// culprit's property again: the same failure kind and, for crashes and
// well-formedness violations, a Similar message (a reduced module must not
// fail for another reason than the original; a semantic mismatch's message
// names values and output positions that reduction changes, so only its
// kind must match). mod must itself be well-formed for the
// properties the pass received.
func (cu *Culprit) Fails(mod *ir.Module, in Inputs) bool {
	if cu.Pass == nil || wellformed.CheckProperties(mod, cu.Props).HasErrors() {
		return false
	}
	pc := passes.NewPassContext()
	switch cu.Kind {
	case PassCrash:
		_, err := pc.Execute(context.Background(), cu.Pass, mod, cu.Props)
		return err != nil && Similar(err.Error(), cu.Detail)
	case Malformed:
		out, err := pc.Execute(context.Background(), cu.Pass, mod, cu.Props)
		if err != nil {
			return false
		}
		errs := wellformed.CheckProperties(out, cu.PropsAfter)
		return errs.HasErrors() && Similar(errs.Error(), cu.Detail)
	}
	if !Evaluable(mod) {
		return false
	}
	in = in.restrictedTo(mod)
	if cu.Kind == EvalCrash {
		c := &Checker{Inputs: in}
		if c.Reference(mod) != nil {
			return false
		}
		out, err := pc.Execute(context.Background(), cu.Pass, mod, cu.Props)
		if err != nil || !Evaluable(out) {
			return false
		}
		m := c.Check(cu.Name, mod, out)
		return m != nil && m.Crash && Similar(m.Detail, cu.Detail)
	}
	c := &Checker{Inputs: in}
	if c.Reference(mod) != nil {
		return false
	}
	out, err := pc.Execute(context.Background(), cu.Pass, mod, cu.Props)
	if err != nil || !Evaluable(out) {
		return false
	}
	m := c.Check(cu.Name, mod, out)
	return m != nil && !m.Crash
}

// restrictedTo drops given inputs the function of mod no longer has as
// parameters (reduction turns values into parameters and drops unused ones).
func (in Inputs) restrictedTo(mod *ir.Module) Inputs {
	fn := mod.Func(in.funcName())
	if fn == nil || len(in.Given) == 0 {
		return in
	}
	given := map[string]op.Value{}
	for _, p := range fn.Params {
		if t, ok := in.Given[p.Name]; ok {
			given[p.Name] = t
		}
	}
	in.Given, in.NoRandom = given, false
	return in
}

// Reduce shrinks cu.Input while cu.Fails: it turns dataflow blocks into
// plain ones, deletes bindings of the checked function, forwards a binding's operand (or a match_cast's value) in place of its value,
// turns bound values into parameters, drops unused parameters and removes
// other functions, keeping each change only when the module is still
// valid and the failure persists. At most budget candidates are tried.
func (cu *Culprit) Reduce(in Inputs, budget int) *ir.Module {
	cur := cu.Input
	name := in.funcName()
	tried := 0
	try := func(cand *ir.Module) bool {
		if cand == nil || budget <= 0 {
			return false
		}
		budget--
		tried++
		in.progress("reducing: %d candidates tried, %d bindings left", tried, CountBindings(cur))
		if cu.Fails(cand, in) {
			cur = cand
			return true
		}
		return false
	}
	for progress := true; progress && budget > 0; {
		progress = false
		fn := cur.Func(name)
		if fn == nil {
			break
		}
		if try(unwrapDataflow(cur, name)) {
			progress = true
			continue
		}
		bindings := topLevelBindings(fn)
		for i := len(bindings) - 1; i >= 0 && !progress; i-- {
			v := bindings[i].BoundVar()
			if try(rewrite(cur, name, v, nil, nil)) {
				progress = true
				break
			}
			if vb, ok := bindings[i].(*ir.VarBinding); ok {
				if call, ok := vb.Value.(*ir.Call); ok {
					for _, a := range call.Args {
						if u, ok := a.(*ir.Var); ok && try(rewrite(cur, name, v, u, nil)) {
							progress = true
							break
						}
					}
				}
			}
			if mc, ok := bindings[i].(*ir.MatchCast); ok && !progress {
				// The cast value in place of the cast.
				if u, ok := mc.Value.(*ir.Var); ok && try(rewrite(cur, name, v, u, nil)) {
					progress = true
				}
			}
			for _, u := range substitutes(fn, bindings, i) {
				if progress {
					break
				}
				progress = try(rewrite(cur, name, v, u, nil))
			}
			if progress {
				break
			}
			p := ir.NewVar(v.Name, v.StructInfo())
			if try(rewrite(cur, name, v, p, p)) {
				progress = true
			}
		}
		if progress {
			continue
		}
		for i := range fn.Params {
			if try(dropParam(cur, name, i)) {
				progress = true
				break
			}
		}
		if progress {
			continue
		}
		for _, g := range cur.Names() {
			if g == name {
				continue
			}
			m := cur.Clone()
			m.Remove(g)
			if try(reparse(m)) {
				progress = true
				break
			}
		}
	}
	return cur
}

// substitutes are the values that may replace the var of bindings[i]
// besides its call's operands: the var a trivial rebinding (y = x) binds,
// then the nearest earlier vars and parameters of the same struct info
// (at most maxSubstitutes), so that a shape round trip (expand_dims then
// squeeze) after the failing binding can go.
func substitutes(fn *ir.Function, bindings []ir.Binding, i int) []*ir.Var {
	const maxSubstitutes = 3
	v := bindings[i].BoundVar()
	var out []*ir.Var
	if vb, ok := bindings[i].(*ir.VarBinding); ok {
		if u, ok := vb.Value.(*ir.Var); ok {
			out = append(out, u)
		}
	}
	same := func(u *ir.Var) {
		if len(out) < maxSubstitutes+1 && u != v && !slices.Contains(out, u) &&
			ir.StructuralEqual(u.StructInfo(), v.StructInfo(), ir.EqualOptions{}) {
			out = append(out, u)
		}
	}
	for j := i - 1; j >= 0; j-- {
		same(bindings[j].BoundVar())
	}
	for _, p := range fn.Params {
		same(p)
	}
	return out
}

func topLevelBindings(fn *ir.Function) []ir.Binding {
	seq, ok := fn.Body.(*ir.SeqExpr)
	if !ok {
		return nil
	}
	var out []ir.Binding
	for _, b := range seq.Blocks {
		out = append(out, b.Bindings...)
	}
	return out
}

// rewrite removes v's binding from function name, replacing its uses by
// repl (nil: none, so a used v makes the candidate invalid) and appending
// param to the parameters (when not nil).
func rewrite(mod *ir.Module, name string, v *ir.Var, repl ir.Expr, param *ir.Var) *ir.Module {
	fn := mod.Func(name)
	m := &ir.Mutator{
		KeepStructInfo: true,
		PostExpr: func(e ir.Expr) ir.Expr {
			if e == ir.Expr(v) && repl != nil {
				return repl
			}
			return e
		},
		Binding: func(b ir.Binding) ir.Binding {
			if b.BoundVar() == v {
				return nil
			}
			return b
		},
	}
	nf := *m.Function(fn)
	if param != nil {
		nf.Params = append(append([]*ir.Var(nil), nf.Params...), param)
	}
	// The result's annotation is inferred again on reparsing: a forwarded
	// operand may have another shape (the add before a permute_dims).
	nf.Ret = nil
	out := mod.Clone()
	out.Set(name, &nf)
	return reparse(out)
}

// unwrapDataflow turns the dataflow blocks of function name into plain
// blocks (their variables become ordinary ones on reparsing), so that any
// binding can become the result; nil when there is none.
func unwrapDataflow(mod *ir.Module, name string) *ir.Module {
	fn := mod.Func(name)
	body, ok := fn.Body.(*ir.SeqExpr)
	if !ok {
		return nil
	}
	seq := *body
	seq.Blocks = make([]*ir.BindingBlock, len(body.Blocks))
	found := false
	for i, b := range body.Blocks {
		nb := *b
		found = found || nb.Dataflow
		nb.Dataflow = false
		seq.Blocks[i] = &nb
	}
	if !found {
		return nil
	}
	m := &ir.Mutator{KeepStructInfo: true, DefVar: func(v *ir.Var) *ir.Var {
		if v.Dataflow {
			return ir.NewVar(v.Name, v.StructInfo())
		}
		return v
	}}
	nf := *fn
	nf.Body = &seq
	nf = *m.Function(&nf)
	out := mod.Clone()
	out.Set(name, &nf)
	return reparse(out)
}

func dropParam(mod *ir.Module, name string, i int) *ir.Module {
	nf := *mod.Func(name)
	nf.Params = append(append([]*ir.Var(nil), nf.Params[:i]...), nf.Params[i+1:]...)
	out := mod.Clone()
	out.Set(name, &nf)
	return reparse(out)
}

// reparse prints and parses mod, so a candidate gets fresh struct info and
// a use of a deleted variable is an error (nil) rather than a dangling
// pointer.
func reparse(mod *ir.Module) (out *ir.Module) {
	defer func() {
		if recover() != nil {
			out = nil
		}
	}()
	text := printer.Print(mod)
	parsed, diags := syntax.Parse(mod.Source, []byte(text))
	if len(diags) > 0 {
		return nil
	}
	if _, errs := wellformed.CheckRecorded(parsed); errs.HasErrors() {
		return nil
	}
	return parsed
}

// CountBindings counts the bindings of the top-level blocks of every Relax
// function of mod (the reproducer's size).
func CountBindings(mod *ir.Module) int {
	n := 0
	for _, f := range mod.Functions() {
		if fn, ok := f.(*ir.Function); ok {
			n += len(topLevelBindings(fn))
		}
	}
	return n
}

// Header is the comment block a reproducer starts with.
func (cu *Culprit) Header(pipeline, replay string) string {
	var b strings.Builder
	fmt.Fprintf(&b, "# phasec bisect reproducer\n# pipeline: %s\n# culprit pass: %s (module in phase %v)\n# failure: %s\n",
		pipeline, cu.Name, cu.Phase, cu.Kind)
	for _, l := range strings.Split(strings.TrimSpace(cu.Detail), "\n") {
		fmt.Fprintf(&b, "#   %s\n", l)
	}
	fmt.Fprintf(&b, "# replay: %s\n", replay)
	return b.String()
}

// ShrinkDims looks for the smallest sizes of the symbolic dimensions of
// mod's function parameters (all set to one value, from 1 up) at which the
// failure persists, and returns inputs naming each dimension explicitly
// (so a replay passes them as --symbolic), or in unchanged when no
// smaller size fails.
func (cu *Culprit) ShrinkDims(mod *ir.Module, in Inputs) Inputs {
	names := paramSymbols(mod, in.funcName())
	if len(names) == 0 {
		return in
	}
	current := in.Dim
	if current == 0 {
		current = 4
	}
	for size := int64(1); size < current; size++ {
		try := in
		try.Dims = map[string]int64{}
		for _, n := range names {
			try.Dims[n] = size
		}
		if cu.Fails(mod, try) {
			return try
		}
	}
	return in
}

// Similar reports whether two failure messages describe the same failure:
// their first lines, with numbers (positions, sizes, variable suffixes)
// and quoted text masked, share at least half of their words (Jaccard
// index of the word sets). Reduction renames nothing, but it moves
// positions and changes shapes, so exact equality would reject every
// candidate.
func Similar(a, b string) bool {
	wa, wb := failureWords(a), failureWords(b)
	if len(wa) == 0 || len(wb) == 0 {
		return len(wa) == len(wb)
	}
	common := 0
	for w := range wa {
		if wb[w] {
			common++
		}
	}
	return 2*common >= len(wa)+len(wb)-common
}

func failureWords(s string) map[string]bool {
	s, _, _ = strings.Cut(strings.TrimSpace(s), "\n")
	var b strings.Builder
	quoted := false
	for _, r := range s {
		switch {
		case r == '"':
			quoted = !quoted
			b.WriteString(" Q ")
		case quoted:
		case r >= '0' && r <= '9':
			b.WriteByte('#')
		default:
			b.WriteRune(r)
		}
	}
	words := map[string]bool{}
	for _, w := range strings.FieldsFunc(b.String(), func(r rune) bool {
		return r == ' ' || r == ',' || r == ':' || r == '(' || r == ')' || r == '[' || r == ']' || r == '\t'
	}) {
		for strings.Contains(w, "##") {
			w = strings.ReplaceAll(w, "##", "#")
		}
		words[w] = true
	}
	return words
}

// paramSymbols lists the symbolic dimensions of the parameters of function
// name of mod, in order of first appearance.
func paramSymbols(mod *ir.Module, name string) []string {
	fn := mod.Func(name)
	if fn == nil {
		return nil
	}
	var names []string
	seen := map[string]bool{}
	for _, p := range fn.Params {
		ir.InspectStructInfoPrims(p.StructInfo(), func(e ir.PrimExpr) bool {
			ir.VisitPrimVars(e, func(v *ir.PrimVar) {
				if !seen[v.Name] {
					seen[v.Name] = true
					names = append(names, v.Name)
				}
			})
			return true
		})
	}
	return names
}
