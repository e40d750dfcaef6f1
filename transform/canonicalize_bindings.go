package transform

import (
	"github.com/phasec/phasec/diag"
	"github.com/phasec/phasec/internal/ptrmap"
	"github.com/phasec/phasec/ir"
	"github.com/phasec/phasec/passes"
	"github.com/phasec/phasec/phase"
)

// CanonicalizeBindings is TVM's relax.transform.CanonicalizeBindings
// (src/relax/transform/canonicalize_bindings.cc, v0.23). It runs TVM's two
// steps on every function:
//
//  1. CanonicalizeTIRVariables: an R.match_cast whose value's struct info
//     already determines the symbolic variables of its target (matching
//     x: R.Tensor((m, n)) to R.Tensor((o, p)) gives o = m, p = n; matching
//     R.Tensor((16,)) to R.Tensor((M,)) gives M = 16) makes those variables
//     known from there to the end of its scope (function, If branch), and
//     they are replaced by their values everywhere in that scope (struct
//     info, shape expressions, prim values), simplified. Two match_casts
//     implying provably different values are an error (OPT240). An If
//     whose branches changed keeps its struct info: a branch whose info
//     became more specific ends with an R.match_cast back to it.
//  2. CanonicalizeRelaxBindings: trivial bindings (y = x) and trivial
//     match_casts (target info equal to the value's) are removed and their
//     uses refer to the original var, following chains; a field read of a
//     known tuple literal (t = (a, b); y = t[0]) is the field, and a tuple
//     rebuilt from all fields of one tuple in order is that tuple; a var
//     bound to a constant is replaced by the constant wherever used (the
//     binding stays). Dataflow outputs follow TVM's rules: a var defined in
//     a dataflow block and used nowhere outside it becomes a dataflow var;
//     for a trivial binding of an output var to a dataflow var whose output
//     is used outside the block, the dataflow var's definition takes the
//     output var's name instead; and a dataflow var whose only use is to be
//     bound to an output var is folded into that output's binding.
//
// Values that change get their struct info re-derived (a var takes its new
// value's info, as TVM's ExprMutator does); a function keeps its return
// annotation when it is at least as specific as the new body's info, else
// it is re-derived from the body.
var CanonicalizeBindings = passes.Define(passes.Info{
	Name:     "CanonicalizeBindings",
	Doc:      "remove trivial bindings and match_casts, replace symbolic variables match_casts prove known, unwrap tuple literals, inline bound constants",
	OptLevel: 1, // TVM: both CreateFunctionPass steps at opt_level 1
	Accepts:  []phase.Phase{phase.Ingest, phase.Optimize},
	Requires: map[phase.Property]string{
		phase.Normalized: "it plans on the bindings of A-normal form (every value bound to a var) and compares bound vars' struct info with their values'",
	},
}, passes.Functions(func(_ *passes.Env, mod *ir.Module, _ string, f *ir.Function) (*ir.Function, error) {
	out, errs := canonicalizeFunction(mod, f)
	if err := errs.Err(); err != nil {
		return nil, err
	}
	return out, nil
}).InParallel())

// canonicalizeFunction runs both steps on f; it returns f itself when
// nothing changes. mod resolves globals for re-normalization.
//
// A local function that is rebuilt keeps its return struct info, where
// TVM re-derives it unless it is at least as specific as the new body's
// info (renormalize does that for f itself). The difference cannot be seen
// through the pass: local functions are outside the phases it accepts
// (ingest lifts them, NoNestedFunctions).
func canonicalizeFunction(mod *ir.Module, f *ir.Function) (*ir.Function, diag.List) {
	f1, errs := canonicalizeSymVars(mod, f)
	if errs.HasErrors() {
		return nil, errs
	}
	return canonicalizeRelaxBindings(mod, f1)
}

// renormalize normalizes nf, the rewrite of orig, the way TVM's
// ExprMutator rebuilds a function: the return annotation is kept when it
// is at least as specific as the new body's struct info (a body that lost
// shape information keeps it), else re-derived from the body.
func renormalize(mod *ir.Module, orig, nf *ir.Function) (*ir.Function, diag.List) {
	bare := &ir.Function{Params: nf.Params, Body: nf.Body, Pure: nf.Pure, Attrs: nf.Attrs}
	bare.SetSpan(orig.Span())
	out, errs := ir.NormalizeFunction(mod, bare)
	if errs.HasErrors() {
		return nil, errs
	}
	if orig.Ret != nil && out.Body.StructInfo() != nil && ir.IsBaseOf(out.Body.StructInfo(), orig.Ret) {
		kept := &ir.Function{Params: out.Params, Body: out.Body, Ret: orig.Ret, Pure: out.Pure, Attrs: out.Attrs}
		kept.SetSpan(out.Span())
		kept.SetStructInfo(ir.FuncInfoOf(kept))
		out = kept
	}
	return out, errs
}

