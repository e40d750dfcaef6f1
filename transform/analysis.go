package transform

import "github.com/phasec/phasec/ir"

// usedVars returns the set of Relax vars e uses (TVM's FreeVars restricted
// to the vars asked about: a function's parameters are free in its body).
func usedVars(e ir.Expr, of []*ir.Var) map[*ir.Var]bool {
	want := make(map[*ir.Var]bool, len(of))
	for _, v := range of {
		want[v] = true
	}
	used := map[*ir.Var]bool{}
	ir.Inspect(e, func(x ir.Expr) bool {
		if v, ok := x.(*ir.Var); ok && want[v] {
			used[v] = true
		}
		return true
	})
	return used
}

// freeSymVars is TVM's FreeSymbolicVars (src/relax/analysis/
// struct_info_analysis.cc) for a function body: the symbolic variables e
// uses (in struct info, shape expressions and prim values) that it does
// not define itself (a MatchCast target or a local function's parameter
// defines the variables standing alone in it).
//
// TVM collects them into an std::unordered_set, whose libstdc++ iteration
// order is the reverse of insertion for the few variables of a function
// (each new node goes to the front of the list); the result here is in
// reverse order of first occurrence, which is what TVM's tests expect
// (test_transform_remove_unused_parameters.py: param_n before param_m).
func freeSymVars(e ir.Expr) []*ir.PrimVar {
	defined := map[*ir.PrimVar]bool{}
	seen := map[*ir.PrimVar]bool{}
	var free []*ir.PrimVar
	use := func(p ir.PrimExpr) {
		ir.InspectPrim(p, func(x ir.PrimExpr) bool {
			if v, ok := x.(*ir.PrimVar); ok && !defined[v] && !seen[v] {
				seen[v] = true
				free = append(free, v)
			}
			return true
		})
	}
	useInfo := func(s ir.StructInfo) {
		if s == nil {
			return
		}
		ir.InspectStructInfoPrims(s, func(p ir.PrimExpr) bool {
			use(p)
			return false
		})
	}
	define := func(s ir.StructInfo) {
		for _, v := range ir.DefinableSymVars(s) {
			defined[v] = true
		}
	}
	ir.Walk(e, &ir.Visitor{
		Expr: func(x ir.Expr) bool {
			switch x := x.(type) {
			case *ir.GlobalVar:
				// A callee's signature (a PrimFunc's buffer shapes) has
				// variables of its own, none of them free here.
				return true
			case *ir.Function:
				for _, p := range x.Params {
					define(p.StructInfo())
				}
			case *ir.ShapeExpr:
				for _, d := range x.Values {
					use(d)
				}
			case *ir.PrimValue:
				use(x.Value)
			}
			useInfo(x.StructInfo())
			return true
		},
		Binding: func(b ir.Binding) bool {
			if mc, ok := b.(*ir.MatchCast); ok {
				define(mc.SInfo)
			}
			return true
		},
		StructInfo: useInfo,
	})
	for i, j := 0, len(free)-1; i < j; i, j = i+1, j-1 {
		free[i], free[j] = free[j], free[i]
	}
	return free
}

