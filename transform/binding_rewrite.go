package transform

import (
	"github.com/phasec/phasec/internal/ptrmap"
	"github.com/phasec/phasec/ir"
)

// removeAllUnused is TVM's RemoveAllUnused (src/relax/ir/binding_rewrite.cc,
// over the use-def chains of src/relax/analysis/udchain.cc): it drops every
// VarBinding of f whose var nothing f computes uses, transitively.
//
// What counts as a use follows TVM's UDChain: a var used in a VarBinding's
// value (its If branches included) is used by that binding's var; a var
// used anywhere else (a SeqExpr's result at function level, a MatchCast's
// value, anything inside a local function) is an output. Outputs and vars
// whose value contains an impure call are live, and so is every var a live
// binding uses; liveness is a reachability walk, each var visited once,
// where TVM iterates to a fixpoint (the same set: the use graph is acyclic).
// MatchCast bindings are always kept, as in TVM. Blocks left empty are
// dropped and adjacent blocks of one kind merged, as TVM's normalizer does.
// f itself is returned when nothing is dropped.
func removeAllUnused(mod *ir.Module, f *ir.Function) *ir.Function {
	u := &useDef{mod: mod}
	u.index.Reserve(topLevelBindings(f))
	u.expr(f.Body, -1)
	work := u.roots
	for len(work) > 0 {
		v := work[len(work)-1]
		work = work[:len(work)-1]
		for _, d := range u.vars[v].deps {
			if !u.vars[d].live {
				u.vars[d].live = true
				work = append(work, d)
			}
		}
	}
	dead := false
	for _, v := range u.vars {
		if v.bound && !v.live {
			dead = true
			break
		}
	}
	if !dead {
		return f
	}
	m := &ir.Mutator{
		KeepStructInfo: true,
		Binding: func(b ir.Binding) ir.Binding {
			if vb, ok := b.(*ir.VarBinding); ok {
				if i, ok := u.index.Get(vb.Var); ok && u.vars[i].bound && !u.vars[i].live {
					return nil
				}
			}
			return b
		},
		PostExpr: mergeBlocks,
	}
	return m.Function(f)
}

// mergeBlocks merges the adjacent blocks of one kind that dropping
// bindings (and so empty blocks) left in a SeqExpr.
func mergeBlocks(e ir.Expr) ir.Expr {
	seq, ok := e.(*ir.SeqExpr)
	if !ok {
		return e
	}
	blocks, changed := ir.NormalizeBlocks(seq.Blocks)
	if !changed {
		return e
	}
	out := &ir.SeqExpr{Blocks: blocks, Body: seq.Body}
	out.SetSpan(seq.Span())
	out.SetStructInfo(seq.StructInfo())
	return out
}

// useDef collects the use-def facts removeAllUnused needs, per var (by
// index: one look-up per use, in a pointer map whose slots follow
// allocation order, so the recent definitions most uses refer to stay in
// cache).
type useDef struct {
	mod   *ir.Module
	index ptrmap.Map[ir.Var, int32]
	vars  []varUse
	roots []int32
}

type varUse struct {
	deps  []int32 // for a binding var: the vars its value uses
	bound bool    // bound by a VarBinding
	live  bool
}

func (u *useDef) id(v *ir.Var) int32 {
	i, found := u.index.GetOrSet(v, int32(len(u.vars)))
	if !found {
		u.vars = append(u.vars, varUse{})
	}
	return i
}

// topLevelBindings counts the bindings of f's body, to size tables.
func topLevelBindings(f *ir.Function) int {
	n := len(f.Params)
	if seq, ok := f.Body.(*ir.SeqExpr); ok {
		for _, b := range seq.Blocks {
			n += len(b.Bindings)
		}
	}
	return n
}

func (u *useDef) root(i int32) {
	if !u.vars[i].live {
		u.vars[i].live = true
		u.roots = append(u.roots, i)
	}
}

