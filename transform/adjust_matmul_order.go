package transform

import (
	"math"

	"github.com/phasec/phasec/ir"
	"github.com/phasec/phasec/op"
	"github.com/phasec/phasec/passes"
	"github.com/phasec/phasec/phase"
	"github.com/phasec/phasec/transform/dpl"
)

// AdjustMatmulOrder is TVM's AdjustMatmulOrder
// (src/relax/transform/adjust_matmul_order.cc): a product of three
// matrices is reassociated to the order that costs fewer multiply-adds,
//
//	R.matmul(R.matmul(A, B), C)  <->  R.matmul(A, R.matmul(B, C))
//	R.matmul(x, R.permute_dims(R.matmul(A, B)))  ->  the same with x, B^T, A^T
//	R.matmul(R.permute_dims(R.matmul(B, A)), C)  ->  the same with A^T, B^T, C
//
// A naive [N,R]*[R,M]*[M,K] costs N*M*(R+K) left first and (N+M)*R*K
// right first; the order changes only when the other is provably cheaper
// for every value of the symbolic dimensions (all positive, within the
// function's tir_var_lower_bound and exclusive tir_var_upper_bound, as
// TVM's). When two of the three operands are computable at compile time
// (weights after num_input, constants) they are grouped instead, so their
// product can be lifted out; when all three are, nothing changes. The
// float sums are reassociated: results agree within float rounding.
var AdjustMatmulOrder = passes.Define(passes.Info{
	Name:     "AdjustMatmulOrder",
	Doc:      "reassociate a product of three matrices to the cheaper order, or to group compile-time operands",
	OptLevel: 1,
	Accepts:  []phase.Phase{phase.Ingest, phase.Optimize},
	Requires: map[phase.Property]string{
		phase.Normalized: "it matches the bindings of A-normal form, following operands through the variables bound to them, and reads operands' struct info",
	},
	Precedes: map[phase.Property]string{
		phase.Legalized: "it rewrites relax.matmul and relax.permute_dims calls, which LegalizeOps turns into call_tir",
	},
}, passes.Functions(func(_ *passes.Env, mod *ir.Module, _ string, f *ir.Function) (*ir.Function, error) {
	if skipRewrite(f) {
		return f, nil
	}
	out, errs := rewriteCall(mod, f, matmulChain.pattern, newMatmulOrder(f).rewrite)
	if err := errs.Err(); err != nil {
		return nil, err
	}
	return out, nil
}).InParallel())

// matmulChainPattern is TVM's four alternatives over operands a, b, c.
type matmulChainPattern struct {
	pattern                                    dpl.Pattern
	a, b, c                                    dpl.Pattern
	onLHS, onRHS, permutedOnLHS, permutedOnRHS dpl.Pattern
}

var matmulChain = func() *matmulChainPattern {
	p := &matmulChainPattern{a: dpl.Wildcard(), b: dpl.Wildcard(), c: dpl.Wildcard()}
	mm, pd := dpl.IsOp("relax.matmul"), dpl.IsOp("relax.permute_dims")
	p.onLHS = mm(mm(p.a, p.b), p.c)
	p.onRHS = mm(p.a, mm(p.b, p.c))
	p.permutedOnLHS = mm(pd(mm(p.b, p.a)), p.c)
	p.permutedOnRHS = mm(p.a, pd(mm(p.c, p.b)))
	p.pattern = dpl.Or(p.onLHS, p.onRHS, p.permutedOnLHS, p.permutedOnRHS)
	return p
}()

// matmulOrder holds what the rewriter knows of one function.
type matmulOrder struct {
	compileTime *varSet
	an          *ir.Analyzer
	bounded     []*ir.PrimVar // the symbolic variables with finite bounds
}

func newMatmulOrder(f *ir.Function) *matmulOrder {
	o := &matmulOrder{compileTime: computableAtCompileTime(f), an: ir.NewAnalyzer()}
	upper := intDictAttr(f, ir.AttrTIRVarUpperBound)
	lower := intDictAttr(f, "tir_var_lower_bound")
	seen := map[*ir.PrimVar]bool{}
	for _, p := range f.Params {
		for _, v := range ir.SymVarsInStructInfo(p.StructInfo()) {
			if seen[v] {
				continue
			}
			seen[v] = true
			lo, hi := int64(1), int64(math.MaxInt64) // dimensions are positive (TVM: size > 0)
			if b, ok := lower[v.Name]; ok {
				lo = max(lo, b)
			}
			if b, ok := upper[v.Name]; ok {
				hi = b - 1 // TVM's upper bound is exclusive here
			}
			o.an.SetBounds(v, lo, hi)
			if hi != math.MaxInt64 {
				o.bounded = append(o.bounded, v)
			}
		}
	}
	return o
}

// intDictAttr reads a dict attribute from names to integers; malformed
// entries are ignored (LowerRuntimeBuiltin's planning reports them).
func intDictAttr(f *ir.Function, name string) map[string]int64 {
	out := map[string]int64{}
	m, _ := f.Attrs[name].(ir.Attrs)
	for k, v := range m {
		switch v := v.(type) {
		case int64:
			out[k] = v
		case ir.PrimExpr:
			if n, ok := ir.IntValue(v); ok {
				out[k] = n
			}
		}
	}
	return out
}

