package syntax

import (
	"unicode"

	"github.com/phasec/phasec/diag"
	"github.com/phasec/phasec/ir"
)

// Relax functions: signatures, bodies (bindings, dataflow blocks, if/else,
// local functions, return) and Relax expressions.

// relaxSig is a converted Relax signature.
type relaxSig struct {
	params []*ir.Var
	ret    ir.StructInfo
	syms   map[string]*ir.PrimVar // symbolic variables the signature defines
}

// relaxSignature converts parameters and the return annotation. String
// dimensions define symbolic variables at their first use.
func (bd *builder) relaxSignature(def *defNode) *relaxSig {
	sig := &relaxSig{syms: map[string]*ir.PrimVar{}}
	bd.push()
	defer bd.pop()
	saved := bd.sigDefines
	bd.sigDefines = true
	defer func() { bd.sigDefines = saved }()
	// TVM defines every symbolic variable standing alone as a dimension of
	// some parameter before it reads the others, so ("n * 2",) may come
	// before ("n",).
	annots := make([]*ast, len(def.Params))
	for i, p := range def.Params {
		if p.Annot != nil {
			annots[i] = bd.conv.expr(p.Annot)
			bd.predefineSymbolicDims(annots[i])
		}
	}
	seen := map[string]diag.Span{} // parameter name -> where it is declared
	for i, p := range def.Params {
		sp := spanOf(p.Pos, p.EndPos)
		if p.Annot == nil {
			bd.fail(sp, "expected a struct info annotation on parameter %s (x: R.Tensor(...)), found none", p.Name)
		}
		if p.Default != nil {
			bd.fail(sp, "default values of parameters are not supported (parameter %s)", p.Name)
		}
		if first, dup := seen[p.Name]; dup {
			bd.failRelated(sp, []diag.Related{{Span: first, Msg: "parameter " + p.Name + " is first declared here"}}, "duplicate parameter %s", p.Name)
		}
		seen[p.Name] = sp
		si := bd.sinfo(annots[i])
		v := ir.NewVar(p.Name, si)
		v.SetSpan(sp)
		sig.params = append(sig.params, v)
	}
	if def.Ret != nil {
		sig.ret = bd.sinfo(bd.conv.expr(def.Ret))
	}
	bd.scope.each(func(n string, s *symbol) {
		if s.prim != nil {
			sig.syms[n] = s.prim
		}
	})
	return sig
}

// predefineSymbolicDims defines the symbolic variables that stand alone as
// string dimensions ("n") in the shapes of R.Tensor and R.Shape
// annotations inside a, in the order they appear.
func (bd *builder) predefineSymbolicDims(a *ast) {
	if a == nil {
		return
	}
	if c := a.callee(); a.Kind == aCall && (c == "R.Tensor" || c == "R.Shape") {
		shape := a.kwarg("shape")
		if shape == nil {
			shape = a.kwarg("values")
		}
		if shape == nil && len(a.Items) > 0 && a.Keywords[0] == "" {
			shape = a.Items[0]
		}
		if shape != nil && (shape.Kind == aTuple || shape.Kind == aList) {
			for _, d := range shape.Items {
				if d.Kind == aStr && isIdentifier(d.Text) && bd.lookup(d.Text) == nil {
					v := ir.SymVar(d.Text)
					v.SetSpan(d.Span)
					bd.define(d.Text, &symbol{prim: v})
				}
			}
		}
	}
	bd.predefineSymbolicDims(a.X)
	for _, it := range a.Items {
		bd.predefineSymbolicDims(it)
	}
}

func isIdentifier(s string) bool {
	for i, r := range s {
		if !(r == '_' || unicode.IsLetter(r) || i > 0 && unicode.IsDigit(r)) {
			return false
		}
	}
	return s != ""
}

func (bd *builder) declareRelaxFunc(d *funcDecl) {
	sig := bd.relaxSignature(d.def)
	d.sig = sig
	f := &ir.Function{Params: sig.params, Ret: sig.ret, Pure: d.pure, Body: ir.NewTuple()}
	f.SetSpan(d.span)
	bd.mod.Set(d.def.Name, f)
}

func (bd *builder) buildRelaxFunc(d *funcDecl) {
	if d.sig == nil {
		return // the signature failed and was reported
	}
	f := bd.relaxFunction(d.def, d.sig, d.pure)
	if _, has := f.Attrs[ir.AttrGlobalSymbol]; !d.private && !has {
		f.Attrs = f.Attrs.With(ir.AttrGlobalSymbol, d.def.Name)
	}
	bd.mod.Set(d.def.Name, f)
}

