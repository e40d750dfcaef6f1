package lower

import (
	"github.com/phasec/phasec/diag"
	"github.com/phasec/phasec/internal/ptrmap"
	"github.com/phasec/phasec/ir"
	"github.com/phasec/phasec/op"
	"github.com/phasec/phasec/passes"
	"github.com/phasec/phasec/phase"
)

// KillAfterLastUse is TVM's src/relax/transform/kill_after_last_use.cc.
var KillAfterLastUse = passes.Define(passes.Info{
	Name:     "KillAfterLastUse",
	Doc:      "release tensors and storage after their last use (memory.kill_*, vm.kill_object)",
	OptLevel: 0,
	Requires: map[phase.Property]string{
		phase.Normalized:     "it finds last uses binding by binding",
		phase.NoDataflow:     "the kills it emits are impure and may not sit in dataflow blocks",
		phase.PurityRelaxed:  "it inserts impure kills into pure functions",
		phase.ExplicitMemory: "it needs the final set of allocated, register-held values",
	},
}, passes.Module(func(_ *passes.Env, mod *ir.Module) (*ir.Module, error) {
	out, errs := killAfterLastUse(mod)
	if err := errs.Err(); err != nil {
		return nil, err
	}
	return out, nil
}))

// killAfterLastUse ends the lifetime of every register-held value a
// function binds right after the binding that uses it last:
// R.memory.kill_tensor for tensors, R.memory.kill_storage for storages
// (bound to memory.alloc_storage or vm.alloc_storage; a tensor keeps its
// storage alive, so this frees nothing early), R.vm.kill_object for other
// objects, in that order, each group in definition order.
//
// Like TVM it first removes trivial bindings (x = y, a projection of a
// tuple bound in the function, a match_cast whose struct info already
// holds), redirecting their uses. Never killed: parameters, values the
// function or an If branch returns (the result owns them), values bound to
// constants, values already killed, and Func, Shape and Prim values (which
// may be immediates). A value is killed only where it is in scope: one last
// used inside an If branch is killed there, one defined inside a branch and
// returned by it is not killed.
//
//	phasec opt --passes KillAfterLastUse testdata/passes/KillAfterLastUse/basic.tvms
func killAfterLastUse(mod *ir.Module) (*ir.Module, diag.List) {
	b := ir.NewBuilder(mod)
	out := mod.Clone()
	for _, name := range mod.Names() {
		fn := mod.Func(name)
		if fn == nil {
			continue
		}
		seq, ok := fn.Body.(*ir.SeqExpr)
		if !ok {
			continue
		}
		redirect := trivialBindings(fn)
		k := &killSplicer{b: b, redirect: redirect, lu: collectLastUses(fn, redirect)}
		sp := &splicer{binding: k.binding, result: k.subst}
		if nseq := sp.seq(seq, nil); nseq != seq {
			out.Set(name, withBody(fn, nseq))
		}
	}
	errs := b.Diagnostics()
	errs.Sort()
	return out, errs
}

// killSplicer decides, per binding, what KillAfterLastUse splices in its
// place: nothing for a trivial binding (its uses now name the source), the
// binding with redirected vars substituted (of identical struct info, so
// nothing else changes), then the kills of the values it used last. Only
// the new kill calls are normalized.
type killSplicer struct {
	b        *ir.Builder
	redirect *ptrmap.Map[ir.Var, *ir.Var]
	lu       *lastUses
}

func (k *killSplicer) binding(bind ir.Binding) ([]ir.Binding, bool) {
	v := bind.BoundVar()
	if _, trivial := k.redirect.Get(v); trivial {
		return []ir.Binding{}, true
	}
	nb := bind
	switch b := bind.(type) {
	case *ir.VarBinding:
		if nv := k.subst(b.Value); nv != b.Value {
			nb = rebind(b, nv)
		}
	case *ir.MatchCast:
		if nv := k.subst(b.Value); nv != b.Value {
			mc := ir.NewMatchCast(b.Var, nv, b.SInfo)
			mc.SetSpan(b.Span())
			nb = mc
		}
	}
	var kills []kill
	if id, ok := k.lu.ids.Get(v); ok {
		kills = k.lu.kills[id]
	}
	if nb == bind && len(kills) == 0 {
		return nil, false
	}
	out := make([]ir.Binding, 0, 1+len(kills))
	out = append(out, nb)
	for _, kl := range kills {
		kv := ir.NewVar("_", nil)
		kb := ir.NewVarBinding(kv, k.b.Normalize(ir.NewCall(kl.op, kl.v)))
		kv.SetStructInfo(kb.Value.StructInfo())
		kb.SetSpan(bind.Span())
		out = append(out, kb)
	}
	return out, true
}

