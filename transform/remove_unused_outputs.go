package transform

import (
	"math"

	"github.com/phasec/phasec/ir"
	"github.com/phasec/phasec/passes"
	"github.com/phasec/phasec/phase"
)

// RemoveUnusedOutputsInner is the module pass TVM's
// relax.transform.RemoveUnusedOutputs runs first
// (src/relax/transform/remove_unused_outputs.cc, "RemoveUnusedOutputsInner",
// opt level 0); TVM's RemoveUnusedOutputs is this pass followed by
// CanonicalizeBindings and DeadCodeElimination, which tidy what it leaves.
//
// A private Relax function returning a tuple some of whose elements no
// caller uses returns only the used ones (a single one bare, not in a
// tuple): its body is bound to previous_outputs and the result rebuilt from
// it. Each call becomes a tuple of the old arity: the new call (or an
// element of it) where an element was used, R.prim_value(T.float64(nan))
// where none was. An element counts as used when a caller takes it with
// TupleGetItem; a use of the whole result (returning it, passing it on)
// uses every element. Bindings of the result to other vars are followed.
var RemoveUnusedOutputsInner = passes.Define(passes.Info{
	Name:     "RemoveUnusedOutputsInner",
	Doc:      "make private functions return only the tuple elements some caller uses (before CanonicalizeBindings, DeadCodeElimination)",
	OptLevel: 0,
	Accepts:  []phase.Phase{phase.Ingest, phase.Optimize},
	Requires: map[phase.Property]string{
		phase.Normalized: "it follows tuple results through var bindings and reads TupleGetItem uses of bound vars",
	},
}, passes.Module(func(_ *passes.Env, mod *ir.Module) (*ir.Module, error) {
	return removeUnusedOutputs(mod)
}))

func removeUnusedOutputs(mod *ir.Module) (*ir.Module, error) {
	usage := collectOutputUsage(mod)
	if len(usage) == 0 {
		return mod, nil
	}
	out := mod.Clone()
	for name, mask := range usage {
		norm, ds := ir.NormalizeFunction(out, pruneOutputs(out.Func(name), mask))
		if err := ds.Err(); err != nil {
			return nil, err
		}
		out.Set(name, norm)
	}
	// Callers are re-emitted (TVM's ExprMutator): a binding whose value
	// is now a tuple with NaN placeholders gets a fresh var of the same
	// name, since the old var's struct info no longer describes it.
	rw := ir.NewRewriter(out)
	rw.PostExpr = func(_ *ir.Rewriter, e ir.Expr) ir.Expr {
		c, ok := e.(*ir.Call)
		if !ok {
			return e
		}
		gv, ok := c.Op.(*ir.GlobalVar)
		if !ok || usage[gv.Name] == nil {
			return e
		}
		return prunedCall(c, gv.Name, usage[gv.Name])
	}
	res, ds := rw.Module(out)
	if err := ds.Err(); err != nil {
		return nil, err
	}
	return res, nil
}

// collectOutputUsage is TVM's PartialTupleUsageCollector: for each private
// function returning a tuple, which elements its callers use, keeping only
// the functions with an unused element.
func collectOutputUsage(mod *ir.Module) map[string][]bool {
	masks := map[string][]bool{}
	for name, bf := range mod.Functions() {
		if f, ok := bf.(*ir.Function); ok && !ir.IsPublic(f) {
			if t, ok := f.Ret.(*ir.TupleInfo); ok {
				masks[name] = make([]bool, len(t.Fields))
			}
		}
	}
	if len(masks) == 0 {
		return nil
	}
	known := map[*ir.Var]ir.Expr{} // bound values, to follow aliases
	calleeMask := func(e ir.Expr) []bool {
		if _, ok := e.StructInfo().(*ir.TupleInfo); !ok {
			return nil
		}
		for {
			v, ok := e.(*ir.Var)
			if !ok || known[v] == nil {
				break
			}
			e = known[v]
		}
		if c, ok := e.(*ir.Call); ok {
			if gv, ok := c.Op.(*ir.GlobalVar); ok {
				return masks[gv.Name]
			}
		}
		return nil
	}
	v := &ir.Visitor{
		Expr: func(e ir.Expr) bool {
			switch e := e.(type) {
			case *ir.TupleGetItem:
				// As in TVM, taking an element is not a use of the
				// whole tuple: the tuple operand is not visited.
				if mask := calleeMask(e.Tuple); mask != nil && e.Index >= 0 && e.Index < len(mask) {
					mask[e.Index] = true
				}
				return false
			case *ir.Var:
				mask := calleeMask(e)
				for i := range mask {
					mask[i] = true
				}
			}
			return true
		},
	}
	// A bound value is recorded after its binding is visited, as TVM's
	// VisitBinding does.
	v.Binding = func(b ir.Binding) bool {
		switch b := b.(type) {
		case *ir.VarBinding:
			ir.Walk(b.Value, v)
			known[b.Var] = b.Value
		case *ir.MatchCast:
			ir.Walk(b.Value, v)
			known[b.Var] = b.Value
		}
		return false
	}
	for _, bf := range mod.Functions() {
		if f, ok := bf.(*ir.Function); ok {
			ir.Walk(f, v)
		}
	}
	for name, mask := range masks {
		unused := false
		for _, used := range mask {
			unused = unused || !used
		}
		if !unused {
			delete(masks, name)
		}
	}
	return masks
}

// pruneOutputs is TVM's UpdateCallee: f returning only the used elements.
func pruneOutputs(f *ir.Function, mask []bool) *ir.Function {
	old := f.Ret.(*ir.TupleInfo)
	prev := ir.NewVar("previous_outputs", f.Ret)
	var outputs []ir.Expr
	var infos []ir.StructInfo
	for i, used := range mask {
		if used {
			outputs = append(outputs, &ir.TupleGetItem{Tuple: prev, Index: i})
			infos = append(infos, old.Fields[i])
		}
	}
	var result ir.Expr
	var ret ir.StructInfo
	if len(outputs) == 1 {
		result, ret = outputs[0], infos[0]
	} else {
		result, ret = ir.NewTuple(outputs...), ir.NewTupleInfo(infos...)
	}
	body := &ir.SeqExpr{
		Blocks: []*ir.BindingBlock{{Bindings: []ir.Binding{ir.NewVarBinding(prev, f.Body)}}},
		Body:   result,
	}
	nf := &ir.Function{Params: f.Params, Body: body, Ret: ret, Pure: f.Pure, Attrs: f.Attrs}
	nf.SetSpan(f.Span())
	return nf
}

// prunedCall is TVM's call-site updater: a tuple of the old arity built
// from the call to the pruned callee.
func prunedCall(c *ir.Call, name string, mask []bool) ir.Expr {
	call := &ir.Call{Op: ir.NewGlobalVar(name), Args: c.Args, Attrs: c.Attrs, SInfoArgs: c.SInfoArgs}
	call.SetSpan(c.Span())
	used := 0
	for _, u := range mask {
		if u {
			used++
		}
	}
	fields := make([]ir.Expr, len(mask))
	k := 0
	for i, u := range mask {
		switch {
		case !u:
			fields[i] = ir.NewPrimValue(ir.NewFloat(ir.Float64, math.NaN()))
		case used == 1:
			fields[i] = call
		default:
			fields[i] = &ir.TupleGetItem{Tuple: call, Index: k}
			k++
		}
	}
	t := ir.NewTuple(fields...)
	t.SetSpan(c.Span())
	return t
}