// relaxFunction builds a function body with a fresh ir.Builder (so that a
// failure inside cannot unbalance an enclosing builder) and normalizes it.
func (bd *builder) relaxFunction(def *defNode, sig *relaxSig, pure bool) *ir.Function {
	savedRB := bd.rb
	rb := ir.NewBuilder(bd.mod)
	bd.rb = rb
	bd.pushSized(len(sig.syms) + len(sig.params) + len(suiteStmts(def.Body)))
	defer func() {
		bd.pop()
		bd.rb = savedRB
		bd.diags = append(bd.diags, wellFormednessLeft(rb.Diagnostics())...)
	}()
	for n, v := range sig.syms {
		bd.define(n, &symbol{prim: v})
	}
	for _, p := range sig.params {
		bd.define(p.Name, &symbol{relax: p})
	}
	fs := &funcState{}
	rb.BeginScope(sig.params)
	neutralBefore := bd.neutralSeen
	body := bd.relaxBody(suiteStmts(def.Body), fs, nil)
	if body.result == nil {
		if bd.neutralSeen > neutralBefore {
			bd.skip() // the return may be what syntax recovery neutralized
		}
		bd.fail(spanOf(def.Pos, def.EndPos), "expected def %s to end with a return statement, found none", def.Name)
	}
	if body.failed {
		bd.skip() // normalizing a placeholder result would only add noise
	}
	seq := rb.FinishScope(body.blocks, body.result)
	f := &ir.Function{Params: sig.params, Body: seq, Ret: sig.ret, Pure: pure, Attrs: fs.attrs}
	f.SetSpan(spanOf(def.Pos, def.Pos))
	nf, ok := rb.Normalize(f).(*ir.Function)
	if !ok {
		bd.fail(spanOf(def.Pos, def.Pos), "internal: normalizing function %s did not give a function", def.Name)
	}
	return nf
}

// funcState is per-function state of the body conversion.
type funcState struct {
	attrs ir.Attrs
}

// bodyResult is what a statement list produced: its binding blocks and the
// value it ends with (a return value, or an if branch's last binding).
type bodyResult struct {
	blocks     []*ir.BindingBlock
	result     ir.Expr
	resultName string
	resultAnn  ir.StructInfo
	resultSpan diag.Span
	failed     bool // the return value failed to convert (reported)
}

// branchTail is non-nil when converting an if branch: the last statement
// must bind a value, which becomes the branch's result instead of a binding
// (or, with returns set, return it: the if is the function's result).
type branchTail struct {
	returns bool
}

// relaxBody converts a statement list. In a function (branch == nil) it
// must end with return; in an if branch it must end with an assignment whose
// value becomes the branch result.
func (bd *builder) relaxBody(stmts []*stmtNode, fs *funcState, branch *branchTail) *bodyResult {
	res := &bodyResult{}
	rb := bd.rb
	rb.BeginBlock(false)
	endBlock := func() {
		if blk := rb.EndBlock(); len(blk.Bindings) > 0 {
			res.blocks = append(res.blocks, blk)
		}
	}
	for i, st := range stmts {
		st = bd.materialize(st)
		last := i == len(stmts)-1
		if res.result != nil && st.Simple != nil && st.Simple.Return != nil {
			bd.errorf(spanOf(st.Pos, st.Pos), "expected one return statement, found a second one")
			continue
		}
		if res.result != nil {
			bd.errorf(spanOf(st.Pos, st.Pos), "expected the function to end at its return statement, found %s after it", stmtKind(st))
			break
		}
		switch {
		case st.With != nil && isDataflowWith(bd.conv.expr(st.With.Item)):
			endBlock()
			var ret *stmtNode
			if last && branch == nil {
				ret = trailingReturn(st.With)
			}
			if blk := bd.dataflowBlock(st.With, fs, ret); blk != nil {
				res.blocks = append(res.blocks, blk)
			}
			rb.BeginBlock(false)
			if ret != nil {
				// The function's return, written inside the block.
				bd.try(func() {
					a := bd.conv.exprList(ret.Simple.Return.Value)
					res.result, res.resultSpan = bd.relaxExpr(a), a.Span
				})
				if res.result == nil {
					res.result, res.failed = ir.NewTuple(), true
				}
			}
		case branch != nil && last:
			bd.try(func() { bd.branchResult(st, res, branch) })
		case branch == nil && last && st.If != nil && ifReturns(st.If):
			// An if whose branches both end with return is the function's
			// result: its value is returned.
			bd.try(func() {
				res.result = bd.relaxIfValue(st.If, fs, &branchTail{returns: true})
				res.resultSpan = spanOf(st.Pos, st.Pos)
			})
			if res.result == nil {
				res.result, res.failed = ir.NewTuple(), true
			}
		case st.Simple != nil && st.Simple.Return != nil:
			if branch != nil {
				bd.errorf(spanOf(st.Pos, st.Pos), "expected the if branch to end by binding a value, found a return statement")
				continue
			}
			bd.try(func() {
				r := st.Simple.Return
				if r.Value == nil {
					bd.fail(spanOf(st.Pos, st.EndPos), "expected a value after return, found none")
				}
				a := bd.conv.exprList(r.Value)
				res.result = bd.relaxExpr(a)
				res.resultSpan = a.Span
			})
			if res.result == nil {
				// Keep going so later statements are still checked, but
				// remember that the function has a (failed) return.
				res.result, res.failed = ir.NewTuple(), true
			}
		default:
			bd.try(func() { bd.relaxStmt(st, fs, nil) })
			stmts[i] = nil // converted once; see dataflowBlock
		}
	}
	endBlock()
	return res
}

