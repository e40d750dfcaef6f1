package transform

import (
	"github.com/phasec/phasec/ir"
	"github.com/phasec/phasec/passes"
	"github.com/phasec/phasec/phase"
)

// AttrOpPattern is the PrimFunc attribute holding its op pattern kind (an
// int64 ir.OpPattern), which FuseOps reads (TVM's "op_pattern").
const AttrOpPattern = "op_pattern"

// AnnotateTIROpPattern is TVM's relax.transform.AnnotateTIROpPattern
// (src/relax/transform/annotate_tir_op_pattern.cc): every PrimFunc without
// a nonzero "op_pattern" attribute gets the pattern AnalyzeOpPattern
// derives from its TIR. It is the first member of the fusion group
// (AnnotateTIROpPattern, FuseOps, FuseTIR): FuseOps groups call_tir by
// these patterns and treats a PrimFunc without one as opaque.
var AnnotateTIROpPattern = passes.Define(passes.Info{
	Name:     "AnnotateTIROpPattern",
	Doc:      "annotate every PrimFunc with the op pattern kind of its TIR (op_pattern), for FuseOps",
	OptLevel: 0,
	Accepts:  []phase.Phase{phase.Ingest, phase.Optimize},
}, passes.PrimFuncs(func(_ *passes.Env, _ *ir.Module, _ string, f *ir.PrimFunc) (*ir.PrimFunc, error) {
	return annotateOpPattern(f), nil
}).InParallel())

// annotateOpPattern returns f with its op_pattern attribute, or f itself
// when it carries a nonzero one (TVM's HasNonzeroAttr: an ElemWise
// annotation, 0, is recomputed).
func annotateOpPattern(f *ir.PrimFunc) *ir.PrimFunc {
	if v, ok := f.Attrs[AttrOpPattern]; ok && attrNonzero(v) {
		return f
	}
	kind := int64(AnalyzeOpPattern(f))
	if v, ok := f.Attrs.Int(AttrOpPattern); ok && v == kind {
		return f
	}
	nf := *f
	nf.Attrs = f.Attrs.With(AttrOpPattern, kind)
	return &nf
}

func attrNonzero(v any) bool {
	switch v := v.(type) {
	case int64:
		return v != 0
	case bool:
		return v
	}
	return v != nil
}

// OpPatternAttr returns the op pattern recorded on a PrimFunc, or
// PatternOpaque when it has none (as TVM's FuseOps reads it).
func OpPatternAttr(f *ir.PrimFunc) ir.OpPattern {
	if v, ok := f.Attrs.Int(AttrOpPattern); ok && v >= 0 && v <= int64(ir.PatternOpaque) {
		return ir.OpPattern(v)
	}
	return ir.PatternOpaque
}

// AnalyzeOpPattern computes the op pattern kind of a PrimFunc from its TIR
// as TVM's AnalyzeOpPatternKind does (src/relax/analysis/tir_op_pattern_kind.cc).
// Each non-root block is judged by its one BufferStore against the loads
// of its body:
//   - same indices (C[i, j] = A[i, j]): ElemWise; the load's indices a
//     subsequence of the store's, unit dimensions read at 0 skipped
//     (C[i, j] = B[j]): Broadcast (ElemWise when some load is ElemWise);
//     store indices all variables and every load using only them
//     (C[i, j] = A[j, i], A[i // 4]): Injective;
//   - otherwise, with reduction iterators: a multiply-accumulate whose
//     operands both reuse data (matmul, conv) or a load indexed by more
//     than a bare reduction variable (pooling) is OutEWiseFusable, any
//     other reduction CommReduce; without: Opaque.
//
// The kind of the function is the maximum over its blocks, except that an
// injective-or-better block writing a parameter after a reduction makes it
// OutEWiseFusable (softmax: reduce, then normalize). A block without a
// store, or with two stores at different indices, is Opaque. Indices are
// compared by identity, as TVM's same_as: the same variable, never two
// equal expressions.
func AnalyzeOpPattern(f *ir.PrimFunc) ir.OpPattern {
	a := &patternAnalyzer{kind: ir.PatternElemWise, params: map[*ir.Buffer]bool{}}
	for _, p := range f.Params {
		if b := f.BufferMap[p]; b != nil {
			a.params[b] = true
		}
	}
	a.stmt(f.Body)
	return a.kind
}

type patternAnalyzer struct {
	kind   ir.OpPattern
	params map[*ir.Buffer]bool
	// store and loads are those of the innermost block being visited.
	store *ir.BufferStore
	loads []*ir.BufferLoad
}