// freshVar returns a new var with v's name, kind and span and the given
// struct info (nil: the normalizer derives it from the bound value).
func freshVar(v *ir.Var, sinfo ir.StructInfo) *ir.Var {
	n := ir.NewVar(v.Name, sinfo)
	n.Dataflow = v.Dataflow
	n.SetSpan(v.Span())
	return n
}

func boundValue(b ir.Binding) ir.Expr {
	switch b := b.(type) {
	case *ir.VarBinding:
		return b.Value
	case *ir.MatchCast:
		return b.Value
	}
	return nil
}

// withValue returns b with value and var v (a new binding; b's span).
func withValue(b ir.Binding, v *ir.Var, value ir.Expr) ir.Binding {
	var out ir.Binding
	switch b := b.(type) {
	case *ir.VarBinding:
		n := ir.NewVarBinding(v, value)
		n.SetSpan(b.Span())
		out = n
	case *ir.MatchCast:
		n := ir.NewMatchCast(v, value, b.SInfo)
		n.SetSpan(b.Span())
		out = n
	}
	return out
}

// rebuild helpers shared by both steps: copy-on-write nodes without struct
// info (the normalizer fills it in).

func newTuple(old *ir.Tuple, fields []ir.Expr) *ir.Tuple {
	n := ir.NewTuple(fields...)
	n.SetSpan(old.Span())
	return n
}

func newGetItem(old *ir.TupleGetItem, t ir.Expr) *ir.TupleGetItem {
	n := &ir.TupleGetItem{Tuple: t, Index: old.Index}
	n.SetSpan(old.Span())
	return n
}

func newCall(old *ir.Call, op ir.Expr, args []ir.Expr, sargs []ir.StructInfo) *ir.Call {
	n := &ir.Call{Op: op, Args: args, Attrs: old.Attrs, SInfoArgs: sargs}
	n.SetSpan(old.Span())
	return n
}

func newIf(old *ir.If, c, t, e ir.Expr) *ir.If {
	n := &ir.If{Cond: c, Then: t, Else: e}
	n.SetSpan(old.Span())
	return n
}

func newSeq(old *ir.SeqExpr, blocks []*ir.BindingBlock, body ir.Expr) *ir.SeqExpr {
	n := &ir.SeqExpr{Blocks: blocks, Body: body}
	n.SetSpan(old.Span())
	return n
}

func newBlock(old *ir.BindingBlock, binds []ir.Binding) *ir.BindingBlock {
	n := &ir.BindingBlock{Bindings: binds, Dataflow: old.Dataflow}
	n.SetSpan(old.Span())
	return n
}

// mapSlice applies f to each element, copying the slice on the first
// change; it returns in itself and false when nothing changes. T is an
// interface (ir.Expr, ir.PrimExpr, ir.StructInfo): a change is a new node.
func mapSlice[T comparable](in []T, f func(T) T) ([]T, bool) {
	var out []T
	for i, x := range in {
		y := f(x)
		if y != x && out == nil {
			out = make([]T, len(in))
			copy(out, in[:i])
		}
		if out != nil {
			out[i] = y
		}
	}
	if out == nil {
		return in, false
	}
	return out, true
}

// Step 1: symbolic variables (TVM's SymbolicVarCanonicalizer).

// knownSymVar is one symbolic variable a match_cast determines.
type knownSymVar struct {
	v *ir.PrimVar
	e ir.PrimExpr
}

// inferSymVars appends to out what matching a value of info arg against
// param determines: each symbolic variable standing alone in param (a
// dimension, a prim value) paired with the expression at the same place
// in arg, through tensors, shapes, prim values and tuples (TVM's
// InferSymbolicVarMap). A variable paired twice keeps its place and takes
// the later expression, as TVM's Map.Set does.
func inferSymVars(param, arg ir.StructInfo, out []knownSymVar) []knownSymVar {
	bind := func(p, a ir.PrimExpr) {
		v, ok := p.(*ir.PrimVar)
		if !ok {
			return
		}
		for i := range out {
			if out[i].v == v {
				out[i].e = a
				return
			}
		}
		out = append(out, knownSymVar{v, a})
	}
	dims := func(p, a []ir.PrimExpr) {
		if len(p) != len(a) {
			return
		}
		for i := range p {
			bind(p[i], a[i])
		}
	}
	switch p := param.(type) {
	case *ir.TensorInfo:
		if a, ok := arg.(*ir.TensorInfo); ok {
			pd, pok := p.Dims()
			ad, aok := a.Dims()
			if pok && aok {
				dims(pd, ad)
			}
		}
	case *ir.ShapeInfo:
		if a, ok := arg.(*ir.ShapeInfo); ok && p.Known() && a.Known() {
			dims(p.Values, a.Values)
		}
	case *ir.PrimInfo:
		if a, ok := arg.(*ir.PrimInfo); ok && p.Value != nil && a.Value != nil {
			bind(p.Value, a.Value)
		}
	case *ir.TupleInfo:
		if a, ok := arg.(*ir.TupleInfo); ok && len(p.Fields) == len(a.Fields) {
			for i := range p.Fields {
				out = inferSymVars(p.Fields[i], a.Fields[i], out)
			}
		}
	}
	return out
}