// ifReturns reports whether both branches of an if end with a return.
func ifReturns(n *ifNode) bool {
	ends := func(s *suiteNode) bool {
		stmts := suiteStmts(s)
		if len(stmts) == 0 {
			return false
		}
		last := stmts[len(stmts)-1]
		return last.Simple != nil && last.Simple.Return != nil ||
			last.If != nil && last.If.Else != nil && len(last.If.Elifs) == 0 && ifReturns(last.If)
	}
	return n.Else != nil && len(n.Elifs) == 0 && ends(n.Then) && ends(n.Else)
}

// branchResult converts the last statement of an if branch: a binding
// (its value is the branch's result), an expression statement (as TVM's
// parser does, bound to _: its value must be void), or with tail.returns a
// return, or a nested if whose branches return.
func (bd *builder) branchResult(st *stmtNode, res *bodyResult, tail *branchTail) {
	if bd.neutralizedPass(st, true) {
		bd.skip()
	}
	sp := spanOf(st.Pos, st.EndPos)
	if tail.returns {
		switch {
		case st.Simple != nil && st.Simple.Return != nil:
			if st.Simple.Return.Value == nil {
				bd.fail(sp, "expected a value after return, found none")
			}
			a := bd.conv.exprList(st.Simple.Return.Value)
			res.result, res.resultSpan = bd.relaxExpr(a), a.Span
			return
		case st.If != nil:
			res.result, res.resultSpan = bd.relaxIfValue(st.If, nil, tail), spanOf(st.Pos, st.Pos)
			return
		}
	}
	if st.Simple != nil && st.Simple.Expr != nil && st.Simple.Expr.Value == nil && st.Simple.Expr.Annot == nil {
		a := bd.conv.exprList(st.Simple.Expr.Target)
		res.result = bd.voidValue(a)
		res.resultName, res.resultSpan = "_", sp
		return
	}
	if st.Simple == nil || st.Simple.Expr == nil || st.Simple.Expr.Value == nil {
		bd.fail(sp, "expected the if branch to end by binding a value (name = ...), found %s", stmtKind(st))
	}
	as := st.Simple.Expr
	target := bd.conv.exprList(as.Target)
	if target.Kind != aName {
		bd.fail(target.Span, "expected a name as the target of the branch result, found %s", target.describe())
	}
	res.resultName = target.Name
	res.resultSpan = sp
	if as.Annot != nil {
		res.resultAnn = bd.sinfo(bd.conv.expr(as.Annot))
	}
	res.result = bd.relaxExpr(bd.conv.exprList(as.Value))
}

func isDataflowWith(a *ast) bool { return a.callee() == "R.dataflow" }

