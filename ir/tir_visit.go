package ir

import "slices"

// TIR traversal: a read-only visitor in the style of go/ast.Inspect and a
// copy-on-write mutator, over statements (For, BufferStore, SeqStmt,
// IfThenElse, LetStmt, AttrStmt, While, Allocate, AllocateConst,
// DeclBuffer, Evaluate, Block, BlockRealize) and every PrimExpr
// node. The same PrimExpr helpers serve Relax symbolic shape arithmetic.
//
// Recursion follows nesting (expression depth, loop depth); a SeqStmt's
// statements are visited in a loop.

// InspectPrim calls f for e and, while f returns true, for each of its
// sub-expressions in pre-order (operands, load indices, call arguments).
// A nil e is skipped.
func InspectPrim(e PrimExpr, f func(PrimExpr) bool) {
	if e == nil || !f(e) {
		return
	}
	switch e := e.(type) {
	case *Binary:
		InspectPrim(e.A, f)
		InspectPrim(e.B, f)
	case *Not:
		InspectPrim(e.A, f)
	case *Select:
		InspectPrim(e.Cond, f)
		InspectPrim(e.True, f)
		InspectPrim(e.False, f)
	case *Cast:
		InspectPrim(e.Value, f)
	case *PrimCall:
		for _, a := range e.Args {
			InspectPrim(a, f)
		}
	case *BufferLoad:
		for _, i := range e.Indices {
			InspectPrim(i, f)
		}
	}
}

// StmtVisitor holds the callbacks of WalkStmt; each may be nil.
type StmtVisitor struct {
	// Stmt is called before a statement's children; returning false skips
	// them (and their expressions).
	Stmt func(Stmt) bool
	// Prim is called for every expression position of a visited statement
	// (loop bounds, indices, stored values, conditions, iteration values,
	// region bounds), pre-order as in InspectPrim.
	Prim func(PrimExpr) bool
	// Buffer is called for every buffer reference: stores, loads (when Prim
	// visits them), block read/write regions and allocated buffers.
	Buffer func(*Buffer)
}

// WalkStmt traverses s in pre-order with the callbacks of v.
func WalkStmt(s Stmt, v *StmtVisitor) {
	if s == nil || (v.Stmt != nil && !v.Stmt(s)) {
		return
	}
	switch s := s.(type) {
	case *For:
		v.prim(s.Min)
		v.prim(s.Extent)
		WalkStmt(s.Body, v)
	case *BufferStore:
		v.buffer(s.Buffer)
		for _, i := range s.Indices {
			v.prim(i)
		}
		v.prim(s.Value)
	case *SeqStmt:
		for _, st := range s.Stmts {
			WalkStmt(st, v)
		}
	case *IfThenElse:
		v.prim(s.Cond)
		WalkStmt(s.Then, v)
		WalkStmt(s.Else, v)
	case *LetStmt:
		v.prim(s.Value)
		WalkStmt(s.Body, v)
	case *AttrStmt:
		v.prim(s.Node)
		if s.Reducer != nil {
			for _, e := range s.Reducer.Identity {
				v.prim(e)
			}
		}
		v.prim(s.Value)
		WalkStmt(s.Body, v)
	case *Evaluate:
		v.prim(s.Value)
	case *While:
		v.prim(s.Cond)
		WalkStmt(s.Body, v)
	case *Allocate:
		for _, e := range s.Extents {
			v.prim(e)
		}
		v.prim(s.Condition)
		WalkStmt(s.Body, v)
	case *AllocateConst:
		for _, e := range s.Extents {
			v.prim(e)
		}
		WalkStmt(s.Body, v)
	case *DeclBuffer:
		v.buffer(s.Buffer)
		WalkStmt(s.Body, v)
	case *BlockRealize:
		for _, iv := range s.IterValues {
			v.prim(iv)
		}
		v.prim(s.Predicate)
		WalkStmt(s.Block, v)
	case *Block:
		for _, iv := range s.IterVars {
			v.prim(iv.Dom.Min)
			v.prim(iv.Dom.Extent)
		}
		for _, r := range s.Reads {
			v.region(r)
		}
		for _, r := range s.Writes {
			v.region(r)
		}
		for _, buf := range s.AllocBuffers {
			v.buffer(buf)
		}
		for _, mb := range s.MatchBuffers {
			v.buffer(mb.Buffer)
			v.region(mb.Source)
		}
		WalkStmt(s.Init, v)
		WalkStmt(s.Body, v)
	}
}

