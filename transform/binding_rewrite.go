package transform

import "github.com/phasec/phasec/ir"

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
	u := &useDef{mod: mod, deps: map[*ir.Var][]*ir.Var{}, bound: map[*ir.Var]bool{}, live: map[*ir.Var]bool{}}
	u.expr(f.Body, nil)
	work := u.roots
	for len(work) > 0 {
		v := work[len(work)-1]
		work = work[:len(work)-1]
		for _, d := range u.deps[v] {
			if !u.live[d] {
				u.live[d] = true
				work = append(work, d)
			}
		}
	}
	dead := false
	for v := range u.bound {
		if !u.live[v] {
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
			if vb, ok := b.(*ir.VarBinding); ok && u.bound[vb.Var] && !u.live[vb.Var] {
				return nil
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

// useDef collects the use-def facts removeAllUnused needs.
type useDef struct {
	mod   *ir.Module
	deps  map[*ir.Var][]*ir.Var // binding var -> the vars its value uses
	bound map[*ir.Var]bool      // vars bound by a VarBinding
	live  map[*ir.Var]bool
	roots []*ir.Var
}

func (u *useDef) root(v *ir.Var) {
	if !u.live[v] {
		u.live[v] = true
		u.roots = append(u.roots, v)
	}
}

// expr records the uses in e on behalf of user (nil: outputs). Recursion
// follows expression nesting; the bindings of a SeqExpr are a loop.
func (u *useDef) expr(e ir.Expr, user *ir.Var) {
	ir.Walk(e, &ir.Visitor{
		Expr: func(x ir.Expr) bool {
			switch x := x.(type) {
			case *ir.Var:
				u.use(x, user)
			case *ir.Function:
				u.expr(x.Body, nil)
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

func (u *useDef) use(v *ir.Var, user *ir.Var) {
	if user == nil {
		u.root(v)
	} else {
		u.deps[user] = append(u.deps[user], v)
	}
}

func (u *useDef) structInfo(s ir.StructInfo, user *ir.Var) {
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

// binding records a binding met inside the value of user's binding (nil
// at function level).
func (u *useDef) binding(b ir.Binding, user *ir.Var) {
	switch b := b.(type) {
	case *ir.VarBinding:
		u.bound[b.Var] = true
		if containsImpureCall(u.mod, b.Value) {
			u.root(b.Var)
		}
		u.expr(b.Value, b.Var)
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
	if f, ok := e.(*ir.Function); ok {
		e = f.Body
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
