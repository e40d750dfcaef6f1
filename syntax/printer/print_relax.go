package printer

import (
	"strconv"

	"github.com/phasec/phasec/ir"
	"github.com/phasec/phasec/op"
)

// Relax functions, bindings and expressions.

// relaxScope is the state a top-level Relax function shares with the
// functions nested in it: one Python namespace.
type relaxScope struct {
	ns    *nameSpace
	vars  map[*ir.Var]string
	prims map[*ir.PrimVar]primDecl
	// usesCls is set when a global reference (cls.f) is printed, so the
	// top-level function gets its "cls = Module" line.
	usesCls bool
	// voidUsed holds the void-valued vars that are referenced: their
	// bindings cannot print as bare call statements.
	voidUsed map[*ir.Var]bool
	// scoped collects the names defined while an if branch or a nested
	// function is printed (nil at a function's top level): TVM's printer
	// gives each its own frame and frees the frame's names when it exits
	// (PrintSeqExpr and the function printer in src/script/printer/relax),
	// so both branches of an if may define "y".
	scoped *[]string
}

// inFrame runs print as one such frame and frees the names it defined.
func (p *printer) inFrame(print func()) {
	sc := p.fn.sc
	saved, savedRel := sc.scoped, sc.ns.releasable
	var names []string
	sc.scoped, sc.ns.releasable = &names, true
	print()
	for _, n := range names {
		sc.ns.release(n)
	}
	sc.scoped, sc.ns.releasable = saved, savedRel
}

type primDecl struct {
	name  string
	owner *relaxFrame
}

// relaxFrame is one (possibly nested) Relax function being printed.
type relaxFrame struct {
	parent *relaxFrame
	sc     *relaxScope
	// decls are the symbolic variables this function declares at the top of
	// its body, in order of first use.
	decls []*ir.PrimVar
}

func (p *printer) relaxFunc(name string, f *ir.Function, topLevel bool) {
	frame := &relaxFrame{parent: p.fn}
	if topLevel {
		nvars := countVars(f)
		frame.sc = &relaxScope{
			ns:       newNameSpaceSized(nvars),
			vars:     make(map[*ir.Var]string, nvars),
			prims:    map[*ir.PrimVar]primDecl{},
			voidUsed: usedVoidVars(f),
		}
	} else {
		frame.sc = p.fn.sc
	}
	p.fn = frame
	defer func() { p.fn = frame.parent }()

	attrs, private := visibleAttrs(name, f.Attrs, topLevel)
	p.decorator("R.function", private, !f.Pure, topLevel && p.mod.Unchecked[name])
	p.line()
	p.str("def ")
	p.str(name)
	p.byte('(')
	p.sig = true
	for i, v := range f.Params {
		if i > 0 {
			p.str(", ")
		}
		p.str(p.defineVar(v))
		p.str(": ")
		p.sinfo(v.StructInfo())
	}
	p.str(") -> ")
	ret := f.Ret
	if ret == nil && f.Body != nil {
		ret = f.Body.StructInfo()
	}
	p.sinfo(ret)
	p.sig = false
	p.str(":\n")

	// The body is printed aside first: printing it may declare symbolic
	// variables (and set usesCls), which print above it. A top-level body
	// is held in chunks (spill), a nested one, small, in one buffer that
	// goes into the enclosing body.
	saved := p.out
	if topLevel {
		p.out = make([]byte, 0, chunkCap)
		p.holding = true
	} else {
		p.out = make([]byte, 0, bytesPerBinding*countVars(f))
	}
	p.ind++
	p.body(f.Body)
	body := p.out
	p.out = saved
	var held [][]byte
	if topLevel {
		held, p.held, p.holding = p.held, nil, false
	}
	for _, v := range frame.decls {
		p.line()
		p.str(frame.sc.prims[v].name)
		p.str(" = T.")
		p.str(v.Type.String())
		p.str("()\n")
	}
	if len(attrs) > 0 {
		p.line()
		p.str("R.func_attr(")
		p.attrDict(attrs, "")
		p.str(")\n")
	}
	if topLevel && frame.sc.usesCls {
		p.line()
		p.str("cls = Module\n")
	}
	p.ind--
	if !topLevel {
		p.out = append(p.out, body...)
		return
	}
	p.flush()
	for _, c := range held {
		p.emit(c)
	}
	if p.emit(body) && cap(body) > cap(p.out) {
		p.out = body[:0]
	}
}

