package transform

import (
	"cmp"
	"fmt"
	"hash/maphash"

	"github.com/phasec/phasec/diag"
	"github.com/phasec/phasec/internal/ptrmap"
	"github.com/phasec/phasec/ir"
	"github.com/phasec/phasec/op"
	"github.com/phasec/phasec/passes"
	"github.com/phasec/phasec/phase"
)

// EliminateCommonSubexpr is TVM's
// src/relax/transform/eliminate_common_subexpr.cc: a binding whose value
// (or match_cast, value and target info) equals an earlier binding's
// becomes a trivial binding to the earlier var, and later uses of its var
// use the earlier var. CanonicalizeBindings and DeadCodeElimination clean
// up the trivial bindings afterwards, as in TVM.
//
// Scopes, as TVM's: a function is one scope across its blocks, except that
// a dataflow block's vars (and the replacements made inside it) are not
// visible after the block, while its output vars stay candidates; an If
// branch sees the bindings before the If, and nothing bound inside a branch
// is visible outside it or in the other branch; a local function is a scope
// of its own. Values that call something impure, allocator calls
// (alloc_tensor, alloc_storage) and, with call_only, values other than
// calls are never de-duplicated.
var EliminateCommonSubexpr = passes.Define(passes.Info{
	Name:     "EliminateCommonSubexpr",
	Doc:      "replace a binding whose value repeats an earlier binding's by a binding to the earlier var",
	OptLevel: 1,
	Accepts:  []phase.Phase{phase.Ingest, phase.Optimize},
	Requires: map[phase.Property]string{
		phase.Normalized: "it compares bound values, which in A-normal form are one call over vars and constants",
	},
	Options: []passes.Option{{
		Name: "call_only", Type: passes.Bool, Default: false,
		Doc: "de-duplicate only bindings whose value is a call",
	}},
}, passes.Functions(func(env *passes.Env, mod *ir.Module, name string, f *ir.Function) (*ir.Function, error) {
	nf, errs := EliminateCommonSubexprs(mod, f, env.Options().Bool("call_only"))
	if errs.HasErrors() {
		return nil, fmt.Errorf("function %s: %w", name, errs)
	}
	return nf, nil
}).InParallel())

// EliminateCommonSubexprs is the work of EliminateCommonSubexpr on one
// function of mod: f itself when it has no common subexpression.
func EliminateCommonSubexprs(mod *ir.Module, f *ir.Function, callOnly bool) (*ir.Function, diag.List) {
	c := newCSE(mod, callOnly)
	nf := c.function(f)
	if nf == f {
		return f, nil
	}
	return ir.NormalizeFunction(mod, nf)
}

// cse is one scope's state (TVM's CommonSubexprEliminator). Scopes nest
// by journaling: entering an If branch or a dataflow block remembers the
// journals' lengths and leaving it undoes what was recorded since, so
// leaving a scope costs what the scope did, not the size of the state.
type cse struct {
	mod      *ir.Module
	callOnly bool
	seed     maphash.Seed

	remap    ptrmap.Map[ir.Var, *ir.Var] // uses of a duplicate's var -> the earlier var
	remapLog []*ir.Var                   // remap keys in insertion order

	table    map[uint64]*candidate // value hash -> the newest candidate of that hash
	tableLog []undo
}

// candidate is a value bound earlier and the var it is available as.
// TVM keeps the list of every var the value was bound to and uses the first
// one; only the first and the first that is not a dataflow var (the new
// first once the dataflow block ends) ever matter.
type candidate struct {
	hash       uint64
	value      ir.Expr
	cast       ir.StructInfo // match_cast target info, or nil
	first      *ir.Var       // nil: not available in this scope
	firstNonDF *ir.Var
	older      *candidate // the previous candidate of the same hash
}

// undo restores a candidate's vars, or removes a created candidate.
type undo struct {
	c                 *candidate
	first, firstNonDF *ir.Var
	created           bool
}

func newCSE(mod *ir.Module, callOnly bool) *cse {
	return &cse{mod: mod, callOnly: callOnly, seed: maphash.MakeSeed()}
}

func (c *cse) function(f *ir.Function) *ir.Function {
	// Each binding may add a candidate and a journal entry: sizing both for
	// the function's top-level bindings up front spares a large function
	// the regrowth of a table and log that have outgrown the cache.
	n := topLevelBindings(f)
	c.table = make(map[uint64]*candidate, n)
	c.tableLog = make([]undo, 0, n)
	body := c.expr(f.Body)
	if body == f.Body {
		return f
	}
	nf := &ir.Function{Params: f.Params, Body: body, Ret: f.Ret, Pure: f.Pure, Attrs: f.Attrs}
	nf.SetSpan(f.Span())
	return nf
}

