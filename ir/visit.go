package ir

// Read-only traversal of Relax IR, in the style of go/ast: Inspect for the
// common "look at every expression" case, Walk with a Visitor for
// bindings, blocks, variable definitions and annotation struct info.
//
// Bindings are visited in a loop, never by recursion, so functions of any
// length are safe; recursion depth follows expression nesting (and nested
// functions / If branches) only.

// Visitor holds the callbacks of Walk; each may be nil.
type Visitor struct {
	// Expr is called on each expression before its children (pre-order);
	// returning false skips the children. Variable uses are visited as
	// *Var expressions; definitions go to DefVar instead.
	Expr func(e Expr) bool
	// PostExpr is called on each expression after its children.
	PostExpr func(e Expr)
	// Block is called before a block's bindings; false skips the block.
	Block func(b *BindingBlock) bool
	// Binding is called before a binding's value is visited; false skips
	// the value (and the DefVar/StructInfo calls of the binding).
	Binding func(b Binding) bool
	// DefVar is called at each variable definition: function parameters
	// (before the body) and binding vars (after the value).
	DefVar func(v *Var)
	// StructInfo is called on annotation struct info: the struct info of
	// defined vars, MatchCast targets, call sinfo_args and function return
	// info. Use WalkStructInfo / InspectStructInfoPrims to look inside.
	StructInfo func(s StructInfo)
}

// Inspect calls f for e and, while f returns true, for each of its
// sub-expressions in pre-order, including the values and results of nested
// SeqExprs, If branches and functions.
func Inspect(e Expr, f func(Expr) bool) {
	Walk(e, &Visitor{Expr: f})
}

// Walk traverses e with the callbacks of v.
func Walk(e Expr, v *Visitor) {
	if e == nil {
		return
	}
	if v.Expr != nil && !v.Expr(e) {
		return
	}
	switch e := e.(type) {
	case *Tuple:
		for _, f := range e.Fields {
			Walk(f, v)
		}
	case *TupleGetItem:
		Walk(e.Tuple, v)
	case *Call:
		Walk(e.Op, v)
		for _, a := range e.Args {
			Walk(a, v)
		}
		if v.StructInfo != nil {
			for _, s := range e.SInfoArgs {
				v.StructInfo(s)
			}
		}
	case *If:
		Walk(e.Cond, v)
		Walk(e.Then, v)
		Walk(e.Else, v)
	case *SeqExpr:
		for _, blk := range e.Blocks {
			WalkBlock(blk, v)
		}
		Walk(e.Body, v)
	case *Function:
		for _, p := range e.Params {
			v.def(p)
		}
		Walk(e.Body, v)
		if v.StructInfo != nil && e.Ret != nil {
			v.StructInfo(e.Ret)
		}
	}
	if v.PostExpr != nil {
		v.PostExpr(e)
	}
}

func (v *Visitor) def(x *Var) {
	if v.DefVar != nil {
		v.DefVar(x)
	}
	if v.StructInfo != nil && x.StructInfo() != nil {
		v.StructInfo(x.StructInfo())
	}
}

// WalkBlock traverses the bindings of blk in order with the callbacks of v.
func WalkBlock(blk *BindingBlock, v *Visitor) {
	if v.Block != nil && !v.Block(blk) {
		return
	}
	for _, bind := range blk.Bindings {
		if v.Binding != nil && !v.Binding(bind) {
			continue
		}
		switch b := bind.(type) {
		case *VarBinding:
			Walk(b.Value, v)
			v.def(b.Var)
		case *MatchCast:
			Walk(b.Value, v)
			if v.StructInfo != nil {
				v.StructInfo(b.SInfo)
			}
			v.def(b.Var)
		}
	}
}

// WalkModule walks every Relax function of mod in name order.
func WalkModule(mod *Module, v *Visitor) {
	for _, name := range mod.Names() {
		if f := mod.Func(name); f != nil {
			Walk(f, v)
		}
	}
}

// WalkStructInfo calls f for s and, while f returns true, for the struct
// info nested in it (tuple fields, function parameters and return).
func WalkStructInfo(s StructInfo, f func(StructInfo) bool) {
	if s == nil || !f(s) {
		return
	}
	switch s := s.(type) {
	case *TupleInfo:
		for _, x := range s.Fields {
			WalkStructInfo(x, f)
		}
	case *FuncInfo:
		for _, x := range s.Params {
			WalkStructInfo(x, f)
		}
		WalkStructInfo(s.Ret, f)
	}
}

// InspectStructInfoPrims calls InspectPrim(e, f) for every symbolic
// expression in s: tensor and shape dimensions and prim values, at any
// depth.
func InspectStructInfoPrims(s StructInfo, f func(PrimExpr) bool) {
	WalkStructInfo(s, func(x StructInfo) bool {
		switch x := x.(type) {
		case *PrimInfo:
			InspectPrim(x.Value, f)
		case *ShapeInfo:
			for _, d := range x.Values {
				InspectPrim(d, f)
			}
		case *TensorInfo:
			if se, ok := x.Shape.(*ShapeExpr); ok {
				for _, d := range se.Values {
					InspectPrim(d, f)
				}
			}
		}
		return true
	})
}
