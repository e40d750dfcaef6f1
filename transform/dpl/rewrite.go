package dpl

import (
	"github.com/phasec/phasec/diag"
	"github.com/phasec/phasec/ir"
)

// RewriteFunc returns the replacement of expr, a binding's value that the
// pattern matched with m; returning expr itself keeps it (TVM's rewriter
// callback of rewrite_call). The replacement may nest calls: they are
// bound to fresh variables before the binding, in the same block.
type RewriteFunc func(expr ir.Expr, m Match) ir.Expr

// maxLocalRewrites bounds how often one binding's replacement is matched
// and rewritten again in a sweep (a rewriter whose output always matches
// and always changes would otherwise loop).
const maxLocalRewrites = 16

// RewriteCall is one sweep of TVM's rewrite_call
// (src/relax/ir/dataflow_expr_rewriter.cc, PatternMatchingRewriter): every
// variable binding of f whose value p matches is replaced by what rewrite
// returns. It returns f itself when nothing changed.
//
// Operands are followed through the bindings of the same block as in
// MatchExpr, and a later binding sees the values earlier ones were
// rewritten to, so rewrites cascade forward in one sweep; a replacement is
// itself matched again (at most maxLocalRewrites times). Matching stops at
// block boundaries and, in a block that is not a dataflow block, at an
// impure binding or an If, as TVM's does: values are followed only where
// the bindings may be reordered. Bindings left unused are not removed:
// TVM's rewrite_call cleans up with RemoveAllUnused and iterates to a
// fixpoint, which the caller does (package transform owns dead code
// elimination).
func RewriteCall(mod *ir.Module, f *ir.Function, p Pattern, rewrite RewriteFunc) (*ir.Function, diag.List) {
	return RewriteEmitting(mod, f, p, func(_ *ir.Builder, expr ir.Expr, m Match) ir.Expr { return rewrite(expr, m) })
}

// EmitFunc is a RewriteFunc that may emit the bindings of its replacement
// through b, into the block of the binding being rewritten, before it
// (TVM's rewriters return a SeqExpr for that: PatternMatchingRewriter's
// from_module inlines the replacement function's bindings).
type EmitFunc func(b *ir.Builder, expr ir.Expr, m Match) ir.Expr

// RewriteEmitting is RewriteCall with a rewriter that may emit bindings.
func RewriteEmitting(mod *ir.Module, f *ir.Function, p Pattern, rewrite EmitFunc) (*ir.Function, diag.List) {
	rw := ir.NewRewriter(mod)
	// known is the current block's bindings; Reset drops a large table
	// rather than clearing it, so one long run of bindings does not make
	// every later block pay its capacity.
	known := &Bindings{}
	forget := known.Reset
	rw.Binding = func(rw *ir.Rewriter, bind ir.Binding, value ir.Expr) bool {
		vb, ok := bind.(*ir.VarBinding)
		if !ok {
			return false
		}
		if _, isFunc := value.(*ir.Function); isFunc {
			return false
		}
		if !reorderable(mod, value) {
			forget() // the values before an impure binding stay where they are
			return false
		}
		value = rw.B.Normalize(value) // rewritten operands: struct info again
		out := value
		for range maxLocalRewrites {
			m, ok := MatchExpr(p, out, known)
			if !ok {
				break
			}
			next := rewrite(rw.B, out, m)
			if next == out || next == nil {
				break
			}
			out = rw.B.Normalize(next)
		}
		if out == value {
			rw.ReEmit(bind, value)
			if v, ok := rw.Lookup(vb.Var).(*ir.Var); ok {
				known.Set(v, value)
			}
			return true
		}
		v := vb.Var
		if s, ns := v.StructInfo(), out.StructInfo(); s != nil && ns != nil && !ir.IsBaseOf(s, ns) {
			fresh := ir.NewVar(v.Name, nil)
			fresh.Dataflow = v.Dataflow
			fresh.SetSpan(v.Span())
			rw.Remap(v, fresh)
			v = fresh
		}
		nb := ir.NewVarBinding(v, out)
		nb.SetSpan(vb.Span())
		rw.B.EmitBinding(nb)
		known.Set(v, out)
		return true
	}
	// Bindings are known per block: forget them at each block's start
	// (the Rewriter visits a function's blocks in order).
	first := map[ir.Binding]bool{}
	ir.Walk(f, &ir.Visitor{Block: func(b *ir.BindingBlock) bool {
		if len(b.Bindings) > 0 {
			first[b.Bindings[0]] = true
		}
		return true
	}})
	perBinding := rw.Binding
	rw.Binding = func(rw *ir.Rewriter, bind ir.Binding, value ir.Expr) bool {
		if first[bind] {
			forget()
		}
		return perBinding(rw, bind, value)
	}
	nf := rw.Function(f)
	errs := rw.B.Diagnostics()
	errs.Sort()
	return nf, errs
}

// reorderable reports whether value may be moved among its block's
// bindings (TVM's "dataflow" test in PatternMatchingMutator): not an If
// and not a call of an impure function.
func reorderable(mod *ir.Module, value ir.Expr) bool {
	switch v := value.(type) {
	case *ir.If, *ir.SeqExpr:
		return false
	case *ir.Call:
		switch callee := v.Op.(type) {
		case *ir.Op:
			return callee.Pure
		case *ir.GlobalVar:
			si, _ := mod.GlobalInfo(callee.Name)
			fi, ok := si.(*ir.FuncInfo)
			return ok && fi.Pure
		default:
			fi, ok := callee.StructInfo().(*ir.FuncInfo)
			return ok && fi.Pure
		}
	}
	return true
}
