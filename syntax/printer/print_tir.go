package printer

import (
	"slices"
	"strconv"

	"github.com/phasec/phasec/ir"
)

// TIR PrimFuncs.
//
// Layout (TVM's tir/function.cc printer): the decorator, the signature with
// T.Buffer parameters for buffers of constant shape and T.handle for the
// others, T.func_attr, then per T.handle parameter the declarations of the
// symbolic variables its shape introduces followed by its T.match_buffer.
// An implicit root block prints as the comment TVM prints for it, with its
// buffers as T.alloc_buffer lines at function level. Perfectly nested
// serial loops starting at 0 print as one `for i, j in T.grid(...)`.

type tirFrame struct {
	ns   *nameSpace
	vars map[*ir.PrimVar]string
	bufs map[*ir.Buffer]string
	// loops maps the variables of the enclosing loops to their extents
	// (T.axis.remap needs both).
	loops map[*ir.PrimVar]ir.PrimExpr
	// collecting: newly named variables are declared (pending) instead of
	// merely named; used while printing match_buffer shapes.
	collecting bool
	pending    []*ir.PrimVar
	// undeclared are the buffers the body uses that nothing declares
	// (parameters, T.alloc_buffer, T.decl_buffer): lowered TIR's views
	// over existing memory, printed as "A_1 = T.Buffer(..., data=...)"
	// where TVM's printer puts them (FindLowestVarDef).
	undeclared map[ir.Stmt][]*ir.Buffer
	// envThreads are the thread variables launched more than once: TVM's
	// printer declares them with T.env_thread and launches them by name.
	envThreads map[*ir.PrimVar]bool
}

// relaunchedThreads returns the thread variables s launches more than once.
func relaunchedThreads(s ir.Stmt) map[*ir.PrimVar]bool {
	var seen, again map[*ir.PrimVar]bool
	ir.WalkStmt(s, &ir.StmtVisitor{Stmt: func(x ir.Stmt) bool {
		if a, ok := x.(*ir.AttrStmt); ok && a.Thread != nil {
			if seen[a.Thread] {
				if again == nil {
					again = map[*ir.PrimVar]bool{}
				}
				again[a.Thread] = true
			}
			if seen == nil {
				seen = map[*ir.PrimVar]bool{}
			}
			seen[a.Thread] = true
		}
		return true
	}})
	return again
}

func (p *printer) primFunc(name string, f *ir.PrimFunc) {
	t := &tirFrame{
		ns:         newNameSpace(),
		vars:       map[*ir.PrimVar]string{},
		bufs:       map[*ir.Buffer]string{},
		loops:      map[*ir.PrimVar]ir.PrimExpr{},
		envThreads: relaunchedThreads(f.Body),
	}
	p.tir = t
	defer func() { p.tir = nil }()

	attrs, private := visibleAttrs(name, f.Attrs, true)
	p.decorator("T.prim_func", private, false, p.mod.Unchecked[name])
	p.line()
	p.str("def ")
	p.str(name)
	p.byte('(')
	var matched []*ir.PrimVar
	for i, v := range f.Params {
		if i > 0 {
			p.str(", ")
		}
		buf := f.BufferMap[v]
		switch {
		case buf != nil && constantShape(buf) && simpleBuffer(buf):
			bname := p.defineBuffer(buf)
			t.vars[v] = bname
			p.str(bname)
			p.str(": T.Buffer(")
			p.bufferShapeDType(buf)
			p.byte(')')
		case buf != nil:
			p.str(p.defineTIRVar(v))
			p.str(": T.handle")
			matched = append(matched, v)
		default:
			p.str(p.defineTIRVar(v))
			p.str(": ")
			p.tirType(v.Type)
		}
	}
	p.byte(')')
	if !f.Ret.IsVoid() {
		p.str(" -> ")
		p.tirType(f.Ret)
	}
	p.str(":\n")
	p.ind++
	if len(attrs) > 0 {
		p.line()
		p.str("T.func_attr(")
		p.attrDict(attrs, "")
		p.str(")\n")
	}
	for _, v := range matched {
		buf := f.BufferMap[v]
		// Print the match_buffer line aside, collecting the symbolic
		// variables its shape introduces, which are declared first.
		saved := p.out
		p.out = nil
		t.collecting = true
		p.line()
		p.str(p.defineBuffer(buf))
		p.str(" = T.match_buffer(")
		p.str(t.vars[v])
		p.str(", ")
		p.bufferDeclArgs(buf)
		p.str(")\n")
		t.collecting = false
		decl := p.out
		p.out = saved
		for _, sv := range t.pending {
			p.line()
			p.str(t.vars[sv])
			p.str(" = ")
			p.tirType(sv.Type)
			p.str("()\n")
		}
		t.pending = t.pending[:0]
		p.out = append(p.out, decl...)
	}
	// A variable nothing defines (an ill-formed module, read with
	// check_well_formed=False) is declared where TVM's printer declares it
	// (PrintVar: at the frame of its uses; here, the function's), so the
	// text reads back.
	for _, v := range freeTIRVars(f) {
		if _, named := t.vars[v]; named {
			continue
		}
		p.line()
		p.str(p.defineTIRVar(v))
		p.str(" = ")
		p.tirType(v.Type)
		p.str("()\n")
	}
	t.undeclared = undeclaredBuffers(f)
	body := f.Body
	if br, ok := body.(*ir.BlockRealize); ok && isImplicitRoot(br) {
		p.line()
		p.str("# with T.block(\"root\"):\n")
		p.allocBuffers(br.Block.AllocBuffers)
		body = br.Block.Body
	} else if hasImplicitRoot(body) {
		// TVM's parser wraps a body with blocks in a root block
		// (src/tir/ir/script/script_complete.cc) and its printer shows
		// that block as this comment; phasec wraps only to hold
		// allocations.
		p.line()
		p.str("# with T.block(\"root\"):\n")
	}
	p.stmt(body)
	p.ind--
}

