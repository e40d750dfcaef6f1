package lower

import (
	"github.com/phasec/phasec/diag"
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
	RequiresProps: phase.Of(phase.ExplicitMemory),
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
	var errs diag.List
	out := mod.Clone()
	for _, name := range mod.Names() {
		fn := mod.Func(name)
		if fn == nil {
			continue
		}
		rw := ir.NewRewriter(mod)
		canon := removeTrivialBindings(rw, fn)
		errs = append(errs, rw.B.Diagnostics()...)
		lu := collectLastUses(canon)
		rw2 := ir.NewRewriter(mod)
		rw2.Binding = func(rw *ir.Rewriter, bind ir.Binding, value ir.Expr) bool {
			rw.ReEmit(bind, value)
			for _, k := range lu.kills[bind] {
				rw.B.Emit(ir.NewCall(k.op, k.v), "_")
			}
			return true
		}
		nf := rw2.Function(canon)
		errs = append(errs, rw2.B.Diagnostics()...)
		if nf != fn {
			out.Set(name, nf)
		}
	}
	errs.Sort()
	return out, errs
}

// removeTrivialBindings redirects uses of trivially bound vars to their
// sources and drops those bindings (the part of TVM's CanonicalizeBindings
// KillAfterLastUse relies on).
func removeTrivialBindings(rw *ir.Rewriter, fn *ir.Function) *ir.Function {
	tuples := map[*ir.Var]*ir.Tuple{}
	rw.Binding = func(rw *ir.Rewriter, bind ir.Binding, value ir.Expr) bool {
		v := bind.BoundVar()
		var src ir.Expr
		switch b := bind.(type) {
		case *ir.VarBinding:
			switch x := value.(type) {
			case *ir.Var:
				src = x
			case *ir.Tuple:
				tuples[v] = x
			case *ir.TupleGetItem:
				if tv, ok := x.Tuple.(*ir.Var); ok {
					if t := tuples[tv]; t != nil && x.Index >= 0 && x.Index < len(t.Fields) {
						if fv, ok := t.Fields[x.Index].(*ir.Var); ok {
							src = fv
						}
					}
				}
			}
		case *ir.MatchCast:
			if x, ok := value.(*ir.Var); ok && x.StructInfo() != nil && ir.StructuralEqual(b.SInfo, x.StructInfo(), ir.EqualOptions{}) {
				src = x
			}
		}
		if src == nil || v.Dataflow != src.(*ir.Var).Dataflow ||
			!ir.StructuralEqual(v.StructInfo(), src.StructInfo(), ir.EqualOptions{}) {
			return false
		}
		rw.Remap(v, src)
		return true
	}
	defer func() { rw.Binding = nil }()
	return rw.Function(fn)
}

type kill struct {
	op *ir.Op
	v  *ir.Var
}

type lastUses struct {
	last     map[*ir.Var]ir.Binding // nil: used by a scope's result
	scopeOf  map[*ir.Var]int        // the scope a bound var is defined in
	bindAt   map[ir.Binding]int     // the scope a binding sits in
	parent   []int                  // scope tree
	order    []*ir.Var              // bound vars in definition order
	storage  map[*ir.Var]bool
	constant map[*ir.Var]bool
	killed   map[*ir.Var]bool
	kills    map[ir.Binding][]kill
}

func collectLastUses(fn *ir.Function) *lastUses {
	lu := &lastUses{
		last: map[*ir.Var]ir.Binding{}, scopeOf: map[*ir.Var]int{}, bindAt: map[ir.Binding]int{},
		parent: []int{-1}, storage: map[*ir.Var]bool{}, constant: map[*ir.Var]bool{}, killed: map[*ir.Var]bool{},
		kills: map[ir.Binding][]kill{},
	}
	if seq, ok := fn.Body.(*ir.SeqExpr); ok {
		lu.seq(seq, 0, nil)
	} else {
		lu.uses(fn.Body, 0, nil)
	}
	var tensors, storages, objects []*ir.Var
	for _, v := range lu.order {
		b, used := lu.last[v]
		if !used || b == nil || lu.killed[v] || lu.constant[v] || !lu.inScope(lu.scopeOf[v], lu.bindAt[b]) {
			continue
		}
		switch v.StructInfo().(type) {
		case *ir.TensorInfo:
			tensors = append(tensors, v)
		case *ir.FuncInfo, *ir.ShapeInfo, *ir.PrimInfo:
		default:
			if lu.storage[v] {
				storages = append(storages, v)
			} else {
				objects = append(objects, v)
			}
		}
	}
	for _, group := range []struct {
		op *ir.Op
		vs []*ir.Var
	}{{ir.OpMemKillTensor, tensors}, {ir.OpMemKillStorage, storages}, {ir.OpVMKillObject, objects}} {
		for _, v := range group.vs {
			b := lu.last[v]
			lu.kills[b] = append(lu.kills[b], kill{group.op, v})
		}
	}
	return lu
}

// inScope reports whether scope def encloses (or is) scope at.
func (lu *lastUses) inScope(def, at int) bool {
	for s := at; s >= 0; s = lu.parent[s] {
		if s == def {
			return true
		}
	}
	return false
}

func (lu *lastUses) seq(seq *ir.SeqExpr, scope int, outer ir.Binding) {
	for _, blk := range seq.Blocks {
		for _, bind := range blk.Bindings {
			v := bind.BoundVar()
			lu.bindAt[bind] = scope
			var value ir.Expr
			switch b := bind.(type) {
			case *ir.VarBinding:
				value = b.Value
				switch x := b.Value.(type) {
				case *ir.Constant:
					lu.constant[v] = true
				case *ir.Call:
					switch x.Op {
					case ir.OpMemKillTensor, ir.OpMemKillStorage, ir.OpVMKillObject:
						if len(x.Args) == 1 {
							if kv, ok := x.Args[0].(*ir.Var); ok {
								lu.killed[kv] = true
							}
						}
					case ir.OpMemAllocStorage, ir.OpVMAllocStorage:
						lu.storage[v] = true
					}
				}
			case *ir.MatchCast:
				value = b.Value
			}
			lu.uses(value, scope, bind)
			lu.scopeOf[v] = scope
			lu.order = append(lu.order, v)
		}
	}
	lu.uses(seq.Body, scope, outer)
}

// uses records cur as the last use of every var e refers to. A nested
// scope's bindings are their own uses; its result is used by cur.
func (lu *lastUses) uses(e ir.Expr, scope int, cur ir.Binding) {
	switch x := e.(type) {
	case *ir.Var:
		lu.last[x] = cur
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
			inner := len(lu.parent)
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
				lu.last[v] = cur
			}
			return true
		})
	}
}