// expr records the uses in e on behalf of the var user (-1: outputs).
// Recursion follows expression nesting; the bindings of a SeqExpr are a
// loop.
func (u *useDef) expr(e ir.Expr, user int32) {
	ir.Walk(e, &ir.Visitor{
		Expr: func(x ir.Expr) bool {
			switch x := x.(type) {
			case *ir.Var:
				u.use(x, user)
			case *ir.Constant, *ir.Op, *ir.GlobalVar, *ir.ShapeExpr, *ir.PrimValue:
				return false
			case *ir.Function:
				u.expr(x.Body, -1)
				return false
			case *ir.SeqExpr:
				for _, blk := range x.Blocks {
					for _, b := range blk.Bindings {
						u.binding(b, user)
					}
				}
				u.expr(x.Body, user)
				return false
			}
			return true
		},
		// TVM's visitor also visits the expressions inside annotation
		// struct info (a tensor shape given by a shape var).
		StructInfo: func(s ir.StructInfo) { u.structInfo(s, user) },
	})
}

func (u *useDef) use(v *ir.Var, user int32) {
	i := u.id(v)
	if user < 0 {
		u.root(i)
	} else {
		u.vars[user].deps = append(u.vars[user].deps, i)
	}
}

func (u *useDef) structInfo(s ir.StructInfo, user int32) {
	switch s := s.(type) {
	case *ir.TensorInfo:
		if v, ok := s.Shape.(*ir.Var); ok {
			u.use(v, user)
		}
	case *ir.TupleInfo:
		for _, f := range s.Fields {
			u.structInfo(f, user)
		}
	}
}

// binding records a binding met inside the value of user's binding (-1
// at function level).
func (u *useDef) binding(b ir.Binding, user int32) {
	switch b := b.(type) {
	case *ir.VarBinding:
		i := u.id(b.Var)
		u.vars[i].bound = true
		if containsImpureCall(u.mod, b.Value) {
			u.root(i)
		}
		u.expr(b.Value, i)
	case *ir.MatchCast:
		// Visited with the enclosing user, as TVM's UDChain does not
		// treat a MatchCast as a user.
		u.expr(b.Value, user)
		u.structInfo(b.SInfo, user)
	}
}

// containsImpureCall is TVM's ContainsImpureCall (src/relax/analysis/
// analysis.cc): whether e calls something impure, looking into nested
// SeqExprs and If branches but not into local functions (of a function
// value, its own body is looked at).
func containsImpureCall(mod *ir.Module, e ir.Expr) bool {
	switch x := e.(type) {
	case *ir.Function:
		e = x.Body
	case *ir.Call:
		if !callIsPure(mod, x) {
			return true
		}
		if leaves(x.Args) {
			return false
		}
	}
	impure := false
	ir.Inspect(e, func(x ir.Expr) bool {
		switch x := x.(type) {
		case *ir.Function:
			return false
		case *ir.Call:
			impure = impure || !callIsPure(mod, x)
		}
		return !impure
	})
	return impure
}

// callIsPure reports whether a call is pure: an op's purity, else the
// callee's function struct info (a global's from the module when the
// reference carries none). Anything unknown is impure, as in TVM.
func callIsPure(mod *ir.Module, c *ir.Call) bool {
	if o, ok := c.Op.(*ir.Op); ok {
		return o.Pure
	}
	si := c.Op.StructInfo()
	if gv, ok := c.Op.(*ir.GlobalVar); ok && si == nil && mod != nil {
		si, _ = mod.GlobalInfo(gv.Name)
	}
	fi, ok := si.(*ir.FuncInfo)
	return ok && fi.Pure
}

// leaves reports whether es are all leaves (no call or scope inside).
func leaves(es []ir.Expr) bool {
	for _, e := range es {
		switch e := e.(type) {
		case *ir.Var, *ir.Constant, *ir.ShapeExpr, *ir.PrimValue, *ir.StringImm, *ir.DataTypeImm, *ir.GlobalVar, *ir.ExternFunc:
		case *ir.Tuple:
			if !leaves(e.Fields) {
				return false
			}
		default:
			return false
		}
	}
	return true
}