// defineVar gives v its unique printed name.
func (p *printer) defineVar(v *ir.Var) string {
	name := p.fn.sc.ns.fresh(v.Name)
	p.fn.sc.vars[v] = name
	if p.fn.sc.scoped != nil {
		*p.fn.sc.scoped = append(*p.fn.sc.scoped, name)
	}
	return name
}

// varName is the printed name of a use of v. A var used before (or without)
// its definition is ill-formed; it still gets a name, which the parser will
// report as undefined.
func (p *printer) varName(v *ir.Var) string {
	if p.fn == nil {
		return sanitizeName(v.Name)
	}
	if name, ok := p.fn.sc.vars[v]; ok {
		return name
	}
	return p.defineVar(v)
}

// relaxPrimName names a symbolic variable, declaring it in the current
// function on first use. In a signature it records in sigOwn whether the
// variable belongs to the function being printed.
func (p *printer) relaxPrimName(v *ir.PrimVar) string {
	f := p.fn
	if f == nil {
		return sanitizeName(v.Name)
	}
	if d, ok := f.sc.prims[v]; ok {
		if d.owner == f {
			p.sigOwn = true
		}
		return d.name
	}
	name := f.sc.ns.fresh(v.Name)
	f.sc.prims[v] = primDecl{name: name, owner: f}
	f.decls = append(f.decls, v)
	p.sigOwn = true
	return name
}

func (p *printer) body(e ir.Expr) {
	result := e
	if seq, ok := e.(*ir.SeqExpr); ok {
		p.blocks(seq.Blocks)
		result = seq.Body
	}
	p.line()
	p.str("return ")
	p.expr(result)
	p.nl()
}

func (p *printer) blocks(blocks []*ir.BindingBlock) {
	for _, b := range blocks {
		if !b.Dataflow {
			for _, bd := range b.Bindings {
				p.binding(bd, false)
				p.spillTop()
			}
			continue
		}
		p.line()
		p.str("with R.dataflow():\n")
		p.ind++
		var outputs []string
		for _, bd := range b.Bindings {
			p.binding(bd, true)
			if v := bd.BoundVar(); !v.Dataflow {
				outputs = append(outputs, p.fn.sc.vars[v])
			}
			p.spillTop()
		}
		p.line()
		p.str("R.output(")
		for i, o := range outputs {
			if i > 0 {
				p.str(", ")
			}
			p.str(o)
		}
		p.str(")\n")
		p.ind--
	}
}

// spillTop spills between the statements of a top-level function's body,
// where out is that body's text (a nested function's body is printed into
// a buffer of its own, which must stay whole).
func (p *printer) spillTop() {
	if p.fn.parent == nil {
		p.spill()
	}
}

func (p *printer) binding(b ir.Binding, inDataflow bool) {
	switch b := b.(type) {
	case *ir.VarBinding:
		switch v := b.Value.(type) {
		case *ir.If:
			p.ifBinding(b.Var, v)
			return
		case *ir.Function:
			name := p.defineVar(b.Var)
			p.inFrame(func() { p.relaxFunc(name, v, false) })
			p.nl() // the empty line that ends every printed function
			return
		}
		if !inDataflow && isVoid(b.Var.StructInfo()) && isVoid(b.Value.StructInfo()) && !p.fn.sc.voidUsed[b.Var] {
			// A void call statement: TVM prints it bare, and the parser
			// turns a bare call back into a "_" binding.
			p.line()
			p.expr(b.Value)
			p.nl()
			return
		}
		p.line()
		p.str(p.defineVar(b.Var))
		if annotateBinding(b.Var, b.Value) || declaresOpaque(b.Value) {
			p.str(": ")
			p.sinfo(b.Var.StructInfo())
		}
		p.str(" = ")
		p.expr(b.Value)
		p.nl()
	case *ir.MatchCast:
		p.line()
		p.str(p.defineVar(b.Var))
		if b.Var.StructInfo() != nil {
			p.str(": ")
			p.sinfo(b.Var.StructInfo())
		}
		p.str(" = R.match_cast(")
		p.expr(b.Value)
		p.str(", ")
		p.sinfo(b.SInfo)
		p.str(")\n")
	}
}