// subst replaces redirected vars in e. The replacements have the struct
// info of what they replace, so rebuilt nodes keep theirs. An If's
// branches were spliced already; local functions are left alone
// (trivialBindings keeps every var they use).
func (k *killSplicer) subst(e ir.Expr) ir.Expr {
	switch x := e.(type) {
	case *ir.Var:
		if src, ok := k.redirect.Get(x); ok {
			return src
		}
	case *ir.Tuple:
		if fields, ch := k.substList(x.Fields); ch {
			n := ir.NewTuple(fields...)
			return keepInfo(n, x)
		}
	case *ir.TupleGetItem:
		if t := k.subst(x.Tuple); t != x.Tuple {
			return keepInfo(&ir.TupleGetItem{Tuple: t, Index: x.Index}, x)
		}
	case *ir.Call:
		op := k.subst(x.Op)
		if args, ch := k.substList(x.Args); ch || op != x.Op {
			return keepInfo(&ir.Call{Op: op, Args: args, Attrs: x.Attrs, SInfoArgs: x.SInfoArgs}, x)
		}
	case *ir.If:
		if cond := k.subst(x.Cond); cond != x.Cond {
			return keepInfo(&ir.If{Cond: cond, Then: x.Then, Else: x.Else}, x)
		}
	}
	return e
}

func (k *killSplicer) substList(in []ir.Expr) ([]ir.Expr, bool) {
	var out []ir.Expr
	for i, e := range in {
		n := k.subst(e)
		if n != e && out == nil {
			out = append(make([]ir.Expr, 0, len(in)), in[:i]...)
		}
		if out != nil {
			out = append(out, n)
		}
	}
	if out == nil {
		return in, false
	}
	return out, true
}

// keepInfo gives n the span and struct info of old.
func keepInfo[T interface {
	ir.Expr
	SetSpan(diag.Span)
	SetStructInfo(ir.StructInfo)
}](n T, old ir.Expr) ir.Expr {
	n.SetSpan(old.Span())
	n.SetStructInfo(old.StructInfo())
	return n
}

// trivialBindings finds the bindings TVM's CanonicalizeBindings removes
// before KillAfterLastUse (x = y, x = t[i] of a tuple t bound to a tuple
// of vars, a match_cast whose struct info the value already has) and maps
// each bound var to its ultimate source. A binding whose var would change
// struct info or dataflow-ness is kept.
func trivialBindings(fn *ir.Function) *ptrmap.Map[ir.Var, *ir.Var] {
	t := &trivialScan{redirect: &ptrmap.Map[ir.Var, *ir.Var]{}, tuples: map[*ir.Var]*ir.Tuple{}, inLocal: varsInLocalFunctions(fn)}
	if seq, ok := fn.Body.(*ir.SeqExpr); ok {
		t.seq(seq)
	}
	return t.redirect
}

type trivialScan struct {
	redirect *ptrmap.Map[ir.Var, *ir.Var]
	tuples   map[*ir.Var]*ir.Tuple
	inLocal  map[*ir.Var]bool
}

func (t *trivialScan) resolve(v *ir.Var) *ir.Var {
	if s, ok := t.redirect.Get(v); ok {
		return s
	}
	return v
}