// stmt visits s in the order of TVM's StmtExprVisitor; recursion follows
// the nesting of statements, never the length of a sequence.
func (a *patternAnalyzer) stmt(s ir.Stmt) {
	switch s := s.(type) {
	case nil:
	case *ir.Block:
		a.block(s)
	case *ir.BlockRealize:
		for _, v := range s.IterValues {
			a.expr(v)
		}
		a.expr(s.Predicate)
		a.block(s.Block)
	case *ir.BufferStore:
		// One store per block (as TE compute makes them); a second at other
		// indices makes the function opaque.
		if a.store != nil && !sameIndices(s.Indices, a.store.Indices) {
			a.kind = ir.PatternOpaque
			return
		}
		a.store = s
		a.expr(s.Value)
		for _, i := range s.Indices {
			a.expr(i)
		}
	case *ir.SeqStmt:
		for _, st := range s.Stmts {
			a.stmt(st)
		}
	case *ir.For:
		a.expr(s.Min)
		a.expr(s.Extent)
		a.stmt(s.Body)
	case *ir.IfThenElse:
		a.expr(s.Cond)
		a.stmt(s.Then)
		a.stmt(s.Else)
	case *ir.LetStmt:
		a.expr(s.Value)
		a.stmt(s.Body)
	case *ir.AttrStmt:
		a.expr(s.Node)
		a.expr(s.Value)
		a.stmt(s.Body)
	case *ir.Evaluate:
		a.expr(s.Value)
	case *ir.While:
		a.expr(s.Cond)
		a.stmt(s.Body)
	case *ir.Allocate:
		for _, e := range s.Extents {
			a.expr(e)
		}
		a.expr(s.Condition)
		a.stmt(s.Body)
	case *ir.AllocateConst:
		for _, e := range s.Extents {
			a.expr(e)
		}
		a.stmt(s.Body)
	case *ir.DeclBuffer:
		a.stmt(s.Body)
	}
}

// expr records the loads of e.
func (a *patternAnalyzer) expr(e ir.PrimExpr) {
	ir.InspectPrim(e, func(x ir.PrimExpr) bool {
		if ld, ok := x.(*ir.BufferLoad); ok {
			a.loads = append(a.loads, ld)
		}
		return true
	})
}

func (a *patternAnalyzer) block(b *ir.Block) {
	if b.Name == "root" {
		a.stmt(b.Body)
		return
	}
	a.loads, a.store = a.loads[:0], nil
	a.stmt(b.Body) // the init is not visited, as in TVM
	store := a.store
	if store == nil {
		a.kind = ir.PatternOpaque
		return
	}

	pair, hasElemWise := ir.PatternElemWise, false
	for _, ld := range a.loads {
		switch {
		case sameIndices(store.Indices, ld.Indices):
			hasElemWise = true
		case isBroadcastAccess(store, ld):
			pair = max(pair, ir.PatternBroadcast)
		case isInjectiveAccess(store, ld):
			pair = max(pair, ir.PatternInjective)
		default:
			pair = ir.PatternOpaque
		}
		if pair == ir.PatternOpaque {
			break
		}
	}
	if pair == ir.PatternBroadcast && hasElemWise {
		pair = ir.PatternElemWise // C[i, j] = A[i, j] + B[j]
	}
	if pair != ir.PatternOpaque {
		if a.writesParam(b) && a.kind == ir.PatternCommReduce {
			a.kind = ir.PatternOutEWiseFusable // softmax: a reduction, then the output
		} else {
			a.kind = max(a.kind, pair)
		}
		return
	}

	var reduceVars []*ir.PrimVar
	for _, iv := range b.IterVars {
		if iv.Kind == ir.IterReduce {
			reduceVars = append(reduceVars, iv.Var)
		}
	}
	if len(reduceVars) == 0 {
		a.kind = ir.PatternOpaque
		return
	}
	if isFMA(b.Body) {
		a.kind = max(a.kind, ir.PatternOutEWiseFusable) // matmul, conv
		return
	}
	for _, ld := range a.loads {
		if !isPureReduce(reduceVars, ld.Indices) {
			a.kind = max(a.kind, ir.PatternOutEWiseFusable) // pooling
			return
		}
	}
	a.kind = max(a.kind, ir.PatternCommReduce)
}

// writesParam reports whether the block writes a parameter's buffer.
func (a *patternAnalyzer) writesParam(b *ir.Block) bool {
	for _, w := range b.Writes {
		if a.params[w.Buffer] {
			return true
		}
	}
	return false
}

// sameIndices compares index lists by identity (TVM's same_as).
func sameIndices(x, y []ir.PrimExpr) bool {
	if len(x) != len(y) {
		return false
	}
	for i := range x {
		if x[i] != y[i] {
			return false
		}
	}
	return true
}