func (v *StmtVisitor) prim(e PrimExpr) {
	if e == nil || (v.Prim == nil && v.Buffer == nil) {
		return
	}
	InspectPrim(e, func(x PrimExpr) bool {
		if ld, ok := x.(*BufferLoad); ok {
			v.buffer(ld.Buffer)
		}
		return v.Prim == nil || v.Prim(x)
	})
}

func (v *StmtVisitor) buffer(b *Buffer) {
	if v.Buffer != nil && b != nil {
		v.Buffer(b)
	}
}

func (v *StmtVisitor) region(r BufferRegion) {
	v.buffer(r.Buffer)
	for _, rg := range r.Region {
		v.prim(rg.Min)
		v.prim(rg.Extent)
	}
}

// TIRMutator rewrites TIR bottom-up, copy-on-write: a node is rebuilt only
// when one of its children changed, so a mutator whose hooks change nothing
// returns the very same node and allocates nothing. Every hook is optional.
//
//	m := &ir.TIRMutator{PostPrim: func(e ir.PrimExpr) ir.PrimExpr {
//		if v, ok := e.(*ir.PrimVar); ok && v == n { return ir.I64(4) }
//		return e
//	}}
//	body := m.Stmt(f.Body)
type TIRMutator struct {
	// PostPrim is called on each expression after its operands were
	// rewritten (e is the possibly rebuilt node); it returns the
	// replacement, or e itself.
	PostPrim func(e PrimExpr) PrimExpr
	// PostStmt is the same for statements.
	PostStmt func(s Stmt) Stmt
	// Buffer maps every buffer reference (stores, loads, regions, allocated
	// buffers); return b itself to keep it. Mapping must be consistent:
	// the same input buffer always gives the same result.
	Buffer func(b *Buffer) *Buffer
	// Var maps variables in binding positions (loop variables, let
	// variables, block iteration variables); uses are seen by PostPrim.
	Var func(v *PrimVar) *PrimVar
}

// Prim rewrites an expression; nil stays nil.
func (m *TIRMutator) Prim(e PrimExpr) PrimExpr {
	if e == nil {
		return nil
	}
	out := e
	switch e := e.(type) {
	case *Binary:
		a, b := m.Prim(e.A), m.Prim(e.B)
		if a != e.A || b != e.B {
			n := NewBinary(e.Op, a, b) // records the type, so DType stays O(1)
			n.span = e.span
			out = n
		}
	case *Not:
		if a := m.Prim(e.A); a != e.A {
			n := &Not{A: a}
			n.span = e.span
			out = n
		}
	case *Select:
		c, t, f := m.Prim(e.Cond), m.Prim(e.True), m.Prim(e.False)
		if c != e.Cond || t != e.True || f != e.False {
			n := &Select{Cond: c, True: t, False: f}
			n.span = e.span
			out = n
		}
	case *Cast:
		if v := m.Prim(e.Value); v != e.Value {
			n := &Cast{Type: e.Type, Value: v}
			n.span = e.span
			out = n
		}
	case *PrimCall:
		if args, ch := m.prims(e.Args); ch {
			n := &PrimCall{Op: e.Op, Args: args, Type: e.Type}
			n.span = e.span
			out = n
		}
	case *BufferLoad:
		buf := m.buffer(e.Buffer)
		idx, ch := m.prims(e.Indices)
		if ch || buf != e.Buffer {
			n := &BufferLoad{Buffer: buf, Indices: idx}
			n.span = e.span
			out = n
		}
	}
	if m.PostPrim != nil {
		out = m.PostPrim(out)
	}
	return out
}

// prims rewrites a list, copying it only when an element changes.
func (m *TIRMutator) prims(in []PrimExpr) ([]PrimExpr, bool) { return mapList(in, m.Prim) }

func (m *TIRMutator) buffer(b *Buffer) *Buffer {
	if m.Buffer == nil || b == nil {
		return b
	}
	return m.Buffer(b)
}

