package syntax

import (
	"github.com/phasec/phasec/diag"
	"github.com/phasec/phasec/ir"
)

// Statements of Relax function bodies.

// relaxStmt converts one statement; df is non-nil inside a dataflow block.
func (bd *builder) relaxStmt(st *stmtNode, fs *funcState, df *dataflowState) {
	sp := spanOf(st.Pos, st.EndPos)
	switch {
	case st.Simple != nil && st.Simple.Pass:
		bd.neutralizedPass(st, df != nil)
	case st.Simple != nil && st.Simple.Expr != nil:
		as := st.Simple.Expr
		if as.Value == nil {
			if as.Annot != nil {
				bd.fail(sp, "expected \"= value\" after the annotation, found none")
			}
			bd.exprStmt(bd.conv.exprList(as.Target), fs, df)
			return
		}
		bd.assign(as, sp, df)
	case st.If != nil:
		bd.relaxIf(st.If, fs, df)
	case st.Decorated != nil && st.Decorated.Def != nil:
		bd.localFunction(st.Decorated, df)
	case st.With != nil:
		a := bd.conv.expr(st.With.Item)
		if isDataflowWith(a) {
			bd.fail(a.Span, "expected a binding, found a nested \"with R.dataflow()\" block")
		}
		bd.fail(a.Span, "expected \"with R.dataflow():\" in a Relax function, found \"with %s\"", describeOrName(a))
	case st.For != nil:
		bd.fail(sp, "%s loops are not allowed in Relax functions (only in @T.prim_func)", map[bool]string{true: "while", false: "for"}[st.For.While != nil])
	case st.Simple != nil && st.Simple.Return != nil:
		bd.fail(sp, "expected return at the end of the function body, found it inside a block")
	default:
		bd.fail(sp, "expected a binding in a Relax function, found %s", stmtKind(st))
	}
}

// exprStmt converts a statement without a target: R.func_attr, a string
// (docstring), or a call whose value is bound to "_".
func (bd *builder) exprStmt(a *ast, fs *funcState, df *dataflowState) {
	switch a.callee() {
	case "R.func_attr":
		if len(a.Items) != 1 || a.Keywords[0] != "" {
			bd.fail(a.Span, "expected R.func_attr({...}) with one dict argument")
		}
		attrs := bd.attrDict(a.Items[0])
		if fs.attrs == nil {
			fs.attrs = ir.Attrs{}
		}
		for k, v := range attrs {
			fs.attrs[k] = v
		}
		return
	case "R.output":
		bd.fail(a.Span, "R.output(...) is only allowed at the end of a \"with R.dataflow()\" block")
	}
	if a.Kind == aStr {
		return // a docstring
	}
	if a.Kind != aCall {
		bd.fail(a.Span, "expected a binding or a call statement, found %s", a.describe())
	}
	value := bd.voidValue(a)
	v := ir.NewVar("_", nil)
	v.Dataflow = df != nil
	v.SetSpan(a.Span)
	bind := ir.NewVarBinding(v, value)
	bind.SetSpan(a.Span)
	bd.rb.EmitBinding(bind)
}

// voidValue converts the call of an expression statement, which TVM's
// parser accepts only when its value is void (python/tvm/script/parser/
// relax/parser.py, visit_expr_stmt): "Non-void relax expressions must be
// bound to a variable".
func (bd *builder) voidValue(a *ast) ir.Expr {
	value := bd.rb.Normalize(bd.relaxExpr(a))
	if si := value.StructInfo(); si != nil && !isVoidInfo(si) {
		example := "x = " + describeOrName(a)
		if a.Kind == aCall {
			example = "x = " + describeOrName(a.X) + "(...)"
		}
		bd.fail(a.Span, "non-void relax expressions must be bound to a variable, e.g. %s (the value is %s)", example, ir.FormatStructInfo(si, nil))
	}
	return value
}