// freeTIRVars returns, in order of first use, the variables f's body uses
// that no parameter, buffer shape, loop, let, block, thread launch or
// allocation defines.
func freeTIRVars(f *ir.PrimFunc) []*ir.PrimVar {
	defined := map[*ir.PrimVar]bool{}
	for _, p := range f.Params {
		defined[p] = true
		if b := f.BufferMap[p]; b != nil {
			defined[b.Data] = true
			for _, d := range b.Shape {
				if v, ok := d.(*ir.PrimVar); ok {
					defined[v] = true
				}
			}
		}
	}
	ir.WalkStmt(f.Body, &ir.StmtVisitor{Stmt: func(s ir.Stmt) bool {
		switch s := s.(type) {
		case *ir.For:
			defined[s.Var] = true
		case *ir.LetStmt:
			defined[s.Var] = true
		case *ir.AttrStmt:
			defined[s.Thread] = true
		case *ir.Allocate:
			defined[s.Data] = true
		case *ir.AllocateConst:
			defined[s.Data] = true
		case *ir.Block:
			for _, iv := range s.IterVars {
				defined[iv.Var] = true
			}
			for _, b := range s.AllocBuffers {
				defined[b.Data] = true
			}
		}
		return true
	}})
	var free []*ir.PrimVar
	ir.WalkStmt(f.Body, &ir.StmtVisitor{Prim: func(e ir.PrimExpr) bool {
		if v, ok := e.(*ir.PrimVar); ok && !defined[v] {
			defined[v] = true
			free = append(free, v)
		}
		return true
	}})
	return free
}

// hasImplicitRoot reports whether TVM would give a PrimFunc body a root
// block: it contains a block and is not itself a single block without
// iteration variables (which TVM takes as the root).
func hasImplicitRoot(body ir.Stmt) bool {
	if br, ok := body.(*ir.BlockRealize); ok && len(br.Block.IterVars) == 0 {
		return false
	}
	found := false
	ir.WalkStmt(body, &ir.StmtVisitor{Stmt: func(s ir.Stmt) bool {
		if _, ok := s.(*ir.BlockRealize); ok {
			found = true
		}
		return !found
	}})
	return found
}

// isImplicitRoot reports whether br is the root block the parser wraps a
// PrimFunc body in: named "root", with no iteration variables, regions,
// init, predicate or annotations.
func isImplicitRoot(br *ir.BlockRealize) bool {
	b := br.Block
	return b.Name == "root" && len(b.IterVars) == 0 && len(b.Reads) == 0 && len(b.Writes) == 0 &&
		b.Init == nil && br.Predicate == nil && len(b.Annotations) == 0
}

// simpleBuffer reports whether a parameter's buffer may print as a
// T.Buffer annotation: TVM's IsSimpleBuffer (src/script/printer/tir/
// function.cc) wants the default layout and the global scope.
func simpleBuffer(b *ir.Buffer) bool {
	return b.CompactLayout() && (b.Scope == "" || b.Scope == "global") && b.AlignOrDefault() == ir.DefaultAlign &&
		b.OffsetFactorOrDefault() == 1 && !b.AutoBroadcast && len(b.AxisSeparators) == 0
}

func constantShape(b *ir.Buffer) bool {
	for _, d := range b.Shape {
		if _, ok := d.(*ir.IntImm); !ok {
			return false
		}
	}
	return true
}

func (p *printer) tirType(t ir.DataType) {
	p.str("T.")
	p.str(t.String())
}

func (p *printer) defineTIRVar(v *ir.PrimVar) string {
	name := p.tir.ns.fresh(v.Name)
	p.tir.vars[v] = name
	return name
}

func (p *printer) defineBuffer(b *ir.Buffer) string {
	name := p.tir.ns.fresh(b.Name)
	p.tir.bufs[b] = name
	if _, ok := p.tir.vars[b.Data]; !ok && b.Data != nil {
		// A buffer whose handle is not yet defined defines it inline:
		// uses print as A.data (BufferAttrs' try_inline_def,
		// src/script/printer/tir/buffer.cc).
		p.tir.vars[b.Data] = name + ".data"
	}
	return name
}