// ifBinding prints "v = If(c, a, b)" as a Python if statement whose branches
// both end by binding v.
func (p *printer) ifBinding(v *ir.Var, e *ir.If) {
	name := p.defineVar(v)
	ann := annotateBinding(v, e)
	p.line()
	p.str("if ")
	p.expr(e.Cond)
	p.str(":\n")
	p.ind++
	p.inFrame(func() { p.branch(e.Then, name, v, ann) })
	p.ind--
	p.line()
	p.str("else:\n")
	p.ind++
	p.inFrame(func() { p.branch(e.Else, name, v, ann) })
	p.ind--
}

func (p *printer) branch(e ir.Expr, name string, v *ir.Var, ann bool) {
	result := e
	if seq, ok := e.(*ir.SeqExpr); ok {
		p.blocks(seq.Blocks)
		result = seq.Body
	}
	p.line()
	p.str(name)
	if ann {
		p.str(": ")
		p.sinfo(v.StructInfo())
	}
	p.str(" = ")
	p.expr(result)
	p.nl()
}

// annotateBinding reports whether a binding spells its var's struct info.
// TVM v0.23 prints with show_all_struct_info=True by default
// (python/tvm/runtime/script_printer.py; StructInfoAsAnn in
// src/script/printer/relax/utils.h): every binding is annotated, except a
// call_tir or call_dps_packed whose var has exactly the struct info its
// out_sinfo gives.
func annotateBinding(v *ir.Var, value ir.Expr) bool {
	if v.StructInfo() == nil {
		return false
	}
	if c, ok := value.(*ir.Call); ok && (c.Op == ir.Expr(op.CallTIR) || c.Op == ir.Expr(op.CallDPSPacked)) {
		return needAnnotation(v.StructInfo(), value.StructInfo())
	}
	if hasNegativeDim(v.StructInfo()) {
		// An annotation with a negative extent does not parse (see
		// syntax.dims); an inferred one is left to inference.
		return needAnnotation(v.StructInfo(), value.StructInfo())
	}
	return true
}

// hasNegativeDim reports whether s (or a tuple field) has a constant
// negative dimension.
func hasNegativeDim(s ir.StructInfo) bool {
	var dims []ir.PrimExpr
	switch x := s.(type) {
	case *ir.TensorInfo:
		dims, _ = x.Dims()
	case *ir.ShapeInfo:
		dims = x.Values
	case *ir.TupleInfo:
		for _, f := range x.Fields {
			if hasNegativeDim(f) {
				return true
			}
		}
	}
	for _, d := range dims {
		if v, ok := ir.IntValue(d); ok && v < 0 {
			return true
		}
	}
	return false
}

// needAnnotation reports whether a var's struct info differs from what the
// value's inference gives.
func needAnnotation(varInfo, valueInfo ir.StructInfo) bool {
	switch {
	case varInfo == nil:
		return false
	case valueInfo == nil:
		return true
	case varInfo == valueInfo:
		return false
	}
	return !ir.StructuralEqual(varInfo, valueInfo, ir.EqualOptions{})
}

func isVoid(s ir.StructInfo) bool {
	t, ok := s.(*ir.TupleInfo)
	return ok && len(t.Fields) == 0
}

func (p *printer) expr(e ir.Expr) {
	switch x := e.(type) {
	case *ir.Var:
		p.str(p.varName(x))
	case *ir.GlobalVar:
		if p.fn != nil {
			p.fn.sc.usesCls = true
		}
		p.str("cls.")
		p.str(x.Name)
	case *ir.ExternFunc:
		p.str("R.ExternFunc(")
		p.quote(x.Symbol)
		p.byte(')')
	case *ir.Op:
		p.str(ir.OpPath(x))
	case *ir.Constant:
		p.constant(x)
	case *ir.ShapeExpr:
		p.str("R.shape([")
		p.relaxPrims(x.Values)
		p.str("])")
	case *ir.PrimValue:
		p.str("R.prim_value(")
		p.relaxPrim(x.Value)
		p.byte(')')
	case *ir.StringImm:
		p.str("R.str(")
		p.quote(x.Value)
		p.byte(')')
	case *ir.DataTypeImm:
		p.str("R.dtype(")
		p.quote(x.Value.String())
		p.byte(')')
	case *ir.Tuple:
		if len(x.Fields) == 0 {
			// TVM prints the empty tuple as a call, not "()"
			// (src/script/printer/relax/tuple.cc).
			p.str("R.tuple()")
			return
		}
		p.byte('(')
		p.exprList(x.Fields)
		if len(x.Fields) == 1 {
			p.byte(',')
		}
		p.byte(')')
	case *ir.TupleGetItem:
		p.expr(x.Tuple)
		p.byte('[')
		p.out = strconv.AppendInt(p.out, int64(x.Index), 10)
		p.byte(']')
	case *ir.Call:
		p.call(x)
	case nil:
		p.str("None")
	default:
		// If, SeqExpr and Function only occur as binding values or
		// bodies in normalized IR; elsewhere they have no spelling.
		p.str("<unprintable ")
		p.str(ir.FormatExpr(e, nil))
		p.byte('>')
	}
}