func isVoidInfo(si ir.StructInfo) bool {
	t, ok := si.(*ir.TupleInfo)
	return ok && len(t.Fields) == 0
}

// assign converts "name (: sinfo)? = value" and the declarations that look
// like assignments (n = T.int64(), cls = Module).
func (bd *builder) assign(as *assignNode, sp diag.Span, df *dataflowState) {
	target := bd.conv.exprList(as.Target)
	value := bd.conv.exprList(as.Value)
	if target.Kind == aTuple {
		bd.unpack(target, as, value, sp, df)
		return
	}
	bd.bindName(target, as.Annot, value, sp, df)
}

// unpack converts "a, b = value" as TVM's parser does (Python
// destructuring of the evaluated right-hand side): a tuple literal of the
// same length binds element by element (so "m, n = T.int64(), T.int64()"
// declares two symbolic variables); any other value is bound once, to a
// variable lv unless it is one already, and each name to a TupleGetItem of
// it.
func (bd *builder) unpack(target *ast, as *assignNode, value *ast, sp diag.Span, df *dataflowState) {
	for _, t := range target.Items {
		if t.Kind != aName {
			bd.fail(t.Span, "expected a variable name in the tuple assignment, found %s", t.describe())
		}
	}
	if as.Annot != nil {
		bd.fail(sp, "expected no annotation on a tuple assignment")
	}
	// Failed unpacking poisons every name so that their uses do not cascade.
	ok := false
	defer func() {
		if !ok {
			for _, t := range target.Items {
				bd.define(t.Name, &symbol{poison: true})
			}
		}
	}()
	if value.Kind == aTuple && !value.Paren {
		if len(value.Items) != len(target.Items) {
			bd.fail(value.Span, "cannot unpack %d values into %d names", len(value.Items), len(target.Items))
		}
		for i, t := range target.Items {
			bd.bindName(t, nil, value.Items[i], sp, df)
		}
		ok = true
		return
	}
	val := bd.relaxExpr(value)
	tup, isVar := val.(*ir.Var)
	if !isVar {
		tup = ir.NewVar("lv", nil)
		tup.Dataflow = df != nil
		tup.SetSpan(value.Span)
		bind := ir.NewVarBinding(tup, val)
		bind.SetSpan(sp)
		bd.rb.EmitBinding(bind)
	}
	if ti, isTuple := tup.StructInfo().(*ir.TupleInfo); isTuple && len(ti.Fields) != len(target.Items) {
		bd.fail(value.Span, "cannot unpack a tuple of %d fields into %d names", len(ti.Fields), len(target.Items))
	}
	for i, t := range target.Items {
		v := ir.NewVar(t.Name, nil)
		v.Dataflow = df != nil && !df.isOutput(t.Name)
		v.SetSpan(t.Span)
		item := &ir.TupleGetItem{Tuple: tup, Index: i}
		item.SetSpan(t.Span)
		bind := ir.NewVarBinding(v, item)
		bind.SetSpan(sp)
		bd.rb.EmitBinding(bind)
		bd.define(t.Name, &symbol{relax: v})
	}
	ok = true
}