// tirVarName names a use of v. A variable with no definition in sight gets
// a fresh name (declared, when printing a match_buffer shape).
func (p *printer) tirVarName(v *ir.PrimVar) string {
	t := p.tir
	if t == nil {
		return sanitizeName(v.Name)
	}
	if name, ok := t.vars[v]; ok {
		return name
	}
	name := p.defineTIRVar(v)
	if t.collecting {
		t.pending = append(t.pending, v)
	}
	return name
}

func (p *printer) bufferName(b *ir.Buffer) string {
	if p.tir == nil {
		return sanitizeName(b.Name)
	}
	if name, ok := p.tir.bufs[b]; ok {
		return name
	}
	return p.defineBuffer(b)
}

// bufferShapeDType writes `(d0, d1), "dtype"` and a non-global scope: the
// T.Buffer parameter annotation, which always names its dtype (TVM's
// BufferAttn, src/script/printer/tir/buffer.cc).
func (p *printer) bufferShapeDType(b *ir.Buffer) { p.bufferArgs(b, false, "") }

// bufferDeclArgs writes the arguments of T.match_buffer and T.alloc_buffer,
// where TVM's BufferDecl leaves out the default dtype float32.
func (p *printer) bufferDeclArgs(b *ir.Buffer) { p.bufferArgs(b, true, "") }

// bufferArgs writes a buffer's shape and dtype, then its keyword arguments
// in the order of TVM's BufferCall (src/script/printer/tir/buffer.cc):
// data (when not "" ), strides, elem_offset, scope, align, offset_factor,
// buffer_type, axis_separators, each only when it is not the default.
func (p *printer) bufferArgs(b *ir.Buffer, decl bool, data string) {
	p.byte('(')
	for i, d := range b.Shape {
		if i > 0 {
			p.str(", ")
		}
		p.tirPrim(d)
	}
	if len(b.Shape) == 1 {
		p.byte(',')
	}
	p.byte(')')
	if !decl || b.DType != ir.Float32 {
		p.str(", ")
		p.quote(b.DType.String())
	}
	if data != "" {
		p.str(", data=")
		p.str(data)
	}
	name := p.tir.bufs[b]
	if len(b.Strides) > 0 {
		p.str(", strides=(")
		for i, st := range b.Strides {
			if i > 0 {
				p.str(", ")
			}
			if v, ok := st.(*ir.PrimVar); ok && p.newTIRVar(v) {
				// Defined here (BufferAttrs' try_inline_def): its name
				// as a string, A.strides[i] in uses.
				p.quote(v.Name)
				p.tir.vars[v] = name + ".strides[" + strconv.Itoa(i) + "]"
				continue
			}
			p.tirPrim(st)
		}
		if len(b.Strides) == 1 {
			p.byte(',')
		}
		p.byte(')')
	}
	inlineOffset := false
	if v, ok := b.ElemOffset.(*ir.PrimVar); ok && p.newTIRVar(v) {
		inlineOffset = true // defined by the buffer: A.elem_offset in uses
		p.tir.vars[v] = name + ".elem_offset"
	} else if b.ElemOffset != nil {
		p.str(", elem_offset=")
		p.tirPrim(b.ElemOffset)
	}
	if b.Scope != "" && b.Scope != "global" {
		p.str(", scope=")
		p.quote(b.Scope)
	}
	if a := b.AlignOrDefault(); a != ir.DefaultAlign {
		p.str(", align=")
		p.out = strconv.AppendInt(p.out, int64(a), 10)
	}
	if f := b.OffsetFactorOrDefault(); inlineOffset || f != 1 {
		p.str(", offset_factor=")
		p.out = strconv.AppendInt(p.out, int64(f), 10)
	}
	if b.AutoBroadcast {
		p.str(`, buffer_type="auto"`)
	}
	if len(b.AxisSeparators) > 0 {
		p.str(", axis_separators=[")
		for i, a := range b.AxisSeparators {
			if i > 0 {
				p.str(", ")
			}
			p.out = strconv.AppendInt(p.out, int64(a), 10)
		}
		p.byte(']')
	}
}

// newTIRVar reports whether v has no name yet (its first occurrence
// defines it).
func (p *printer) newTIRVar(v *ir.PrimVar) bool {
	_, ok := p.tir.vars[v]
	return !ok
}

func (p *printer) allocBuffers(bufs []*ir.Buffer) {
	for _, b := range bufs {
		p.line()
		p.str(p.defineBuffer(b))
		p.str(" = T.alloc_buffer(")
		p.bufferDeclArgs(b)
		p.str(")\n")
	}
}

// tirPrim writes a TIR expression as is (no simplification): int32
// literals bare, other literals with their type constructor.
func (p *printer) tirPrim(e ir.PrimExpr) {
	switch x := e.(type) {
	case *ir.IntImm:
		if x.Type == ir.Int32 {
			p.out = strconv.AppendInt(p.out, x.Value, 10)
			return
		}
	case *ir.PrimVar:
		p.str(p.tirVarName(x))
		return
	}
	p.str(ir.PrimFormat{VarName: p.tirNameFn, BufferName: p.tirBufferFn, BareInt: ir.Int32}.Format(e))
}