func (t *trivialScan) seq(seq *ir.SeqExpr) {
	for _, blk := range seq.Blocks {
		for _, bind := range blk.Bindings {
			v := bind.BoundVar()
			var src *ir.Var
			switch b := bind.(type) {
			case *ir.VarBinding:
				switch x := b.Value.(type) {
				case *ir.Var:
					src = x
				case *ir.Tuple:
					t.tuples[v] = x
				case *ir.TupleGetItem:
					if tv, ok := x.Tuple.(*ir.Var); ok {
						if tup := t.tuples[t.resolve(tv)]; tup != nil && x.Index >= 0 && x.Index < len(tup.Fields) {
							src, _ = tup.Fields[x.Index].(*ir.Var)
						}
					}
				case *ir.If:
					for _, br := range []ir.Expr{x.Then, x.Else} {
						if s, ok := br.(*ir.SeqExpr); ok {
							t.seq(s)
						}
					}
				}
			case *ir.MatchCast:
				if x, ok := b.Value.(*ir.Var); ok && x.StructInfo() != nil && ir.StructuralEqual(b.SInfo, x.StructInfo(), ir.EqualOptions{}) {
					src = x
				}
			}
			if src == nil || t.inLocal[v] {
				continue
			}
			src = t.resolve(src)
			if v.Dataflow != src.Dataflow || !ir.StructuralEqual(v.StructInfo(), src.StructInfo(), ir.EqualOptions{}) {
				continue
			}
			t.redirect.Set(v, src)
			if tup, ok := t.tuples[src]; ok {
				t.tuples[v] = tup
			}
		}
	}
}

// varsInLocalFunctions returns the vars the local functions of fn (bound
// in its blocks, at any If depth) refer to: none once LambdaLift has run.
func varsInLocalFunctions(fn *ir.Function) map[*ir.Var]bool {
	var out map[*ir.Var]bool
	var scan func(seq *ir.SeqExpr)
	scan = func(seq *ir.SeqExpr) {
		for _, blk := range seq.Blocks {
			for _, bind := range blk.Bindings {
				vb, ok := bind.(*ir.VarBinding)
				if !ok {
					continue
				}
				switch x := vb.Value.(type) {
				case *ir.Function:
					ir.Inspect(x, func(e ir.Expr) bool {
						if v, ok := e.(*ir.Var); ok {
							if out == nil {
								out = map[*ir.Var]bool{}
							}
							out[v] = true
						}
						return true
					})
				case *ir.If:
					for _, br := range []ir.Expr{x.Then, x.Else} {
						if s, ok := br.(*ir.SeqExpr); ok {
							scan(s)
						}
					}
				}
			}
		}
	}
	if seq, ok := fn.Body.(*ir.SeqExpr); ok {
		scan(seq)
	}
	return out
}

type kill struct {
	op *ir.Op
	v  *ir.Var
}

// Special last uses.
const (
	unused     = -1 // never used
	usedResult = -2 // used by a scope's result
)

// Var flags.
const (
	isStorage uint8 = 1 << iota
	isConstant
	isKilled
)

// lastUses is indexed by dense ids: each binding (and the var it binds) gets
// one in program order; the last use of a var is the id of the binding
// that uses it last.
type lastUses struct {
	ids      ptrmap.Map[ir.Var, int32]
	vars     []*ir.Var
	scopeOf  []int32 // the scope a binding sits in
	last     []int32
	flags    []uint8
	parent   []int32 // scope tree
	redirect *ptrmap.Map[ir.Var, *ir.Var]
	kills    [][]kill // per binding id
}

func collectLastUses(fn *ir.Function, redirect *ptrmap.Map[ir.Var, *ir.Var]) *lastUses {
	lu := &lastUses{redirect: redirect, parent: []int32{-1}}
	if seq, ok := fn.Body.(*ir.SeqExpr); ok {
		lu.seq(seq, 0, usedResult)
	} else {
		lu.uses(fn.Body, 0, usedResult)
	}
	lu.kills = make([][]kill, len(lu.vars))
	for _, group := range []struct {
		op   *ir.Op
		kind func(v *ir.Var, flags uint8) bool
	}{
		{op.MemKillTensor, func(v *ir.Var, _ uint8) bool { _, ok := v.StructInfo().(*ir.TensorInfo); return ok }},
		{op.MemKillStorage, func(v *ir.Var, f uint8) bool { return f&isStorage != 0 && isObjectLike(v) }},
		{op.VMKillObject, func(v *ir.Var, f uint8) bool { return f&isStorage == 0 && isObjectLike(v) }},
	} {
		for id, v := range lu.vars {
			b := lu.last[id]
			if b < 0 || lu.flags[id]&(isKilled|isConstant) != 0 || !lu.inScope(lu.scopeOf[id], lu.scopeOf[b]) || !group.kind(v, lu.flags[id]) {
				continue
			}
			lu.kills[b] = append(lu.kills[b], kill{group.op, v})
		}
	}
	return lu
}

