package transform

import (
	"github.com/phasec/phasec/diag"
	"github.com/phasec/phasec/ir"
	"github.com/phasec/phasec/passes"
	"github.com/phasec/phasec/phase"
)

// InlinePrivateFunctions is TVM's relax.transform.InlinePrivateFunctions
// (src/relax/transform/inline_functions.cc, a module pass at opt level 0).
//
// Every call to a private Relax function that is not recursive (alone or
// with others: TVM's DetectRecursion) is replaced by a copy of the callee's
// body with fresh variables of the same names (TVM's CopyWithNewVars), its
// parameters bound to the arguments and its symbolic variables to what the
// arguments' struct info gives them (TVM's Bind). Private functions calling
// private functions are inlined bottom-up. The private functions nothing
// references afterwards are removed; recursive ones stay.
//
// TVM binds each parameter to its argument and then runs
// CanonicalizeBindings and RemoveAllUnused on every function it changed.
// Here an argument var or constant is substituted directly (another
// argument is bound to a var named after the parameter; TVM's
// CanonicalizeBindings would also see through a bound tuple), the call's
// result var is
// replaced by the inlined result var (the trivial bindings TVM's
// CanonicalizeBindings removes), the inlined bindings take the kind of the
// block they land in (dataflow vars inside a dataflow block, except the var
// standing for an output), and removeAllUnused runs on each changed
// function. Other trivial bindings of a changed function stay; TVM's
// CanonicalizeBindings would remove them too.
var InlinePrivateFunctions = passes.Define(passes.Info{
	Name:     "InlinePrivateFunctions",
	Doc:      "inline every non-recursive private Relax function into its callers",
	OptLevel: 0,
	Accepts:  []phase.Phase{phase.Ingest, phase.Optimize},
	Requires: map[phase.Property]string{
		phase.Normalized: "it replaces call bindings by the callee's bindings and needs arguments to be leaves",
	},
}, passes.Module(func(_ *passes.Env, mod *ir.Module) (*ir.Module, error) {
	return inlinePrivateFunctions(mod)
}))

// DiagInlineSymVar: a call's arguments do not determine a symbolic
// variable the inlined body uses.
var DiagInlineSymVar = optCodes.Define("OPT052", "InlinePrivateFunctions: a call's arguments do not determine a symbolic variable of the callee")

// DiagInlineImpure: an impure (force_pure) private function called from a
// dataflow block cannot be inlined there.
var DiagInlineImpure = optCodes.Define("OPT053", "InlinePrivateFunctions: a function with impure calls cannot be inlined into a dataflow block")

func inlinePrivateFunctions(mod *ir.Module) (*ir.Module, error) {
	nonCallee := globalsUsedAsValues(mod)
	repl := map[string]*ir.Function{}
	for name, bf := range mod.Functions() {
		if f, ok := bf.(*ir.Function); ok && !ir.IsPublic(f) && !nonCallee[name] {
			repl[name] = f
		}
	}
	if len(repl) == 0 {
		return mod, nil
	}
	order, recursive := callOrder(mod)
	for name := range recursive {
		delete(repl, name)
	}
	if len(repl) == 0 {
		return mod, nil
	}
	out := mod.Clone()
	var errs diag.List
	// Callees before callers, so an inlined body has no private call left.
	for _, name := range order {
		f := out.Func(name)
		nf := inlineCalls(out, f, repl, &errs)
		if nf == f {
			continue
		}
		nf = removeAllUnused(out, nf)
		norm, ds := ir.NormalizeFunction(out, nf)
		errs = append(errs, ds...)
		out.Set(name, norm)
		if repl[name] != nil {
			repl[name] = norm
		}
	}
	if err := errs.Err(); err != nil {
		return nil, err
	}
	referenced := map[string]bool{}
	for name, bf := range out.Functions() {
		if f, ok := bf.(*ir.Function); ok && repl[name] == nil {
			ir.Inspect(f.Body, func(e ir.Expr) bool {
				if gv, ok := e.(*ir.GlobalVar); ok {
					referenced[gv.Name] = true
				}
				return true
			})
		}
	}
	for name := range repl {
		if !referenced[name] {
			out.Remove(name)
		}
	}
	return out, nil
}