// expr rewrites the uses in e through remap; If branches are inner scopes
// and local functions scopes of their own. Rebuilt nodes carry no struct
// info: the function is re-normalized at the end.
func (c *cse) expr(e ir.Expr) ir.Expr {
	switch e := e.(type) {
	case *ir.Var:
		if n, ok := c.remap.Get(e); ok {
			return n
		}
	case *ir.Tuple:
		if fields, ch := c.exprs(e.Fields); ch {
			return withSpan(ir.NewTuple(fields...), e)
		}
	case *ir.TupleGetItem:
		if t := c.expr(e.Tuple); t != e.Tuple {
			return withSpan(&ir.TupleGetItem{Tuple: t, Index: e.Index}, e)
		}
	case *ir.Call:
		callee := c.expr(e.Op)
		args, ch := c.exprs(e.Args)
		if ch || callee != e.Op {
			return withSpan(&ir.Call{Op: callee, Args: args, Attrs: e.Attrs, SInfoArgs: e.SInfoArgs}, e)
		}
	case *ir.If:
		cond := c.expr(e.Cond)
		then := c.inner(e.Then)
		els := c.inner(e.Else)
		if cond != e.Cond || then != e.Then || els != e.Else {
			return withSpan(&ir.If{Cond: cond, Then: then, Else: els}, e)
		}
	case *ir.SeqExpr:
		return c.seq(e)
	case *ir.Function:
		// A fresh scope: nothing crosses a function boundary. (TVM shares
		// the state when it happens to be empty, which lets bindings of
		// the local function replace later outer ones; phasec does not.)
		return newCSE(c.mod, c.callOnly).function(e)
	}
	return e
}

func (c *cse) exprs(in []ir.Expr) ([]ir.Expr, bool) {
	var out []ir.Expr
	for i, x := range in {
		n := c.expr(x)
		if n != x && out == nil {
			out = make([]ir.Expr, len(in))
			copy(out, in[:i])
		}
		if out != nil {
			out[i] = n
		}
	}
	if out == nil {
		return in, false
	}
	return out, true
}

// inner rewrites an If branch in a scope that is undone afterwards.
func (c *cse) inner(e ir.Expr) ir.Expr {
	remapMark, tableMark := len(c.remapLog), len(c.tableLog)
	out := c.expr(e)
	c.undoRemap(remapMark)
	c.undoTable(tableMark)
	return out
}

func (c *cse) seq(s *ir.SeqExpr) ir.Expr {
	var blocks []*ir.BindingBlock
	changed := false
	for _, blk := range s.Blocks {
		remapMark, tableMark := len(c.remapLog), len(c.tableLog)
		nb := c.block(blk)
		if blk.Dataflow {
			c.undoRemap(remapMark)
			c.dropDataflowVars(tableMark)
		}
		changed = changed || nb != blk
		blocks = append(blocks, nb)
	}
	body := c.expr(s.Body)
	if !changed && body == s.Body {
		return s
	}
	return withSpan(&ir.SeqExpr{Blocks: blocks, Body: body}, s)
}

func (c *cse) block(blk *ir.BindingBlock) *ir.BindingBlock {
	var out []ir.Binding
	for i, b := range blk.Bindings {
		nb := c.binding(b)
		if nb != b && out == nil {
			out = make([]ir.Binding, i, len(blk.Bindings))
			copy(out, blk.Bindings[:i])
		}
		if out != nil {
			out = append(out, nb)
		}
	}
	if out == nil {
		return blk
	}
	nb := &ir.BindingBlock{Bindings: out, Dataflow: blk.Dataflow}
	nb.SetSpan(blk.Span())
	return nb
}

func (c *cse) binding(b ir.Binding) ir.Binding {
	var v *ir.Var
	var value, orig ir.Expr
	var cast ir.StructInfo
	switch b := b.(type) {
	case *ir.VarBinding:
		v, orig = b.Var, b.Value
	case *ir.MatchCast:
		v, orig, cast = b.Var, b.Value, b.SInfo
	}
	value = c.expr(orig)
	out := b
	if value != orig {
		switch b := b.(type) {
		case *ir.VarBinding:
			nb := ir.NewVarBinding(v, value)
			nb.SetSpan(b.Span())
			out = nb
		case *ir.MatchCast:
			nb := ir.NewMatchCast(v, value, cast)
			nb.SetSpan(b.Span())
			out = nb
		}
	}
	if !c.eligible(value) {
		return out
	}
	h := c.hash(value, cast)
	cand := c.find(h, value, cast)
	switch {
	case cand != nil && cand.first != nil:
		c.set(cand, cand.first, cmp.Or(cand.firstNonDF, nonDataflow(v)))
		c.remap.Set(v, cand.first)
		c.remapLog = append(c.remapLog, v)
		nb := ir.NewVarBinding(v, cand.first)
		nb.SetSpan(b.Span())
		return nb
	case cand != nil:
		c.set(cand, v, cmp.Or(cand.firstNonDF, nonDataflow(v)))
	default:
		cand = &candidate{hash: h, value: value, cast: cast, first: v, firstNonDF: nonDataflow(v), older: c.table[h]}
		c.table[h] = cand
		c.tableLog = append(c.tableLog, undo{c: cand, created: true})
	}
	return out
}

