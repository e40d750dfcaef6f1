package syntax

import (
	"slices"
	"strconv"
	"strings"

	"github.com/phasec/phasec/diag"
	"github.com/phasec/phasec/ir"
)

// TIR PrimFuncs: parameters (T.Buffer, T.handle + T.match_buffer, scalars),
// loops, blocks, stores, lets, if/else and evaluation statements.

// tirState is the state of the PrimFunc being built.
type tirState struct {
	params    []*ir.PrimVar
	bufferMap map[*ir.PrimVar]*ir.Buffer
	attrs     ir.Attrs
	rootAlloc []*ir.Buffer
	// ptrScope is the storage scope of the memory each handle defined by
	// T.allocate or T.decl_buffer points to ("" for global).
	ptrScope map[*ir.PrimVar]string
	// allocs is where T.alloc_buffer puts buffers: the innermost block's
	// list, or rootAlloc at function level.
	allocs *[]*ir.Buffer
	depth  int // statement nesting (0: function body)
}

func (bd *builder) buildPrimFunc(d *funcDecl) {
	st := &tirState{bufferMap: map[*ir.PrimVar]*ir.Buffer{}, ptrScope: map[*ir.PrimVar]string{}}
	st.allocs = &st.rootAlloc
	savedInt, savedTIR := bd.intType, bd.tir
	bd.intType, bd.tir = ir.Int32, st
	bd.push()
	defer func() {
		bd.pop()
		bd.intType, bd.tir = savedInt, savedTIR
	}()
	def := d.def
	for _, p := range def.Params {
		bd.try(func() { bd.tirParam(p, st) })
	}
	ret := ir.Void
	if def.Ret != nil {
		ret = bd.tirType(bd.conv.expr(def.Ret), true)
	}
	body := bd.tirStmts(suiteStmts(def.Body))
	if len(st.rootAlloc) > 0 {
		// Buffers allocated at function level live in an implicit root block.
		blk := &ir.Block{Name: "root", Body: body, AllocBuffers: st.rootAlloc}
		blk.Reads, blk.Writes = []ir.BufferRegion{}, []ir.BufferRegion{}
		body = &ir.BlockRealize{IterValues: []ir.PrimExpr{}, Block: blk}
	}
	f := &ir.PrimFunc{Params: st.params, BufferMap: st.bufferMap, Body: body, Ret: ret, Attrs: st.attrs}
	f.SetSpan(d.span)
	if _, has := f.Attrs[ir.AttrGlobalSymbol]; !d.private && !has {
		f.Attrs = f.Attrs.With(ir.AttrGlobalSymbol, def.Name)
	}
	bd.mod.Set(def.Name, f)
}

// tirType converts a type annotation: T.int64, T.float32(), T.handle, None.
func (bd *builder) tirType(a *ast, allowVoid bool) ir.DataType {
	if allowVoid && isNone(a) {
		return ir.Void
	}
	name, ok := a.Dotted()
	if !ok && a.Kind == aCall && len(a.Items) == 0 {
		name, ok = a.X.Dotted()
	}
	if t, found := strings.CutPrefix(name, "T."); ok && found {
		if dt, err := ir.ParseDataType(t); err == nil && t != "" && t != "void" {
			return dt
		}
		bd.fail(a.Span, "unknown TIR type %s%s", name, didYouMean(name, primTypeNames(), ""))
	}
	bd.fail(a.Span, "expected a TIR type such as T.int64 or T.handle, found %s", a.describe())
	return ir.Void
}

func primTypeNames() []string {
	out := make([]string, 0, len(knownDTypes))
	for _, d := range knownDTypes {
		out = append(out, "T."+d)
	}
	return append(out, "T.Buffer")
}

func (bd *builder) tirParam(p *paramNode, st *tirState) {
	sp := spanOf(p.Pos, p.EndPos)
	if p.Annot == nil {
		bd.fail(sp, "expected a type on parameter %s (T.Buffer(...), T.handle or T.int64), found none", p.Name)
	}
	if bd.lookup(p.Name) != nil {
		bd.fail(sp, "duplicate parameter %s", p.Name)
	}
	ok := false
	defer func() {
		if !ok {
			bd.define(p.Name, &symbol{poison: true})
		}
	}()
	a := bd.conv.expr(p.Annot)
	if c := a.callee(); c == "T.Buffer" || c == "tirx.Buffer" {
		saved := bd.sigDefines
		bd.sigDefines = true
		buf := bd.bufferDecl(a, p.Name)
		bd.sigDefines = saved
		// TVM's T.arg names the handle of a buffer parameter <name>_handle.
		h := ir.NewPrimVar(p.Name+"_handle", ir.Handle)
		h.SetSpan(sp)
		st.params = append(st.params, h)
		st.bufferMap[h] = buf
		bd.define(p.Name, &symbol{buf: buf})
		ok = true
		return
	}
	dt := bd.tirType(a, false)
	v := ir.NewPrimVar(p.Name, dt)
	v.SetSpan(sp)
	st.params = append(st.params, v)
	bd.define(p.Name, &symbol{prim: v})
	ok = true
}