// inlineCalls returns f with its calls to repl functions inlined (f itself
// when it has none).
func inlineCalls(mod *ir.Module, f *ir.Function, repl map[string]*ir.Function, errs *diag.List) *ir.Function {
	rw := ir.NewRewriter(mod)
	rw.Binding = func(rw *ir.Rewriter, bind ir.Binding, value ir.Expr) bool {
		vb, ok := bind.(*ir.VarBinding)
		if !ok {
			return false
		}
		c, ok := value.(*ir.Call)
		if !ok {
			return false
		}
		gv, ok := c.Op.(*ir.GlobalVar)
		if !ok || repl[gv.Name] == nil {
			return false
		}
		callee := repl[gv.Name]
		if len(callee.Params) != len(c.Args) {
			return false // the well-formedness checker reports it
		}
		dataflow := rw.B.InDataflowBlock()
		if dataflow && containsImpureCall(mod, callee.Body) {
			errs.Add(c.Span(), DiagInlineImpure, "call to %s in a dataflow block: %[1]s has impure calls (relax.force_pure) and cannot be inlined there", gv.Name)
			return false
		}
		result, ok := inlineBody(rw, callee, c, vb.Var, dataflow, errs)
		if !ok {
			return false
		}
		if rv, isVar := result.(*ir.Var); isVar && (rv.Dataflow == vb.Var.Dataflow || !rv.Dataflow) {
			rw.Remap(vb.Var, rv)
			return true
		}
		rw.ReEmit(bind, result)
		return true
	}
	return rw.Function(f)
}

// inlineBody emits a copy of callee's body for the call c bound to target
// and returns the copy's result.
func inlineBody(rw *ir.Rewriter, callee *ir.Function, c *ir.Call, target *ir.Var, dataflow bool, errs *diag.List) (ir.Expr, bool) {
	syms := inferSymVarMap(callee.Params, c.Args)
	seq, ok := callee.Body.(*ir.SeqExpr)
	if !ok {
		seq = &ir.SeqExpr{Body: callee.Body}
	}
	// The callee's parameters define its symbolic variables; each one
	// the body uses must get a value from the arguments.
	for _, p := range callee.Params {
		for _, v := range ir.DefinableSymVars(p.StructInfo()) {
			if _, ok := syms[v]; !ok && usesSymVar(seq, v) {
				errs.Add(c.Span(), DiagInlineSymVar, "call to %s: its arguments do not determine the symbolic variable %s the inlined body uses",
					c.Op.(*ir.GlobalVar).Name, v.Name)
				return nil, false
			}
		}
	}
	// Symbolic variables the body defines itself (MatchCast) are renewed,
	// so two inlined copies do not define the same variable.
	for _, blk := range seq.Blocks {
		for _, b := range blk.Bindings {
			if mc, ok := b.(*ir.MatchCast); ok {
				for _, v := range ir.DefinableSymVars(mc.SInfo) {
					if _, bound := syms[v]; !bound {
						syms[v] = ir.NewPrimVar(v.Name, v.Type)
					}
				}
			}
		}
	}
	seq = ir.SubstituteSymVarsInExpr(seq, syms).(*ir.SeqExpr)
	// The var the body's result is, when it is bound at the top level.
	resultVar, _ := seq.Body.(*ir.Var)
	top := map[*ir.Var]bool{}
	for _, blk := range seq.Blocks {
		for _, b := range blk.Bindings {
			top[bindingVar(b)] = true
		}
	}
	subst := map[*ir.Var]ir.Expr{}
	for i, p := range callee.Params {
		switch a := c.Args[i].(type) {
		case *ir.Var, *ir.Constant:
			// TVM's CanonicalizeBindings replaces a var bound to a var
			// or to a constant by its value.
			subst[p] = a
			continue
		}
		// Another argument (a tuple, a shape) is bound to a var named
		// after the parameter, as TVM's parameter binding.
		pv := &ir.Var{Name: p.Name, Dataflow: dataflow}
		rw.B.EmitBinding(ir.NewVarBinding(pv, c.Args[i]))
		subst[p] = pv
	}
	copier := &ir.Mutator{
		DefVar: func(v *ir.Var) *ir.Var {
			n := ir.NewVar(v.Name, v.StructInfo())
			n.Dataflow = v.Dataflow
			if top[v] {
				// Top-level bindings land in the caller's block.
				n.Dataflow = dataflow && !(v == resultVar && !target.Dataflow)
			}
			n.SetSpan(v.Span())
			return n
		},
		PostExpr: func(e ir.Expr) ir.Expr {
			if v, ok := e.(*ir.Var); ok {
				if a, ok := subst[v]; ok {
					return a
				}
			}
			return e
		},
	}
	copied := copier.Expr(seq).(*ir.SeqExpr)
	for _, blk := range copied.Blocks {
		for _, b := range blk.Bindings {
			rw.B.EmitBinding(b)
		}
	}
	return copied.Body, true
}