// matchCastSymVars is what binding b determines (its var's info matched
// against its value's).
func matchCastSymVars(b *ir.MatchCast) []knownSymVar {
	target := b.Var.StructInfo()
	if target == nil {
		target = b.SInfo
	}
	if b.Value.StructInfo() == nil {
		return nil
	}
	return inferSymVars(target, b.Value.StructInfo(), nil)
}

// determinesSymVars reports whether any match_cast of f determines a
// symbolic variable as something other than itself: only then can step 1
// change anything.
func determinesSymVars(f *ir.Function) bool {
	found := false
	ir.Walk(f, &ir.Visitor{
		Expr: func(ir.Expr) bool { return !found },
		Binding: func(b ir.Binding) bool {
			if mc, ok := b.(*ir.MatchCast); ok && !found {
				for _, sv := range matchCastSymVars(mc) {
					if sv.e != ir.PrimExpr(sv.v) {
						found = true
					}
				}
			}
			return !found
		},
	})
	return found
}

// symCanon rewrites a function with the symbolic variables known so far
// replaced by their values. Known values are scoped: those learnt in a
// function or If branch are forgotten when it ends (an undo log, so
// scoping costs what was learnt, not the size of what is known).
type symCanon struct {
	vals   map[*ir.PrimVar]ir.PrimExpr
	source map[*ir.PrimVar]*ir.MatchCast
	log    []*ir.PrimVar
	remap  map[*ir.Var]*ir.Var
	// wrappers are the vars of the match_casts added at the end of If
	// branches; those that turn out trivial are removed after
	// normalization, when the branches' info is known.
	wrappers map[*ir.Var]bool
	errs     diag.List
}

func canonicalizeSymVars(mod *ir.Module, f *ir.Function) (*ir.Function, diag.List) {
	if !determinesSymVars(f) {
		return f, nil
	}
	c := &symCanon{
		vals:     map[*ir.PrimVar]ir.PrimExpr{},
		source:   map[*ir.PrimVar]*ir.MatchCast{},
		remap:    map[*ir.Var]*ir.Var{},
		wrappers: map[*ir.Var]bool{},
	}
	nf := c.function(f)
	if c.errs.HasErrors() {
		c.errs.Sort()
		return nil, c.errs
	}
	if nf == f {
		return f, nil
	}
	out, errs := renormalize(mod, f, nf)
	if errs.HasErrors() {
		return nil, errs
	}
	if len(c.wrappers) > 0 {
		out = c.dropTrivialWrappers(out)
	}
	return out, nil
}

// learn records what match_cast b determines, reporting a value provably
// different from one known before.
func (c *symCanon) learn(b *ir.MatchCast) {
	var a *ir.Analyzer
	for _, sv := range matchCastSymVars(b) {
		if old, ok := c.vals[sv.v]; ok {
			if a.CanProve(ir.NewBinary(ir.OpNE, old, sv.e)) {
				src := c.source[sv.v]
				d := c.errs.Add(b.Span(), codeInconsistentMatchCast,
					"MatchCast statements must be consistent: %s implies that %s is %v, while the earlier %s implies that it is %v",
					b.Var.Name, sv.v.Name, sv.e, src.Var.Name, old)
				d.Related = append(d.Related, diag.Related{Span: src.Span(), Msg: "the earlier definition of " + src.Var.Name})
			}
			continue
		}
		c.vals[sv.v] = sv.e
		c.source[sv.v] = b
		c.log = append(c.log, sv.v)
	}
}

// mark and undo scope the known values.
func (c *symCanon) mark() int { return len(c.log) }

func (c *symCanon) undo(m int) {
	for _, v := range c.log[m:] {
		delete(c.vals, v)
		delete(c.source, v)
	}
	c.log = c.log[:m]
}

func (c *symCanon) prim(p ir.PrimExpr) ir.PrimExpr {
	if len(c.vals) == 0 {
		return p
	}
	return ir.SubstituteSymVarsPrim(p, c.vals)
}

func (c *symCanon) sinfo(s ir.StructInfo) ir.StructInfo {
	if len(c.vals) == 0 {
		return s
	}
	return ir.SubstituteSymVars(s, c.vals)
}

// defVar gives a parameter whose info mentions a known variable a fresh
// var with the substituted info.
func (c *symCanon) defVar(v *ir.Var) *ir.Var {
	s := v.StructInfo()
	if ns := c.sinfo(s); ns != s {
		n := freshVar(v, ns)
		c.remap[v] = n
		return n
	}
	return v
}

