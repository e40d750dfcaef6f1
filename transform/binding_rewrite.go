package transform

import (
	"github.com/phasec/phasec/internal/ptrmap"
	"github.com/phasec/phasec/ir"
)

// removeAllUnused is TVM's RemoveAllUnused (src/relax/ir/binding_rewrite.cc,
// with the use-def chains of src/relax/analysis/udchain.cc): f without the
// VarBindings whose vars nothing f computes uses, or f itself when there
// are none. MatchCast bindings are always kept, and so are bindings whose
// value contains an impure call. DeadCodeElimination, InlinePrivateFunctions
// and RemoveUnusedParameters share it.
func removeAllUnused(mod *ir.Module, f *ir.Function) *ir.Function {
	l := &liveness{mod: mod}
	l.uses(f, true)
	if l.dead == 0 {
		return f
	}
	m := &ir.Mutator{
		KeepStructInfo: true,
		Binding: func(b ir.Binding) ir.Binding {
			if vb, ok := b.(*ir.VarBinding); ok && !l.isLive(vb.Var) {
				return nil
			}
			return b
		},
		PostExpr: mergeBlocks,
	}
	return m.Function(f)
}

// liveness finds the live vars of a function by TVM's use rule (UDChain,
// src/relax/analysis/udchain.cc): a use is charged to the innermost
// enclosing var binding, its user; a use with no user (a result, a
// match_cast value outside any var binding, a nested function's result)
// makes the var live, and so does an impure bound value; a var is live
// when a live user uses it.
//
// Every user of a var comes after it (in its scope or nested in a later
// binding), so one backward sweep over each binding list decides: when a
// binding is reached, every use of its var was seen. A local function is
// swept before its own binding is decided, as it may use itself.
type liveness struct {
	mod *ir.Module
	// live is the set of live vars: a ptrmap, whose locality-keeping slots
	// keep a large function's lookups in cache (a Go map's do not).
	live ptrmap.Map[ir.Var, struct{}]
	dead int // var bindings found dead
	// userLive says whether the user of the uses being scanned is live.
	userLive bool
}

// uses records the uses in e; live says whether e's user is live (a root
// use is a live one).
func (l *liveness) uses(e ir.Expr, live bool) {
	outer := l.userLive
	l.userLive = live
	scanUses(e, l)
	l.userLive = outer
}

func (l *liveness) use(v *ir.Var) {
	if l.userLive {
		l.live.Set(v, struct{}{})
	}
}

func (l *liveness) isLive(v *ir.Var) bool {
	_, ok := l.live.Get(v)
	return ok
}

func (l *liveness) scope(e ir.Expr) {
	switch e := e.(type) {
	case *ir.SeqExpr:
		l.seq(e, l.userLive)
	case *ir.Function:
		l.uses(e.Body, true) // uses inside a nested function have no user
	}
}

// seq sweeps a scope backwards; live says whether its user is live.
func (l *liveness) seq(s *ir.SeqExpr, live bool) {
	l.uses(s.Body, live)
	for i := len(s.Blocks) - 1; i >= 0; i-- {
		binds := s.Blocks[i].Bindings
		for j := len(binds) - 1; j >= 0; j-- {
			switch b := binds[j].(type) {
			case *ir.VarBinding:
				fn, isFunc := b.Value.(*ir.Function)
				if isFunc {
					l.uses(fn, true)
				}
				live := l.isLive(b.Var)
				if !live && containsImpureCall(l.mod, b.Value) {
					live = true
					l.live.Set(b.Var, struct{}{})
				}
				if !live {
					l.dead++
				}
				if !isFunc {
					l.uses(b.Value, live)
				}
			case *ir.MatchCast:
				l.uses(b.Value, live)
			}
		}
	}
}

// mergeBlocks, a Mutator PostExpr, merges the neighbouring blocks of the
// same kind that removing bindings left in a SeqExpr (the Mutator drops the
// empty ones), as TVM's normalizer does.
func mergeBlocks(e ir.Expr) ir.Expr {
	seq, ok := e.(*ir.SeqExpr)
	if !ok {
		return e
	}
	blocks, changed := ir.NormalizeBlocks(seq.Blocks)
	if !changed {
		return seq
	}
	return withBlocks(seq, blocks)
}

// withBlocks is s with blocks instead of its own: the same result, span
// and struct info (removing or reordering bindings changes neither).
func withBlocks(s *ir.SeqExpr, blocks []*ir.BindingBlock) *ir.SeqExpr {
	out := &ir.SeqExpr{Blocks: blocks, Body: s.Body}
	out.SetSpan(s.Span())
	out.SetStructInfo(s.StructInfo())
	return out
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
		if allLeaves(x.Args) {
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

// allLeaves reports whether every argument is a leaf or a tuple of leaves
// (ir.IsLeafOrTuple): such a call contains no other call to look into.
func allLeaves(es []ir.Expr) bool {
	for _, e := range es {
		if !ir.IsLeafOrTuple(e) {
			return false
		}
	}
	return true
}