func (p *printer) exprList(l []ir.Expr) {
	for i, a := range l {
		if i > 0 {
			p.str(", ")
		}
		p.expr(a)
	}
}

func (p *printer) call(c *ir.Call) {
	switch op := c.Op.(type) {
	case *ir.Op:
		p.opCall(op, c)
	case *ir.ExternFunc:
		// A call of an extern function is what R.call_packed builds.
		p.str("R.call_packed(")
		p.quote(op.Symbol)
		for _, a := range c.Args {
			p.str(", ")
			p.expr(a)
		}
		if len(c.SInfoArgs) > 0 {
			p.str(", ")
			p.sinfoArgs(c.SInfoArgs)
		}
		p.byte(')')
	default:
		p.expr(c.Op)
		p.byte('(')
		p.exprList(c.Args)
		p.byte(')')
	}
}

// opCall prints a call of a registered op, guided by its schema: argument
// parameters positionally (an extern callee as its string), attributes as
// keywords in schema order, and the explicit output struct info. The
// call_tir family prints as TVM does: callee and argument tuple positionally,
// then out_sinfo=, attributes (inplace_indices=), and the optional trailing
// arguments by keyword (tir_vars=).
func (p *printer) opCall(op *ir.Op, c *ir.Call) {
	if op == opHintOnDevice {
		p.hintOnDevice(c)
		return
	}
	if op == opPrint || op == opAssert {
		p.formatCall(op, c)
		return
	}
	p.str(ir.OpPath(op))
	p.byte('(')
	externPos := -1
	if i := op.ExternCalleeParam(); i >= 0 {
		externPos = op.ArgPosition(op.Params[i].Name)
	} else if len(op.Params) == 0 && (op.Category == ir.CatPacked || op.Category == ir.CatCall) {
		externPos = 0 // no schema: the call_* family takes its callee first
	}
	dps := op.SInfoArgs == ir.OutSInfo
	sep := false
	comma := func() {
		if sep {
			p.str(", ")
		}
		sep = true
	}
	nPos := len(c.Args)
	if dps && nPos > 2 {
		nPos = 2
	}
	for i := 0; i < nPos; i++ {
		comma()
		if ef, ok := c.Args[i].(*ir.ExternFunc); ok && i == externPos {
			p.quote(ef.Symbol)
			continue
		}
		p.expr(c.Args[i])
	}
	if dps && len(c.SInfoArgs) > 0 {
		comma()
		p.str("out_sinfo=")
		if len(c.SInfoArgs) == 1 {
			if t, ok := c.SInfoArgs[0].(*ir.TupleInfo); ok && len(t.Fields) > 0 {
				p.byte('[')
				p.sinfoList(t.Fields)
				p.byte(']')
			} else {
				p.sinfo(c.SInfoArgs[0])
			}
		} else {
			p.byte('[')
			p.sinfoList(c.SInfoArgs)
			p.byte(']')
		}
	}
	p.callAttrs(op, c.Attrs, comma)
	var argParams []ir.Param
	if nPos < len(c.Args) {
		argParams = op.ArgParams()
	}
	for i := nPos; i < len(c.Args); i++ {
		comma()
		if i < len(argParams) {
			p.str(argParams[i].Name)
		} else {
			p.str("arg")
			p.out = strconv.AppendInt(p.out, int64(i), 10)
		}
		p.byte('=')
		p.expr(c.Args[i])
	}
	if !dps && len(c.SInfoArgs) > 0 && !op.Opaque {
		comma()
		p.sinfoArgs(c.SInfoArgs)
	}
	p.byte(')')
}