func (c *symCanon) function(f *ir.Function) *ir.Function {
	m := c.mark()
	params, pch := mapVars(f.Params, c.defVar)
	body := c.expr(f.Body)
	c.undo(m)
	if !pch && body == f.Body {
		return f
	}
	n := &ir.Function{Params: params, Body: body, Ret: f.Ret, Pure: f.Pure, Attrs: f.Attrs}
	n.SetSpan(f.Span())
	return n
}

func mapVars(in []*ir.Var, f func(*ir.Var) *ir.Var) ([]*ir.Var, bool) {
	var out []*ir.Var
	for i, x := range in {
		y := f(x)
		if y != x && out == nil {
			out = make([]*ir.Var, len(in))
			copy(out, in[:i])
		}
		if out != nil {
			out[i] = y
		}
	}
	if out == nil {
		return in, false
	}
	return out, true
}

func (c *symCanon) expr(e ir.Expr) ir.Expr {
	switch e := e.(type) {
	case *ir.Var:
		if n, ok := c.remap[e]; ok {
			return n
		}
	case *ir.PrimValue:
		if v := c.prim(e.Value); v != e.Value {
			n := ir.NewPrimValue(v)
			n.SetSpan(e.Span())
			return n
		}
	case *ir.ShapeExpr:
		vals, ch := mapSlice(e.Values, c.prim)
		if ch {
			n := ir.NewShapeExpr(vals...)
			n.SetSpan(e.Span())
			return n
		}
	case *ir.Tuple:
		if fields, ch := mapSlice(e.Fields, c.expr); ch {
			return newTuple(e, fields)
		}
	case *ir.TupleGetItem:
		if t := c.expr(e.Tuple); t != e.Tuple {
			return newGetItem(e, t)
		}
	case *ir.Call:
		op := c.expr(e.Op)
		args, ach := mapSlice(e.Args, c.expr)
		sargs, sch := mapSlice(e.SInfoArgs, c.sinfo)
		if op != e.Op || ach || sch {
			return newCall(e, op, args, sargs)
		}
	case *ir.If:
		return c.ifExpr(e)
	case *ir.SeqExpr:
		return c.seq(e)
	case *ir.Function:
		return c.function(e)
	}
	return e
}

// ifExpr rewrites each branch with what it learns forgotten at its end.
// A changed If keeps its struct info (with known values substituted): each
// branch ends in a match_cast to it, dropped after normalization where the
// branch's info already equals it. Without this a branch that learnt
// N = 16 would make the If's info the join of [M, 16] and [M, 32]: ndim 2.
func (c *symCanon) ifExpr(e *ir.If) ir.Expr {
	cond := c.expr(e.Cond)
	m := c.mark()
	then := c.expr(e.Then)
	c.undo(m)
	els := c.expr(e.Else)
	c.undo(m)
	if cond == e.Cond && then == e.Then && els == e.Else {
		return e
	}
	want := c.sinfo(e.StructInfo())
	if want != nil {
		then = c.wrap(then, want, "then_branch_with_dyn")
		els = c.wrap(els, want, "else_branch_with_dyn")
	}
	return newIf(e, cond, then, els)
}

func (c *symCanon) wrap(branch ir.Expr, want ir.StructInfo, name string) ir.Expr {
	seq, ok := branch.(*ir.SeqExpr)
	if !ok {
		seq = &ir.SeqExpr{Body: branch}
		seq.SetSpan(branch.Span())
	}
	w := ir.NewVar(name, want)
	c.wrappers[w] = true
	mc := ir.NewMatchCast(w, seq.Body, want)
	blocks := append(append([]*ir.BindingBlock(nil), seq.Blocks...), &ir.BindingBlock{Bindings: []ir.Binding{mc}})
	return newSeq(seq, blocks, w)
}

func (c *symCanon) seq(s *ir.SeqExpr) ir.Expr {
	var blocks []*ir.BindingBlock
	for i, blk := range s.Blocks {
		nb := c.block(blk)
		if nb != blk && blocks == nil {
			blocks = make([]*ir.BindingBlock, len(s.Blocks))
			copy(blocks, s.Blocks[:i])
		}
		if blocks != nil {
			blocks[i] = nb
		}
	}
	body := c.expr(s.Body)
	if blocks == nil && body == s.Body {
		return s
	}
	if blocks == nil {
		blocks = s.Blocks
	}
	return newSeq(s, blocks, body)
}

func (c *symCanon) block(blk *ir.BindingBlock) *ir.BindingBlock {
	var binds []ir.Binding
	for i, b := range blk.Bindings {
		nb := c.binding(b)
		if nb != b && binds == nil {
			binds = make([]ir.Binding, len(blk.Bindings))
			copy(binds, blk.Bindings[:i])
		}
		if binds != nil {
			binds[i] = nb
		}
	}
	if binds == nil {
		return blk
	}
	return newBlock(blk, binds)
}