func (p *printer) tirPrims(l []ir.PrimExpr) {
	for i, e := range l {
		if i > 0 {
			p.str(", ")
		}
		p.tirPrim(e)
	}
}

// undeclaredBuffers finds the buffers f's body uses that no parameter,
// block allocation or T.decl_buffer declares, and maps each statement
// before which such buffers are defined to them (nil when there are none).
// TVM's printer defines such a buffer in the innermost frame enclosing all
// its uses (FindLowestVarDef over the uses' common path,
// src/script/printer/tir/utils.h), before the statement of that frame's
// body holding the first use.
func undeclaredBuffers(f *ir.PrimFunc) map[ir.Stmt][]*ir.Buffer {
	c := &bufferUses{declared: map[*ir.Buffer]bool{}, paths: map[*ir.Buffer][]pathStep{}, first: map[*ir.Buffer][]pathStep{}}
	for _, b := range f.BufferMap {
		c.declared[b] = true
	}
	c.stmt(f.Body, []pathStep{{frame: true}})
	var out map[ir.Stmt][]*ir.Buffer
	for _, b := range c.order {
		if c.declared[b] {
			continue
		}
		path := c.paths[b]
		k := len(path) - 1
		for k > 0 && !path[k].frame {
			k--
		}
		anchor := path[k].s
		if first := c.first[b]; k+1 < len(first) {
			// The frame's body, or the element of its body sequence that
			// holds the first use.
			anchor = first[k+1].s
			if _, seq := anchor.(*ir.SeqStmt); seq && k+2 < len(first) {
				anchor = first[k+2].s
			}
		}
		if out == nil {
			out = map[ir.Stmt][]*ir.Buffer{}
		}
		out[anchor] = append(out[anchor], b)
	}
	return out
}

// pathStep is a statement on the way from a PrimFunc's body to a buffer
// use; frame marks those TVM's printer opens a frame for.
type pathStep struct {
	s     ir.Stmt
	frame bool
}

// bufferUses records, per buffer, the common path of its uses.
type bufferUses struct {
	declared map[*ir.Buffer]bool
	paths    map[*ir.Buffer][]pathStep
	first    map[*ir.Buffer][]pathStep // the path of the first use
	order    []*ir.Buffer
}

func (c *bufferUses) use(b *ir.Buffer, path []pathStep) {
	old, seen := c.paths[b]
	if !seen {
		c.paths[b] = slices.Clone(path)
		c.first[b] = c.paths[b]
		c.order = append(c.order, b)
		return
	}
	n := 0
	for n < len(old) && n < len(path) && old[n].s == path[n].s {
		n++
	}
	c.paths[b] = old[:n:n] // first keeps the whole first path
}

func (c *bufferUses) exprs(path []pathStep, es ...ir.PrimExpr) {
	for _, e := range es {
		ir.InspectPrim(e, func(x ir.PrimExpr) bool {
			if l, ok := x.(*ir.BufferLoad); ok {
				c.use(l.Buffer, path)
			}
			return true
		})
	}
}

// stmt walks s (recursion follows nesting; sequences are iterated).
func (c *bufferUses) stmt(s ir.Stmt, path []pathStep) {
	if s == nil {
		return
	}
	frame := true
	switch s.(type) {
	case *ir.SeqStmt, *ir.BufferStore, *ir.Evaluate, *ir.IfThenElse, *ir.BlockRealize:
		frame = false
	}
	path = append(path, pathStep{s: s, frame: frame})
	switch x := s.(type) {
	case *ir.SeqStmt:
		for _, st := range x.Stmts {
			c.stmt(st, path)
		}
	case *ir.BufferStore:
		c.use(x.Buffer, path)
		c.exprs(path, x.Indices...)
		c.exprs(path, x.Value)
	case *ir.Evaluate:
		c.exprs(path, x.Value)
	case *ir.IfThenElse:
		c.exprs(path, x.Cond)
		for _, branch := range []ir.Stmt{x.Then, x.Else} {
			if branch != nil {
				// Each branch is a frame of its own.
				c.stmt(branch, append(path, pathStep{s: branch, frame: true}))
			}
		}
	case *ir.BlockRealize:
		c.exprs(path, x.IterValues...)
		c.exprs(path, x.Predicate)
		c.stmt(x.Block, path)
	case *ir.Block:
		for _, b := range x.AllocBuffers {
			c.declared[b] = true
		}
		for _, mb := range x.MatchBuffers {
			c.declared[mb.Buffer] = true
			c.use(mb.Source.Buffer, path)
		}
		for _, r := range append(slices.Clone(x.Reads), x.Writes...) {
			c.use(r.Buffer, path)
		}
		c.stmt(x.Init, path)
		c.stmt(x.Body, path)
	case *ir.DeclBuffer:
		c.declared[x.Buffer] = true
		c.stmt(x.Body, path)
	default:
		switch y := s.(type) {
		case *ir.For:
			c.exprs(path, y.Min, y.Extent)
		case *ir.While:
			c.exprs(path, y.Cond)
		case *ir.LetStmt:
			c.exprs(path, y.Value)
		case *ir.AttrStmt:
			c.exprs(path, y.Node, y.Value)
		case *ir.Allocate:
			c.exprs(path, y.Extents...)
			c.exprs(path, y.Condition)
		}
		body, _ := ir.ScopeBody(s)
		c.stmt(body, path)
	}
}

