package ir

import "slices"

// TIR comparison: PrimFuncs, statements and buffers. Buffers, loop vars, let
// vars and block iteration vars are defined where they are introduced; block
// names are ignored.

func (e *eqState) primFunc(a, b *PrimFunc) bool {
	e.field("params")
	if len(a.Params) != len(b.Params) {
		return e.failStr(countOf(len(a.Params), "params"), countOf(len(b.Params), "params"))
	}
	for i := range a.Params {
		e.index(i)
		pa, pb := a.Params[i], b.Params[i]
		if !e.definePrim(pa, pb) {
			return e.failStr(primVarDesc(pa), primVarDesc(pb))
		}
		ba, bb := a.BufferMap[pa], b.BufferMap[pb]
		if (ba == nil) != (bb == nil) {
			return e.failStr(bufferDesc(ba), bufferDesc(bb))
		}
		if ba != nil {
			// match_buffer shapes define their symbolic variables.
			e.field("buffer")
			saved := e.defining
			e.defining = true
			ok := e.defineBuffer(ba, bb)
			e.defining = saved
			if !ok {
				return false
			}
			e.pop()
		}
		e.pop()
	}
	e.pop()
	if a.Ret != b.Ret {
		e.field("ret")
		return e.failStr(a.Ret.String(), b.Ret.String())
	}
	if !e.attrs(a.Attrs, b.Attrs) {
		return false
	}
	e.field("body")
	if !e.stmt(a.Body, b.Body) {
		return false
	}
	e.pop()
	return true
}

// defineBuffer pairs two buffers at their definition and compares their
// layout (dtype, scope, shape) and data handles.
func (e *eqState) defineBuffer(a, b *Buffer) bool {
	if !e.bufferLayout(a, b) || !e.bufs.pair(a, b) || !e.definePrim(a.Data, b.Data) {
		return e.failStr(bufferDesc(a), bufferDesc(b))
	}
	return true
}

func (e *eqState) bufferLayout(a, b *Buffer) bool {
	if a.DType != b.DType || a.Scope != b.Scope || !e.primsQuiet(a.Shape, b.Shape) ||
		a.AlignOrDefault() != b.AlignOrDefault() || a.OffsetFactorOrDefault() != b.OffsetFactorOrDefault() ||
		a.AutoBroadcast != b.AutoBroadcast || !slices.Equal(a.AxisSeparators, b.AxisSeparators) ||
		(a.ElemOffset == nil) != (b.ElemOffset == nil) {
		return false
	}
	// Strides and the element offset define the variables first met there.
	saved := e.defining
	e.defining = true
	defer func() { e.defining = saved }()
	return e.primsQuiet(a.Strides, b.Strides) && (a.ElemOffset == nil || e.primQuiet(a.ElemOffset, b.ElemOffset))
}

// useBufferQuiet compares buffer uses: paired, or free.
// defineField pairs the variables a statement defines in field name,
// recording the mismatch when they differ.
func (e *eqState) defineField(name string, a, b *PrimVar) bool {
	if !e.definePrim(a, b) {
		e.field(name)
		return e.failStr(primVarDesc(a), primVarDesc(b))
	}
	return true
}

func (e *eqState) useBufferQuiet(a, b *Buffer) bool {
	if m, ok := e.bufs.l.Get(a); ok {
		return m == b
	}
	if _, ok := e.bufs.r.Get(b); ok {
		return false
	}
	if !e.opts.MapFreeVars {
		if a == b {
			return e.bufs.pair(a, b)
		}
		// A buffer no statement declares (lowered TIR's T.Buffer views
		// over existing memory) is defined where first met, like TVM's
		// Buffer comparison: same layout over the corresponding handle.
		return e.bufferLayout(a, b) && e.primQuiet(a.Data, b.Data) && e.bufs.pair(a, b)
	}
	return e.bufferLayout(a, b) && e.bufs.pair(a, b) && e.definePrim(a.Data, b.Data)
}

func (e *eqState) useBuffer(a, b *Buffer) bool {
	if !e.useBufferQuiet(a, b) {
		return e.failStr(bufferDesc(a), bufferDesc(b))
	}
	return true
}

func (e *eqState) primList(name string, a, b []PrimExpr) bool {
	e.field(name)
	if len(a) != len(b) {
		return e.failStr(countOf(len(a), name), countOf(len(b), name))
	}
	for i := range a {
		e.index(i)
		if !e.prim(a[i], b[i]) {
			return false
		}
		e.pop()
	}
	e.pop()
	return true
}

func (e *eqState) primField(name string, a, b PrimExpr) bool {
	e.field(name)
	if !e.prim(a, b) {
		return false
	}
	e.pop()
	return true
}

func (e *eqState) stmtField(name string, a, b Stmt) bool {
	e.field(name)
	if !e.stmt(a, b) {
		return false
	}
	e.pop()
	return true
}

func (e *eqState) stmtMismatch(a, b Stmt) bool {
	return e.failStr(describe(a), describe(b))
}