// isObjectLike: a register-held value that is not a tensor and not a
// Func, Shape or Prim value (those may be constants or immediates).
func isObjectLike(v *ir.Var) bool {
	switch v.StructInfo().(type) {
	case *ir.TensorInfo, *ir.FuncInfo, *ir.ShapeInfo, *ir.PrimInfo:
		return false
	}
	return true
}

// inScope reports whether scope def encloses (or is) scope at.
func (lu *lastUses) inScope(def, at int32) bool {
	for s := at; s >= 0; s = lu.parent[s] {
		if s == def {
			return true
		}
	}
	return false
}

func (lu *lastUses) seq(seq *ir.SeqExpr, scope int32, outer int32) {
	for _, blk := range seq.Blocks {
		for _, bind := range blk.Bindings {
			v := bind.BoundVar()
			if _, trivial := lu.redirect.Get(v); trivial {
				continue // removed by the rewrite
			}
			// Reserve the id first: a nested If's bindings come next.
			id := int32(len(lu.vars))
			lu.vars = append(lu.vars, v)
			lu.scopeOf = append(lu.scopeOf, scope)
			lu.last = append(lu.last, unused)
			lu.flags = append(lu.flags, 0)
			var flags uint8
			var value ir.Expr
			switch b := bind.(type) {
			case *ir.VarBinding:
				value = b.Value
				switch x := b.Value.(type) {
				case *ir.Constant:
					flags |= isConstant
				case *ir.Call:
					switch x.Op {
					case op.MemKillTensor, op.MemKillStorage, op.VMKillObject:
						if len(x.Args) == 1 {
							if kv, ok := x.Args[0].(*ir.Var); ok {
								if src, ok := lu.redirect.Get(kv); ok {
									kv = src
								}
								if kid, ok := lu.ids.Get(kv); ok {
									lu.flags[kid] |= isKilled
								}
							}
						}
					case op.MemAllocStorage, op.VMAllocStorage:
						flags |= isStorage
					}
				}
			case *ir.MatchCast:
				value = b.Value
			}
			lu.flags[id] = flags
			lu.uses(value, scope, id)
			lu.ids.Set(v, id)
		}
	}
	lu.uses(seq.Body, scope, outer)
}

// uses records cur as the last use of every var e refers to. A nested
// scope's bindings are their own uses; its result is used by cur.
func (lu *lastUses) uses(e ir.Expr, scope int32, cur int32) {
	switch x := e.(type) {
	case *ir.Var:
		if src, ok := lu.redirect.Get(x); ok {
			x = src
		}
		if id, ok := lu.ids.Get(x); ok {
			lu.last[id] = cur
		}
	case *ir.Tuple:
		for _, f := range x.Fields {
			lu.uses(f, scope, cur)
		}
	case *ir.TupleGetItem:
		lu.uses(x.Tuple, scope, cur)
	case *ir.Call:
		lu.uses(x.Op, scope, cur)
		for _, a := range x.Args {
			lu.uses(a, scope, cur)
		}
	case *ir.If:
		lu.uses(x.Cond, scope, cur)
		for _, br := range []ir.Expr{x.Then, x.Else} {
			inner := int32(len(lu.parent))
			lu.parent = append(lu.parent, scope)
			if s, ok := br.(*ir.SeqExpr); ok {
				lu.seq(s, inner, cur)
			} else {
				lu.uses(br, inner, cur)
			}
		}
	case *ir.SeqExpr:
		lu.seq(x, scope, cur)
	case *ir.Function:
		ir.Inspect(x, func(y ir.Expr) bool {
			if v, ok := y.(*ir.Var); ok {
				lu.uses(v, scope, cur)
			}
			return true
		})
	}
}
