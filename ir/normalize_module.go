package ir

import "github.com/phasec/phasec/diag"

// NormalizeFunction returns f with a normalized body (A-normal form,
// SeqExpr scopes, merged blocks, struct info everywhere) and its return info:
// inferred from the body when f.Ret is nil, otherwise checked against it.
// Globals resolve in mod (may be nil). f itself is returned when it was
// already normalized.
func NormalizeFunction(mod *Module, f *Function) (*Function, diag.List) {
	b := NewBuilder(mod)
	nf, _ := b.Normalize(f).(*Function)
	return nf, b.Diagnostics()
}

// NormalizeModule normalizes every Relax function of mod into a new module
// (PrimFuncs are shared). Functions without a return annotation are
// normalized first, callees before callers, so calls to them see the
// inferred return info; calls along a cycle of unannotated functions see
// R.Object. Diagnostics are sorted.
func NormalizeModule(mod *Module) (*Module, diag.List) {
	out := mod.Clone()
	b := NewBuilder(out)
	for _, name := range normalizeOrder(mod) {
		f := mod.Func(name)
		b.span = f.Span()
		if nf, ok := b.Normalize(f).(*Function); ok {
			out.Set(name, nf)
		}
	}
	errs := b.Diagnostics()
	errs.Sort()
	return out, errs
}

// normalizeOrder lists the Relax functions of mod: those without a return
// annotation in callee-first (post-)order, then the rest, each group in
// name order. The depth-first search uses an explicit stack.
func normalizeOrder(mod *Module) []string {
	names := mod.Names()
	var order []string
	state := map[string]uint8{} // 0 new, 1 on stack, 2 done
	needsInfer := func(name string) bool {
		f := mod.Func(name)
		return f != nil && f.Ret == nil
	}
	callees := func(name string) []string {
		var out []string
		Inspect(mod.Func(name).Body, func(e Expr) bool {
			if gv, ok := e.(*GlobalVar); ok && needsInfer(gv.Name) {
				out = append(out, gv.Name)
			}
			return true
		})
		return out
	}
	type item struct {
		name string
		next []string
	}
	for _, root := range names {
		if !needsInfer(root) || state[root] != 0 {
			continue
		}
		state[root] = 1
		stack := []item{{root, callees(root)}}
		for len(stack) > 0 {
			top := &stack[len(stack)-1]
			if len(top.next) == 0 {
				state[top.name] = 2
				order = append(order, top.name)
				stack = stack[:len(stack)-1]
				continue
			}
			c := top.next[0]
			top.next = top.next[1:]
			if state[c] == 0 {
				state[c] = 1
				stack = append(stack, item{c, callees(c)})
			}
		}
	}
	for _, n := range names {
		if mod.Func(n) != nil && !needsInfer(n) {
			order = append(order, n)
		}
	}
	return order
}