// declareBuffers prints the T.Buffer definitions anchored before s.
func (p *printer) declareBuffers(s ir.Stmt) {
	t := p.tir
	if len(t.undeclared) == 0 || s == nil {
		return
	}
	for _, b := range t.undeclared[s] {
		p.line()
		data := p.tirVarName(b.Data)
		p.str(p.defineBuffer(b))
		p.str(" = T.Buffer(")
		p.bufferArgs(b, true, data)
		p.str(")\n")
	}
	delete(t.undeclared, s)
}

// stmt prints s; sequences are iterated, recursion follows nesting only.
func (p *printer) stmt(s ir.Stmt) {
	if _, seq := s.(*ir.SeqStmt); !seq {
		p.declareBuffers(s)
	}
	switch x := s.(type) {
	case nil:
		p.line()
		p.str("T.evaluate(0)\n")
	case *ir.SeqStmt:
		if len(x.Stmts) == 0 {
			p.stmt(nil)
		}
		for i, c := range x.Stmts {
			p.declareBuffers(c)
			if a, ok := c.(*ir.AttrStmt); ok && i < len(x.Stmts)-1 {
				p.attrStmt(a, false)
				continue
			}
			if p.allocation(c, i == len(x.Stmts)-1) {
				continue
			}
			if l, ok := c.(*ir.LetStmt); ok && i < len(x.Stmts)-1 {
				// Not the last statement: TVM's LetStmt dispatch
				// (src/script/printer/tir/stmt.cc) prints a with block.
				p.line()
				p.str("with T.LetStmt(")
				p.tirPrim(l.Value)
				p.str(") as ")
				p.str(p.defineTIRVar(l.Var))
				p.str(":\n")
				p.ind++
				p.stmt(l.Body)
				p.ind--
				p.releaseTIRVar(l.Var)
				continue
			}
			p.stmt(c)
		}
	case *ir.For:
		p.forLoop(x)
	case *ir.BlockRealize:
		p.blockRealize(x)
	case *ir.BufferStore:
		p.line()
		p.str(p.bufferName(x.Buffer))
		p.byte('[')
		if len(x.Indices) == 0 {
			p.str("()")
		}
		p.tirPrims(x.Indices)
		p.str("] = ")
		p.tirPrim(x.Value)
		p.nl()
	case *ir.IfThenElse:
		p.line()
		p.str("if ")
		p.tirPrim(x.Cond)
		p.str(":\n")
		p.ind++
		p.stmt(x.Then)
		p.ind--
		if x.Else != nil {
			p.line()
			p.str("else:\n")
			p.ind++
			p.stmt(x.Else)
			p.ind--
		}
	case *ir.LetStmt:
		p.line()
		p.str(p.defineTIRVar(x.Var))
		p.str(": ")
		p.tirType(x.Var.Type)
		p.str(" = ")
		p.tirPrim(x.Value)
		p.nl()
		p.stmt(x.Body)
	case *ir.AttrStmt:
		p.attrStmt(x, true)
	case *ir.Allocate, *ir.AllocateConst, *ir.DeclBuffer:
		p.allocation(x, true)
	case *ir.While:
		p.line()
		p.str("while ")
		p.tirPrim(x.Cond)
		p.str(":\n")
		p.ind++
		p.stmt(x.Body)
		p.ind--
	case *ir.Evaluate:
		p.line()
		if c, ok := x.Value.(*ir.PrimCall); ok && c.Op == "ret" && len(c.Args) == 1 {
			p.str("T.ret(")
			p.tirPrim(c.Args[0])
		} else if ok && !tvmExprNode[c.Op] {
			// TVM's printer writes an evaluated Call as a bare expression
			// statement (the Evaluate dispatch of
			// src/script/printer/tir/stmt.cc); T.evaluate wraps the rest.
			p.tirPrim(c)
			p.nl()
			return
		} else {
			p.str("T.evaluate(")
			p.tirPrim(x.Value)
		}
		p.str(")\n")
	default:
		p.line()
		p.str("<unprintable statement>\n")
	}
}

// gridLoop reports whether f can be part of a T.grid nest.
func gridLoop(f *ir.For) bool {
	return f.Kind == ir.ForSerial && isZero(f.Min) && len(f.Annotations) == 0 && f.ThreadTag == ""
}

func isZero(e ir.PrimExpr) bool {
	v, ok := ir.IntValue(e)
	return ok && v == 0
}