// bufferDecl converts the arguments of T.Buffer / T.match_buffer (after the
// handle) / T.alloc_buffer: shape (a tuple or one int), dtype (default
// float32), scope; layout keywords that do not change the model are
// accepted and ignored.
func (bd *builder) bufferDecl(a *ast, name string) *ir.Buffer {
	buf, _ := bd.bufferDeclData(a, name)
	return buf
}

// bufferDeclData is bufferDecl that also reports whether the buffer views
// an existing handle (data=, accepted in T.decl_buffer).
func (bd *builder) bufferDeclData(a *ast, name string) (*ir.Buffer, bool) {
	call := a
	if a.callee() == "T.match_buffer" {
		if len(a.Items) == 0 {
			bd.fail(a.Span, "expected T.match_buffer(param, shape, dtype)")
		}
		// The handle parameter is the caller's business.
		call = &ast{Kind: aCall, X: a.X, Items: a.Items[1:], Keywords: a.Keywords[1:], Span: a.Span}
	}
	var shape, dtype, data, strides, elemOffset, scope, align, offsetFactor, bufferType, axisSeps *ast
	bd.bindArgs(call, bufferParams, &shape, &dtype, &data, &strides, &elemOffset, &scope, &align, &offsetFactor, &bufferType, &axisSeps)
	if data != nil && !isNone(data) && a.callee() != "T.decl_buffer" && !((a.callee() == "T.Buffer" || a.callee() == "T.buffer") && !bd.sigDefines) {
		bd.fail(data.Span, "data= is only supported in T.decl_buffer and T.Buffer in a body")
	}
	if data != nil && isNone(data) {
		data = nil
	}
	if shape == nil {
		bd.fail(a.Span, "missing required argument shape of %s", a.callee())
	}
	var dims []ir.PrimExpr
	switch shape.Kind {
	case aTuple, aList:
		for _, it := range shape.Items {
			dims = append(dims, bd.tirDim(it))
		}
	default:
		dims = []ir.PrimExpr{bd.tirDim(shape)}
	}
	if dims == nil {
		dims = []ir.PrimExpr{}
	}
	dt := ir.Float32
	if dtype != nil {
		dt = bd.dtypeLiteral(dtype)
	}
	buf := ir.NewBuffer(name, dims, dt)
	if scope != nil {
		if scope.Kind != aStr {
			bd.fail(scope.Span, "expected a scope string, found %s", scope.describe())
		}
		if scope.Text != "global" {
			buf.Scope = scope.Text
		}
	}
	if data != nil {
		// TVM's BufferDecl takes the handle as is: the buffer's scope is
		// the one its memory was allocated in, whatever scope= says.
		buf.Data, buf.Scope = bd.dataHandle(data)
	}
	bd.bufferLayout(buf, name, strides, elemOffset, align, offsetFactor, bufferType, axisSeps)
	buf.SetSpan(a.Span)
	return buf, data != nil
}

// bufferParams are the parameters of T.Buffer, T.alloc_buffer,
// T.decl_buffer and (after the handle) T.match_buffer, in TVM's order.
var bufferParams = []string{"shape", "dtype", "data", "strides", "elem_offset", "scope", "align", "offset_factor", "buffer_type", "axis_separators"}

// bufferLayout sets the layout arguments of a buffer declaration as TVM's
// BufferDecl and Buffer constructor do (src/script/ir_builder/tir/ir.cc,
// src/tir/ir/buffer.cc): strides given as strings declare variables of the
// index type; without elem_offset, a nonzero offset_factor creates the
// element offset variable; align and offset_factor at or below 0 are the
// defaults.
func (bd *builder) bufferLayout(buf *ir.Buffer, name string, strides, elemOffset, align, offsetFactor, bufferType, axisSeps *ast) {
	index := ir.Int32
	if len(buf.Shape) > 0 {
		index = buf.Shape[0].DType()
	}
	if strides != nil && !isNone(strides) {
		items := []*ast{strides}
		if strides.Kind == aList || strides.Kind == aTuple {
			items = strides.Items
		}
		for _, it := range items {
			if it.Kind == aStr {
				v := ir.NewPrimVar(it.Text, index)
				v.SetSpan(it.Span)
				buf.Strides = append(buf.Strides, v)
				continue
			}
			buf.Strides = append(buf.Strides, bd.adapt(bd.prim(it), isLiteral(it), index))
		}
		if len(buf.Strides) != len(buf.Shape) {
			bd.fail(strides.Span, "buffer %s has %s but %s", name, plural(len(buf.Shape), "dimension"), plural(len(buf.Strides), "stride"))
		}
	}
	if align != nil && !isNone(align) {
		buf.Align = max(bd.intLiteral(align), 0)
	}
	if offsetFactor != nil && !isNone(offsetFactor) {
		buf.OffsetFactor = max(bd.intLiteral(offsetFactor), 0)
	}
	switch {
	case elemOffset != nil && !isNone(elemOffset):
		buf.ElemOffset = bd.adapt(bd.prim(elemOffset), isLiteral(elemOffset), index)
		if v, ok := ir.IntValue(buf.ElemOffset); ok && v == 0 {
			buf.ElemOffset = nil
		}
	case buf.OffsetFactor != 0:
		v := ir.NewPrimVar(name+"_elem_offset", index)
		buf.ElemOffset = v
	}
	if bufferType != nil && !isNone(bufferType) {
		if bufferType.Kind != aStr || bufferType.Text != "auto" && bufferType.Text != "default" && bufferType.Text != "" {
			bd.fail(bufferType.Span, "buffer_type is \"default\" or \"auto\", found %s", bufferType.describe())
		}
		buf.AutoBroadcast = bufferType.Text == "auto"
		if buf.AutoBroadcast && len(buf.Strides) == 0 {
			// TVM's Buffer constructor gives an auto-broadcast buffer a
			// stride variable per dimension.
			for _, d := range buf.Shape {
				buf.Strides = append(buf.Strides, ir.NewPrimVar("stride", d.DType()))
			}
		}
	}
	if axisSeps != nil && !isNone(axisSeps) {
		if axisSeps.Kind != aList && axisSeps.Kind != aTuple {
			bd.fail(axisSeps.Span, "expected a list of axis separators, found %s", axisSeps.describe())
		}
		for _, it := range axisSeps.Items {
			buf.AxisSeparators = append(buf.AxisSeparators, bd.intLiteral(it))
		}
	}
}