func (m *TIRMutator) bindVar(v *PrimVar) *PrimVar {
	if m.Var == nil || v == nil {
		return v
	}
	return m.Var(v)
}

func (m *TIRMutator) region(r BufferRegion) (BufferRegion, bool) {
	buf := m.buffer(r.Buffer)
	rg, ch := mapList(r.Region, m.rangeOf)
	if !ch && buf == r.Buffer {
		return r, false
	}
	return BufferRegion{Buffer: buf, Region: rg}, true
}

func (m *TIRMutator) rangeOf(r Range) Range {
	return Range{Min: m.Prim(r.Min), Extent: m.Prim(r.Extent)}
}

func (m *TIRMutator) regions(in []BufferRegion) ([]BufferRegion, bool) {
	var out []BufferRegion
	for i, r := range in {
		n, ch := m.region(r)
		if ch && out == nil {
			out = make([]BufferRegion, len(in))
			copy(out, in[:i])
		}
		if out != nil {
			out[i] = n
		}
	}
	if out == nil {
		return in, false
	}
	return out, true
}

// Stmt rewrites a statement; nil stays nil.
func (m *TIRMutator) Stmt(s Stmt) Stmt {
	if s == nil {
		return nil
	}
	out := s
	switch s := s.(type) {
	case *For:
		v, lo, ext, body := m.bindVar(s.Var), m.Prim(s.Min), m.Prim(s.Extent), m.Stmt(s.Body)
		if v != s.Var || lo != s.Min || ext != s.Extent || body != s.Body {
			n := *s
			n.Var, n.Min, n.Extent, n.Body = v, lo, ext, body
			out = &n
		}
	case *BufferStore:
		buf := m.buffer(s.Buffer)
		idx, ch := m.prims(s.Indices)
		val := m.Prim(s.Value)
		if ch || buf != s.Buffer || val != s.Value {
			n := &BufferStore{Buffer: buf, Indices: idx, Value: val}
			n.span = s.span
			out = n
		}
	case *SeqStmt:
		if stmts, ch := mapList(s.Stmts, m.Stmt); ch {
			n := &SeqStmt{Stmts: stmts}
			n.span = s.span
			out = n
		}
	case *IfThenElse:
		c, t, e := m.Prim(s.Cond), m.Stmt(s.Then), m.Stmt(s.Else)
		if c != s.Cond || t != s.Then || e != s.Else {
			n := &IfThenElse{Cond: c, Then: t, Else: e}
			n.span = s.span
			out = n
		}
	case *LetStmt:
		v, val, body := m.bindVar(s.Var), m.Prim(s.Value), m.Stmt(s.Body)
		if v != s.Var || val != s.Value || body != s.Body {
			n := &LetStmt{Var: v, Value: val, Body: body}
			n.span = s.span
			out = n
		}
	case *AttrStmt:
		th := s.Thread
		if th != nil {
			th = m.bindVar(th)
		}
		var node PrimExpr
		if s.Node != nil {
			node = m.Prim(s.Node)
		}
		val, body := m.Prim(s.Value), m.Stmt(s.Body)
		if th != s.Thread || node != s.Node || val != s.Value || body != s.Body {
			n := &AttrStmt{Thread: th, Tag: s.Tag, Node: node, Reducer: s.Reducer, Key: s.Key, Value: val, Body: body}
			n.span = s.span
			out = n
		}
	case *Evaluate:
		if v := m.Prim(s.Value); v != s.Value {
			n := &Evaluate{Value: v}
			n.span = s.span
			out = n
		}
	case *While:
		c, body := m.Prim(s.Cond), m.Stmt(s.Body)
		if c != s.Cond || body != s.Body {
			n := &While{Cond: c, Body: body}
			n.span = s.span
			out = n
		}
	case *Allocate:
		data := m.bindVar(s.Data)
		ext, ch := m.prims(s.Extents)
		var cond PrimExpr
		if s.Condition != nil {
			cond = m.Prim(s.Condition)
		}
		body := m.Stmt(s.Body)
		if ch || data != s.Data || cond != s.Condition || body != s.Body {
			n := *s
			n.Data, n.Extents, n.Condition, n.Body = data, ext, cond, body
			out = &n
		}
	case *AllocateConst:
		data := m.bindVar(s.Data)
		ext, ch := m.prims(s.Extents)
		body := m.Stmt(s.Body)
		if ch || data != s.Data || body != s.Body {
			n := *s
			n.Data, n.Extents, n.Body = data, ext, body
			out = &n
		}
	case *DeclBuffer:
		buf, body := m.buffer(s.Buffer), m.Stmt(s.Body)
		if buf != s.Buffer || body != s.Body {
			n := &DeclBuffer{Buffer: buf, Body: body}
			n.span = s.span
			out = n
		}
	case *BlockRealize:
		vals, ch := m.prims(s.IterValues)
		pred := m.Prim(s.Predicate)
		blk := m.Stmt(s.Block)
		nb, ok := blk.(*Block)
		if !ok {
			// PostStmt replaced the block by a non-block: keep the realize's
			// shape by realizing nothing new (a mutator bug to avoid).
			panic("ir.TIRMutator: a BlockRealize's block must stay a *Block")
		}
		if ch || pred != s.Predicate || nb != s.Block {
			n := &BlockRealize{IterValues: vals, Predicate: pred, Block: nb}
			n.span = s.span
			out = n
		}
	case *Block:
		out = m.block(s)
	}
	if m.PostStmt != nil {
		out = m.PostStmt(out)
	}
	return out
}