// bindName converts "name (: annot)? = value".
func (bd *builder) bindName(target *ast, annot *exprNode, value *ast, sp diag.Span, df *dataflowState) {
	if target.Kind != aName {
		bd.fail(target.Span, "expected a variable name as the binding target, found %s", target.describe())
	}
	name := target.Name
	// Failed definitions poison the name so that its uses do not cascade.
	ok := false
	defer func() {
		if !ok {
			bd.define(name, &symbol{poison: true})
		}
	}()
	if dt, isDecl := symDecl(value); isDecl {
		if annot != nil {
			bd.fail(sp, "expected no annotation on the symbolic variable declaration %s", name)
		}
		if s := bd.lookup(name); s != nil && s.prim != nil {
			if s.prim.Type != dt {
				bd.fail(value.Span, "symbolic variable %s is %s, redeclared as %s", name, s.prim.Type, dt)
			}
			ok = true
			return
		}
		v := ir.NewPrimVar(name, dt)
		v.SetSpan(target.Span)
		bd.define(name, &symbol{prim: v})
		ok = true
		return
	}
	if value.Kind == aName && (value.Name == bd.modName || value.Name == "Module") && bd.lookup(value.Name) == nil {
		bd.define(name, &symbol{module: true})
		ok = true
		return
	}
	var ann ir.StructInfo
	if annot != nil {
		ann = bd.sinfo(bd.conv.expr(annot))
	}
	dataflow := df != nil && !df.isOutput(name)
	if value.callee() == "R.match_cast" {
		val, si := bd.matchCastArgs(value)
		v := ir.NewVar(name, ann)
		v.Dataflow = dataflow
		v.SetSpan(target.Span)
		mc := ir.NewMatchCast(v, val, si)
		mc.SetSpan(sp)
		bd.rb.EmitBinding(mc)
		bd.define(name, &symbol{relax: v})
		ok = true
		return
	}
	// An opaque call (a TVM op phasec has no schema for) takes its struct
	// info from the annotation.
	bd.declared, bd.declaredFor = ann, value
	val := bd.relaxExpr(value)
	bd.declared, bd.declaredFor = nil, nil
	v := bd.newVar(name, ann)
	v.Dataflow = dataflow
	v.SetSpan(target.Span)
	bd.rb.EmitVar(v, val, sp)
	bd.define(name, bd.newSymbol(symbol{relax: v}))
	ok = true
}

// symDecl recognizes "T.int64()" (a symbolic variable declaration) and
// returns its dtype.
func symDecl(a *ast) (ir.DataType, bool) {
	c := a.callee()
	if c == "T.Var" || c == "T.SizeVar" {
		// The IR node constructor T.Var("n", "int64") (also with
		// dtype=): a declaration like n = T.int64().
		if len(a.Items) == 2 && a.Items[1].Kind == aStr && (a.Keywords[1] == "" || a.Keywords[1] == "dtype") {
			if dt, err := ir.ParseDataType(a.Items[1].Text); err == nil && (dt.IsInteger() || dt.IsFloat() || dt.IsBool()) {
				return dt, true
			}
		}
		return ir.Void, false
	}
	if len(c) < 3 || c[:2] != "T." || len(a.Items) != 0 {
		return ir.Void, false
	}
	dt, err := ir.ParseDataType(c[2:])
	if err != nil || !(dt.IsInteger() || dt.IsFloat() || dt.IsBool()) {
		return ir.Void, false
	}
	return dt, true
}

// matchCastArgs converts the operands of R.match_cast(value, sinfo). String
// dimensions in the struct info may define new symbolic variables.
func (bd *builder) matchCastArgs(a *ast) (ir.Expr, ir.StructInfo) {
	if len(a.Items) != 2 || a.Keywords[0] != "" || a.Keywords[1] != "" {
		bd.fail(a.Span, "expected R.match_cast(value, struct_info), found %s", plural(len(a.Items), "argument"))
	}
	val := bd.relaxExpr(a.Items[0])
	saved := bd.sigDefines
	bd.sigDefines = true
	defer func() { bd.sigDefines = saved }()
	si := bd.sinfo(a.Items[1])
	return val, si
}

