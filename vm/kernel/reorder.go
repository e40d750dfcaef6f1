package kernel

import "github.com/phasec/phasec/ir"

// Loop reordering for the vector path. Vector mode runs the innermost
// loop a chunk at a time, which is fast when the innermost variable walks
// the written buffer contiguously. LegalizeOps puts reduction loops
// innermost (matmul i, j, k; conv2d ..., rc, ry, rx), so the innermost
// variable strides through one operand. Within a perfect nest around one
// block, TIR's block semantics let spatial iterations run in any order;
// moving the spatial loop that indexes the output's last dimension to
// the innermost position keeps every reduction's own order (so results
// are bit-identical) and turns the inner loop into a contiguous update
// (an AXPY for matmul).

// reorderNest returns s with a better innermost loop, or s.
func reorderNest(s *ir.For) *ir.For {
	var loops []*ir.For
	var body ir.Stmt = s
	for {
		f, ok := body.(*ir.For)
		if !ok {
			break
		}
		if f.Kind == ir.ForParallel || f.Kind == ir.ForThreadBinding {
			return s
		}
		loops = append(loops, f)
		body = f.Body
	}
	if len(loops) < 2 {
		return s
	}
	r, ok := body.(*ir.BlockRealize)
	if !ok || len(r.Block.AllocBuffers) > 0 {
		return s
	}
	blk := r.Block
	store, ok := blk.Body.(*ir.BufferStore)
	if !ok || len(store.Indices) == 0 {
		return s
	}
	// The iteration variable indexing the output's last dimension.
	last, ok := store.Indices[len(store.Indices)-1].(*ir.PrimVar)
	if !ok {
		return s
	}
	cand := -1
	for i, iv := range blk.IterVars {
		if iv.Var != last || iv.Kind != ir.IterSpatial {
			continue
		}
		lv, ok := r.IterValues[i].(*ir.PrimVar)
		if !ok {
			return s
		}
		for li, f := range loops {
			if f.Var == lv {
				cand = li
			}
		}
	}
	inner := len(loops) - 1
	if cand < 0 || cand == inner {
		return s
	}
	// The candidate's variable must feed only spatial iteration
	// variables, and no loop bound may mention a loop variable.
	cv := loops[cand].Var
	for i, iv := range blk.IterVars {
		if iv.Kind != ir.IterSpatial && mentions(r.IterValues[i], cv) {
			return s
		}
	}
	if r.Predicate != nil && mentions(r.Predicate, cv) {
		// Still legal, but keep predicates where they were written.
		return s
	}
	for _, f := range loops {
		for _, g := range loops {
			if mentions(f.Min, g.Var) || mentions(f.Extent, g.Var) {
				return s
			}
		}
	}
	order := make([]*ir.For, 0, len(loops))
	for i, f := range loops {
		if i != cand {
			order = append(order, f)
		}
	}
	order = append(order, loops[cand])
	var out ir.Stmt = body
	for i := len(order) - 1; i >= 0; i-- {
		f := *order[i]
		f.Body = out
		out = &f
	}
	return out.(*ir.For)
}

func mentions(e ir.PrimExpr, v *ir.PrimVar) bool {
	found := false
	walkExpr(e, func(x ir.PrimExpr) {
		if x == v {
			found = true
		}
	})
	return found
}