func (e *eqState) stmt(a, b Stmt) bool {
	if a == nil || b == nil {
		if a == nil && b == nil {
			return true
		}
		return e.stmtMismatch(a, b)
	}
	switch x := a.(type) {
	case *For:
		y, ok := b.(*For)
		if !ok || x.Kind != y.Kind || x.ThreadTag != y.ThreadTag {
			return e.stmtMismatch(a, b)
		}
		if !e.primField("min", x.Min, y.Min) || !e.primField("extent", x.Extent, y.Extent) {
			return false
		}
		if !e.defineField("loop_var", x.Var, y.Var) {
			return false
		}
		if !e.attrs(x.Annotations, y.Annotations) {
			return false
		}
		return e.stmtField("body", x.Body, y.Body)
	case *BufferStore:
		y, ok := b.(*BufferStore)
		if !ok {
			return e.stmtMismatch(a, b)
		}
		e.field("buffer")
		if !e.useBuffer(x.Buffer, y.Buffer) {
			return false
		}
		e.pop()
		return e.primList("indices", x.Indices, y.Indices) && e.primField("value", x.Value, y.Value)
	case *SeqStmt:
		y, ok := b.(*SeqStmt)
		if !ok {
			return e.stmtMismatch(a, b)
		}
		e.field("seq")
		if len(x.Stmts) != len(y.Stmts) {
			return e.failStr(countOf(len(x.Stmts), "statements"), countOf(len(y.Stmts), "statements"))
		}
		for i := range x.Stmts {
			e.index(i)
			if !e.stmt(x.Stmts[i], y.Stmts[i]) {
				return false
			}
			e.pop()
		}
		e.pop()
		return true
	case *IfThenElse:
		y, ok := b.(*IfThenElse)
		if !ok {
			return e.stmtMismatch(a, b)
		}
		return e.primField("cond", x.Cond, y.Cond) && e.stmtField("then", x.Then, y.Then) &&
			e.stmtField("else", x.Else, y.Else)
	case *LetStmt:
		y, ok := b.(*LetStmt)
		if !ok {
			return e.stmtMismatch(a, b)
		}
		if !e.primField("value", x.Value, y.Value) {
			return false
		}
		if !e.defineField("var", x.Var, y.Var) {
			return false
		}
		return e.stmtField("body", x.Body, y.Body)
	case *AttrStmt:
		y, ok := b.(*AttrStmt)
		if !ok || x.Key != y.Key || x.Tag != y.Tag || (x.Thread == nil) != (y.Thread == nil) || (x.Node == nil) != (y.Node == nil) || (x.Reducer == nil) != (y.Reducer == nil) {
			return e.stmtMismatch(a, b)
		}
		if !e.primField("value", x.Value, y.Value) {
			return false
		}
		if x.Node != nil && !e.primField("node", x.Node, y.Node) {
			return false
		}
		if x.Reducer != nil && !e.commReducer(x.Reducer, y.Reducer) {
			return false
		}
		if x.Thread != nil && !e.definePrim(x.Thread, y.Thread) {
			e.field("thread")
			return e.failStr(primVarDesc(x.Thread), primVarDesc(y.Thread))
		}
		return e.stmtField("body", x.Body, y.Body)
	case *Evaluate:
		y, ok := b.(*Evaluate)
		if !ok {
			return e.stmtMismatch(a, b)
		}
		return e.primField("value", x.Value, y.Value)
	case *While:
		y, ok := b.(*While)
		if !ok {
			return e.stmtMismatch(a, b)
		}
		return e.primField("cond", x.Cond, y.Cond) && e.stmtField("body", x.Body, y.Body)
	case *Allocate:
		y, ok := b.(*Allocate)
		if !ok || x.DType != y.DType || ScopeString(x.Scope) != ScopeString(y.Scope) {
			return e.stmtMismatch(a, b)
		}
		if !e.primList("extents", x.Extents, y.Extents) || !e.primField("condition", x.Condition, y.Condition) || !e.attrs(x.Annotations, y.Annotations) {
			return false
		}
		if !e.defineField("buffer_var", x.Data, y.Data) {
			return false
		}
		return e.stmtField("body", x.Body, y.Body)
	case *AllocateConst:
		y, ok := b.(*AllocateConst)
		if !ok || x.DType != y.DType {
			return e.stmtMismatch(a, b)
		}
		if !e.primList("extents", x.Extents, y.Extents) || !e.primList("data", x.Values, y.Values) {
			return false
		}
		if !e.defineField("buffer_var", x.Data, y.Data) {
			return false
		}
		return e.stmtField("body", x.Body, y.Body)
	case *DeclBuffer:
		y, ok := b.(*DeclBuffer)
		if !ok {
			return e.stmtMismatch(a, b)
		}
		e.field("buffer")
		if !e.defineBuffer(x.Buffer, y.Buffer) {
			return false
		}
		e.pop()
		return e.stmtField("body", x.Body, y.Body)
	case *BlockRealize:
		y, ok := b.(*BlockRealize)
		if !ok {
			return e.stmtMismatch(a, b)
		}
		if !e.primList("iter_values", x.IterValues, y.IterValues) || !e.primField("predicate", x.Predicate, y.Predicate) {
			return false
		}
		return e.stmtField("block", x.Block, y.Block)
	case *Block:
		y, ok := b.(*Block)
		if !ok {
			return e.stmtMismatch(a, b)
		}
		return e.tirBlock(x, y)
	}
	return e.stmtMismatch(a, b)
}