// inferSymVarMap is TVM's InferSymbolicVarMap (src/relax/utils.cc): the
// symbolic variables of the parameters' struct info bound to what the
// arguments' struct info has in the same place (a tensor or shape
// dimension, a prim value, recursively through tuples). A later binding
// of the same variable wins, as in TVM.
func inferSymVarMap(params []*ir.Var, args []ir.Expr) map[*ir.PrimVar]ir.PrimExpr {
	out := map[*ir.PrimVar]ir.PrimExpr{}
	bindPrim := func(p, a ir.PrimExpr) {
		if v, ok := p.(*ir.PrimVar); ok && a != nil {
			out[v] = a
		}
	}
	shapeValues := func(s ir.StructInfo) []ir.PrimExpr {
		switch s := s.(type) {
		case *ir.ShapeInfo:
			return s.Values
		case *ir.TensorInfo:
			d, _ := s.Dims()
			return d
		}
		return nil
	}
	var bind func(p, a ir.StructInfo)
	bind = func(p, a ir.StructInfo) {
		switch p := p.(type) {
		case *ir.TensorInfo, *ir.ShapeInfo:
			// A tensor binds through its shape, a shape through its values.
			_, pt := p.(*ir.TensorInfo)
			_, at := a.(*ir.TensorInfo)
			if pt != at {
				return
			}
			pv, av := shapeValues(p), shapeValues(a)
			if pv == nil || av == nil || len(pv) != len(av) {
				return
			}
			for i := range pv {
				bindPrim(pv[i], av[i])
			}
		case *ir.PrimInfo:
			if ap, ok := a.(*ir.PrimInfo); ok && p.Value != nil && ap.Value != nil {
				bindPrim(p.Value, ap.Value)
			}
		case *ir.TupleInfo:
			if at, ok := a.(*ir.TupleInfo); ok && len(at.Fields) == len(p.Fields) {
				for i := range p.Fields {
					bind(p.Fields[i], at.Fields[i])
				}
			}
		}
	}
	for i, p := range params {
		if i < len(args) {
			bind(p.StructInfo(), args[i].StructInfo())
		}
	}
	return out
}

// useVisitor is what scanUses reports to: the analyses that charge each
// use of a var to a user (RemoveAllUnused's liveness, TopologicalSort's
// dependency graph, ConvertToDataflow's home blocks) differ only in what a
// use means and in how they enter a nested scope.
type useVisitor interface {
	// use is a var e uses directly.
	use(v *ir.Var)
	// scope is a SeqExpr (an If branch) or a Function nested in e; the
	// analysis walks it with its own rule.
	scope(e ir.Expr)
}

// scanUses walks the leaf structure of e (tuple fields, field reads, a
// call's callee and arguments, an If's condition and branches), reporting
// its vars and nested scopes to v. It recurses only as deep as expressions
// nest; binding lists are the scopes' loops.
func scanUses(e ir.Expr, v useVisitor) {
	switch e := e.(type) {
	case *ir.Var:
		v.use(e)
	case *ir.Tuple:
		for _, f := range e.Fields {
			scanUses(f, v)
		}
	case *ir.TupleGetItem:
		scanUses(e.Tuple, v)
	case *ir.Call:
		scanUses(e.Op, v)
		for _, a := range e.Args {
			scanUses(a, v)
		}
	case *ir.If:
		scanUses(e.Cond, v)
		scanUses(e.Then, v)
		scanUses(e.Else, v)
	case *ir.SeqExpr, *ir.Function:
		v.scope(e)
	}
}

// appendFreeVars appends the vars e uses and does not define to vs, in
// order of use, possibly repeated. A call, tuple or field read (a bound
// value in normal form) is walked directly; an expression with scopes of
// its own goes through freeVars.
func appendFreeVars(vs []*ir.Var, e ir.Expr) []*ir.Var {
	switch e := e.(type) {
	case *ir.Var:
		return append(vs, e)
	case *ir.Tuple:
		for _, f := range e.Fields {
			vs = appendFreeVars(vs, f)
		}
		return vs
	case *ir.TupleGetItem:
		return appendFreeVars(vs, e.Tuple)
	case *ir.Call:
		vs = appendFreeVars(vs, e.Op)
		for _, a := range e.Args {
			vs = appendFreeVars(vs, a)
		}
		return vs
	case *ir.If, *ir.SeqExpr, *ir.Function:
		for v := range freeVars(e) {
			vs = append(vs, v)
		}
	}
	return vs
}

// bindingParts returns the var a binding defines and the value it binds.
func bindingParts(b ir.Binding) (*ir.Var, ir.Expr) {
	switch b := b.(type) {
	case *ir.VarBinding:
		return b.Var, b.Value
	case *ir.MatchCast:
		return b.Var, b.Value
	}
	return nil, nil
}
