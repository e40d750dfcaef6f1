package transform

import (
	"slices"
	"strings"

	"github.com/phasec/phasec/ir"
	"github.com/phasec/phasec/passes"
	"github.com/phasec/phasec/phase"
)

// MergeCompositeFunctions is TVM's relax.transform.MergeCompositeFunctions
// (src/relax/transform/merge_composite_functions.cc;
// tests/python/relax/test_transform_merge_composite_functions.py).
//
// Calls of module-level Composite functions (FuseOpsByPattern without
// annotate_codegen) for the same codegen are merged into one public
// function with attributes {"Codegen": codegen, "global_symbol": name}
// whose body binds each composite function as a local function (attribute
// Composite only) and calls it, in the original order; the merged function
// returns every value used outside the group (a tuple when several).
// Its name joins the composite functions' names (the fused_ prefix kept
// once) and the codegen: fused_relax_matmul_relax_add_relax_matmul1_phasec_blas.
// A composite call with no partner forms a group of one. The composite
// functions no longer called are removed.
//
// Grouping walks each dataflow block once: a composite call joins the open
// group of its codegen; a binding that reads a value of an open group it
// does not join (an op left to phasec, or another codegen's call) closes
// that group first. So no group ever waits for a value computed from its
// own output, and each group's call stands at its last member's position
// (TVM builds the same groups from its dependency graph on the cases its
// tests cover; on others it may merge across such bindings, which phasec
// does not).
//
// Phase: part of the offload sub-phase (see FuseOpsByPattern): the result
// has Codegen functions with nested composite functions, which only
// RunCodegen removes, so the contract keeps NoPrimitiveFunctions and
// NoNestedFunctions broken.
var MergeCompositeFunctions = passes.Define(passes.Info{
	Name:     "MergeCompositeFunctions",
	Doc:      "merge calls of Composite functions for the same codegen into Codegen functions with nested composite functions",
	OptLevel: 0,
	Requires: map[phase.Property]string{
		phase.Normalized: "it groups call bindings of A-normal dataflow blocks and copies the composite functions' struct info",
	},
	// Any phase: its input, FuseOpsByPattern's output, may be in none
	// (annotate_codegen nests functions); a soft dependency, no prerequisite.
	Invalidates: phase.Of(phase.NoPrimitiveFunctions, phase.NoOffloadGroups, phase.NoNestedFunctions),
}, passes.Module(func(env *passes.Env, mod *ir.Module) (*ir.Module, error) {
	out, n, err := mergeCompositeFunctions(mod)
	env.Stat("groups", int64(n))
	return out, err
}))

func mergeCompositeFunctions(mod *ir.Module) (*ir.Module, int, error) {
	out := mod.Clone()
	total := 0
	merged := map[string]bool{}
	for _, name := range mod.Names() {
		f := mod.Func(name)
		if f == nil || IsGroupFunction(f) {
			continue
		}
		seq, ok := f.Body.(*ir.SeqExpr)
		if !ok {
			continue
		}
		blocks := slices.Clone(seq.Blocks)
		changed := false
		for bi, blk := range blocks {
			if !blk.Dataflow {
				continue
			}
			nb, n := mergeBlock(out, mod, blk, merged)
			if n > 0 {
				blocks[bi] = nb
				total += n
				changed = true
			}
		}
		if !changed {
			continue
		}
		nf := &ir.Function{Params: f.Params, Body: &ir.SeqExpr{Blocks: blocks, Body: seq.Body}, Ret: f.Ret, Pure: f.Pure, Attrs: f.Attrs}
		nf.SetSpan(f.Span())
		norm, errs := ir.NormalizeFunction(out, nf)
		if len(errs) > 0 {
			return nil, 0, errs
		}
		out.Set(name, norm)
	}
	if total == 0 {
		return mod, 0, nil
	}
	// Remove the composite functions nothing calls any more.
	called := map[string]bool{}
	for _, bf := range out.Functions() {
		if f, ok := bf.(*ir.Function); ok {
			ir.Inspect(f.Body, func(e ir.Expr) bool {
				if gv, ok := e.(*ir.GlobalVar); ok {
					called[gv.Name] = true
				}
				return true
			})
		}
	}
	for name := range merged {
		if !called[name] {
			out.Remove(name)
		}
	}
	return out, total, nil
}

