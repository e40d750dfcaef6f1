package transform

import (
	"fmt"

	"github.com/phasec/phasec/ir"
	"github.com/phasec/phasec/passes"
	"github.com/phasec/phasec/phase"
)

// ExpandTupleArgumentsInner is the module pass TVM's
// relax.transform.ExpandTupleArguments runs first
// (src/relax/transform/expand_tuple_arguments.cc,
// "ExpandTupleArgumentsInner", opt level 0); TVM's ExpandTupleArguments is
// this pass followed by CanonicalizeBindings and DeadCodeElimination, which
// tidy what it leaves.
//
// A private Relax function with a tuple parameter takes the tuple's
// elements as separate parameters instead, recursively for nested tuples:
// parameter p of R.Tuple(a, b) becomes p_0, p_1, and the body starts by
// rebuilding p = (p_0, p_1) (nested tuples first). Every call passes the
// elements of its tuple arguments (arg[0], arg[1], ...).
var ExpandTupleArgumentsInner = passes.Define(passes.Info{
	Name:     "ExpandTupleArgumentsInner",
	Doc:      "pass the elements of private functions' tuple parameters separately (before CanonicalizeBindings, DeadCodeElimination)",
	OptLevel: 0,
	Accepts:  []phase.Phase{phase.Ingest, phase.Optimize},
	Requires: map[phase.Property]string{
		phase.Normalized: "it reads the struct info of parameters and arguments and rewrites call bindings",
	},
}, passes.Module(func(_ *passes.Env, mod *ir.Module) (*ir.Module, error) {
	return expandTupleArguments(mod)
}))

func expandTupleArguments(mod *ir.Module) (*ir.Module, error) {
	nonCallee := globalsUsedAsValues(mod)
	expanded := map[string]bool{}
	var out *ir.Module
	for name, bf := range mod.Functions() {
		f, ok := bf.(*ir.Function)
		if !ok || ir.IsPublic(f) || nonCallee[name] {
			continue
		}
		nf := expandParams(f)
		if nf == nil {
			continue
		}
		if out == nil {
			out = mod.Clone()
		}
		norm, ds := ir.NormalizeFunction(out, nf)
		if err := ds.Err(); err != nil {
			return nil, err
		}
		out.Set(name, norm)
		expanded[name] = true
	}
	if out == nil {
		return mod, nil
	}
	rw := ir.NewRewriter(out)
	rw.PostExpr = func(_ *ir.Rewriter, e ir.Expr) ir.Expr {
		c, ok := e.(*ir.Call)
		if !ok {
			return e
		}
		gv, ok := c.Op.(*ir.GlobalVar)
		if !ok || !expanded[gv.Name] {
			return e
		}
		var args []ir.Expr
		var expand func(a ir.Expr)
		expand = func(a ir.Expr) {
			t, ok := a.StructInfo().(*ir.TupleInfo)
			if !ok {
				args = append(args, a)
				return
			}
			for i := range t.Fields {
				item := &ir.TupleGetItem{Tuple: a, Index: i}
				item.SetStructInfo(t.Fields[i])
				expand(item)
			}
		}
		for _, a := range c.Args {
			expand(a)
		}
		n := &ir.Call{Op: ir.NewGlobalVar(gv.Name), Args: args, Attrs: c.Attrs, SInfoArgs: c.SInfoArgs}
		n.SetSpan(c.Span())
		return n
	}
	res, ds := rw.Module(out)
	if err := ds.Err(); err != nil {
		return nil, err
	}
	return res, nil
}

// expandParams is TVM's ExpandParams: f with its tuple parameters
// expanded, or nil when it has none.
func expandParams(f *ir.Function) *ir.Function {
	hasTuple := false
	for _, p := range f.Params {
		_, ok := p.StructInfo().(*ir.TupleInfo)
		hasTuple = hasTuple || ok
	}
	if !hasTuple {
		return nil
	}
	var params []*ir.Var
	var bindings []ir.Binding
	var expand func(p *ir.Var)
	expand = func(p *ir.Var) {
		t, ok := p.StructInfo().(*ir.TupleInfo)
		if !ok {
			params = append(params, p)
			return
		}
		fields := make([]ir.Expr, len(t.Fields))
		for i, fi := range t.Fields {
			np := ir.NewVar(fmt.Sprintf("%s_%d", p.Name, i), fi)
			fields[i] = np
			expand(np)
		}
		bindings = append(bindings, ir.NewVarBinding(p, ir.NewTuple(fields...)))
	}
	for _, p := range f.Params {
		expand(p)
	}
	if params == nil {
		params = []*ir.Var{}
	}
	// TVM nests the old body in a SeqExpr after the new bindings; the
	// normal form of that is the new block followed by the old blocks.
	blocks := []*ir.BindingBlock{{Bindings: bindings}}
	var result ir.Expr = f.Body
	if seq, ok := f.Body.(*ir.SeqExpr); ok {
		blocks = append(blocks, seq.Blocks...)
		result = seq.Body
	}
	body := &ir.SeqExpr{Blocks: blocks, Body: result}
	nf := &ir.Function{Params: params, Body: body, Ret: f.Ret, Pure: f.Pure, Attrs: f.Attrs}
	nf.SetSpan(f.Span())
	return nf
}