// tirDim converts a buffer dimension in the TIR context (int literals are
// int32).
func (bd *builder) tirDim(a *ast) ir.PrimExpr {
	if a.Kind == aStr {
		return bd.dim(a)
	}
	return bd.prim(a)
}

// tirStmts converts a statement list. A let ("x = value") scopes over the
// rest of the list; nested lets are folded iteratively, so deep chains do
// not recurse.
func (bd *builder) tirStmts(stmts []*stmtNode) ir.Stmt {
	type letFrame struct {
		before []ir.Stmt
		let    ir.Stmt // a *ir.LetStmt or *ir.AttrStmt
	}
	var frames []letFrame
	var cur []ir.Stmt
	bd.push()
	defer bd.pop()
	for _, st := range stmts {
		bd.try(func() {
			s, let := bd.tirStmt(st)
			if let != nil {
				frames = append(frames, letFrame{before: cur, let: let})
				cur = nil
				return
			}
			if s != nil {
				cur = append(cur, s)
			}
		})
	}
	body := seqOf(cur)
	for i := len(frames) - 1; i >= 0; i-- {
		fillBody(frames[i].let, body)
		body = seqOf(append(frames[i].before, frames[i].let))
	}
	return body
}

// seqOf is TVM's SeqStmt::Flatten for a statement list: one statement
// stands alone, and an empty list is the no-op T.evaluate(0) (TVM's IR
// forbids an empty SeqStmt, and the printer writes a no-op that way, so a
// block with no body reads back as the module it printed).
func seqOf(stmts []ir.Stmt) ir.Stmt {
	switch len(stmts) {
	case 0:
		return &ir.Evaluate{Value: ir.NewInt(ir.Int32, 0)}
	case 1:
		return stmts[0]
	}
	return &ir.SeqStmt{Stmts: stmts}
}

// tirStmt converts one statement. Declarations (symbolic variables,
// buffers, attributes) yield nothing; a let or a concise thread launch
// yields the LetStmt or AttrStmt whose body (the rest of the list) the
// caller fills.
func (bd *builder) tirStmt(st *stmtNode) (ir.Stmt, ir.Stmt) {
	sp := spanOf(st.Pos, st.EndPos)
	switch {
	case st.Simple != nil && st.Simple.Pass:
		bd.neutralizedPass(st, false)
		return nil, nil
	case st.Simple != nil && st.Simple.Return != nil:
		bd.fail(sp, "expected T.ret(value) to return from a PrimFunc, found return")
	case st.Simple != nil:
		return bd.tirSimple(st.Simple.Expr, sp)
	case st.For != nil:
		return bd.tirFor(st.For), nil
	case st.If != nil:
		return bd.tirIf(st.If), nil
	case st.With != nil:
		return bd.tirWith(st.With), nil
	}
	bd.fail(sp, "expected a TIR statement, found %s", stmtKind(st))
	return nil, nil
}

func (bd *builder) tirBody(s *suiteNode) ir.Stmt {
	bd.tir.depth++
	defer func() { bd.tir.depth-- }()
	return bd.tirStmts(suiteStmts(s))
}