// compositeCallee returns the module-level composite function a binding
// calls and its codegen.
func compositeCallee(mod *ir.Module, b ir.Binding) (string, *ir.Function, string) {
	vb, ok := b.(*ir.VarBinding)
	if !ok {
		return "", nil, ""
	}
	c, ok := vb.Value.(*ir.Call)
	if !ok {
		return "", nil, ""
	}
	gv, ok := c.Op.(*ir.GlobalVar)
	if !ok {
		return "", nil, ""
	}
	f := mod.Func(gv.Name)
	if f == nil {
		return "", nil, ""
	}
	comp, ok := f.Attrs.String(AttrComposite)
	if !ok {
		return "", nil, ""
	}
	return gv.Name, f, Codegen(comp)
}

// mergeBlock groups the composite calls of blk and replaces each group by
// a call of a new Codegen function added to out.
func mergeBlock(out, mod *ir.Module, blk *ir.BindingBlock, merged map[string]bool) (*ir.BindingBlock, int) {
	index, users := blockUses(blk)
	groupOf := make([]int, len(blk.Bindings)) // group id+1, 0 for none
	var groups [][]int
	open := map[string]int{} // codegen -> open group id
	for i, b := range blk.Bindings {
		name, _, cg := compositeCallee(mod, b)
		// Close every open group this binding reads from but does not join.
		uses := map[int]bool{}
		ir.Inspect(bindingValue(b), func(e ir.Expr) bool {
			if v, ok := e.(*ir.Var); ok {
				if j, ok := index[v]; ok && groupOf[j] > 0 {
					uses[groupOf[j]-1] = true
				}
			}
			return true
		})
		for c, g := range open {
			if uses[g] && (name == "" || c != cg) {
				delete(open, c)
			}
		}
		if name == "" {
			continue
		}
		merged[name] = true
		g, ok := open[cg]
		if !ok {
			g = len(groups)
			groups = append(groups, nil)
			open[cg] = g
		}
		groups[g] = append(groups[g], i)
		groupOf[i] = g + 1
	}
	if len(groups) == 0 {
		return blk, 0
	}
	rootOf := map[int]int{}
	for g, members := range groups {
		rootOf[members[len(members)-1]] = g
	}
	var bindings []ir.Binding
	for i, b := range blk.Bindings {
		if groupOf[i] == 0 {
			bindings = append(bindings, b)
			continue
		}
		if g, ok := rootOf[i]; ok {
			bindings = append(bindings, mergeGroup(out, mod, blk, groups[g], users)...)
		}
	}
	nb := &ir.BindingBlock{Bindings: bindings, Dataflow: true}
	nb.SetSpan(blk.Span())
	return nb, len(groups)
}