// eligible reports whether value may be de-duplicated.
func (c *cse) eligible(value ir.Expr) bool {
	call, isCall := value.(*ir.Call)
	if c.callOnly && !isCall {
		return false
	}
	if isCall {
		switch call.Op {
		case op.BuiltinAllocTensor, op.MemAllocStorage, op.MemAllocTensor, op.VMAllocStorage, op.VMAllocTensor:
			return false // TVM's TAllocator ops: every allocation is a new object
		}
	}
	return !containsImpureCall(c.mod, value)
}

// hash hashes a value consistently with sameValue: its structure
// (ir.StructuralHash, which numbers variables by first occurrence) mixed
// with the identity of the vars it uses directly, so that R.add(lv0, b)
// and R.add(lv1, b) fall into different buckets.
func (c *cse) hash(value ir.Expr, cast ir.StructInfo) uint64 {
	h := ir.StructuralHash(value)
	if cast != nil {
		h = h*31 + ir.StructuralHash(cast)
	}
	var mix func(e ir.Expr)
	mix = func(e ir.Expr) {
		switch e := e.(type) {
		case *ir.Var:
			h = h*1000003 ^ maphash.Comparable(c.seed, e)
		case *ir.Tuple:
			for _, f := range e.Fields {
				mix(f)
			}
		case *ir.TupleGetItem:
			mix(e.Tuple)
		case *ir.Call:
			mix(e.Op)
			for _, a := range e.Args {
				mix(a)
			}
		}
	}
	mix(value)
	return h
}

// find returns the candidate for value (and match_cast info), or nil.
func (c *cse) find(h uint64, value ir.Expr, cast ir.StructInfo) *candidate {
	for cand := c.table[h]; cand != nil; cand = cand.older {
		if ir.StructuralEqual(cand.value, value, ir.EqualOptions{}) && sameCast(cand.cast, cast) {
			return cand
		}
	}
	return nil
}

// sameCast compares match_cast target infos as TVM's ReplacementKey does:
// structurally, with symbolic variables equal only when they are the same
// variable (R.Tensor([n, m]) and R.Tensor([p, q]) define different ones).
func sameCast(a, b ir.StructInfo) bool {
	if a == nil || b == nil {
		return a == nil && b == nil
	}
	if !ir.StructuralEqual(a, b, ir.EqualOptions{}) {
		return false
	}
	var va, vb []*ir.PrimVar
	collect := func(s ir.StructInfo, out *[]*ir.PrimVar) {
		ir.InspectStructInfoPrims(s, func(p ir.PrimExpr) bool {
			if v, ok := p.(*ir.PrimVar); ok {
				*out = append(*out, v)
			}
			return true
		})
	}
	collect(a, &va)
	collect(b, &vb)
	if len(va) != len(vb) {
		return false
	}
	for i := range va {
		if va[i] != vb[i] {
			return false
		}
	}
	return true
}

// set changes a candidate's vars, journaled.
func (c *cse) set(cand *candidate, first, firstNonDF *ir.Var) {
	if cand.first == first && cand.firstNonDF == firstNonDF {
		return
	}
	c.tableLog = append(c.tableLog, undo{c: cand, first: cand.first, firstNonDF: cand.firstNonDF})
	cand.first, cand.firstNonDF = first, firstNonDF
}

// dropDataflowVars ends a dataflow block: the candidates it touched stop
// offering its dataflow vars (TVM erases them from every list; only lists
// the block appended to can hold them).
func (c *cse) dropDataflowVars(mark int) {
	end := len(c.tableLog)
	for i := mark; i < end; i++ {
		cand := c.tableLog[i].c
		if cand.first != nil && cand.first.Dataflow {
			c.set(cand, cand.firstNonDF, cand.firstNonDF)
		}
	}
}

func (c *cse) undoRemap(mark int) {
	for _, v := range c.remapLog[mark:] {
		c.remap.Delete(v)
	}
	c.remapLog = c.remapLog[:mark]
}

func (c *cse) undoTable(mark int) {
	for i := len(c.tableLog) - 1; i >= mark; i-- {
		u := c.tableLog[i]
		if u.created { // the newest of its hash: undone in reverse order
			if u.c.older == nil {
				delete(c.table, u.c.hash)
			} else {
				c.table[u.c.hash] = u.c.older
			}
			continue
		}
		u.c.first, u.c.firstNonDF = u.first, u.firstNonDF
	}
	c.tableLog = c.tableLog[:mark]
}

// nonDataflow returns v, or nil for a dataflow var.
func nonDataflow(v *ir.Var) *ir.Var {
	if v.Dataflow {
		return nil
	}
	return v
}

// withSpan gives n the span of old.
func withSpan[T interface {
	ir.Expr
	SetSpan(diag.Span)
}](n T, old ir.Expr) T {
	n.SetSpan(old.Span())
	return n
}