// isBroadcastAccess: the load's indices appear among the store's in order,
// unit dimensions read at 0 aside (C[i, j] = B[1, j]).
func isBroadcastAccess(store *ir.BufferStore, ld *ir.BufferLoad) bool {
	j := 0
	for i, idx := range ld.Indices {
		if i < len(ld.Buffer.Shape) && isConstInt(ld.Buffer.Shape[i], 1) && isConstInt(idx, 0) {
			continue
		}
		for j < len(store.Indices) && store.Indices[j] != idx {
			j++
		}
		if j == len(store.Indices) {
			return false
		}
	}
	return true
}

// isInjectiveAccess: the store's indices are variables and the load uses
// no other variable (a gather's index buffer counts as one: its data).
func isInjectiveAccess(store *ir.BufferStore, ld *ir.BufferLoad) bool {
	vars, ok := indexVars(store.Indices)
	if !ok {
		return false
	}
	for _, idx := range ld.Indices {
		if usesVarOutside(idx, vars) {
			return false
		}
	}
	return true
}

// indexVars returns the variables of an index list made of variables only.
func indexVars(indices []ir.PrimExpr) (map[*ir.PrimVar]bool, bool) {
	vars := make(map[*ir.PrimVar]bool, len(indices))
	for _, idx := range indices {
		v, ok := idx.(*ir.PrimVar)
		if !ok {
			return nil, false
		}
		vars[v] = true
	}
	return vars, true
}

// usesVarOutside reports whether e uses a variable not in vars, counting
// a nested load's buffer data as a use (TVM's UsesVar).
func usesVarOutside(e ir.PrimExpr, vars map[*ir.PrimVar]bool) bool {
	found := false
	ir.InspectPrim(e, func(x ir.PrimExpr) bool {
		switch x := x.(type) {
		case *ir.PrimVar:
			found = found || !vars[x]
		case *ir.BufferLoad:
			found = found || !vars[x.Buffer.Data]
		}
		return !found
	})
	return found
}

// allowsReuse: some store index variable is absent from the load's indices,
// so the loaded element is reused across outputs (C[i, j] from A[i, k]).
func allowsReuse(store *ir.BufferStore, ld *ir.BufferLoad) bool {
	vars, ok := indexVars(store.Indices)
	if !ok {
		return false
	}
	for _, idx := range ld.Indices {
		ir.InspectPrim(idx, func(x ir.PrimExpr) bool {
			if v, ok := x.(*ir.PrimVar); ok {
				delete(vars, v)
			}
			return true
		})
	}
	return len(vars) > 0
}

func removeCast(e ir.PrimExpr) ir.PrimExpr {
	for {
		c, ok := e.(*ir.Cast)
		if !ok {
			return e
		}
		e = c.Value
	}
}

// isFMA: the body is C[idx] = C[idx] + A[..] * B[..] (casts allowed) with
// both operands reused across outputs.
func isFMA(body ir.Stmt) bool {
	store, ok := body.(*ir.BufferStore)
	if !ok {
		return false
	}
	add, ok := removeCast(store.Value).(*ir.Binary)
	if !ok || add.Op != ir.OpAdd {
		return false
	}
	mul, ok := removeCast(add.B).(*ir.Binary)
	if !ok || mul.Op != ir.OpMul {
		return false
	}
	acc, ok := removeCast(add.A).(*ir.BufferLoad)
	if !ok || acc.Buffer != store.Buffer || !sameIndices(store.Indices, acc.Indices) {
		return false
	}
	lhs, ok1 := removeCast(mul.A).(*ir.BufferLoad)
	rhs, ok2 := removeCast(mul.B).(*ir.BufferLoad)
	if !ok1 || !ok2 {
		return false
	}
	return allowsReuse(store, lhs) && allowsReuse(store, rhs)
}

// isPureReduce: every index using a reduction variable is that variable
// alone (B[i, k], not B[i, j + k]).
func isPureReduce(reduceVars []*ir.PrimVar, indices []ir.PrimExpr) bool {
	for _, e := range indices {
		var used *ir.PrimVar
		ir.InspectPrim(e, func(x ir.PrimExpr) bool {
			if used != nil {
				return false
			}
			if v, ok := x.(*ir.PrimVar); ok {
				for _, r := range reduceVars {
					if r == v {
						used = r
						return false
					}
				}
			}
			return true
		})
		if used != nil && e != ir.PrimExpr(used) {
			return false
		}
	}
	return true
}

func isConstInt(e ir.PrimExpr, v int64) bool {
	c, ok := e.(*ir.IntImm)
	return ok && c.Value == v
}
