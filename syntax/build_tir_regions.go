package syntax

import "github.com/phasec/phasec/ir"

// Read/write region inference for blocks printed without T.reads/T.writes.
//
// The rule is deliberately simple and conservative (a superset of what the
// block touches, never less):
//   - every buffer loaded in the block's body or init is read, every buffer
//     stored to is written, in order of first access; buffers the block
//     allocates itself are excluded;
//   - a buffer accessed at exactly one index tuple, whose indices mention
//     only variables defined outside the block's body (its iteration
//     variables and enclosing loop variables), gets that point region
//     (extent 1 per dimension);
//   - any other buffer (several distinct index tuples, indices over loops
//     inside the block, accesses inside nested blocks) gets the whole buffer.
//
// TVM infers tighter regions (relaxing inner loop variables over their
// ranges); the two agree on the common one-store-per-block kernels that
// LegalizeOps produces.

type access struct {
	buf     *ir.Buffer
	indices []ir.PrimExpr // nil after the access was widened to the whole buffer
	whole   bool
	region  *ir.BufferRegion // the source region, for an access through a match_buffer
}

type regionCollector struct {
	local   map[*ir.PrimVar]bool // variables bound inside the block body
	own     map[*ir.Buffer]bool  // buffers the block allocates
	reads   []*access
	writes  []*access
	readAt  map[*ir.Buffer]*access
	writeAt map[*ir.Buffer]*access
	// match maps the block's match_buffer buffers to the regions they
	// view: accessing one accesses that region.
	match map[*ir.Buffer]*ir.BufferRegion
}

func inferRegions(blk *ir.Block) (reads, writes []ir.BufferRegion) {
	c := &regionCollector{local: map[*ir.PrimVar]bool{}, own: map[*ir.Buffer]bool{},
		readAt: map[*ir.Buffer]*access{}, writeAt: map[*ir.Buffer]*access{}}
	for _, b := range blk.AllocBuffers {
		c.own[b] = true
	}
	for i := range blk.MatchBuffers {
		if c.match == nil {
			c.match = map[*ir.Buffer]*ir.BufferRegion{}
		}
		c.match[blk.MatchBuffers[i].Buffer] = &blk.MatchBuffers[i].Source
	}
	if blk.Init != nil {
		c.stmt(blk.Init, false)
	}
	c.stmt(blk.Body, false)
	return c.result(c.reads), c.result(c.writes)
}

func (c *regionCollector) result(list []*access) []ir.BufferRegion {
	out := []ir.BufferRegion{}
	for _, a := range list {
		if a.region != nil {
			out = append(out, *a.region)
			continue
		}
		if a.whole {
			out = append(out, wholeRegion(a.buf))
			continue
		}
		r := ir.BufferRegion{Buffer: a.buf, Region: make([]ir.Range, len(a.indices))}
		for i, x := range a.indices {
			r.Region[i] = ir.Range{Min: x, Extent: ir.NewInt(x.DType(), 1)}
		}
		out = append(out, r)
	}
	return out
}

func (c *regionCollector) note(buf *ir.Buffer, idx []ir.PrimExpr, write, nested bool) {
	if c.own[buf] {
		return
	}
	at, list := c.readAt, &c.reads
	if write {
		at, list = c.writeAt, &c.writes
	}
	if src, ok := c.match[buf]; ok {
		if _, seen := at[buf]; !seen {
			a := &access{buf: src.Buffer, region: src}
			at[buf] = a
			*list = append(*list, a)
		}
		return
	}
	whole := nested
	for _, x := range idx {
		if c.mentionsLocal(x) {
			whole = true
		}
	}
	a, seen := at[buf]
	if !seen {
		a = &access{buf: buf, indices: idx, whole: whole}
		at[buf] = a
		*list = append(*list, a)
		return
	}
	if whole || !primsEqual(a.indices, idx) {
		a.whole = true
	}
}

func (c *regionCollector) mentionsLocal(e ir.PrimExpr) bool {
	found := false
	walkPrim(e, func(x ir.PrimExpr) {
		if v, ok := x.(*ir.PrimVar); ok && c.local[v] {
			found = true
		}
	})
	return found
}

func (c *regionCollector) expr(e ir.PrimExpr, nested bool) {
	walkPrim(e, func(x ir.PrimExpr) {
		if l, ok := x.(*ir.BufferLoad); ok {
			c.note(l.Buffer, l.Indices, false, nested)
		}
	})
}

