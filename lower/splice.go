package lower

import "github.com/phasec/phasec/ir"

// splicer rewrites a function's scopes binding by binding without
// re-emitting them through a Builder: each binding is kept or replaced by
// a list of bindings that the pass built (and normalized) itself. It is
// for passes whose replacements keep every var's struct info (memory
// planning, allocation lowering, kill insertion), where re-normalizing the
// untouched bindings would be most of the cost. Blocks, If branches and
// scopes that do not change are returned as the same pointers; a block
// left empty is dropped.
type splicer struct {
	// binding returns the bindings replacing bind; ok false keeps bind.
	// An If's branches have been spliced before its binding is passed.
	binding func(bind ir.Binding) (repl []ir.Binding, ok bool)
	// result rewrites a scope's result (nil: kept).
	result func(e ir.Expr) ir.Expr
}

// seq splices a scope; head bindings go first in its first block.
func (s *splicer) seq(seq *ir.SeqExpr, head []ir.Binding) *ir.SeqExpr {
	changed := len(head) > 0
	blocks := make([]*ir.BindingBlock, 0, len(seq.Blocks))
	for i, blk := range seq.Blocks {
		var nb *ir.BindingBlock
		if i == 0 {
			nb = s.block(blk, head)
		} else {
			nb = s.block(blk, nil)
		}
		changed = changed || nb != blk
		if len(nb.Bindings) > 0 {
			blocks = append(blocks, nb)
		}
	}
	body := seq.Body
	if s.result != nil {
		body = s.result(body)
	}
	if !changed && body == seq.Body {
		return seq
	}
	out := &ir.SeqExpr{Blocks: blocks, Body: body}
	out.SetSpan(seq.Span())
	out.SetStructInfo(seq.StructInfo())
	return out
}

func (s *splicer) block(blk *ir.BindingBlock, head []ir.Binding) *ir.BindingBlock {
	var out []ir.Binding
	if len(head) > 0 {
		out = append(make([]ir.Binding, 0, len(blk.Bindings)+len(head)), head...)
	}
	for i, bind := range blk.Bindings {
		bind = s.branches(bind)
		repl, ok := s.binding(bind)
		if !ok && bind != blk.Bindings[i] {
			repl, ok = []ir.Binding{bind}, true
		}
		if ok && out == nil {
			out = append(make([]ir.Binding, 0, len(blk.Bindings)+len(blk.Bindings)/2), blk.Bindings[:i]...)
		}
		switch {
		case ok:
			out = append(out, repl...)
		case out != nil:
			out = append(out, bind)
		}
	}
	if out == nil {
		return blk
	}
	nb := &ir.BindingBlock{Bindings: out, Dataflow: blk.Dataflow}
	nb.SetSpan(blk.Span())
	return nb
}

// branches splices the branches of an If bound by bind.
func (s *splicer) branches(bind ir.Binding) ir.Binding {
	vb, ok := bind.(*ir.VarBinding)
	if !ok {
		return bind
	}
	x, ok := vb.Value.(*ir.If)
	if !ok {
		return bind
	}
	then, els := s.branch(x.Then), s.branch(x.Else)
	if then == x.Then && els == x.Else {
		return bind
	}
	n := &ir.If{Cond: x.Cond, Then: then, Else: els}
	n.SetSpan(x.Span())
	n.SetStructInfo(x.StructInfo())
	return rebind(vb, n)
}

func (s *splicer) branch(e ir.Expr) ir.Expr {
	if seq, ok := e.(*ir.SeqExpr); ok {
		return s.seq(seq, nil)
	}
	return e
}

func rebind(vb *ir.VarBinding, value ir.Expr) *ir.VarBinding {
	nb := ir.NewVarBinding(vb.Var, value)
	nb.SetSpan(vb.Span())
	return nb
}
