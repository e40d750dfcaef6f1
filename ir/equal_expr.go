package ir

// Relax expressions, bindings and functions (see equal.go for the rules).

func (e *eqState) exprs(name string, a, b []Expr) bool {
	e.field(name)
	if len(a) != len(b) {
		return e.failStr(countOf(len(a), name), countOf(len(b), name))
	}
	for i := range a {
		e.index(i)
		if !e.expr(a[i], b[i]) {
			return false
		}
		e.pop()
	}
	e.pop()
	return true
}

func (e *eqState) exprMismatch(a, b Expr) bool {
	return e.fail(func() string { return FormatExpr(a, nil) }, func() string { return FormatExpr(b, nil) })
}

func (e *eqState) expr(a, b Expr) bool {
	if a == nil || b == nil {
		if a == nil && b == nil {
			return true
		}
		return e.exprMismatch(a, b)
	}
	switch x := a.(type) {
	case *Var:
		y, ok := b.(*Var)
		if !ok {
			return e.exprMismatch(a, b)
		}
		return e.useVar(x, y)
	case *GlobalVar:
		y, ok := b.(*GlobalVar)
		if !ok || x.Name != y.Name {
			return e.exprMismatch(a, b)
		}
		return true
	case *ExternFunc:
		y, ok := b.(*ExternFunc)
		if !ok || x.Symbol != y.Symbol {
			return e.exprMismatch(a, b)
		}
		return true
	case *Op:
		if x != b {
			return e.exprMismatch(a, b)
		}
		return true
	case *Constant:
		y, ok := b.(*Constant)
		if !ok || !ndarrayEqual(x.Data, y.Data) {
			return e.exprMismatch(a, b)
		}
		return true
	case *ShapeExpr:
		y, ok := b.(*ShapeExpr)
		if !ok || !e.primsQuiet(x.Values, y.Values) {
			return e.exprMismatch(a, b)
		}
		return true
	case *PrimValue:
		y, ok := b.(*PrimValue)
		if !ok || !e.primQuiet(x.Value, y.Value) {
			return e.exprMismatch(a, b)
		}
		return true
	case *StringImm:
		y, ok := b.(*StringImm)
		if !ok || x.Value != y.Value {
			return e.exprMismatch(a, b)
		}
		return true
	case *DataTypeImm:
		y, ok := b.(*DataTypeImm)
		if !ok || x.Value != y.Value {
			return e.exprMismatch(a, b)
		}
		return true
	case *Tuple:
		y, ok := b.(*Tuple)
		if !ok || len(x.Fields) != len(y.Fields) {
			return e.exprMismatch(a, b)
		}
		return e.exprs("fields", x.Fields, y.Fields)
	case *TupleGetItem:
		y, ok := b.(*TupleGetItem)
		if !ok || x.Index != y.Index {
			return e.exprMismatch(a, b)
		}
		e.field("tuple")
		if !e.expr(x.Tuple, y.Tuple) {
			return false
		}
		e.pop()
		return true
	case *Call:
		y, ok := b.(*Call)
		if !ok {
			return e.exprMismatch(a, b)
		}
		return e.call(x, y)
	case *If:
		y, ok := b.(*If)
		if !ok {
			return e.exprMismatch(a, b)
		}
		e.field("cond")
		if !e.expr(x.Cond, y.Cond) {
			return false
		}
		e.pop()
		e.field("then")
		if !e.expr(x.Then, y.Then) {
			return false
		}
		e.pop()
		e.field("else")
		if !e.expr(x.Else, y.Else) {
			return false
		}
		e.pop()
		return true
	case *SeqExpr:
		y, ok := b.(*SeqExpr)
		if !ok {
			return e.exprMismatch(a, b)
		}
		return e.seq(x, y)
	case *Function:
		y, ok := b.(*Function)
		if !ok {
			return e.exprMismatch(a, b)
		}
		return e.function(x, y)
	}
	return e.exprMismatch(a, b)
}

func (e *eqState) call(a, b *Call) bool {
	e.field("op")
	if !e.expr(a.Op, b.Op) {
		return false
	}
	e.pop()
	if len(a.Args) != len(b.Args) {
		return e.exprMismatch(a, b)
	}
	if !e.exprs("args", a.Args, b.Args) {
		return false
	}
	if !e.attrs(a.Attrs, b.Attrs) {
		return false
	}
	if len(a.SInfoArgs) != len(b.SInfoArgs) {
		e.field("sinfo_args")
		return e.failStr(countOf(len(a.SInfoArgs), "sinfo_args"), countOf(len(b.SInfoArgs), "sinfo_args"))
	}
	if len(a.SInfoArgs) > 0 {
		e.field("sinfo_args")
		for i := range a.SInfoArgs {
			e.index(i)
			if !e.sinfo(a.SInfoArgs[i], b.SInfoArgs[i]) {
				return false
			}
			e.pop()
		}
		e.pop()
	}
	return true
}

// useVar compares two variable uses: paired variables, or free ones.
func (e *eqState) useVar(a, b *Var) bool {
	if m, ok := e.vars.l.Get(a); ok {
		if m == b {
			return true
		}
		return e.varMismatch(a, b)
	}
	if _, ok := e.vars.r.Get(b); ok {
		return e.varMismatch(a, b)
	}
	if !e.opts.MapFreeVars {
		if a != b {
			return e.varMismatch(a, b)
		}
		// Pair it with itself so a later definition stays consistent.
		e.vars.pair(a, b)
		return true
	}
	return e.defineVar(a, b, false)
}