// binding rewrites one binding. As in TVM's ExprMutator, a var whose value
// or info changed is replaced by a fresh one: a match_cast's var takes the
// (substituted) target info, any other var its new value's info.
func (c *symCanon) binding(b ir.Binding) ir.Binding {
	switch b := b.(type) {
	case *ir.MatchCast:
		c.learn(b)
		val := c.expr(b.Value)
		si := c.sinfo(b.SInfo)
		vs := b.Var.StructInfo()
		if val == b.Value && si == b.SInfo && c.sinfo(vs) == vs {
			return b
		}
		v := freshVar(b.Var, si)
		c.remap[b.Var] = v
		n := ir.NewMatchCast(v, val, si)
		n.SetSpan(b.Span())
		return n
	case *ir.VarBinding:
		val := c.expr(b.Value)
		vs := b.Var.StructInfo()
		if val == b.Value && c.sinfo(vs) == vs {
			return b
		}
		v := freshVar(b.Var, nil)
		c.remap[b.Var] = v
		return withValue(b, v, val)
	}
	return b
}

// dropTrivialWrappers removes the match_casts ifExpr added where the
// normalized branch's info already equals the If's: the branch then ends
// in the matched value itself, as TVM's, which adds none there.
func (c *symCanon) dropTrivialWrappers(f *ir.Function) *ir.Function {
	m := &ir.Mutator{KeepStructInfo: true, PostExpr: func(e ir.Expr) ir.Expr {
		s, ok := e.(*ir.SeqExpr)
		if !ok || len(s.Blocks) == 0 {
			return e
		}
		last := s.Blocks[len(s.Blocks)-1]
		mc, ok := last.Bindings[len(last.Bindings)-1].(*ir.MatchCast)
		if !ok || !c.wrappers[mc.Var] || s.Body != ir.Expr(mc.Var) ||
			!ir.StructuralEqual(mc.Value.StructInfo(), mc.SInfo, ir.EqualOptions{}) {
			return e
		}
		blocks := append([]*ir.BindingBlock(nil), s.Blocks[:len(s.Blocks)-1]...)
		if len(last.Bindings) > 1 {
			blocks = append(blocks, newBlock(last, last.Bindings[:len(last.Bindings)-1]))
		}
		n := newSeq(s, blocks, mc.Value)
		n.SetStructInfo(s.StructInfo())
		return n
	}}
	return m.Function(f)
}

// Step 2: Relax bindings (TVM's CanonicalizePlanner and BindingCanonicalizer).
//
// The planner walks the function once and decides, for every var, what
// becomes of its binding and its uses (a binding's fate can depend on uses
// later in the function); the applier then rewrites by that plan. Both
// keep everything they know about a var in one record, found through one
// map: at 100k bindings the map no longer fits in cache, and one lookup
// per var and use instead of one per fact keeps the pass linear in
// practice, not only in theory.

// varFacts is what the planner learns about a var and what the plan
// decides for it.
type varFacts struct {
	v *ir.Var

	// Learnt by the planner.
	home        *ir.BindingBlock // the block binding the var; nil for parameters
	value       ir.Expr          // its (unwrapped) value, when a var, tuple or field read
	parent      *ir.Var          // x for a trivial binding var = x
	root        *ir.Var          // memo: the earliest var of the trivial chain
	constant    *ir.Constant     // its (unwrapped) value, when a constant
	usedOutside bool             // used outside any dataflow block, or in another one

	// Decided by the plan.
	useAs   *ir.Var // uses refer to this var instead (followed)
	bindAs  *ir.Var // the binding binds this var instead (followed)
	removed bool    // the binding is dropped

	// Set by the applier.
	emitted *ir.Var // the var actually bound: fresh when the value changed
}

// relaxCanon holds the facts of one function's canonicalization.
type relaxCanon struct {
	// facts is keyed by a ptrmap: at 100k bindings a Go map's random
	// hashing misses the cache on every lookup, a ptrmap's locality-keeping
	// slots mostly hit it.
	facts ptrmap.Map[ir.Var, *varFacts]
	slab  []varFacts // facts are allocated from here, in chunks

	cur         *ir.BindingBlock // the block being walked; nil outside blocks
	trivial     []*varFacts      // vars bound trivially, in order
	definedInDF []*varFacts      // vars bound in dataflow blocks, in order
	planned     bool             // anything to rewrite besides folding outputs
}

func (c *relaxCanon) of(v *ir.Var) *varFacts {
	if f, ok := c.facts.Get(v); ok {
		return f
	}
	if len(c.slab) == 0 {
		c.slab = make([]varFacts, 1024)
	}
	f := &c.slab[0]
	c.slab = c.slab[1:]
	f.v = v
	c.facts.Set(v, f)
	return f
}

