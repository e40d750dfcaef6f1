package lower

import (
	"fmt"
	"math"

	"github.com/phasec/phasec/diag"
	"github.com/phasec/phasec/ir"
)

// Function attributes the memory planner reads (TVM's names).
const (
	// AttrNonNegativeVar lists symbolic vars known to be non-negative.
	AttrNonNegativeVar = "tir_non_negative_var"
	// AttrTIRVarLowerBound maps symbolic var names to lower bounds.
	AttrTIRVarLowerBound = "tir_var_lower_bound"
	// AttrPlanDynamicOutput asks StaticPlanBlockMemory to give unplanned
	// allocations with a bounded symbolic shape storage of the bound's size.
	AttrPlanDynamicOutput = "relax.memory_plan_dynamic_func_output"
)

// upperBounds replaces symbolic dimensions by their upper bounds, from a
// function's tir_var_upper_bound, tir_var_lower_bound and
// tir_non_negative_var attributes (TVM's SetTIRVarRangeConstraints and
// GetUpperBoundShape, src/relax/transform/static_plan_block_memory.cc): a
// var with an upper bound ranges over [lower bound or 0, upper bound]; one
// with a non-negative lower bound only, or listed non-negative, is
// non-negative. Only the symbolic vars of the function's signature
// (parameter and return struct info) are bound.
type upperBounds struct {
	an  *ir.Analyzer
	dom map[*ir.PrimVar]int64 // var -> upper bound (lower bound 0)
	// vars memoizes upper for bare variables, the usual symbolic dimension
	// (a batch), so that a function allocating it 100k times asks the
	// analyzer once.
	vars map[*ir.PrimVar]varBound
}

type varBound struct {
	bound    ir.PrimExpr
	overflow bool
}

// newUpperBounds reads fn's attributes; a malformed one is reported at span.
func newUpperBounds(fn *ir.Function, span diag.Span, errs *diag.List) *upperBounds {
	ub := &upperBounds{an: ir.NewAnalyzer(), dom: map[*ir.PrimVar]int64{}}
	bounds := boundAttr(fn, ir.AttrTIRVarUpperBound, true, span, errs)
	lower := boundAttr(fn, AttrTIRVarLowerBound, false, span, errs)
	nonNeg := map[string]bool{}
	if raw, ok := fn.Attrs[AttrNonNegativeVar]; ok {
		list, isList := raw.([]any)
		if !isList {
			errs.Add(span, DiagUpperBound, "attribute %s must be a list of symbolic var names, got %s", AttrNonNegativeVar, describeAttr(raw))
		}
		for _, x := range list {
			s, isStr := x.(string)
			if !isStr {
				errs.Add(span, DiagUpperBound, "%s must list var names (strings), got %s", AttrNonNegativeVar, describeAttr(x))
				continue
			}
			nonNeg[s] = true
		}
	}
	for _, v := range signatureVars(fn) {
		lo, hasLower := lower[v.Name]
		if b, ok := bounds[v.Name]; ok {
			if lo > b {
				errs.Add(span, DiagUpperBound, "%s[%q] is %d, above %s[%q] = %d", AttrTIRVarLowerBound, v.Name, lo, ir.AttrTIRVarUpperBound, v.Name, b)
				lo = 0
			}
			ub.an.SetBounds(v, lo, b)
			ub.dom[v] = b
		} else if hasLower && lo >= 0 || nonNeg[v.Name] {
			ub.an.AssumeNonNegative(v)
		}
	}
	return ub
}

// boundAttr reads the bound attribute name of fn, a dict from symbolic var
// names to integers (positive ones for upper bounds); a malformed one is
// reported at span and its bad entries dropped.
func boundAttr(fn *ir.Function, name string, positive bool, span diag.Span, errs *diag.List) map[string]int64 {
	bounds := map[string]int64{}
	raw, ok := fn.Attrs[name]
	if !ok {
		return bounds
	}
	m, isMap := raw.(ir.Attrs)
	if !isMap {
		what := "integers"
		if positive {
			what = "positive integers"
		}
		errs.Add(span, DiagUpperBound, "attribute %s must be a dict from symbolic var names to %s, got %s", name, what, describeAttr(raw))
	}
	for _, k := range m.Keys() {
		v, isInt := m[k].(int64)
		if !isInt {
			if pe, ok := m[k].(ir.PrimExpr); ok {
				v, isInt = ir.IntValue(pe)
			}
		}
		switch {
		case !isInt:
			errs.Add(span, DiagUpperBound, "%s[%q] must be an integer, got %s", name, k, describeAttr(m[k]))
		case positive && v <= 0:
			errs.Add(span, DiagUpperBound, "%s[%q] must be a positive integer, got %d", name, k, v)
		default:
			bounds[k] = v
		}
	}
	return bounds
}