func (e *eqState) varMismatch(a, b *Var) bool {
	return e.fail(func() string { return varDesc(a) }, func() string {
		if a.Name == b.Name && a != b {
			return varDesc(b) + " (a different variable)"
		}
		return varDesc(b)
	})
}

// defineVar pairs a and b at a definition site and compares their struct
// info; defining says whether symbolic variables first met there are
// defined (parameters, match_cast).
func (e *eqState) defineVar(a, b *Var, defining bool) bool {
	if a.Dataflow != b.Dataflow || !e.vars.define(a, b) {
		return e.varMismatch(a, b)
	}
	sa, sb := a.StructInfo(), b.StructInfo()
	if sa == nil && sb == nil || sa == e.lastL && sb == e.lastR {
		return true
	}
	e.field("struct_info")
	saved := e.defining
	e.defining = defining
	ok := e.sinfo(sa, sb)
	e.defining = saved
	if !ok {
		return false
	}
	e.lastL, e.lastR = sa, sb
	e.pop()
	return true
}

// countDefs estimates the variables a function defines (parameters and
// top-level bindings) to size the variable maps once.
func countDefs(f *Function) int {
	n := len(f.Params)
	if s, ok := f.Body.(*SeqExpr); ok {
		for _, b := range s.Blocks {
			n += len(b.Bindings)
		}
	}
	return n
}

func (e *eqState) function(a, b *Function) bool {
	e.vars.presize(countDefs(a))
	e.field("params")
	if len(a.Params) != len(b.Params) {
		return e.failStr(countOf(len(a.Params), "params"), countOf(len(b.Params), "params"))
	}
	for i := range a.Params {
		e.index(i)
		if !e.defineVar(a.Params[i], b.Params[i], true) {
			return false
		}
		e.pop()
	}
	e.pop()
	e.field("ret")
	if !e.sinfo(a.Ret, b.Ret) {
		return false
	}
	e.pop()
	if a.Pure != b.Pure {
		e.field("pure")
		return e.failStr(pyBool(a.Pure), pyBool(b.Pure))
	}
	if !e.attrs(a.Attrs, b.Attrs) {
		return false
	}
	e.field("body")
	if !e.expr(a.Body, b.Body) {
		return false
	}
	e.pop()
	return true
}

// seq compares the blocks and result of a scope. Bindings are iterated.
func (e *eqState) seq(a, b *SeqExpr) bool {
	e.field("blocks")
	if len(a.Blocks) != len(b.Blocks) {
		return e.failStr(countOf(len(a.Blocks), "blocks"), countOf(len(b.Blocks), "blocks"))
	}
	for i := range a.Blocks {
		e.index(i)
		if !e.block(a.Blocks[i], b.Blocks[i]) {
			return false
		}
		e.pop()
	}
	e.pop()
	e.field("body")
	if !e.expr(a.Body, b.Body) {
		return false
	}
	e.pop()
	return true
}

func (e *eqState) block(a, b *BindingBlock) bool {
	if a.Dataflow != b.Dataflow {
		e.field("dataflow")
		return e.failStr(pyBool(a.Dataflow), pyBool(b.Dataflow))
	}
	e.field("bindings")
	if len(a.Bindings) != len(b.Bindings) {
		return e.failStr(countOf(len(a.Bindings), "bindings"), countOf(len(b.Bindings), "bindings"))
	}
	for i := range a.Bindings {
		e.index(i)
		if !e.binding(a.Bindings[i], b.Bindings[i]) {
			return false
		}
		e.pop()
	}
	e.pop()
	return true
}

func (e *eqState) binding(a, b Binding) bool {
	switch x := a.(type) {
	case *VarBinding:
		y, ok := b.(*VarBinding)
		if !ok {
			return e.failStr(describe(a), describe(b))
		}
		if bindsFunction(x) || bindsFunction(y) {
			// The var is in scope in its own value (recursion): pair it
			// first, as TVM does.
			return e.bindingVar(x.Var, y.Var) && e.bindingValue(x.Value, y.Value)
		}
		return e.bindingValue(x.Value, y.Value) && e.bindingVar(x.Var, y.Var)
	case *MatchCast:
		y, ok := b.(*MatchCast)
		if !ok {
			return e.failStr(describe(a), describe(b))
		}
		e.field("value")
		if !e.expr(x.Value, y.Value) {
			return false
		}
		e.pop()
		e.field("struct_info")
		saved := e.defining
		e.defining = true
		ok = e.sinfo(x.SInfo, y.SInfo)
		e.defining = saved
		if !ok {
			return false
		}
		e.pop()
		e.field("var")
		if !e.defineVar(x.Var, y.Var, true) {
			return false
		}
		e.pop()
		return true
	}
	return e.failStr(describe(a), describe(b))
}

// bindsFunction reports whether b binds a local function, whose body may
// refer to b.Var: the var is defined before its value.
func bindsFunction(b *VarBinding) bool {
	_, ok := b.Value.(*Function)
	return ok
}

func (e *eqState) bindingValue(a, b Expr) bool {
	e.field("value")
	if !e.expr(a, b) {
		return false
	}
	e.pop()
	return true
}

func (e *eqState) bindingVar(a, b *Var) bool {
	e.field("var")
	if !e.defineVar(a, b, false) {
		return false
	}
	e.pop()
	return true
}

func ndarrayEqual(a, b *NDArray) bool {
	if a == b {
		return true
	}
	if a == nil || b == nil || a.DType != b.DType || len(a.Shape) != len(b.Shape) || len(a.Data) != len(b.Data) {
		return false
	}
	for i := range a.Shape {
		if a.Shape[i] != b.Shape[i] {
			return false
		}
	}
	return string(a.Data) == string(b.Data)
}