func bindingVar(b ir.Binding) *ir.Var {
	switch b := b.(type) {
	case *ir.VarBinding:
		return b.Var
	case *ir.MatchCast:
		return b.Var
	}
	return nil
}

// usesSymVar reports whether e mentions the symbolic variable v.
func usesSymVar(e ir.Expr, v *ir.PrimVar) bool {
	for _, w := range freeSymVars(e) {
		if w == v {
			return true
		}
	}
	return false
}

// callOrder is the Relax functions of mod with callees before callers (an
// iterative depth-first post-order of the call graph), and the set of those
// on a cycle (TVM's DetectRecursion: self-recursive or mutually recursive).
func callOrder(mod *ir.Module) ([]string, map[string]bool) {
	names := mod.Names()
	callees := map[string][]string{}
	for _, name := range names {
		f := mod.Func(name)
		if f == nil {
			continue
		}
		seen := map[string]bool{}
		ir.Inspect(f.Body, func(e ir.Expr) bool {
			if gv, ok := e.(*ir.GlobalVar); ok && mod.Func(gv.Name) != nil && !seen[gv.Name] {
				seen[gv.Name] = true
				callees[name] = append(callees[name], gv.Name)
			}
			return true
		})
	}
	// Tarjan's strongly connected components, iteratively; components
	// come out callees first, which is the order wanted.
	index := map[string]int{}
	low := map[string]int{}
	onStack := map[string]bool{}
	var stack, order []string
	recursive := map[string]bool{}
	next := 0
	type frame struct {
		name string
		i    int
	}
	for _, root := range names {
		if mod.Func(root) == nil {
			continue
		}
		if _, done := index[root]; done {
			continue
		}
		work := []frame{{name: root}}
		index[root], low[root] = next, next
		next++
		stack = append(stack, root)
		onStack[root] = true
		for len(work) > 0 {
			fr := &work[len(work)-1]
			if fr.i < len(callees[fr.name]) {
				w := callees[fr.name][fr.i]
				fr.i++
				if _, visited := index[w]; !visited {
					index[w], low[w] = next, next
					next++
					stack = append(stack, w)
					onStack[w] = true
					work = append(work, frame{name: w})
				} else if onStack[w] {
					low[fr.name] = min(low[fr.name], index[w])
				}
				continue
			}
			v := fr.name
			work = work[:len(work)-1]
			if len(work) > 0 {
				parent := work[len(work)-1].name
				low[parent] = min(low[parent], low[v])
			}
			if low[v] != index[v] {
				continue
			}
			var comp []string
			for {
				w := stack[len(stack)-1]
				stack = stack[:len(stack)-1]
				onStack[w] = false
				comp = append(comp, w)
				if w == v {
					break
				}
			}
			selfCall := false
			for _, c := range callees[v] {
				selfCall = selfCall || c == v
			}
			if len(comp) > 1 || selfCall {
				for _, w := range comp {
					recursive[w] = true
				}
			}
			order = append(order, comp...)
		}
	}
	return order, recursive
}