func describeAttr(v any) string {
	switch v.(type) {
	case ir.Attrs:
		return "a dict"
	case []any:
		return "a list"
	case string:
		return fmt.Sprintf("the string %q", v)
	}
	return fmt.Sprintf("%v", v)
}

// signatureVars returns the symbolic vars of fn's parameters and return
// struct info, each once.
func signatureVars(fn *ir.Function) []*ir.PrimVar {
	seen := map[*ir.PrimVar]bool{}
	var out []*ir.PrimVar
	add := func(s ir.StructInfo) {
		for _, v := range ir.SymVarsInStructInfo(s) {
			if !seen[v] {
				seen[v] = true
				out = append(out, v)
			}
		}
	}
	for _, p := range fn.Params {
		if s := p.StructInfo(); s != nil {
			add(s)
		}
	}
	if fn.Ret != nil {
		add(fn.Ret)
	}
	return out
}

// upper returns the upper bound of a dimension: a constant when the
// analyzer bounds it (TVM's const_int_bound), else the maximum of its
// interval over the bound vars when that exists (int_set), else the
// dimension itself. overflow reports a bound beyond int64 (the analyzer
// saturates, and a symbolic maximum that folds to a constant wrapped).
func (ub *upperBounds) upper(d ir.PrimExpr) (bound ir.PrimExpr, overflow bool) {
	switch v := d.(type) {
	case *ir.IntImm:
		return d, false
	case *ir.PrimVar:
		if r, ok := ub.vars[v]; ok {
			return r.bound, r.overflow
		}
		bound, overflow = ub.upperUncached(d)
		if ub.vars == nil {
			ub.vars = map[*ir.PrimVar]varBound{}
		}
		ub.vars[v] = varBound{bound, overflow}
		return bound, overflow
	}
	return ub.upperUncached(d)
}

func (ub *upperBounds) upperUncached(d ir.PrimExpr) (bound ir.PrimExpr, overflow bool) {
	if _, hi, ok := ub.an.ConstBounds(d); ok && hi != math.MaxInt64 {
		return ir.I64(hi), false
	}
	if len(ub.dom) == 0 {
		return d, false
	}
	if _, hi := ub.symRange(d); hi != nil {
		hi = ub.an.Simplify(hi)
		if _, isConst := ir.IntValue(hi); isConst {
			// Every var is bounded, yet the analyzer found no finite bound.
			return nil, true
		}
		return hi, false
	}
	return d, false
}

// symRange is a small symbolic interval analysis (TVM's int_set over the
// bound vars' domains): a bound var ranges over [0, bound], any other var
// is a single point; nil stands for an unbounded side.
func (ub *upperBounds) symRange(e ir.PrimExpr) (lo, hi ir.PrimExpr) {
	switch x := e.(type) {
	case *ir.IntImm:
		return x, x
	case *ir.PrimVar:
		if b, ok := ub.dom[x]; ok {
			return ir.I64(0), ir.I64(b)
		}
		return x, x
	case *ir.Binary:
		alo, ahi := ub.symRange(x.A)
		blo, bhi := ub.symRange(x.B)
		switch x.Op {
		case ir.OpAdd:
			return both(ir.Add, alo, blo), both(ir.Add, ahi, bhi)
		case ir.OpSub:
			return both(ir.Sub, alo, bhi), both(ir.Sub, ahi, blo)
		case ir.OpMul:
			return ub.mulRange(alo, ahi, blo, bhi)
		case ir.OpFloorDiv:
			if c, ok := ir.IntValue(x.B); ok && c > 0 {
				return both(ir.FloorDiv, alo, ir.I64(c)), both(ir.FloorDiv, ahi, ir.I64(c))
			}
		case ir.OpMin:
			return both(ir.Min, alo, blo), both(ir.Min, ahi, bhi)
		case ir.OpMax:
			return both(ir.Max, alo, blo), both(ir.Max, ahi, bhi)
		}
	}
	return nil, nil
}

func both(f func(a, b ir.PrimExpr) ir.PrimExpr, a, b ir.PrimExpr) ir.PrimExpr {
	if a == nil || b == nil {
		return nil
	}
	return f(a, b)
}

// mulRange multiplies intervals whose signs can be decided.
func (ub *upperBounds) mulRange(alo, ahi, blo, bhi ir.PrimExpr) (lo, hi ir.PrimExpr) {
	nonNeg := func(e ir.PrimExpr) bool {
		return e != nil && ub.an.CanProve(ir.NewBinary(ir.OpGE, e, ir.I64(0)))
	}
	if nonNeg(alo) && nonNeg(blo) {
		return both(ir.Mul, alo, blo), both(ir.Mul, ahi, bhi)
	}
	return nil, nil
}