// lookup returns v's facts, or nil when nothing is known of v.
func (c *relaxCanon) lookup(v *ir.Var) *varFacts {
	f, _ := c.facts.Get(v)
	return f
}

func canonicalizeRelaxBindings(mod *ir.Module, f *ir.Function) (*ir.Function, diag.List) {
	n := topLevelBindings(f)
	c := &relaxCanon{slab: make([]varFacts, n)}
	c.facts.Reserve(n)
	c.visit(f.Body)
	c.plan()
	if !c.planned && !hasDataflowBlock(f) {
		return f, nil
	}
	body := c.expr(f.Body)
	if body == f.Body {
		return f, nil
	}
	nf := &ir.Function{Params: f.Params, Body: body, Ret: f.Ret, Pure: f.Pure, Attrs: f.Attrs}
	return renormalize(mod, f, nf)
}

func hasDataflowBlock(f *ir.Function) bool {
	found := false
	ir.Walk(f, &ir.Visitor{
		Expr:  func(ir.Expr) bool { return !found },
		Block: func(b *ir.BindingBlock) bool { found = found || b.Dataflow; return false },
	})
	return found
}

func (c *relaxCanon) insideDataflow() bool { return c.cur != nil && c.cur.Dataflow }

// visit is the planner's walk (TVM's CanonicalizePlanner visitor).
func (c *relaxCanon) visit(e ir.Expr) {
	switch e := e.(type) {
	case *ir.Var:
		c.use(e)
	case *ir.Tuple:
		for _, f := range e.Fields {
			c.visit(f)
		}
	case *ir.TupleGetItem:
		c.visit(e.Tuple)
	case *ir.Call:
		c.visit(e.Op)
		for _, a := range e.Args {
			c.visit(a)
		}
	case *ir.If:
		c.visit(e.Cond)
		c.visit(e.Then)
		c.visit(e.Else)
	case *ir.SeqExpr:
		saved := c.cur
		for _, blk := range e.Blocks {
			c.cur = blk
			for _, b := range blk.Bindings {
				c.binding(b)
			}
		}
		c.cur = nil
		c.visit(e.Body)
		c.cur = saved
	case *ir.Function:
		// A local function's free vars count as used outside their block.
		saved := c.cur
		c.cur = nil
		for v := range freeVars(e) {
			c.of(v).usedOutside = true
		}
		c.visit(e.Body)
		c.cur = saved
	}
}

func (c *relaxCanon) use(v *ir.Var) {
	if !c.insideDataflow() {
		c.of(v).usedOutside = true
		return
	}
	if f := c.lookup(v); f != nil && f.home != nil && f.home != c.cur {
		f.usedOutside = true
	}
}

func (c *relaxCanon) binding(b ir.Binding) {
	v := b.BoundVar()
	sameInfo := true
	if mc, ok := b.(*ir.MatchCast); ok {
		sameInfo = ir.StructuralEqual(v.StructInfo(), mc.Value.StructInfo(), ir.EqualOptions{})
	}
	value := boundValue(b)
	if u := c.unwrapKnown(value); u != nil {
		value = u
	}
	f := c.of(v)
	f.home = c.cur
	switch x := value.(type) {
	case *ir.Var:
		f.value = x
		if sameInfo {
			f.parent = x
			c.trivial = append(c.trivial, f)
		}
	case *ir.Tuple, *ir.TupleGetItem:
		f.value = x
	case *ir.Constant:
		f.constant = x
		c.planned = true
	}
	c.visit(boundValue(b))
	if c.insideDataflow() {
		c.definedInDF = append(c.definedInDF, f)
	}
}

// resolve follows known values from a var to the first value that is not
// a var with a known value, compressing the path so chains cost linear
// time.
func (c *relaxCanon) resolve(e ir.Expr) ir.Expr {
	var path []*varFacts
	for {
		v, ok := e.(*ir.Var)
		if !ok {
			break
		}
		f := c.lookup(v)
		if f == nil || f.value == nil {
			break
		}
		path = append(path, f)
		e = f.value
	}
	for _, f := range path[:max(len(path)-1, 0)] {
		f.value = e
	}
	return e
}

// unwrapKnown returns what value is known to be, or nil: the field of a
// known tuple literal for a field read, the original tuple for a tuple
// of all of its fields in order.
func (c *relaxCanon) unwrapKnown(value ir.Expr) ir.Expr {
	switch value := value.(type) {
	case *ir.TupleGetItem:
		if t, ok := c.resolve(value.Tuple).(*ir.Tuple); ok && value.Index >= 0 && value.Index < len(t.Fields) {
			return t.Fields[value.Index]
		}
	case *ir.Tuple:
		if len(value.Fields) == 0 {
			return nil
		}
		first, ok := c.resolve(value.Fields[0]).(*ir.TupleGetItem)
		if !ok {
			return nil
		}
		ti, ok := first.Tuple.StructInfo().(*ir.TupleInfo)
		if !ok || len(ti.Fields) != len(value.Fields) {
			return nil
		}
		earlier := c.resolve(first.Tuple)
		for i, f := range value.Fields {
			g, ok := c.resolve(f).(*ir.TupleGetItem)
			if !ok || g.Index != i || c.resolve(g.Tuple) != earlier {
				return nil
			}
		}
		return earlier
	}
	return nil
}

