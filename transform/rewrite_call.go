package transform

import (
	"github.com/phasec/phasec/diag"
	"github.com/phasec/phasec/internal/ptrmap"
	"github.com/phasec/phasec/ir"
	"github.com/phasec/phasec/transform/dpl"
)

// maxRewriteSweeps bounds rewriteCall's fixpoint iteration: a rewriter
// that keeps producing new expressions for the same match would otherwise
// never stop. Every pass here converges in two or three sweeps (the last
// one finding nothing to do).
const maxRewriteSweeps = 8

// rewriteCall is TVM's rewrite_call (src/relax/ir/dataflow_expr_rewriter.cc):
// sweeps of dpl.RewriteCall over f, each followed by TVM's cleanup
// (CanonicalizeBindings, EliminateCommonSubexpr and RemoveAllUnused, to
// their own fixpoint), until a sweep changes nothing. It returns f itself
// when nothing matched. The model rewrites (AdjustMatmulOrder,
// ExpandMatmulOfSum, ReorderTakeAfterMatmul, ReorderPermuteDimsAfterConcat,
// FoldBatchnormToConv2D) are each a pattern and a rewriter run by it.
func rewriteCall(mod *ir.Module, f *ir.Function, p dpl.Pattern, rewrite dpl.RewriteFunc) (*ir.Function, diag.List) {
	return rewriteEmitting(mod, f, p, func(_ *ir.Builder, e ir.Expr, m dpl.Match) ir.Expr { return rewrite(e, m) })
}

// rewriteEmitting is rewriteCall with a rewriter that may emit the
// bindings of its replacement (PatternMatchingRewriter's).
func rewriteEmitting(mod *ir.Module, f *ir.Function, p dpl.Pattern, rewrite dpl.EmitFunc) (*ir.Function, diag.List) {
	out := f
	for range maxRewriteSweeps {
		next, errs := dpl.RewriteEmitting(mod, out, p, rewrite)
		if errs.HasErrors() {
			return nil, errs
		}
		if next == out {
			break
		}
		next, errs = cleanUpRewrite(mod, next)
		if errs.HasErrors() {
			return nil, errs
		}
		if ir.StructuralEqual(next, out, ir.EqualOptions{}) {
			break
		}
		out = next
	}
	return out, nil
}

// cleanUpRewrite is the simplification TVM's PatternMatchingRewriter runs
// after each rewrite, repeated until it changes nothing.
func cleanUpRewrite(mod *ir.Module, f *ir.Function) (*ir.Function, diag.List) {
	for range maxRewriteSweeps {
		start := f
		var errs diag.List
		if f, errs = canonicalizeFunction(mod, f); errs.HasErrors() {
			return nil, errs
		}
		if f, errs = EliminateCommonSubexprs(mod, f, false); errs.HasErrors() {
			return nil, errs
		}
		f = removeAllUnused(mod, f)
		if f == start {
			break
		}
	}
	return f, nil
}

// computableAtCompileTime is TVM's ComputableAtCompileTime
// (src/relax/analysis/computable_at_compile_time.cc): the variables of f
// whose values depend only on its weights (the parameters after the
// num_input inputs; none without the attribute) and on constants. A
// function without num_input has no compile-time parameters, but a
// binding using no variable at all (a constant) is still compile-time.
func computableAtCompileTime(f *ir.Function) *varSet {
	known := &varSet{}
	if n, ok := f.Attrs.Int(ir.AttrNumInput); ok && n >= 0 {
		for _, p := range f.Params[min(int(n), len(f.Params)):] {
			known.add(p)
		}
	}
	ir.Walk(f.Body, &ir.Visitor{Binding: func(b ir.Binding) bool {
		var v *ir.Var
		var value ir.Expr
		switch b := b.(type) {
		case *ir.VarBinding:
			v, value = b.Var, b.Value
		case *ir.MatchCast:
			v, value = b.Var, b.Value
		}
		if _, isFunc := value.(*ir.Function); isFunc {
			return true
		}
		compileTime := true
		ir.Inspect(value, func(e ir.Expr) bool {
			if u, ok := e.(*ir.Var); ok && !known.has(u) {
				compileTime = false
			}
			return compileTime
		})
		if compileTime {
			known.add(v)
		}
		return true
	}})
	return known
}

// isCompileTimeVar reports whether e is a variable in the compile-time set.
func isCompileTimeVar(known *varSet, e ir.Expr) bool {
	v, ok := e.(*ir.Var)
	return ok && known.has(v)
}

// varSet is a set of vars in a ptrmap: its locality-keeping slots keep the
// lookups of a large function in cache, where a Go map's random hashing
// misses on each one.
type varSet struct{ m ptrmap.Map[ir.Var, struct{}] }

func (s *varSet) add(v *ir.Var) { s.m.Set(v, struct{}{}) }

func (s *varSet) has(v *ir.Var) bool {
	_, ok := s.m.Get(v)
	return ok
}
