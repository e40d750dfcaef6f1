package lower

import (
	"github.com/phasec/phasec/diag"
	"github.com/phasec/phasec/internal/ptrmap"
	"github.com/phasec/phasec/ir"
	"github.com/phasec/phasec/passes"
	"github.com/phasec/phasec/phase"
)

// KillAfterLastUseInfo declares KillAfterLastUse
// (TVM's src/relax/transform/kill_after_last_use.cc).
var KillAfterLastUseInfo = passes.Info{
	Name:          "KillAfterLastUse",
	Doc:           "release tensors and storage after their last use (memory.kill_*, vm.kill_object)",
	OptLevel:      0,
	RequiresProps: phase.Of(phase.Normalized, phase.NoDataflow, phase.PurityRelaxed, phase.ExplicitMemory),
}

func init() {
	passes.RegisterModulePass(KillAfterLastUseInfo, func(_ *passes.Env, mod *ir.Module) (*ir.Module, error) {
		out, errs := KillAfterLastUse(mod)
		if err := errs.Err(); err != nil {
			return nil, err
		}
		return out, nil
	})
}

// KillAfterLastUse ends the lifetime of every register-held value a
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
func KillAfterLastUse(mod *ir.Module) (*ir.Module, diag.List) {
	rw := ir.NewRewriter(mod)
	out := mod.Clone()
	for _, name := range mod.Names() {
		fn := mod.Func(name)
		if fn == nil {
			continue
		}
		redirect, pairs := trivialBindings(fn)
		lu := collectLastUses(fn, redirect)
		for _, p := range pairs {
			rw.Remap(p[0], p[1])
		}
		rw.Binding = func(rw *ir.Rewriter, bind ir.Binding, value ir.Expr) bool {
			if _, trivial := redirect.Get(bind.BoundVar()); trivial {
				return true // dropped: its uses now name the source
			}
			rw.ReEmit(bind, value)
			id, ok := lu.ids.Get(bind.BoundVar())
			if !ok {
				return true
			}
			for _, k := range lu.kills[id] {
				rw.B.Emit(ir.NewCall(k.op, k.v), "_")
			}
			return true
		}
		if nf := rw.Function(fn); nf != fn {
			out.Set(name, nf)
		}
	}
	errs := rw.B.Diagnostics()
	errs.Sort()
	return out, errs
}

// trivialBindings finds the bindings TVM's CanonicalizeBindings removes
// before KillAfterLastUse (x = y, x = t[i] of a tuple t bound to a tuple
// of vars, a match_cast whose struct info the value already has) and maps
// each bound var to its ultimate source. A binding whose var would change
// struct info or dataflow-ness is kept.
func trivialBindings(fn *ir.Function) (*ptrmap.Map[ir.Var, *ir.Var], [][2]*ir.Var) {
	var pairs [][2]*ir.Var
	redirect := &ptrmap.Map[ir.Var, *ir.Var]{}
	tuples := map[*ir.Var]*ir.Tuple{}
	resolve := func(v *ir.Var) *ir.Var {
		if s, ok := redirect.Get(v); ok {
			return s
		}
		return v
	}
	ir.Inspect(fn.Body, func(e ir.Expr) bool {
		seq, ok := e.(*ir.SeqExpr)
		if !ok {
			return true
		}
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
						tuples[v] = x
					case *ir.TupleGetItem:
						if tv, ok := x.Tuple.(*ir.Var); ok {
							if t := tuples[resolve(tv)]; t != nil && x.Index >= 0 && x.Index < len(t.Fields) {
								src, _ = t.Fields[x.Index].(*ir.Var)
							}
						}
					}
				case *ir.MatchCast:
					if x, ok := b.Value.(*ir.Var); ok && x.StructInfo() != nil && ir.StructuralEqual(b.SInfo, x.StructInfo(), ir.EqualOptions{}) {
						src = x
					}
				}
				if src == nil {
					continue
				}
				src = resolve(src)
				if v.Dataflow != src.Dataflow || !ir.StructuralEqual(v.StructInfo(), src.StructInfo(), ir.EqualOptions{}) {
					continue
				}
				redirect.Set(v, src)
				pairs = append(pairs, [2]*ir.Var{v, src})
				if t, ok := tuples[src]; ok {
					tuples[v] = t
				}
			}
		}
		return true
	})
	return redirect, pairs
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
		{ir.OpMemKillTensor, func(v *ir.Var, _ uint8) bool { _, ok := v.StructInfo().(*ir.TensorInfo); return ok }},
		{ir.OpMemKillStorage, func(v *ir.Var, f uint8) bool { return f&isStorage != 0 && isObjectLike(v) }},
		{ir.OpVMKillObject, func(v *ir.Var, f uint8) bool { return f&isStorage == 0 && isObjectLike(v) }},
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
					case ir.OpMemKillTensor, ir.OpMemKillStorage, ir.OpVMKillObject:
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
					case ir.OpMemAllocStorage, ir.OpVMAllocStorage:
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