// root follows trivial bindings from v to the earliest var (memoized).
func (c *relaxCanon) root(v *ir.Var) *ir.Var {
	var path []*varFacts
	for {
		f := c.lookup(v)
		if f == nil || f.parent == nil {
			break
		}
		if f.root != nil {
			v = f.root
			break
		}
		path = append(path, f)
		v = f.parent
	}
	for _, f := range path {
		f.root = v
	}
	return v
}

// plan decides the rewrite (TVM's CanonicalizePlanner::Collect).
func (c *relaxCanon) plan() {
	// A non-dataflow var bound in a dataflow block and used only there
	// need not be an output: it becomes a dataflow var.
	for _, f := range c.definedInDF {
		if v := f.v; !v.Dataflow && !f.usedOutside {
			n := ir.NewDataflowVar(v.Name, v.StructInfo())
			n.SetSpan(v.Span())
			f.bindAs, f.useAs = n, n
			c.planned = true
		}
	}
	for _, bf := range c.trivial {
		bound := bf.v
		to := c.root(bf.parent)
		for f := c.lookup(to); f != nil && f.bindAs != nil; f = c.lookup(to) {
			to = f.bindAs
		}
		bf.removed = true
		c.planned = true
		if bound.Dataflow || !to.Dataflow || !bf.usedOutside {
			// var = var, dataflow = var, dataflow = dataflow, or an output
			// var = dataflow var not used outside the block: uses of the
			// bound var refer to the original.
			bf.useAs = to
		} else {
			// An output var = dataflow var, used outside the block: the
			// dataflow var must not escape, so its binding binds the
			// output var instead.
			tf := c.of(to)
			tf.bindAs, tf.useAs = bound, bound
		}
	}
}

// freeVars returns the vars e uses but does not define.
func freeVars(e ir.Expr) map[*ir.Var]bool {
	defined := map[*ir.Var]bool{}
	used := map[*ir.Var]bool{}
	ir.Walk(e, &ir.Visitor{
		Expr: func(x ir.Expr) bool {
			if v, ok := x.(*ir.Var); ok {
				used[v] = true
			}
			return true
		},
		DefVar: func(v *ir.Var) { defined[v] = true },
	})
	for v := range defined {
		delete(used, v)
	}
	return used
}

// The applier (TVM's BindingCanonicalizer).

// useOf is what a use of v becomes.
func (c *relaxCanon) useOf(v *ir.Var) ir.Expr {
	f := c.lookup(v)
	for f != nil && f.useAs != nil {
		v = f.useAs
		f = c.lookup(v)
	}
	switch {
	case f == nil:
		return v
	case f.constant != nil:
		return f.constant
	case f.emitted != nil:
		return f.emitted
	}
	return v
}

// defOf is the var v's binding binds.
func (c *relaxCanon) defOf(v *ir.Var) *ir.Var {
	for f := c.lookup(v); f != nil && f.bindAs != nil; f = c.lookup(v) {
		v = f.bindAs
	}
	return v
}

func (c *relaxCanon) expr(e ir.Expr) ir.Expr {
	switch e := e.(type) {
	case *ir.Var:
		return c.useOf(e)
	case *ir.Tuple:
		if fields, ch := mapSlice(e.Fields, c.expr); ch {
			return newTuple(e, fields)
		}
	case *ir.TupleGetItem:
		if t := c.expr(e.Tuple); t != e.Tuple {
			return newGetItem(e, t)
		}
	case *ir.Call:
		op := c.expr(e.Op)
		args, ch := mapSlice(e.Args, c.expr)
		if op != e.Op || ch {
			return newCall(e, op, args, e.SInfoArgs)
		}
	case *ir.If:
		cond, then, els := c.expr(e.Cond), c.expr(e.Then), c.expr(e.Else)
		if cond != e.Cond || then != e.Then || els != e.Else {
			return newIf(e, cond, then, els)
		}
	case *ir.SeqExpr:
		return c.seq(e)
	case *ir.Function:
		if body := c.expr(e.Body); body != e.Body {
			n := &ir.Function{Params: e.Params, Body: body, Ret: e.Ret, Pure: e.Pure, Attrs: e.Attrs}
			n.SetSpan(e.Span())
			return n
		}
	}
	return e
}

