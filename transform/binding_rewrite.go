package transform

import "github.com/phasec/phasec/ir"

// removeAllUnused is TVM's RemoveAllUnused (src/relax/ir/binding_rewrite.cc,
// with the use-def chains of src/relax/analysis/udchain.cc): it drops every
// VarBinding of f whose var is not used, transitively, by what f computes.
//
// What counts as used follows TVM's UDChain. A var used by a VarBinding's
// value (including inside its If branches) is used by that binding's var;
// a var used anywhere else (a SeqExpr's result at function level, a
// MatchCast's value, inside a local function) is an output. Outputs, and
// vars whose value contains an impure call, are live; so is every var a live
// binding uses. MatchCast bindings are always kept, as in TVM. f itself is
// returned when nothing is dropped.
func removeAllUnused(mod *ir.Module, f *ir.Function) *ir.Function {
	u := &useDef{mod: mod, deps: map[*ir.Var][]*ir.Var{}, bound: map[*ir.Var]bool{}, live: map[*ir.Var]bool{}}
	u.function(f)
	// Liveness: everything reachable from the roots through the vars
	// each binding's value uses. Each var is pushed at most once.
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
	}
	return m.Function(f)
}

// useDef collects the use-def facts removeAllUnused needs.
type useDef struct {
	mod   *ir.Module
	deps  map[*ir.Var][]*ir.Var // binding var -> vars its value uses
	bound map[*ir.Var]bool      // vars bound by a removable VarBinding
	live  map[*ir.Var]bool
	roots []*ir.Var
}

func (u *useDef) root(v *ir.Var) {
	if !u.live[v] {
		u.live[v] = true
		u.roots = append(u.roots, v)
	}
}

func (u *useDef) function(f *ir.Function) { u.expr(f.Body, nil) }

// expr records the uses in e on behalf of user (nil: outputs). Recursion
// follows expression nesting; bindings are visited in a loop.
func (u *useDef) expr(e ir.Expr, user *ir.Var) {
	ir.Walk(e, &ir.Visitor{Expr: func(x ir.Expr) bool {
		switch x := x.(type) {
		case *ir.Var:
			if user == nil {
				u.root(x)
			} else {
				u.deps[user] = append(u.deps[user], x)
			}
		case *ir.Function:
			u.expr(x.Body, nil)
			return false
		case *ir.SeqExpr:
			for _, blk := range x.Blocks {
				for _, b := range blk.Bindings {
					u.binding(b)
				}
			}
			u.expr(x.Body, user)
			return false
		}
		return true
	}})
}

func (u *useDef) binding(b ir.Binding) {
	switch b := b.(type) {
	case *ir.VarBinding:
		u.bound[b.Var] = true
		if containsImpureCall(u.mod, b.Value) {
			u.root(b.Var)
		}
		u.expr(b.Value, b.Var)
	case *ir.MatchCast:
		u.expr(b.Value, nil)
	}
}