func (bd *builder) tirSimple(as *assignNode, sp diag.Span) (ir.Stmt, ir.Stmt) {
	st := bd.tir
	target := bd.conv.exprList(as.Target)
	if as.Value == nil {
		if as.Annot != nil {
			bd.fail(sp, "expected \"= value\" after the annotation")
		}
		if target.callee() == "T.launch_thread" {
			s := bd.launchThread(target, nil)
			s.SetSpan(sp)
			return nil, s // T.launch_thread(env_var, n) scopes over the rest
		}
		if target.callee() == "T.attr" {
			s := bd.attrStmt(target)
			s.SetSpan(sp)
			return nil, s // scopes over the rest of the list
		}
		return bd.tirExprStmt(target), nil
	}
	value := bd.conv.exprList(as.Value)
	if target.Kind == aIndex {
		buf := bd.bufferOf(target.X)
		idx := bd.indices(target, buf)
		v := bd.adapt(bd.prim(value), isLiteral(value), buf.DType)
		if vt := v.DType(); vt != buf.DType && vt.IsScalar() && buf.DType.IsScalar() && !buf.DType.IsHandle() && !buf.DType.IsVoid() {
			// TVM rejects this store too; accepting it let T.int32(5) into
			// an int64 buffer print as a bare 5 that re-parses as int64.
			bd.errorf(value.Span, "cannot store a value of dtype %s into buffer %s of dtype %s (convert it with T.Cast)", vt, buf.Name, buf.DType)
		}
		s := &ir.BufferStore{Buffer: buf, Indices: idx, Value: v}
		if want, got := (&ir.BufferLoad{Buffer: buf, Indices: idx}).DType().Lanes, v.DType().Lanes; max(want, 1) != max(got, 1) {
			// TVM's BufferStore constructor (src/tir/ir/stmt.cc) checks it.
			bd.errorf(value.Span, "cannot store a value of %d lanes into %s[...], which holds %d lanes (index lanes times buffer element lanes)", max(got, 1), buf.Name, max(want, 1))
		}
		s.SetSpan(sp)
		return s, nil
	}
	if target.Kind == aTuple {
		// m, n = T.int64(), T.int64(): several symbolic variables at once.
		if value.Kind == aTuple && !value.Paren && len(value.Items) == len(target.Items) {
			decls := make([]ir.DataType, len(target.Items))
			all := true
			for i, t := range target.Items {
				dt, isDecl := symDecl(value.Items[i])
				all = all && isDecl && t.Kind == aName
				decls[i] = dt
			}
			if all {
				for i, t := range target.Items {
					v := ir.NewPrimVar(t.Name, decls[i])
					v.SetSpan(t.Span)
					bd.define(t.Name, &symbol{prim: v})
				}
				return nil, nil
			}
		}
		bd.fail(target.Span, "tuple assignment is only allowed to declare variables (m, n = T.int64(), T.int64()) or with T.axis.remap inside a block")
	}
	if target.Kind != aName {
		bd.fail(target.Span, "expected a name or a buffer element as the assignment target, found %s", target.describe())
	}
	name := target.Name
	ok := false
	defer func() {
		if !ok {
			bd.define(name, &symbol{poison: true})
		}
	}()
	switch c := value.callee(); {
	case c == "T.match_buffer":
		if st.depth > 0 {
			bd.fail(value.Span, "T.match_buffer is only allowed at the top of a PrimFunc body")
		}
		if len(value.Items) < 2 {
			bd.fail(value.Span, "expected T.match_buffer(handle, shape, dtype)")
		}
		h := value.Items[0]
		if h.Kind != aName {
			bd.fail(h.Span, "expected a handle parameter, found %s", h.describe())
		}
		var param *ir.PrimVar
		for _, p := range st.params {
			if p.Name == h.Name && p.Type.IsHandle() && st.bufferMap[p] == nil {
				param = p
			}
		}
		if param == nil {
			bd.fail(h.Span, "expected a T.handle parameter not yet bound to a buffer, found %s", h.Name)
		}
		buf := bd.bufferDecl(value, name)
		st.bufferMap[param] = buf
		bd.define(name, &symbol{buf: buf})
		ok = true
		return nil, nil
	case c == "T.decl_buffer" || c == "T.allocate" || c == "T.allocate_const":
		s := bd.scopedAlloc(value, target)
		s.(interface{ SetSpan(diag.Span) }).SetSpan(sp)
		ok = true
		return nil, s // scopes over the rest of the list
	case c == "T.Buffer" || c == "T.buffer":
		// A buffer over existing memory with no statement of its own
		// (lowered TIR before DeclBuffer: A_1 = T.Buffer((n,), data=A.data)).
		buf, hasData := bd.bufferDeclData(value, name)
		if !hasData {
			bd.fail(value.Span, "%s(...) in a PrimFunc body views existing memory: give it data=", c)
		}
		bd.define(name, &symbol{buf: buf})
		ok = true
		return nil, nil
	case c == "T.alloc_buffer" || c == "T.sblock_alloc_buffer":
		buf := bd.bufferDecl(value, name)
		*st.allocs = append(*st.allocs, buf)
		bd.define(name, &symbol{buf: buf})
		ok = true
		return nil, nil
	case strings.HasPrefix(c, "T.axis."):
		bd.fail(value.Span, "%s is only allowed at the top of a T.block", c)
	case c == "T.meta_var":
		bd.define(name, bd.metaVar(value))
		ok = true
		return nil, nil
	case c == "T.env_thread":
		if len(value.Items) < 1 || len(value.Items) > 2 || value.Items[0].Kind != aStr {
			bd.fail(value.Span, "expected T.env_thread(thread_tag[, dtype])")
		}
		dt := ir.Int32
		if len(value.Items) == 2 {
			d := value.Items[1]
			t, err := ir.ParseDataType(d.Text)
			if d.Kind != aStr || err != nil || !t.IsInt() {
				bd.fail(d.Span, "expected an integer dtype string for the thread variable")
			}
			dt = t
		}
		bd.define(name, &symbol{rare: &rareSymbol{envThread: value.Items[0].Text, envType: dt}})
		ok = true
		return nil, nil
	case c == "T.launch_thread":
		s := bd.launchThread(value, target)
		s.SetSpan(sp)
		ok = true
		return nil, s
	}
	if dt, isDecl := symDecl(value); isDecl {
		v := ir.NewPrimVar(name, dt)
		v.SetSpan(target.Span)
		bd.define(name, &symbol{prim: v})
		ok = true
		return nil, nil
	}
	// A let: x = value, or x: T.int32 = value.
	val := bd.prim(value)
	dt := val.DType()
	if as.Annot != nil {
		dt = bd.tirType(bd.conv.expr(as.Annot), false)
		val = bd.adapt(val, isLiteral(value), dt)
		if val.DType() != dt {
			val = castTo(dt, val)
		}
	}
	v := ir.NewPrimVar(name, dt)
	v.SetSpan(target.Span)
	let := &ir.LetStmt{Var: v, Value: val}
	let.SetSpan(sp)
	bd.define(name, &symbol{prim: v})
	ok = true
	return nil, let
}