func (c *regionCollector) stmt(s ir.Stmt, nested bool) {
	switch s := s.(type) {
	case nil:
	case *ir.SeqStmt:
		for _, x := range s.Stmts {
			c.stmt(x, nested)
		}
	case *ir.BufferStore:
		for _, x := range s.Indices {
			c.expr(x, nested)
		}
		c.expr(s.Value, nested)
		c.note(s.Buffer, s.Indices, true, nested)
	case *ir.For:
		c.local[s.Var] = true
		c.expr(s.Min, nested)
		c.expr(s.Extent, nested)
		c.stmt(s.Body, nested)
	case *ir.IfThenElse:
		c.expr(s.Cond, nested)
		c.stmt(s.Then, nested)
		c.stmt(s.Else, nested)
	case *ir.LetStmt:
		c.local[s.Var] = true
		c.expr(s.Value, nested)
		c.stmt(s.Body, nested)
	case *ir.AttrStmt:
		if s.Thread != nil {
			c.local[s.Thread] = true
		} else {
			c.expr(s.Node, nested)
		}
		c.expr(s.Value, nested)
		c.stmt(s.Body, nested)
	case *ir.Evaluate:
		c.expr(s.Value, nested)
	case *ir.While:
		c.expr(s.Cond, true)
		c.stmt(s.Body, true) // its iterations are not known: whole buffers
	case *ir.Allocate:
		c.local[s.Data] = true
		for _, x := range s.Extents {
			c.expr(x, nested)
		}
		c.expr(s.Condition, nested)
		c.stmt(s.Body, nested)
	case *ir.AllocateConst:
		c.local[s.Data] = true
		c.stmt(s.Body, nested)
	case *ir.DeclBuffer:
		if c.local[s.Buffer.Data] {
			c.own[s.Buffer] = true // memory allocated inside the block
		}
		c.stmt(s.Body, nested)
	case *ir.BlockRealize:
		for _, v := range s.IterValues {
			c.expr(v, nested)
		}
		if s.Predicate != nil {
			c.expr(s.Predicate, nested)
		}
		inner := s.Block
		for _, b := range inner.AllocBuffers {
			c.own[b] = true
		}
		for _, mb := range inner.MatchBuffers {
			c.own[mb.Buffer] = true
		}
		for _, r := range inner.Reads {
			c.note(r.Buffer, nil, false, true)
		}
		for _, r := range inner.Writes {
			c.note(r.Buffer, nil, true, true)
		}
	}
}

// walkPrim calls f on e and every subexpression (recursion follows
// expression nesting only).
func walkPrim(e ir.PrimExpr, f func(ir.PrimExpr)) {
	if e == nil {
		return
	}
	f(e)
	switch e := e.(type) {
	case *ir.Binary:
		walkPrim(e.A, f)
		walkPrim(e.B, f)
	case *ir.Not:
		walkPrim(e.A, f)
	case *ir.Select:
		walkPrim(e.Cond, f)
		walkPrim(e.True, f)
		walkPrim(e.False, f)
	case *ir.Cast:
		walkPrim(e.Value, f)
	case *ir.PrimCall:
		for _, a := range e.Args {
			walkPrim(a, f)
		}
	case *ir.BufferLoad:
		for _, a := range e.Indices {
			walkPrim(a, f)
		}
	}
}

func primsEqual(a, b []ir.PrimExpr) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if !primEqual(a[i], b[i]) {
			return false
		}
	}
	return true
}

// primEqual is syntactic equality (variables by identity).
func primEqual(a, b ir.PrimExpr) bool {
	switch x := a.(type) {
	case *ir.PrimVar:
		return a == b
	case *ir.IntImm:
		y, ok := b.(*ir.IntImm)
		return ok && x.Value == y.Value && x.Type == y.Type
	case *ir.FloatImm:
		y, ok := b.(*ir.FloatImm)
		return ok && x.Value == y.Value && x.Type == y.Type
	case *ir.Binary:
		y, ok := b.(*ir.Binary)
		return ok && x.Op == y.Op && primEqual(x.A, y.A) && primEqual(x.B, y.B)
	case *ir.Cast:
		y, ok := b.(*ir.Cast)
		return ok && x.Type == y.Type && primEqual(x.Value, y.Value)
	}
	return false
}
