package transform

import (
	"github.com/phasec/phasec/ir"
	"github.com/phasec/phasec/op"
	"github.com/phasec/phasec/passes"
	"github.com/phasec/phasec/phase"
	"github.com/phasec/phasec/transform/dpl"
)

// ExpandMatmulOfSum is TVM's ExpandMatmulOfSum
// (src/relax/transform/expand_matmul_of_sum.cc): a matmul whose right
// operand is a sum, possibly transposed, becomes the sum of two matmuls,
//
//	R.matmul(x, R.add(A, B))                   ->  R.add(R.matmul(x, A), R.matmul(x, B))
//	R.matmul(x, R.permute_dims(R.add(A, B)))   ->  R.add(R.matmul(x, R.permute_dims(A)), R.matmul(x, R.permute_dims(B)))
//
// so that CombineParallelMatmul can then merge the two matmuls sharing x
// (LoRA: x * (W + A*B)). A sum whose both terms are computable at compile
// time (weights after the function's num_input inputs, constants) is left
// alone: it is better folded once. The float sums are reassociated: the
// result agrees with the input within float rounding, not bit for bit.
var ExpandMatmulOfSum = passes.Define(passes.Info{
	Name:     "ExpandMatmulOfSum",
	Doc:      "expand x * (A + B) into x*A + x*B when A + B is not computable at compile time (prepares CombineParallelMatmul)",
	OptLevel: 1,
	Accepts:  []phase.Phase{phase.Ingest, phase.Optimize},
	Requires: map[phase.Property]string{
		phase.Normalized: "it matches the bindings of A-normal form, following operands through the variables bound to them, and reads operands' struct info",
	},
	Precedes: map[phase.Property]string{
		phase.Legalized: "it rewrites relax.matmul and relax.add calls, which LegalizeOps turns into call_tir",
	},
}, passes.Functions(func(_ *passes.Env, mod *ir.Module, _ string, f *ir.Function) (*ir.Function, error) {
	return expandMatmulOfSum(mod, f)
}).InParallel())

func expandMatmulOfSum(mod *ir.Module, f *ir.Function) (*ir.Function, error) {
	if skipRewrite(f) {
		return f, nil
	}
	compileTime := computableAtCompileTime(f)
	lhs, a, b := dpl.Wildcard(), dpl.Wildcard(), dpl.Wildcard()
	sum := dpl.IsOp("relax.add")(a, b)
	transposed := dpl.IsOp("relax.permute_dims")(sum)
	pat := dpl.IsOp("relax.matmul")(lhs, dpl.Or(sum, transposed))
	rewrite := func(expr ir.Expr, m dpl.Match) ir.Expr {
		ea, eb := m[a], m[b]
		if isCompileTimeVar(compileTime, ea) && isCompileTimeVar(compileTime, eb) {
			return expr
		}
		if pd, ok := m[transposed].(*ir.Call); ok {
			ea = call(op.PermuteDims, pd.Attrs, ea)
			eb = call(op.PermuteDims, pd.Attrs, eb)
		}
		return call(op.Add, nil, matmulVoid(m[lhs], ea), matmulVoid(m[lhs], eb))
	}
	out, errs := rewriteCall(mod, f, pat, rewrite)
	if err := errs.Err(); err != nil {
		return nil, err
	}
	return out, nil
}

// matmulVoid is R.matmul(a, b) with out_dtype void (the operands' dtype),
// as TVM's rewrites build it.
func matmulVoid(a, b ir.Expr) *ir.Call {
	return call(op.Matmul, ir.Attrs{"out_dtype": ir.Void}, a, b)
}

// skipRewrite reports whether the model rewrites leave f alone: a fused
// primitive function or one marked to skip optimization (TVM's
// FoldBatchnormToConv2D skips Primitive functions; the rewrites here keep
// all fusion groups intact).
func skipRewrite(f *ir.Function) bool {
	if skip, _ := f.Attrs.Bool(ir.AttrSkipOptimize); skip {
		return true
	}
	v, ok := f.Attrs[ir.AttrPrimitive]
	return ok && attrNonzero(v)
}
