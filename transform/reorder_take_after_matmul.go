package transform

import (
	"github.com/phasec/phasec/ir"
	"github.com/phasec/phasec/op"
	"github.com/phasec/phasec/passes"
	"github.com/phasec/phasec/phase"
	"github.com/phasec/phasec/transform/dpl"
)

// ReorderTakeAfterMatmul is TVM's ReorderTakeAfterMatmul
// (src/relax/transform/reorder_take_after_matmul.cc): a matmul by weights
// selected from a table with R.take multiplies by the whole table and
// selects from the product instead, so the table can be a compile-time
// weight the matmul reads directly (mixture of experts, batched LoRA):
//
//	R.matmul(x, R.take(table, idx, axis=-1))   ->  R.take(R.matmul(x, table), idx, axis=-1)
//	    (idx of rank 1, table's last axis)
//	R.matmul(x, R.take(table, idx, axis=0))    ->  the batched form: table [T, I, O] made
//	    [I, T*O], multiplied, reshaped to [b1, b2, T, O], taken at idx along axis 2 and
//	    reduced to [b1, b2, O] with R.einsum("ijik->ijk")
//	    (x of rank 3 with a known shape, table of rank 3, idx of rank 1)
//
// Other takes (no axis, indices of higher rank, unknown ranks) are left
// alone.
var ReorderTakeAfterMatmul = passes.Define(passes.Info{
	Name:     "ReorderTakeAfterMatmul",
	Doc:      "matmul by R.take(table, idx) becomes R.take of the matmul by the whole table",
	OptLevel: 1,
	Accepts:  []phase.Phase{phase.Ingest, phase.Optimize},
	Requires: map[phase.Property]string{
		phase.Normalized: "it matches the bindings of A-normal form, following operands through the variables bound to them, and reads operands' struct info",
	},
	Precedes: map[phase.Property]string{
		phase.Legalized: "it rewrites relax.matmul and relax.take calls, which LegalizeOps turns into call_tir",
	},
}, passes.Functions(func(_ *passes.Env, mod *ir.Module, _ string, f *ir.Function) (*ir.Function, error) {
	if skipRewrite(f) {
		return f, nil
	}
	lhs, weights, indices := dpl.Wildcard(), dpl.Wildcard(), dpl.Wildcard()
	take := dpl.IsOp("relax.take")(weights, indices)
	pat := dpl.IsOp("relax.matmul")(lhs, take)
	out, errs := rewriteCall(mod, f, pat, func(expr ir.Expr, m dpl.Match) ir.Expr {
		return reorderTake(expr, m[lhs], m[weights], m[indices], m[take].(*ir.Call))
	})
	if err := errs.Err(); err != nil {
		return nil, err
	}
	return out, nil
}).InParallel())

// reorderTake is the rewriter: expr is the matmul of x by takeCall =
// R.take(weights, indices).
func reorderTake(expr, x, weights, indices ir.Expr, takeCall *ir.Call) ir.Expr {
	xi, ok1 := x.StructInfo().(*ir.TensorInfo)
	wi, ok2 := weights.StructInfo().(*ir.TensorInfo)
	ii, ok3 := indices.StructInfo().(*ir.TensorInfo)
	oi, ok4 := expr.StructInfo().(*ir.TensorInfo)
	if !ok1 || !ok2 || !ok3 || !ok4 || xi.NDim < 0 || wi.NDim < 0 || ii.NDim < 0 || oi.NDim < 0 {
		return expr
	}
	axis, ok := takeCall.Attrs.Int("axis")
	if !ok {
		return expr
	}
	takeAttrs := func(axis int) ir.Attrs { return takeCall.Attrs.With("axis", int64(axis)) }
	switch {
	case ii.NDim == 1 && int(axis)+1 == wi.NDim:
		// x [*batch, in] * table [in, T] -> [*batch, T], then take along the last axis.
		table := matmulVoid(x, weights)
		return call(op.Take, takeAttrs(oi.NDim-1), table, indices)
	case xi.NDim == 3 && wi.NDim == 3 && ii.NDim == 1 && axis == 0:
		xs, okx := xi.Dims()
		ws, okw := wi.Dims()
		if !okx || !okw {
			return expr
		}
		reordered := call(op.PermuteDims, ir.Attrs{"axes": []int64{1, 0, 2}}, weights)
		fused := call(op.Reshape, nil, reordered, ir.NewShapeExpr(ws[1], ir.Mul(ws[0], ws[2])))
		product := matmulVoid(x, fused)
		indexed := call(op.Reshape, nil, product, ir.NewShapeExpr(xs[0], xs[1], ws[0], ws[2]))
		duplicated := call(op.Take, takeAttrs(2), indexed, indices)
		return call(op.Einsum, ir.Attrs{"subscripts": "ijik->ijk"}, ir.NewTuple(duplicated))
	}
	return expr
}