func (p *printer) forLoop(f *ir.For) {
	loops := []*ir.For{f}
	if gridLoop(f) {
		for {
			inner, ok := loops[len(loops)-1].Body.(*ir.For)
			if !ok || !gridLoop(inner) || mentionsLoopVar(inner.Extent, loops) {
				break
			}
			loops = append(loops, inner)
		}
	}
	p.line()
	p.str("for ")
	for i, l := range loops {
		if i > 0 {
			p.str(", ")
		}
		p.str(p.defineTIRVar(l.Var))
		p.tir.loops[l.Var] = l.Extent
	}
	p.str(" in ")
	switch {
	case len(loops) > 1:
		p.str("T.grid(")
		for i, l := range loops {
			if i > 0 {
				p.str(", ")
			}
			p.tirPrim(l.Extent)
		}
		p.byte(')')
	case gridLoop(f):
		p.str("range(")
		p.tirPrim(f.Extent)
		p.byte(')')
	default:
		if f.Kind == ir.ForSerial && len(f.Annotations) == 0 {
			p.str("range(")
		} else {
			p.str("T.")
			p.str(f.Kind.String())
			p.byte('(')
		}
		if isZero(f.Min) {
			p.tirPrim(f.Extent)
		} else {
			p.tirPrim(f.Min)
			p.str(", ")
			p.tirPrim(ir.Simplify(ir.Add(f.Min, f.Extent)))
		}
		if f.Kind == ir.ForThreadBinding {
			p.str(", thread=")
			p.quote(f.ThreadTag)
		}
		if len(f.Annotations) > 0 {
			p.str(", annotations=")
			p.attrDict(f.Annotations, "")
		}
		p.byte(')')
	}
	p.str(":\n")
	p.ind++
	p.stmt(loops[len(loops)-1].Body)
	p.ind--
	for _, l := range loops {
		delete(p.tir.loops, l.Var)
		p.releaseTIRVar(l.Var)
	}
}

// releaseBuffer frees b's name at the end of its block.
func (p *printer) releaseBuffer(b *ir.Buffer) {
	if name, ok := p.tir.bufs[b]; ok {
		delete(p.tir.bufs, b)
		p.tir.ns.release(name)
	}
}

// releaseTIRVar frees v's name at the end of its scope (see
// nameSpace.release).
func (p *printer) releaseTIRVar(v *ir.PrimVar) {
	if name, ok := p.tir.vars[v]; ok {
		delete(p.tir.vars, v)
		p.tir.ns.release(name)
	}
}

func mentionsLoopVar(e ir.PrimExpr, loops []*ir.For) bool {
	found := false
	ir.VisitPrimVars(e, func(v *ir.PrimVar) {
		for _, l := range loops {
			found = found || l.Var == v
		}
	})
	return found
}

func (p *printer) blockRealize(br *ir.BlockRealize) {
	b := br.Block
	p.line()
	p.str("with T.block(")
	p.quote(b.Name)
	p.str("):\n")
	p.ind++
	p.iterVars(br)
	if br.Predicate != nil {
		p.line()
		p.str("T.where(")
		p.tirPrim(br.Predicate)
		p.str(")\n")
	}
	p.regions("T.reads(", b.Reads)
	p.regions("T.writes(", b.Writes)
	if len(b.Annotations) > 0 {
		p.line()
		p.str("T.block_attr(")
		p.attrDict(b.Annotations, "")
		p.str(")\n")
	}
	p.allocBuffers(b.AllocBuffers)
	for _, mb := range b.MatchBuffers {
		p.line()
		p.str(p.defineBuffer(mb.Buffer))
		p.str(" = T.match_buffer(")
		p.region(mb.Source)
		p.str(", ")
		p.bufferDeclArgs(mb.Buffer)
		p.str(")\n")
	}
	if b.Init != nil {
		p.line()
		p.str("with T.init():\n")
		p.ind++
		p.stmt(b.Init)
		p.ind--
	}
	p.stmt(b.Body)
	p.ind--
	for _, iv := range b.IterVars {
		p.releaseTIRVar(iv.Var)
	}
	for _, buf := range b.AllocBuffers {
		p.releaseBuffer(buf)
	}
	for _, mb := range b.MatchBuffers {
		p.releaseBuffer(mb.Buffer)
	}
}

// iterVars declares a block's iteration variables as TVM's printer does
// (src/script/printer/tir/block.cc): each run of two or more variables
// bound to an enclosing loop's variable over its whole range prints as one
// T.axis.remap; a run of one and every other variable print as
// T.axis.spatial / T.axis.reduce.
func (p *printer) iterVars(br *ir.BlockRealize) {
	ivs := br.Block.IterVars
	var run []int
	flush := func() {
		if len(run) == 1 {
			p.iterVarDef(br, run[0])
		} else if len(run) > 1 {
			p.line()
			for k, i := range run {
				if k > 0 {
					p.str(", ")
				}
				p.str(p.defineTIRVar(ivs[i].Var))
			}
			p.str(" = T.axis.remap(\"")
			for _, i := range run {
				p.str(ivs[i].Kind.String())
			}
			p.str("\", [")
			for k, i := range run {
				if k > 0 {
					p.str(", ")
				}
				p.tirPrim(br.IterValues[i])
			}
			p.str("])\n")
		}
		run = run[:0]
	}
	for i := range ivs {
		if p.remappable(br, i) {
			run = append(run, i)
			continue
		}
		flush()
		p.iterVarDef(br, i)
	}
	flush()
}