// dataflowBlock converts "with R.dataflow(): ... R.output(a, b)". The
// output names are known before the block is converted so their bindings
// get non-dataflow vars; the block's other names go out of scope after it.
func (bd *builder) dataflowBlock(w *withNode, fs *funcState, ret *stmtNode) *ir.BindingBlock {
	rb := bd.rb
	stmts := suiteStmts(w.Body)
	outputs := map[string]diag.Span{}
	var outputOrder []string
	// implicit are the outputs a return inside the block makes: the names
	// its value uses, those the block defines becoming outputs.
	implicit := map[string]bool{}
	if ret != nil {
		stmts = stmts[:len(stmts)-1]
		for _, n := range namesUsed(bd.conv.exprList(ret.Simple.Return.Value)) {
			if _, dup := outputs[n.Name]; !dup {
				outputs[n.Name], implicit[n.Name] = n.Span, true
				outputOrder = append(outputOrder, n.Name)
			}
		}
	}
	outputAt := -1
	for i, st := range stmts {
		if st.Simple == nil || st.Simple.Expr == nil || st.Simple.Expr.Value != nil {
			continue
		}
		a := bd.conv.exprList(st.Simple.Expr.Target)
		if a.callee() != "R.output" {
			continue
		}
		if outputAt >= 0 {
			bd.errorf(a.Span, "expected one R.output(...) per dataflow block, found a second one")
			continue
		}
		outputAt = i
		for j, it := range a.Items {
			if it.Kind != aName || a.Keywords[j] != "" {
				bd.errorf(it.Span, "expected variable names in R.output(...), found %s", it.describe())
				continue
			}
			if implicit[it.Name] {
				delete(implicit, it.Name) // listed: an explicit output too
				continue
			}
			outputs[it.Name] = it.Span
			outputOrder = append(outputOrder, it.Name)
		}
	}
	if w.As != nil {
		bd.errorf(spanOf(w.Pos, w.Pos), "expected \"with R.dataflow():\", found \"with R.dataflow() as ...\"")
	}
	if outputAt >= 0 && outputAt != len(stmts)-1 {
		bd.errorf(spanOf(stmts[outputAt].Pos, stmts[outputAt].Pos), "expected R.output(...) to be the last statement of the dataflow block")
	}
	bd.pushSized(len(stmts))
	rb.BeginBlock(true)
	rb.ReserveBindings(len(stmts))
	df := &dataflowState{outputs: outputs}
	for i, st := range stmts {
		if i == outputAt {
			continue
		}
		st = bd.materialize(st)
		bd.try(func() { bd.relaxStmt(st, fs, df) })
		// Each statement is converted once: dropping its syntax lets the
		// collector reclaim the tree while the IR grows, which halves the
		// peak memory of a million-binding block.
		stmts[i] = nil
	}
	blk := rb.EndBlock()
	inner := bd.scope
	bd.pop()
	for _, n := range outputOrder {
		if s := inner.get(n); s != nil {
			bd.define(n, s)
		} else if !implicit[n] && bd.lookup(n) == nil {
			bd.errorf(outputs[n], "undefined variable %s in R.output%s", n, didYouMean(n, inner.sortedNames(), ""))
		}
	}
	if len(blk.Bindings) == 0 {
		return nil
	}
	return blk
}

// trailingReturn returns the return statement ending the body of the
// dataflow block w, or nil. TVM's parser accepts a function's return there
// and makes the block's variables it uses outputs (FuncRetValue,
// src/script/ir_builder/relax/ir.cc): TVM's test_tvmscript_parser.py
// checks it equals R.output(...) followed by the return.
func trailingReturn(w *withNode) *stmtNode {
	stmts := suiteStmts(w.Body)
	if len(stmts) == 0 {
		return nil
	}
	st := stmts[len(stmts)-1]
	if st.Simple == nil || st.Simple.Return == nil || st.Simple.Return.Value == nil {
		return nil
	}
	return st
}

// namesUsed lists the names an expression mentions, in order; a name the
// block does not define (R of R.add, a parameter) is not made an output.
func namesUsed(a *ast) []*ast {
	var out []*ast
	stack := []*ast{a}
	for len(stack) > 0 {
		a := stack[len(stack)-1]
		stack = stack[:len(stack)-1]
		if a == nil {
			continue
		}
		if a.Kind == aName {
			out = append(out, a)
			continue
		}
		// Pushed in reverse, so that names come out in source order.
		for k := len(a.Values) - 1; k >= 0; k-- {
			stack = append(stack, a.Values[k])
		}
		for k := len(a.Items) - 1; k >= 0; k-- {
			stack = append(stack, a.Items[k])
		}
		stack = append(stack, a.Y, a.X)
	}
	return out
}

// dataflowState carries the output names of the dataflow block being built.
type dataflowState struct {
	outputs map[string]diag.Span
}

// isOutput reports whether name is listed in the block's R.output(...).
func (df *dataflowState) isOutput(name string) bool {
	if df == nil {
		return false
	}
	_, out := df.outputs[name]
	return out
}

// wellFormednessLeft drops the normalizer's diagnostics that are questions
// of well-formedness rather than of reading the text: an annotation that
// contradicts the inferred struct info (ir.DiagAnnotation) and a call an
// op's contract rejects (ir.DiagValidate). The module keeps what was
// written (the annotation, the call), as TVM's parser does with
// check_well_formed=False, and phasec check reports them under their rule
// codes (WF017 binding info, WF013 return, WF015 op contract).
func wellFormednessLeft(list diag.List) diag.List {
	out := list[:0:0]
	for _, d := range list {
		if d.Code == ir.DiagAnnotation || d.Code == ir.DiagValidate {
			continue
		}
		out = append(out, d)
	}
	return out
}