// relaxIf converts an if/else whose branches end by binding the same name:
// that name is bound to the If expression.
func (bd *builder) relaxIf(n *ifNode, fs *funcState, df *dataflowState) {
	sp := spanOf(n.Pos, n.Pos)
	// An if inside a dataflow block is accepted here: it is a
	// well-formedness error the checker reports with its own rule.
	if len(n.Elifs) > 0 {
		bd.fail(spanOf(n.Elifs[0].Pos, n.Elifs[0].Pos), "elif is not supported in Relax functions; nest an if inside else")
	}
	if n.Else == nil {
		bd.fail(sp, "expected an else branch: a Relax if must produce a value in both branches")
	}
	cond := bd.relaxExpr(bd.conv.expr(n.Cond))
	then := bd.relaxBranch(n.Then, fs, &branchTail{})
	els := bd.relaxBranch(n.Else, fs, &branchTail{})
	if then == nil || els == nil {
		bd.skip()
	}
	if then.resultName != els.resultName {
		bd.fail(els.resultSpan, "expected both branches to bind the same variable, found %s and %s", then.resultName, els.resultName)
	}
	ann := then.resultAnn
	if ann == nil {
		ann = els.resultAnn
	}
	ife := &ir.If{Cond: cond, Then: then.seq, Else: els.seq}
	ife.SetSpan(sp)
	v := ir.NewVar(then.resultName, ann)
	v.SetSpan(then.resultSpan)
	if df != nil {
		_, out := df.outputs[then.resultName]
		v.Dataflow = !out
	}
	bind := ir.NewVarBinding(v, ife)
	bind.SetSpan(sp)
	bd.rb.EmitBinding(bind)
	bd.define(then.resultName, &symbol{relax: v})
}

// relaxIfValue converts an if whose branches end with return (tail.returns)
// into the If expression itself.
func (bd *builder) relaxIfValue(n *ifNode, fs *funcState, tail *branchTail) ir.Expr {
	cond := bd.relaxExpr(bd.conv.expr(n.Cond))
	then := bd.relaxBranch(n.Then, fs, tail)
	els := bd.relaxBranch(n.Else, fs, tail)
	if then == nil || els == nil {
		bd.skip()
	}
	ife := &ir.If{Cond: cond, Then: then.seq, Else: els.seq}
	ife.SetSpan(spanOf(n.Pos, n.Pos))
	return ife
}

type branchResult struct {
	seq        *ir.SeqExpr
	resultName string
	resultAnn  ir.StructInfo
	resultSpan diag.Span
}

func (bd *builder) relaxBranch(s *suiteNode, fs *funcState, tail *branchTail) *branchResult {
	rb := bd.rb
	bd.push()
	defer bd.pop()
	rb.BeginInnerScope()
	body := bd.relaxBody(suiteStmts(s), fs, tail)
	result := body.result
	if result == nil {
		result = ir.NewTuple() // reported by branchResult
	}
	seq := rb.FinishScope(body.blocks, result)
	if body.result == nil {
		return nil
	}
	return &branchResult{seq: seq, resultName: body.resultName, resultAnn: body.resultAnn, resultSpan: body.resultSpan}
}

// localFunction converts a nested @R.function into a binding of a local
// function value.
func (bd *builder) localFunction(dn *decoratedNode, df *dataflowState) {
	d := bd.funcDecorators(dn)
	if !d.relax {
		bd.fail(d.span, "expected @R.function for a local function, found @T.prim_func (PrimFuncs belong at module level)")
	}
	if d.private {
		bd.fail(d.span, "private=True has no meaning on a local function")
	}
	sig := bd.relaxSignature(dn.Def)
	var v *ir.Var
	if sig.ret != nil {
		// Defined before the body so the function may call itself.
		v = ir.NewVar(dn.Def.Name, ir.NewFuncInfo(paramInfos(sig.params), sig.ret, d.pure))
		bd.define(dn.Def.Name, &symbol{relax: v})
	}
	f := bd.relaxFunction(dn.Def, sig, d.pure)
	if v == nil {
		v = ir.NewVar(dn.Def.Name, nil)
	}
	v.Dataflow = df != nil
	v.SetSpan(d.span)
	bind := ir.NewVarBinding(v, f)
	bind.SetSpan(d.span)
	bd.rb.EmitBinding(bind)
	bd.define(dn.Def.Name, &symbol{relax: v})
}

func paramInfos(params []*ir.Var) []ir.StructInfo {
	out := make([]ir.StructInfo, len(params))
	for i, p := range params {
		out[i] = p.StructInfo()
	}
	return out
}