// iterVarDef writes `v = T.axis.spatial(dom, value)` (or reduce).
func (p *printer) iterVarDef(br *ir.BlockRealize, i int) {
	iv := br.Block.IterVars[i]
	p.line()
	p.str(p.defineTIRVar(iv.Var))
	p.str(" = T.axis.")
	p.str(iv.Kind.AxisName())
	p.byte('(')
	if isZero(iv.Dom.Min) {
		p.tirPrim(iv.Dom.Extent)
	} else {
		p.byte('(')
		p.tirPrim(iv.Dom.Min)
		p.str(", ")
		p.tirPrim(ir.Simplify(ir.Add(iv.Dom.Min, iv.Dom.Extent)))
		p.byte(')')
	}
	p.str(", ")
	if i < len(br.IterValues) {
		p.tirPrim(br.IterValues[i])
	}
	p.str(")\n")
}

// remappable reports whether iteration variable i of br is bound to an
// enclosing loop's variable over that loop's whole range, which is what
// T.axis.remap declares.
func (p *printer) remappable(br *ir.BlockRealize, i int) bool {
	if len(br.IterValues) != len(br.Block.IterVars) {
		return false
	}
	iv := br.Block.IterVars[i]
	if iv.Kind != ir.IterSpatial && iv.Kind != ir.IterReduce {
		return false
	}
	lv, ok := br.IterValues[i].(*ir.PrimVar)
	if !ok || lv.Type != iv.Var.Type || !isZero(iv.Dom.Min) {
		return false
	}
	ext, ok := p.tir.loops[lv]
	return ok && samePrim(ext, iv.Dom.Extent)
}

func samePrim(a, b ir.PrimExpr) bool {
	if a == b {
		return true
	}
	if x, ok := a.(*ir.IntImm); ok {
		y, ok := b.(*ir.IntImm)
		return ok && x.Type == y.Type && x.Value == y.Value
	}
	return ir.StructuralEqual(a, b, ir.EqualOptions{})
}

func (p *printer) regions(head string, regions []ir.BufferRegion) {
	p.line()
	p.str(head)
	for i, r := range regions {
		if i > 0 {
			p.str(", ")
		}
		p.region(r)
	}
	p.str(")\n")
}

// region writes A[i, 0:4] (a 0-d buffer as A[()], as TVM prints it).
func (p *printer) region(r ir.BufferRegion) {
	{
		p.str(p.bufferName(r.Buffer))
		p.byte('[')
		if len(r.Region) == 0 {
			p.str("()") // a 0-d buffer, as TVM prints it (A[] does not parse)
		}
		for j, rg := range r.Region {
			if j > 0 {
				p.str(", ")
			}
			if v, ok := ir.IntValue(rg.Extent); ok && v == 1 {
				p.tirPrim(rg.Min)
				continue
			}
			p.tirPrim(rg.Min)
			p.byte(':')
			p.tirPrim(ir.Simplify(ir.Add(rg.Min, rg.Extent)))
		}
		p.byte(']')
	}
}

// attrStmt prints an AttrStmt as TVM's printer does (the AttrStmt
// dispatch of src/script/printer/tir/stmt.cc): a thread launch as
// T.launch_thread(tag, extent) defining its variable, anything else as
// T.attr(node, key, value). The last statement of a body prints concisely
// (name = T.launch_thread(...) followed by the body at the same level,
// DoConciseScoping); one followed by more statements prints as a with
// block.
//
// A thread variable launched more than once is declared first, as
// `name = T.env_thread(tag)` (TVM's printer declares it at the frame that
// encloses its uses; here, before its first launch), and each launch names
// it: T.launch_thread(name, extent).
func (p *printer) attrStmt(x *ir.AttrStmt, concise bool) {
	env := x.Thread != nil && p.tir.envThreads[x.Thread]
	if env {
		if _, declared := p.tir.vars[x.Thread]; !declared {
			p.line()
			p.str(p.defineTIRVar(x.Thread))
			p.str(" = T.env_thread(")
			p.quote(x.Tag)
			p.str(")\n")
		}
	}
	p.line()
	if !concise {
		p.str("with ")
	}
	var name string
	if env {
		p.str("T.launch_thread(")
		p.str(p.tir.vars[x.Thread])
	} else if x.Thread != nil {
		name = p.defineTIRVar(x.Thread)
		if concise {
			p.str(name)
			p.str(" = ")
		}
		p.str("T.launch_thread(")
		p.quote(x.Tag)
	} else {
		p.str("T.attr(")
		if x.Reducer != nil {
			p.commReducer(x.Reducer)
		} else {
			p.tirPrim(x.Node)
		}
		p.str(", ")
		p.quote(x.Key)
	}
	p.str(", ")
	p.tirPrim(x.Value)
	p.byte(')')
	if concise {
		p.nl()
		p.stmt(x.Body)
	} else {
		if name != "" {
			p.str(" as ")
			p.str(name)
		}
		p.str(":\n")
		p.ind++
		p.stmt(x.Body)
		p.ind--
	}
	if x.Thread != nil && !env {
		p.releaseTIRVar(x.Thread) // its frame ends, as TVM's does
	}
}