func (m *TIRMutator) block(s *Block) Stmt {
	ivs, ich := mapList(s.IterVars, m.iterVar)
	reads, rch := m.regions(s.Reads)
	writes, wch := m.regions(s.Writes)
	allocs, ach := mapList(s.AllocBuffers, m.buffer)
	matches, mch := m.matchBuffers(s.MatchBuffers)
	init, body := m.Stmt(s.Init), m.Stmt(s.Body)
	if !ich && !rch && !wch && !ach && !mch && init == s.Init && body == s.Body {
		return s
	}
	n := *s
	n.IterVars, n.Reads, n.Writes, n.AllocBuffers, n.MatchBuffers = ivs, reads, writes, allocs, matches
	n.Init, n.Body = init, body
	return &n
}

// matchBuffers rewrites a block's match_buffer bindings, copying the list
// only when one changes.
func (m *TIRMutator) matchBuffers(in []MatchBufferRegion) ([]MatchBufferRegion, bool) {
	var out []MatchBufferRegion
	for i, mb := range in {
		src, ch := m.region(mb.Source)
		buf := m.buffer(mb.Buffer)
		if (ch || buf != mb.Buffer) && out == nil {
			out = slices.Clone(in)
		}
		if out != nil {
			out[i] = MatchBufferRegion{Buffer: buf, Source: src}
		}
	}
	if out == nil {
		return in, false
	}
	return out, true
}

// iterVar rewrites a block iteration variable, returning iv itself when
// neither its variable nor its domain changed.
func (m *TIRMutator) iterVar(iv *IterVar) *IterVar {
	v, lo, ext := m.bindVar(iv.Var), m.Prim(iv.Dom.Min), m.Prim(iv.Dom.Extent)
	if v == iv.Var && lo == iv.Dom.Min && ext == iv.Dom.Extent {
		return iv
	}
	return &IterVar{Var: v, Dom: Range{Min: lo, Extent: ext}, Kind: iv.Kind}
}

// PrimFunc rewrites a PrimFunc's body and buffer map (through Buffer);
// it returns f itself when nothing changed. Parameters are kept.
func (m *TIRMutator) PrimFunc(f *PrimFunc) *PrimFunc {
	body := m.Stmt(f.Body)
	var bm map[*PrimVar]*Buffer
	if m.Buffer != nil {
		for _, p := range f.Params {
			b := f.BufferMap[p]
			if b == nil {
				continue
			}
			if n := m.Buffer(b); n != b {
				if bm == nil {
					bm = make(map[*PrimVar]*Buffer, len(f.BufferMap))
					for k, v := range f.BufferMap {
						bm[k] = v
					}
				}
				bm[p] = n
			}
		}
	}
	if body == f.Body && bm == nil {
		return f
	}
	n := *f
	n.Body = body
	if bm != nil {
		n.BufferMap = bm
	}
	return &n
}