// mergeGroup builds the Codegen function of one group and returns the
// bindings calling it.
func mergeGroup(out, mod *ir.Module, blk *ir.BindingBlock, group []int, users [][]int) []ir.Binding {
	member := map[int]bool{}
	defined := map[*ir.Var]bool{}
	for _, j := range group {
		member[j] = true
		defined[blk.Bindings[j].BoundVar()] = true
	}
	var inputs []*ir.Var
	seen := map[*ir.Var]bool{}
	var names []string
	var codegen string
	for k, j := range group {
		name, _, cg := compositeCallee(mod, blk.Bindings[j])
		codegen = cg
		if k > 0 {
			name = strings.TrimPrefix(name, "fused_")
		}
		names = append(names, name)
		for _, a := range bindingValue(blk.Bindings[j]).(*ir.Call).Args {
			ir.Inspect(a, func(e ir.Expr) bool {
				if v, ok := e.(*ir.Var); ok && !defined[v] && !seen[v] {
					seen[v] = true
					inputs = append(inputs, v)
				}
				return true
			})
		}
	}
	var outputs []*ir.Var
	for k, j := range group {
		v := blk.Bindings[j].BoundVar()
		escapes := k == len(group)-1 || !v.Dataflow
		for _, u := range users[j] {
			if !member[u] {
				escapes = true
			}
		}
		if escapes {
			outputs = append(outputs, v)
		}
	}

	subst := map[*ir.Var]ir.Expr{}
	params := make([]*ir.Var, len(inputs))
	args := make([]ir.Expr, len(inputs))
	for k, in := range inputs {
		params[k] = ir.NewVar(in.Name, in.StructInfo())
		subst[in] = params[k]
		args[k] = in
	}
	var body []ir.Binding
	for _, j := range group {
		b := blk.Bindings[j].(*ir.VarBinding)
		_, comp, _ := compositeCallee(mod, b)
		local := freshCopy(comp)
		local.Attrs = ir.Attrs{AttrComposite: comp.Attrs[AttrComposite]}
		lv := ir.NewVar("lv", ir.FuncInfoOf(comp))
		body = append(body, ir.NewVarBinding(lv, local))
		call := b.Value.(*ir.Call)
		callArgs := make([]ir.Expr, len(call.Args))
		for k, a := range call.Args {
			callArgs[k] = ir.Bind(a, subst)
		}
		nv := ir.NewVar(b.Var.Name, b.Var.StructInfo())
		subst[b.Var] = nv
		body = append(body, ir.NewVarBinding(nv, ir.NewCall(lv, callArgs...)))
	}
	var result ir.Expr
	if len(outputs) == 1 {
		result = subst[outputs[0]]
	} else {
		fields := make([]ir.Expr, len(outputs))
		for k, v := range outputs {
			fields[k] = subst[v]
		}
		result = ir.NewTuple(fields...)
	}
	root := blk.Bindings[group[len(group)-1]]
	name := uniqueFuncName(out, strings.Join(names, "_")+"_"+codegen)
	fn := &ir.Function{
		Params: params,
		Body:   &ir.SeqExpr{Blocks: []*ir.BindingBlock{{Bindings: body}}, Body: result},
		Pure:   true,
		Attrs:  ir.Attrs{AttrCodegen: codegen, ir.AttrGlobalSymbol: name},
	}
	fn.SetSpan(root.Span())
	fn, _ = ir.NormalizeFunction(out, fn)
	out.Set(name, fn)

	call := ir.NewCall(ir.NewGlobalVar(name), args...)
	if len(outputs) == 1 {
		vb := ir.NewVarBinding(outputs[0], call)
		vb.SetSpan(root.Span())
		return []ir.Binding{vb}
	}
	tv := ir.NewDataflowVar("lv", nil)
	vb := ir.NewVarBinding(tv, call)
	vb.SetSpan(root.Span())
	res := []ir.Binding{vb}
	for k, v := range outputs {
		gb := ir.NewVarBinding(v, &ir.TupleGetItem{Tuple: tv, Index: k})
		gb.SetSpan(root.Span())
		res = append(res, gb)
	}
	return res
}

// freshCopy returns a copy of f with fresh parameters and bound variables,
// so that one function may be nested in several places (each variable is
// defined once in a module).
func freshCopy(f *ir.Function) *ir.Function {
	m := &ir.Mutator{KeepStructInfo: true, DefVar: func(v *ir.Var) *ir.Var {
		nv := ir.NewVar(v.Name, v.StructInfo())
		nv.Dataflow = v.Dataflow
		return nv
	}}
	c := m.Function(f) // a new node: every parameter is renewed
	n := &ir.Function{Params: c.Params, Body: c.Body, Ret: c.Ret, Pure: c.Pure, Attrs: c.Attrs}
	n.SetSpan(f.Span())
	return n
}