// declaresOpaque reports whether e is an opaque call whose struct info was
// declared by its binding's annotation, which must then be printed.
func declaresOpaque(e ir.Expr) bool {
	c, ok := e.(*ir.Call)
	if !ok {
		return false
	}
	op, ok := c.Op.(*ir.Op)
	return ok && op.Opaque && len(c.SInfoArgs) > 0
}

// callAttrs prints a call's attributes as keywords: schema attributes in
// schema order, then any others in sorted order.
func (p *printer) callAttrs(op *ir.Op, attrs ir.Attrs, comma func()) {
	done := 0
	for _, prm := range op.Params {
		if !prm.Kind.IsAttr() {
			continue
		}
		v, ok := attrs[prm.Name]
		if !ok && !prm.PrintNone {
			continue
		}
		if !ok {
			comma()
			p.str(prm.Name)
			p.str("=None")
			continue
		}
		comma()
		p.str(prm.Name)
		p.byte('=')
		p.attrValue(v)
		done++
	}
	if done == len(attrs) {
		return
	}
	for _, k := range attrs.Keys() {
		if i := op.ParamIndex(k); i >= 0 && op.Params[i].Kind.IsAttr() {
			continue
		}
		comma()
		p.str(k)
		p.byte('=')
		p.attrValue(attrs[k])
	}
}

func (p *printer) sinfoArgs(l []ir.StructInfo) {
	p.str("sinfo_args=(")
	p.sinfoList(l)
	if len(l) == 1 {
		p.byte(',')
	}
	p.byte(')')
}

// bytesPerBinding is a typical printed binding's size (a call with a few
// operands), to size the body buffer once.
const bytesPerBinding = 48

// countVars estimates the names a function defines (its top-level
// parameters and bindings), to size the name tables once.
func countVars(f *ir.Function) int {
	n := len(f.Params)
	if seq, ok := f.Body.(*ir.SeqExpr); ok {
		for _, b := range seq.Blocks {
			n += len(b.Bindings)
		}
	}
	return n
}

// usedVoidVars returns the void-typed vars referenced anywhere in f
// (nested functions included).
func usedVoidVars(f *ir.Function) map[*ir.Var]bool {
	used := map[*ir.Var]bool{}
	var visit func(e ir.Expr)
	visit = func(e ir.Expr) {
		switch x := e.(type) {
		case *ir.Var:
			if isVoid(x.StructInfo()) {
				used[x] = true
			}
		case *ir.Tuple:
			for _, f := range x.Fields {
				visit(f)
			}
		case *ir.TupleGetItem:
			visit(x.Tuple)
		case *ir.Call:
			visit(x.Op)
			for _, a := range x.Args {
				visit(a)
			}
		case *ir.If:
			visit(x.Cond)
			visit(x.Then)
			visit(x.Else)
		case *ir.SeqExpr:
			for _, b := range x.Blocks {
				for _, bd := range b.Bindings {
					switch bd := bd.(type) {
					case *ir.VarBinding:
						visit(bd.Value)
					case *ir.MatchCast:
						visit(bd.Value)
					}
				}
			}
			visit(x.Body)
		case *ir.Function:
			visit(x.Body)
		}
	}
	visit(f.Body)
	return used
}

var opPrint, opAssert = op.Print, op.Assert

// formatCall prints R.print and R.assert_op as TVM's PrintRelaxPrint and
// PrintAssertOp do (src/script/printer/relax/call.cc): the values flat
// after the condition, then the format string as format=R.str(...), its
// form as a Relax argument. TVM would also print two or more assert_op
// values flat, which its own Python signature
// assert_op(condition, format_args=None, format="") cannot read back; they
// print as the tuple that signature takes.
func (p *printer) formatCall(o *ir.Op, c *ir.Call) {
	p.str(ir.OpPath(o))
	p.byte('(')
	values := c.Args
	if o == opAssert && len(c.Args) == 2 {
		p.expr(c.Args[0])
		values = nil
		if t, ok := c.Args[1].(*ir.Tuple); ok && len(t.Fields) <= 1 {
			values = t.Fields
		} else {
			values = c.Args[1:]
		}
		if len(values) > 0 {
			p.str(", ")
		}
	}
	p.exprList(values)
	if len(c.Args) > 0 {
		p.str(", ")
	}
	p.str("format=R.str(")
	format, _ := c.Attrs["format"].(string)
	p.quote(format)
	p.str("))")
}