func (e *eqState) tirBlock(a, b *Block) bool {
	e.field("iter_vars")
	if len(a.IterVars) != len(b.IterVars) {
		return e.failStr(countOf(len(a.IterVars), "iter_vars"), countOf(len(b.IterVars), "iter_vars"))
	}
	for i := range a.IterVars {
		e.index(i)
		x, y := a.IterVars[i], b.IterVars[i]
		if x.Kind != y.Kind {
			return e.failStr(x.Kind.String(), y.Kind.String())
		}
		if !e.primField("min", x.Dom.Min, y.Dom.Min) || !e.primField("extent", x.Dom.Extent, y.Dom.Extent) {
			return false
		}
		if !e.definePrim(x.Var, y.Var) {
			return e.failStr(primVarDesc(x.Var), primVarDesc(y.Var))
		}
		e.pop()
	}
	e.pop()
	e.field("alloc_buffers")
	if len(a.AllocBuffers) != len(b.AllocBuffers) {
		return e.failStr(countOf(len(a.AllocBuffers), "alloc_buffers"), countOf(len(b.AllocBuffers), "alloc_buffers"))
	}
	for i := range a.AllocBuffers {
		e.index(i)
		if !e.defineBuffer(a.AllocBuffers[i], b.AllocBuffers[i]) {
			return false
		}
		e.pop()
	}
	e.pop()
	if len(a.MatchBuffers) != len(b.MatchBuffers) {
		e.field("match_buffers")
		return e.failStr(countOf(len(a.MatchBuffers), "match_buffers"), countOf(len(b.MatchBuffers), "match_buffers"))
	}
	for i := range a.MatchBuffers {
		x, y := a.MatchBuffers[i], b.MatchBuffers[i]
		if !e.regions("match_buffers", []BufferRegion{x.Source}, []BufferRegion{y.Source}) {
			return false
		}
		saved := e.defining
		e.defining = true // the matched buffer's shape may define variables
		ok := e.defineBuffer(x.Buffer, y.Buffer)
		e.defining = saved
		if !ok {
			return false
		}
	}
	if !e.regions("reads", a.Reads, b.Reads) || !e.regions("writes", a.Writes, b.Writes) {
		return false
	}
	if !e.stmtField("init", a.Init, b.Init) || !e.stmtField("body", a.Body, b.Body) {
		return false
	}
	return e.attrs(a.Annotations, b.Annotations)
}

func (e *eqState) regions(name string, a, b []BufferRegion) bool {
	e.field(name)
	if len(a) != len(b) {
		return e.failStr(countOf(len(a), name), countOf(len(b), name))
	}
	for i := range a {
		e.index(i)
		x, y := a[i], b[i]
		if !e.useBuffer(x.Buffer, y.Buffer) {
			return false
		}
		if len(x.Region) != len(y.Region) {
			return e.failStr(countOf(len(x.Region), "ranges"), countOf(len(y.Region), "ranges"))
		}
		for j := range x.Region {
			e.index(j)
			if !e.primField("min", x.Region[j].Min, y.Region[j].Min) ||
				!e.primField("extent", x.Region[j].Extent, y.Region[j].Extent) {
				return false
			}
			e.pop()
		}
		e.pop()
	}
	e.pop()
	return true
}

// commReducer compares two reducers, binding their operands pairwise; a
// difference is reported under the path segment "reducer".
func (e *eqState) commReducer(x, y *CommReducer) bool {
	e.field("reducer")
	if len(x.Identity) != len(y.Identity) || len(x.Lhs) != len(y.Lhs) || len(x.Rhs) != len(y.Rhs) || len(x.Result) != len(y.Result) {
		return e.failStr(countOf(len(x.Identity), "identities"), countOf(len(y.Identity), "identities"))
	}
	for i := range x.Identity {
		if !e.primField("identity", x.Identity[i], y.Identity[i]) {
			return false
		}
	}
	for i := range x.Lhs {
		for _, p := range [2][2]*PrimVar{{x.Lhs[i], y.Lhs[i]}, {x.Rhs[i], y.Rhs[i]}} {
			if !e.definePrim(p[0], p[1]) {
				return e.failStr(primVarDesc(p[0]), primVarDesc(p[1]))
			}
		}
	}
	for i := range x.Result {
		if !e.primField("result", x.Result[i], y.Result[i]) {
			return false
		}
	}
	e.pop()
	return true
}