// tirExprStmt converts a statement without a target.
func (bd *builder) tirExprStmt(a *ast) ir.Stmt {
	st := bd.tir
	switch c := a.callee(); c {
	case "T.func_attr":
		if st.depth > 0 {
			bd.fail(a.Span, "T.func_attr is only allowed at the top of a PrimFunc body")
		}
		if len(a.Items) != 1 {
			bd.fail(a.Span, "expected T.func_attr({...}) with one dict argument")
		}
		attrs := bd.attrDict(a.Items[0])
		if st.attrs == nil {
			st.attrs = ir.Attrs{}
		}
		for k, v := range attrs {
			st.attrs[k] = v
		}
		return nil
	case "T.evaluate":
		if len(a.Items) != 1 {
			bd.fail(a.Span, "T.evaluate takes 1 argument, found %d", len(a.Items))
		}
		e := &ir.Evaluate{Value: bd.prim(a.Items[0])}
		e.SetSpan(a.Span)
		return e
	case "T.reads", "T.writes", "T.block_attr", "T.sblock_attr", "T.where":
		bd.fail(a.Span, "%s is only allowed at the top of a T.block", c)
	}
	if a.Kind == aStr {
		return nil // a docstring
	}
	if a.Kind != aCall {
		bd.fail(a.Span, "expected a statement, found %s", a.describe())
	}
	e := &ir.Evaluate{Value: bd.prim(a)}
	e.SetSpan(a.Span)
	return e
}

// loopKinds maps loop constructors to For kinds.
var loopKinds = map[string]ir.ForKind{
	"range": ir.ForSerial, "T.serial": ir.ForSerial, "T.parallel": ir.ForParallel,
	"T.vectorized": ir.ForVectorized, "T.unroll": ir.ForUnrolled, "T.thread_binding": ir.ForThreadBinding,
}