func (o *matmulOrder) rewrite(expr ir.Expr, m dpl.Match) ir.Expr {
	p := matmulChain
	a, b, c := m[p.a], m[p.b], m[p.c]
	isCT := func(e ir.Expr) bool { return isCompileTimeVar(o.compileTime, e) }
	if isCT(a) && isCT(b) && isCT(c) {
		return expr
	}
	sa, ok1 := knownDims(a)
	sb, ok2 := knownDims(b)
	sc, ok3 := knownDims(c)
	if !ok1 || !ok2 || !ok3 {
		return expr
	}
	_, onLHS := m[p.onLHS]
	_, onRHS := m[p.onRHS]
	permuted := false
	switch {
	case onLHS, onRHS:
	case m[p.permutedOnLHS] != nil:
		if len(sa) != 2 || len(sb) != 2 {
			return expr
		}
		a, b = transposed(a), transposed(b)
		sa, sb = []ir.PrimExpr{sa[1], sa[0]}, []ir.PrimExpr{sb[1], sb[0]}
		onLHS, permuted = true, true
	default:
		if len(sb) != 2 || len(sc) != 2 {
			return expr
		}
		b, c = transposed(b), transposed(c)
		sb, sc = []ir.PrimExpr{sb[1], sb[0]}, []ir.PrimExpr{sc[1], sc[0]}
		onRHS, permuted = true, true
	}
	leftFirst := func() ir.Expr { return matmulVoid(matmulVoid(a, b), c) }
	rightFirst := func() ir.Expr { return matmulVoid(a, matmulVoid(b, c)) }
	keep := func(left bool) ir.Expr {
		if !permuted && left == onLHS {
			return expr // already in that order
		}
		if left {
			return leftFirst()
		}
		return rightFirst()
	}
	// Group two compile-time operands, so their product can be lifted.
	switch {
	case isCT(a) && isCT(b):
		return keep(true)
	case isCT(b) && isCT(c):
		return keep(false)
	}
	one := func(like ir.PrimExpr) ir.PrimExpr { return ir.NewInt(like.DType(), 1) }
	if len(sa) == 1 {
		sa = []ir.PrimExpr{one(sa[0]), sa[0]}
	}
	if len(sb) == 1 {
		if onLHS {
			sb = []ir.PrimExpr{sb[0], one(sb[0])}
		} else {
			sb = []ir.PrimExpr{one(sb[0]), sb[0]}
		}
	}
	if len(sc) == 1 {
		sc = []ir.PrimExpr{sc[0], one(sc[0])}
	}
	n, r := sa[len(sa)-2], sa[len(sa)-1]
	mm, k := sc[len(sc)-2], sc[len(sc)-1]
	leftCost := ir.Mul(ir.Mul(ir.Add(r, k), n), mm)
	rightCost := ir.Mul(ir.Mul(ir.Add(mm, n), r), k)
	switch {
	case o.provePositive(ir.Sub(rightCost, leftCost)):
		return keep(true)
	case o.provePositive(ir.Sub(leftCost, rightCost)):
		return keep(false)
	}
	return expr // neither order is provably cheaper
}

// provePositive proves d > 0 over the symbolic variables' bounds. Beyond
// the analyzer's interval reasoning, it handles the bilinear costs TVM's
// kComparisonOfProductAndSum extension is for ((b+r)*C vs b*r*D with r
// bounded): a polynomial of degree at most one in a bounded variable is
// positive on the variable's interval when it is at both ends.
func (o *matmulOrder) provePositive(d ir.PrimExpr) bool {
	return o.provePositiveFrom(d, 0)
}

func (o *matmulOrder) provePositiveFrom(d ir.PrimExpr, i int) bool {
	if o.an.CanProve(ir.NewBinary(ir.OpGT, d, ir.NewInt(d.DType(), 0))) {
		return true
	}
	for ; i < len(o.bounded); i++ {
		v := o.bounded[i]
		deg, ok := degreeIn(d, v)
		if !ok || deg != 1 {
			continue
		}
		lo, hi := o.an.VarBounds(v)
		at := func(x int64) ir.PrimExpr {
			return ir.SubstituteSymVarsPrim(d, map[*ir.PrimVar]ir.PrimExpr{v: ir.NewInt(v.Type, x)})
		}
		return o.provePositiveFrom(at(lo), i+1) && o.provePositiveFrom(at(hi), i+1)
	}
	return false
}

// degreeIn bounds the degree of the polynomial d in v (sums and products
// of variables and constants; ok is false for anything else).
func degreeIn(d ir.PrimExpr, v *ir.PrimVar) (int, bool) {
	switch x := d.(type) {
	case *ir.PrimVar:
		if x == v {
			return 1, true
		}
		return 0, true
	case *ir.IntImm:
		return 0, true
	case *ir.Binary:
		da, oka := degreeIn(x.A, v)
		db, okb := degreeIn(x.B, v)
		switch x.Op {
		case ir.OpAdd, ir.OpSub:
			return max(da, db), oka && okb
		case ir.OpMul:
			return da + db, oka && okb
		}
	}
	return 0, false
}

// knownDims is the shape of a tensor operand, when known.
func knownDims(e ir.Expr) ([]ir.PrimExpr, bool) {
	t, ok := e.StructInfo().(*ir.TensorInfo)
	if !ok {
		return nil, false
	}
	return t.Dims()
}

// transposed is R.permute_dims(e) (all axes reversed).
func transposed(e ir.Expr) ir.Expr {
	return call(op.PermuteDims, ir.Attrs{"axes": nil}, e)
}