// allocation prints T.allocate, T.allocate_const and T.decl_buffer as
// TVM's printer does (src/script/printer/tir/stmt.cc): "A = T.allocate(...)"
// followed by the body when it is the last statement of its body
// (concise), "with T.allocate(...) as A:" otherwise. An Allocate whose body
// declares a buffer over exactly its memory (IsAllocateDeclBufferPattern)
// prints as that T.decl_buffer alone, its handle then being "A.data". It
// reports false for other statements.
func (p *printer) allocation(s ir.Stmt, concise bool) bool {
	start := len(p.out)
	var name string
	var body ir.Stmt
	var release func()
	switch x := s.(type) {
	case *ir.Allocate:
		if d, ok := ir.AllocatedDeclBuffer(x); ok {
			return p.allocation(d, concise)
		}
		p.line()
		name = p.defineTIRVar(x.Data) // in the enclosing frame, as TVM's DefineVar
		p.str("T.allocate([")
		p.tirPrims(x.Extents)
		p.str("], ")
		p.quote(x.DType.String())
		p.str(", ")
		p.quote(ir.ScopeString(x.Scope))
		if x.Condition != nil {
			p.str(", ")
			p.tirPrim(x.Condition)
		}
		if len(x.Annotations) > 0 {
			p.str(", annotations=")
			p.attrDict(x.Annotations, "")
		}
		p.byte(')')
		body = x.Body
	case *ir.AllocateConst:
		p.line()
		name = p.defineTIRVar(x.Data)
		p.str("T.allocate_const([")
		for i, v := range x.Values {
			if i > 0 {
				p.str(", ")
			}
			switch c := v.(type) {
			case *ir.IntImm:
				p.out = strconv.AppendInt(p.out, c.Value, 10)
			case *ir.FloatImm:
				p.out = ir.AppendFloatLiteral(p.out, c.Value)
			}
		}
		p.str("], ")
		p.quote(x.DType.String())
		p.str(", [")
		p.tirPrims(x.Extents)
		p.str("])")
		body = x.Body
	case *ir.DeclBuffer:
		p.line()
		b := x.Buffer
		_, dataDefined := p.tir.vars[b.Data]
		data := ""
		if dataDefined {
			data = p.tirVarName(b.Data)
		}
		name = p.defineBuffer(b) // defines the handle as name.data when it is new
		p.str("T.decl_buffer(")
		p.bufferArgs(b, true, data)
		p.byte(')')
		release = func() {
			delete(p.tir.bufs, b)
			p.tir.ns.release(name)
		}
		body = x.Body
	default:
		return false
	}
	call := string(p.out[start+4*p.ind:])
	p.out = p.out[:start]
	p.line()
	if concise {
		p.str(name)
		p.str(" = ")
		p.str(call)
		p.nl()
		p.stmt(body)
	} else {
		p.str("with ")
		p.str(call)
		p.str(" as ")
		p.str(name)
		p.str(":\n")
		p.ind++
		p.stmt(body)
		p.ind--
	}
	if release != nil {
		release()
	}
	return true
}

// tvmExprNode names the PrimCall ops that are expression nodes of their
// own in TVM, not Calls (tir::Broadcast, tir::Ramp, tir::Shuffle), so an evaluated one
// keeps its T.evaluate.
var tvmExprNode = map[string]bool{"Broadcast": true, "Ramp": true, "Shuffle": true}

// commReducer prints T.comm_reducer(lambda x, y: x + y, [identity]) as
// TVM's CommReducer dispatch does (src/script/printer/tir/expr.cc): the
// lambda's parameters are the left then the right operands, its body the
// single result or a tuple of them. The operands stay defined in the
// function's namespace after the lambda, so a later variable of the same
// hint gets another name; the text still reads back to an equal module.
func (p *printer) commReducer(r *ir.CommReducer) {
	p.str("T.comm_reducer(lambda ")
	for i, v := range append(slices.Clone(r.Lhs), r.Rhs...) {
		if i > 0 {
			p.str(", ")
		}
		p.str(p.defineTIRVar(v))
	}
	p.str(": ")
	if len(r.Result) > 1 {
		p.byte('(')
	}
	for i, e := range r.Result {
		if i > 0 {
			p.str(", ")
		}
		p.tirPrim(e)
	}
	if len(r.Result) > 1 {
		p.byte(')')
	}
	p.str(", [")
	for i, e := range r.Identity {
		if i > 0 {
			p.str(", ")
		}
		p.tirPrim(e)
	}
	p.str("])")
}