func (bd *builder) tirFor(n *forNode) ir.Stmt {
	if n.While != nil {
		return bd.tirWhile(bd.conv.expr(n.While), n.Body, spanOf(n.Pos, n.Pos))
	}
	iter := bd.conv.expr(n.Iter)
	c := iter.callee()
	var targets []*ast
	for _, t := range n.Targets {
		x := bd.conv.expr(t)
		if x.Kind != aName {
			bd.fail(x.Span, "expected a loop variable name, found %s", x.describe())
		}
		targets = append(targets, x)
	}
	type loop struct {
		v           *ir.PrimVar
		min, extent ir.PrimExpr
		kind        ir.ForKind
		tag         string
		ann         ir.Attrs
	}
	var loops []loop
	var group *ast // "for iters in T.grid(a, b)": one name for all the loop variables
	if c == "T.grid" && len(targets) == 1 && len(iter.Items) > 1 {
		group = targets[0]
		targets = make([]*ast, len(iter.Items))
		for i := range targets {
			targets[i] = &ast{Kind: aName, Name: group.Name + "_" + strconv.Itoa(i), Span: group.Span}
		}
	}
	if c == "T.grid" {
		if len(iter.Items) != len(targets) {
			bd.fail(iter.Span, "T.grid has %s but the loop has %s", plural(len(iter.Items), "extent"), plural(len(targets), "variable"))
		}
		for i, it := range iter.Items {
			if iter.Keywords[i] != "" {
				bd.fail(it.Span, "unknown keyword %s in T.grid(...)", iter.Keywords[i])
			}
			ext := bd.prim(it)
			loops = append(loops, loop{min: ir.NewInt(ext.DType(), 0), extent: ext})
		}
	} else {
		kind, ok := loopKinds[c]
		if !ok {
			bd.fail(iter.Span, "expected range(...), T.grid, T.serial, T.parallel, T.vectorized, T.unroll or T.thread_binding, found %s%s",
				describeOrName(iter), didYouMean(c, []string{"range", "T.grid", "T.serial", "T.parallel", "T.vectorized", "T.unroll", "T.thread_binding"}, ""))
		}
		if len(targets) != 1 {
			bd.fail(iter.Span, "expected one loop variable for %s, found %d", c, len(targets))
		}
		l := loop{kind: kind}
		var bounds []*ast
		for i, it := range iter.Items {
			switch kw := iter.Keywords[i]; kw {
			case "":
				bounds = append(bounds, it)
			case "thread":
				if it.Kind != aStr || kind != ir.ForThreadBinding {
					bd.fail(it.Span, "thread= is a string and only allowed in T.thread_binding")
				}
				l.tag = it.Text
			case "annotations":
				l.ann = bd.attrDict(it)
			default:
				bd.fail(it.Span, "unknown keyword %s in %s(...)%s", kw, c, didYouMean(kw, []string{"thread", "annotations"}, ""))
			}
		}
		switch len(bounds) {
		case 1:
			ext := bd.prim(bounds[0])
			l.min, l.extent = ir.NewInt(ext.DType(), 0), ext
		case 2:
			lo, hi := bd.operands(bounds[0], bounds[1])
			l.min, l.extent = lo, extentOf(lo, hi)
		default:
			bd.fail(iter.Span, "%s takes 1 or 2 bounds, found %d", c, len(bounds))
		}
		if kind == ir.ForThreadBinding && l.tag == "" {
			bd.fail(iter.Span, "T.thread_binding needs thread=\"...\"")
		}
		loops = append(loops, l)
	}
	bd.push()
	defer bd.pop()
	for i := range loops {
		v := ir.NewPrimVar(targets[i].Name, loops[i].extent.DType())
		v.SetSpan(targets[i].Span)
		loops[i].v = v
		bd.define(targets[i].Name, &symbol{prim: v, loop: &loopInfo{min: loops[i].min, extent: loops[i].extent}})
	}
	if group != nil {
		bd.define(group.Name, &symbol{rare: &rareSymbol{group: targets}})
	}
	body := bd.tirBody(n.Body)
	for i := len(loops) - 1; i >= 0; i-- {
		l := loops[i]
		f := &ir.For{Var: l.v, Min: l.min, Extent: l.extent, Kind: l.kind, ThreadTag: l.tag, Body: body, Annotations: l.ann}
		f.SetSpan(spanOf(n.Pos, n.Pos))
		body = f
	}
	return body
}

// tirWhile converts `while cond:` (or `with T.While(cond):`). As TVM's
// While constructor (src/tir/ir/stmt.cc), the condition must be a scalar
// and not a constant ("The condition should not be trivial").
func (bd *builder) tirWhile(c *ast, body *suiteNode, sp diag.Span) ir.Stmt {
	cond := bd.prim(c)
	if !cond.DType().IsScalar() || cond.DType().IsHandle() {
		bd.fail(c.Span, "a while condition must be a scalar, found %s", cond.DType())
	}
	if _, ok := cond.(*ir.IntImm); ok {
		bd.fail(c.Span, "a while condition must not be a constant (TVM: the condition should not be trivial)")
	}
	s := &ir.While{Cond: cond, Body: bd.tirBody(body)}
	s.SetSpan(sp)
	return s
}

// extentOf is hi - lo, folded when both are constants.
func extentOf(lo, hi ir.PrimExpr) ir.PrimExpr {
	a, ok1 := ir.IntValue(lo)
	b, ok2 := ir.IntValue(hi)
	if ok1 && ok2 {
		return ir.NewInt(hi.DType(), b-a)
	}
	if ok1 && a == 0 {
		return hi
	}
	return ir.Simplify(ir.Sub(hi, lo))
}

func (bd *builder) tirIf(n *ifNode) ir.Stmt {
	cond := bd.prim(bd.conv.expr(n.Cond))
	s := &ir.IfThenElse{Cond: cond, Then: bd.tirBody(n.Then)}
	s.SetSpan(spanOf(n.Pos, n.Pos))
	tail := s
	for _, el := range n.Elifs {
		next := &ir.IfThenElse{Cond: bd.prim(bd.conv.expr(el.Cond)), Then: bd.tirBody(el.Body)}
		next.SetSpan(spanOf(el.Pos, el.Pos))
		tail.Else = next
		tail = next
	}
	if n.Else != nil {
		tail.Else = bd.tirBody(n.Else)
	}
	return s
}