func (c *relaxCanon) seq(s *ir.SeqExpr) ir.Expr {
	changed := false
	blocks := make([]*ir.BindingBlock, 0, len(s.Blocks))
	for _, blk := range s.Blocks {
		nb := c.block(blk)
		changed = changed || nb != blk
		if len(nb.Bindings) > 0 {
			blocks = append(blocks, nb)
		}
	}
	body := c.expr(s.Body)
	if !changed && body == s.Body {
		return s
	}
	return newSeq(s, blocks, body)
}

func (c *relaxCanon) block(blk *ir.BindingBlock) *ir.BindingBlock {
	var binds []ir.Binding // nil until a binding changes
	for i, b := range blk.Bindings {
		nb := c.rebind(b)
		if nb != b && binds == nil {
			binds = make([]ir.Binding, i, len(blk.Bindings))
			copy(binds, blk.Bindings[:i])
		}
		if binds != nil && nb != nil {
			binds = append(binds, nb)
		}
	}
	out := blk
	if binds != nil {
		out = newBlock(blk, binds)
	}
	if blk.Dataflow {
		if folded, ok := foldOutputBindings(out.Bindings); ok {
			out = newBlock(blk, folded)
		}
	}
	return out
}

// rebind rewrites one binding by the plan, or returns nil to drop it. As
// TVM's ExprMutator, a var whose value changed takes the new value's
// struct info (a fresh var, which the normalizer fills in).
func (c *relaxCanon) rebind(b ir.Binding) ir.Binding {
	old := b.BoundVar()
	of := c.lookup(old)
	if of != nil && of.removed {
		return nil
	}
	value := boundValue(b)
	val := c.expr(value)
	v := old
	if of != nil && of.bindAs != nil {
		v = c.defOf(of.bindAs)
	}
	if val == value && v == old {
		return b
	}
	if _, isCast := b.(*ir.MatchCast); !isCast {
		var n *ir.Var
		switch {
		case val != value:
			n = freshVar(v, nil)
		case v.StructInfo() != val.StructInfo():
			n = freshVar(v, val.StructInfo())
		}
		if n != nil {
			if v != old {
				c.of(v).emitted = n
			}
			if of == nil {
				of = c.of(old)
			}
			of.emitted = n
			v = n
		}
	}
	return withValue(b, v, val)
}

// foldOutputBindings folds a dataflow var whose only use is to be bound to
// an output var ("lv = f(x); gv = lv", or gv = R.match_cast(lv, ...)) into
// the output's binding ("gv = f(x)"), as TVM's BindingCanonicalizer does
// for each dataflow block. It reports whether anything changed.
func foldOutputBindings(binds []ir.Binding) ([]ir.Binding, bool) {
	// Only a binding of an output var to a dataflow var can fold: look
	// for one before building any set.
	found := false
	for _, b := range binds {
		if rv, ok := boundValue(b).(*ir.Var); ok && rv.Dataflow && !b.BoundVar().Dataflow {
			found = true
			break
		}
	}
	if !found {
		return binds, false
	}
	disqualified := map[*ir.Var]bool{}
	outputs := map[*ir.Var]bool{}
	// castOutputs are the dataflow vars an output match_cast reads: TVM
	// folds any value into the match_cast, but phasec's A-normal form
	// (WF023) wants a leaf there, so only a leaf value folds into one.
	castOutputs := map[*ir.Var]bool{}
	candidates := map[*ir.Var]ir.Expr{}
	disqualifyUses := func(e ir.Expr) {
		ir.Inspect(e, func(x ir.Expr) bool {
			if v, ok := x.(*ir.Var); ok && v.Dataflow {
				disqualified[v] = true
			}
			return true
		})
	}
	for i := len(binds) - 1; i >= 0; i-- {
		v, value := binds[i].BoundVar(), boundValue(binds[i])
		if v.Dataflow {
			disqualifyUses(value)
			if !disqualified[v] && outputs[v] && (!castOutputs[v] || ir.IsLeafOrTuple(value)) {
				candidates[v] = value
			}
			continue
		}
		if rv, ok := value.(*ir.Var); ok && rv.Dataflow {
			if outputs[rv] {
				disqualified[rv] = true
			}
			outputs[rv] = true
			if _, isCast := binds[i].(*ir.MatchCast); isCast {
				castOutputs[rv] = true
			}
		} else {
			disqualifyUses(value)
		}
	}
	if len(candidates) == 0 {
		return binds, false
	}
	out := make([]ir.Binding, 0, len(binds))
	for _, b := range binds {
		v, value := b.BoundVar(), boundValue(b)
		if _, ok := candidates[v]; ok && v.Dataflow {
			continue
		}
		if rv, ok := value.(*ir.Var); ok && !v.Dataflow {
			if c, ok := candidates[rv]; ok {
				out = append(out, withValue(b, v, c))
				continue
			}
		}
		out = append(out, b)
	}
	return out, true
}