func (bd *builder) tirWith(w *withNode) ir.Stmt {
	a := bd.conv.expr(w.Item)
	switch c := a.callee(); c {
	case "T.block", "T.sblock":
		return bd.tirBlock(a, w)
	case "T.LetStmt":
		// with T.LetStmt(value) as x: what TVM prints for a let followed
		// by more statements.
		if w.As == nil || len(a.Items) != 1 {
			bd.fail(a.Span, "expected \"with T.LetStmt(value) as name:\"")
		}
		target := bd.conv.expr(w.As)
		if target.Kind != aName {
			bd.fail(target.Span, "expected a variable name after \"as\", found %s", target.describe())
		}
		val := bd.prim(a.Items[0])
		bd.push()
		defer bd.pop()
		v := ir.NewPrimVar(target.Name, val.DType())
		v.SetSpan(target.Span)
		bd.define(target.Name, &symbol{prim: v})
		let := &ir.LetStmt{Var: v, Value: val}
		let.SetSpan(spanOf(w.Pos, w.Pos))
		let.Body = bd.tirBody(w.Body)
		return let
	case "T.attr":
		if w.As != nil {
			bd.fail(bd.conv.expr(w.As).Span, "with T.attr(...) defines no variable; drop \"as ...\"")
		}
		s := bd.attrStmt(a)
		s.SetSpan(spanOf(w.Pos, w.Pos))
		s.Body = bd.tirBody(w.Body)
		return s
	case "T.launch_thread":
		if w.As == nil && bd.envThreadArg(a) != nil {
			bd.push()
			defer bd.pop()
			s := bd.launchThread(a, nil)
			s.SetSpan(spanOf(w.Pos, w.Pos))
			s.Body = bd.tirBody(w.Body)
			return s
		}
		if w.As == nil {
			bd.fail(a.Span, "expected \"with T.launch_thread(tag, extent) as name:\"")
		}
		target := bd.conv.expr(w.As)
		if target.Kind != aName {
			bd.fail(target.Span, "expected a thread variable name after \"as\", found %s", target.describe())
		}
		bd.push()
		defer bd.pop()
		s := bd.launchThread(a, target)
		s.SetSpan(spanOf(w.Pos, w.Pos))
		s.Body = bd.tirBody(w.Body)
		return s
	case "T.While":
		if w.As != nil {
			bd.fail(bd.conv.expr(w.As).Span, "with T.While(...) defines no variable; drop \"as ...\"")
		}
		if len(a.Items) != 1 || a.Keywords[0] != "" && a.Keywords[0] != "condition" {
			bd.fail(a.Span, "expected T.While(condition)")
		}
		return bd.tirWhile(a.Items[0], w.Body, spanOf(w.Pos, w.Pos))
	case "T.allocate", "T.allocate_const", "T.decl_buffer":
		if w.As == nil {
			bd.fail(a.Span, "expected \"with %s(...) as name:\"", c)
		}
		bd.push()
		defer bd.pop()
		s := bd.scopedAlloc(a, bd.conv.expr(w.As))
		s.(interface{ SetSpan(diag.Span) }).SetSpan(spanOf(w.Pos, w.Pos))
		fillBody(s, bd.tirBody(w.Body))
		return s
	case "T.init":
		bd.fail(a.Span, "with T.init() is only allowed directly inside a T.block")
	default:
		bd.fail(a.Span, "expected \"with T.block(...)\" in a PrimFunc, found \"with %s\"%s", describeOrName(a),
			didYouMean(c, []string{"T.block", "T.init"}, ""))
	}
	return nil
}

// scopedAlloc converts T.allocate, T.allocate_const or T.decl_buffer
// bound to name; the caller fills the body.
func (bd *builder) scopedAlloc(a, name *ast) ir.Stmt {
	if name.Kind != aName {
		bd.fail(name.Span, "expected a name to bind %s(...) to, found %s", a.callee(), name.describe())
	}
	switch a.callee() {
	case "T.allocate":
		return bd.allocateStmt(a, name)
	case "T.allocate_const":
		return bd.allocateConstStmt(a, name)
	}
	return bd.declBufferStmt(a, name)
}

// metaVar converts T.meta_var(value): in TVM a Python-level alias, so the
// name stands for value (an expression, or whatever a name denotes: a
// buffer, a variable) and no TIR variable or let is created.
func (bd *builder) metaVar(a *ast) *symbol {
	v := bd.onlyArg(a, "value")
	if v.Kind == aName {
		if s := bd.lookup(v.Name); s != nil {
			alias := *s
			return &alias
		}
	}
	return &symbol{rare: &rareSymbol{meta: bd.prim(v)}}
}

// launchThread converts T.launch_thread("blockIdx.x", extent) assigned to
// target: TVM's LaunchThread with a thread tag creates the thread's index
// variable (named by the assignment, typed like the extent) and scopes it
// over the rest of the body. Launching an already defined thread variable
// (after T.env_thread) is not supported yet.
func (bd *builder) launchThread(a, target *ast) *ir.AttrStmt {
	if len(a.Items) != 2 {
		bd.fail(a.Span, "expected T.launch_thread(thread_tag, extent), found %d arguments", len(a.Items))
	}
	tag := a.Items[0]
	ext := bd.prim(a.Items[1])
	if !ext.DType().IsInt() {
		bd.fail(a.Items[1].Span, "a thread extent must be an integer, found %s", ext.DType())
	}
	dt := ext.DType()
	tagText := tag.Text
	if env := bd.envThreadArg(a); env != nil {
		// T.launch_thread(x, n) after x = T.env_thread(tag): every launch
		// of x scopes the same variable.
		if target != nil {
			bd.fail(target.Span, "T.launch_thread(%s, ...) launches the variable T.env_thread declared; it defines no new name", tag.Name)
		}
		if env.rare.envVar == nil {
			env.rare.envVar = ir.NewPrimVar(tag.Name, env.rare.envType)
			env.rare.envVar.SetSpan(tag.Span)
		}
		bd.define(tag.Name, &symbol{prim: env.rare.envVar})
		return &ir.AttrStmt{Thread: env.rare.envVar, Tag: env.rare.envThread, Key: threadKey(env.rare.envThread), Value: ext}
	} else if tag.Kind != aStr {
		bd.fail(tag.Span, "expected a thread tag string such as \"blockIdx.x\" or a T.env_thread variable, found %s", tag.describe())
	} else if target == nil {
		bd.fail(a.Span, "T.launch_thread(%q, ...) defines a thread variable: write \"name = T.launch_thread(...)\"", tag.Text)
	}
	v := ir.NewPrimVar(target.Name, dt)
	v.SetSpan(target.Span)
	bd.define(target.Name, &symbol{prim: v})
	return &ir.AttrStmt{Thread: v, Tag: tagText, Key: threadKey(tagText), Value: ext}
}

// threadKey is the AttrStmt key of a launch of the thread tag.
func threadKey(tag string) string {
	if strings.HasPrefix(tag, "vthread") {
		return "virtual_thread"
	}
	return "thread_extent"
}

// envThreadArg returns the T.env_thread symbol a T.launch_thread call's
// first argument names, or nil.
func (bd *builder) envThreadArg(a *ast) *symbol {
	if len(a.Items) == 0 || a.Items[0].Kind != aName {
		return nil
	}
	if s := bd.lookup(a.Items[0].Name); s != nil && s.rare != nil && s.rare.envThread != "" {
		return s
	}
	return nil
}

// attrStmt converts T.attr(node, "key", value), an annotation scoped over
// the statements that follow it (or over a with block).
func (bd *builder) attrStmt(a *ast) *ir.AttrStmt {
	if len(a.Items) != 3 {
		bd.fail(a.Span, "expected T.attr(node, attr_key, value), found %d arguments", len(a.Items))
	}
	key := a.Items[1]
	if key.Kind != aStr {
		bd.fail(key.Span, "expected an attribute key string, found %s", key.describe())
	}
	if node := a.Items[0]; node.Kind == aCall && node.callee() == "T.comm_reducer" {
		return &ir.AttrStmt{Reducer: bd.commReducer(node), Key: key.Text, Value: bd.prim(a.Items[2])}
	}
	return &ir.AttrStmt{Node: bd.prim(a.Items[0]), Key: key.Text, Value: bd.prim(a.Items[2])}
}

// commReducer converts T.comm_reducer(lambda x, y: x + y, [identity]), the
// node of lowered allreduce's "reduce_scope" attribute: the lambda takes
// the left operands then the right ones, one pair per identity element,
// each of that element's type, and returns one value per element (a tuple
// when there are several), as tir.CommReducer's constructor requires.
func (bd *builder) commReducer(a *ast) *ir.CommReducer {
	if len(a.Items) != 2 || slices.ContainsFunc(a.Keywords, func(k string) bool { return k != "" }) {
		bd.fail(a.Span, "expected T.comm_reducer(lambda x, y: ..., [identity]), found %d arguments", len(a.Items))
	}
	lam, ids := a.Items[0], a.Items[1]
	if lam.Kind != aLambda {
		bd.fail(lam.Span, "T.comm_reducer's combiner must be a lambda, found %s", lam.describe())
	}
	if ids.Kind != aList && ids.Kind != aTuple || len(ids.Items) == 0 {
		bd.fail(ids.Span, "T.comm_reducer's identity must be a non-empty list, found %s", ids.describe())
	}
	r := &ir.CommReducer{}
	for _, it := range ids.Items {
		r.Identity = append(r.Identity, bd.prim(it))
	}
	n := len(r.Identity)
	if len(lam.Items) != 2*n {
		bd.fail(lam.Span, "T.comm_reducer's combiner takes %d arguments (a left and a right one per identity element), found %d", 2*n, len(lam.Items))
	}
	bd.push()
	defer bd.pop()
	for i, it := range lam.Items {
		v := ir.NewPrimVar(it.Name, r.Identity[i%n].DType())
		bd.define(it.Name, &symbol{prim: v})
		if i < n {
			r.Lhs = append(r.Lhs, v)
		} else {
			r.Rhs = append(r.Rhs, v)
		}
	}
	body := []*ast{lam.X}
	if n > 1 {
		if lam.X.Kind != aTuple && lam.X.Kind != aList || len(lam.X.Items) != n {
			bd.fail(lam.X.Span, "T.comm_reducer's combiner must return %d values, one per identity element", n)
		}
		body = lam.X.Items
	}
	for i, x := range body {
		e := bd.prim(x)
		if e.DType() != r.Identity[i].DType() {
			bd.fail(x.Span, "T.comm_reducer's combiner returns %s where its identity element is %s", e.DType(), r.Identity[i].DType())
		}
		r.Result = append(r.Result, e)
	}
	return r
}
