package syntax

import (
	"github.com/phasec/phasec/ir"
)

// T.block: iteration variables (T.axis.*), read/write regions (given or
// inferred), T.init, T.where, T.block_attr and block-local buffers.

func (bd *builder) tirBlock(a *ast, w *withNode) ir.Stmt {
	name := ""
	for i, it := range a.Items {
		switch {
		case a.Keywords[i] == "" && i == 0, a.Keywords[i] == "name_hint":
			if it.Kind != aStr {
				bd.fail(it.Span, "expected a block name string, found %s", it.describe())
			}
			name = it.Text
		case a.Keywords[i] == "no_realize":
		default:
			bd.fail(it.Span, "unexpected argument in T.block(...)")
		}
	}
	if w.As != nil {
		bd.fail(a.Span, "\"with T.block(...) as ...\" is not supported")
	}
	st := bd.tir
	blk := &ir.Block{Name: name}
	realize := &ir.BlockRealize{IterValues: []ir.PrimExpr{}, Block: blk}
	blk.SetSpan(a.Span)
	realize.SetSpan(a.Span)
	savedAllocs := st.allocs
	st.allocs = &blk.AllocBuffers
	st.depth++
	bd.push()
	defer func() {
		bd.pop()
		st.depth--
		st.allocs = savedAllocs
	}()
	var reads, writes []ir.BufferRegion
	readsGiven, writesGiven := false, false
	var body []*stmtNode
	for _, s := range suiteStmts(w.Body) {
		bd.try(func() {
			if s.With != nil {
				if x := bd.conv.expr(s.With.Item); x.callee() == "T.init" {
					if blk.Init != nil {
						bd.fail(x.Span, "expected one T.init() per block, found a second one")
					}
					blk.Init = bd.tirBody(s.With.Body)
					return
				}
			}
			if s.Simple == nil || s.Simple.Expr == nil {
				body = append(body, s)
				return
			}
			as := s.Simple.Expr
			if as.Value != nil {
				v := bd.conv.exprList(as.Value)
				if c := v.callee(); len(c) > 7 && c[:7] == "T.axis." {
					bd.blockAxes(bd.conv.exprList(as.Target), v, blk, realize)
					return
				}
				if v.callee() == "T.match_buffer" {
					bd.blockMatchBuffer(bd.conv.exprList(as.Target), v, blk)
					return
				}
				body = append(body, s)
				return
			}
			x := bd.conv.exprList(as.Target)
			switch x.callee() {
			case "T.reads":
				reads, readsGiven = bd.regions(x), true
			case "T.writes":
				writes, writesGiven = bd.regions(x), true
			case "T.block_attr", "T.sblock_attr":
				if len(x.Items) != 1 {
					bd.fail(x.Span, "expected T.block_attr({...})")
				}
				blk.Annotations = bd.attrDict(x.Items[0])
			case "T.where":
				if len(x.Items) != 1 {
					bd.fail(x.Span, "expected T.where(condition)")
				}
				realize.Predicate = bd.prim(x.Items[0])
			default:
				body = append(body, s)
			}
		})
	}
	blk.Body = bd.tirStmts(body)
	if !readsGiven || !writesGiven {
		r, w := inferRegions(blk)
		if !readsGiven {
			reads = r
		}
		if !writesGiven {
			writes = w
		}
	}
	if reads == nil {
		reads = []ir.BufferRegion{}
	}
	if writes == nil {
		writes = []ir.BufferRegion{}
	}
	blk.Reads, blk.Writes = reads, writes
	return realize
}

// blockMatchBuffer converts "A_1 = T.match_buffer(A[region], shape, ...)"
// at the top of a block: A_1 views that region of A (TVM's
// MatchBufferRegion; tensorized blocks declare their operands so).
func (bd *builder) blockMatchBuffer(target, v *ast, blk *ir.Block) {
	if target.Kind != aName {
		bd.fail(target.Span, "expected a buffer name, found %s", target.describe())
	}
	ok := false
	defer func() {
		if !ok {
			bd.define(target.Name, &symbol{poison: true}) // uses are not errors again
		}
	}()
	if len(v.Items) < 2 || v.Keywords[0] != "" {
		bd.fail(v.Span, "expected T.match_buffer(region, shape, dtype, ...)")
	}
	if v.Items[0].Kind != aIndex && v.Items[0].Kind != aName {
		bd.fail(v.Items[0].Span, "expected a buffer region such as A[vi, 0:4] to match in a block, found %s", v.Items[0].describe())
	}
	src := bd.regions(&ast{Kind: aCall, Items: v.Items[:1], Keywords: v.Keywords[:1], Span: v.Span})[0]
	buf := bd.bufferDecl(v, target.Name)
	if len(buf.Shape) > len(src.Region) {
		bd.fail(v.Span, "the matched buffer has %s, more than the region's %d", plural(len(buf.Shape), "dimension"), len(src.Region))
	}
	if buf.DType != src.Buffer.DType {
		bd.fail(v.Span, "the matched buffer's dtype %s differs from %s's %s", buf.DType, src.Buffer.Name, src.Buffer.DType)
	}
	blk.MatchBuffers = append(blk.MatchBuffers, ir.MatchBufferRegion{Buffer: buf, Source: src})
	bd.define(target.Name, &symbol{buf: buf})
	ok = true
}

// blockAxes converts "vi = T.axis.spatial(dom, value)" and
// "vi, vj = T.axis.remap("SR", [i, j])".
func (bd *builder) blockAxes(target, v *ast, blk *ir.Block, realize *ir.BlockRealize) {
	var names []*ast
	if target.Kind == aTuple {
		names = target.Items
	} else {
		names = []*ast{target}
	}
	for _, n := range names {
		if n.Kind != aName {
			bd.fail(n.Span, "expected a block variable name, found %s", n.describe())
		}
	}
	add := func(n *ast, kind ir.IterKind, dom ir.Range, value ir.PrimExpr) {
		iv := ir.NewPrimVar(n.Name, value.DType())
		iv.SetSpan(n.Span)
		blk.IterVars = append(blk.IterVars, &ir.IterVar{Var: iv, Dom: dom, Kind: kind})
		realize.IterValues = append(realize.IterValues, value)
		bd.define(n.Name, &symbol{prim: iv})
	}
	c := v.callee()
	switch c {
	case "T.axis.remap":
		var vars []*ast
		if len(v.Items) == 2 {
			if g := bd.loopGroup(v.Items[1]); g != nil {
				vars = g // T.axis.remap("SS", iters) after "for iters in T.grid(...)"
			} else if v.Items[1].Kind == aList || v.Items[1].Kind == aTuple {
				vars = v.Items[1].Items
			}
		}
		if len(v.Items) != 2 || v.Items[0].Kind != aStr || vars == nil {
			bd.fail(v.Span, "expected T.axis.remap(\"SR...\", [loop vars])")
		}
		kinds := v.Items[0].Text
		if len(kinds) != len(vars) || len(vars) != len(names) {
			bd.fail(v.Span, "T.axis.remap: %d kinds, %d loop variables and %d names must agree", len(kinds), len(vars), len(names))
		}
		for i, lv := range vars {
			if lv.Kind != aName {
				bd.fail(lv.Span, "expected a loop variable, found %s", lv.describe())
			}
			s := bd.lookup(lv.Name)
			if s == nil || s.loop == nil {
				if s != nil && s.poison {
					bd.skip()
				}
				bd.fail(lv.Span, "undefined loop variable %s%s", lv.Name, didYouMean(lv.Name, bd.visibleNames(), ""))
			}
			kind := ir.IterSpatial
			switch kinds[i] {
			case 'S':
			case 'R':
				kind = ir.IterReduce
			default:
				bd.fail(v.Items[0].Span, "expected S or R in the T.axis.remap kinds, found %q", kinds[i])
			}
			add(names[i], kind, ir.Range{Min: s.loop.min, Extent: s.loop.extent}, s.prim)
		}
	case "T.axis.spatial", "T.axis.reduce", "T.axis.S", "T.axis.R", "T.axis.scan", "T.axis.opaque":
		if len(names) != 1 || len(v.Items) != 2 {
			bd.fail(v.Span, "expected name = %s(domain, value)", c)
		}
		kind := map[string]ir.IterKind{"T.axis.reduce": ir.IterReduce, "T.axis.R": ir.IterReduce,
			"T.axis.scan": ir.IterScan, "T.axis.opaque": ir.IterOpaque}[c] // IterSpatial otherwise
		value := bd.prim(v.Items[1])
		dom := v.Items[0]
		var r ir.Range
		if dom.Kind == aTuple || dom.Kind == aList {
			if len(dom.Items) != 2 {
				bd.fail(dom.Span, "expected a domain (begin, end), found %s", plural(len(dom.Items), "value"))
			}
			lo, hi := bd.operands(dom.Items[0], dom.Items[1])
			r = ir.Range{Min: lo, Extent: extentOf(lo, hi)}
		} else {
			ext := bd.adapt(bd.prim(dom), isLiteral(dom), value.DType())
			r = ir.Range{Min: ir.NewInt(ext.DType(), 0), Extent: ext}
		}
		add(names[0], kind, r, value)
	default:
		bd.fail(v.Span, "unknown block axis %s%s", c, didYouMean(c, []string{"T.axis.remap", "T.axis.spatial", "T.axis.reduce", "T.axis.scan", "T.axis.opaque"}, ""))
	}
}

// regions converts the arguments of T.reads/T.writes: buffer accesses with
// indices or slices (A[vi, 0:4]), whole buffers (A), or one list of them.
func (bd *builder) regions(call *ast) []ir.BufferRegion {
	items := call.Items
	if len(items) == 1 && (items[0].Kind == aList || items[0].Kind == aTuple) {
		items = items[0].Items
	}
	out := []ir.BufferRegion{}
	for _, it := range items {
		if it.Kind == aName {
			buf := bd.bufferOf(it)
			out = append(out, wholeRegion(buf))
			continue
		}
		if it.Kind != aIndex {
			bd.fail(it.Span, "expected a buffer region such as A[vi, 0:4], found %s", it.describe())
		}
		buf := bd.bufferOf(it.X)
		idx := it.Items
		if len(idx) == 1 && idx[0].Kind == aTuple {
			idx = idx[0].Items
		}
		if len(idx) != len(buf.Shape) {
			bd.fail(it.Span, "buffer %s has %s, region has %d", buf.Name, plural(len(buf.Shape), "dimension"), len(idx))
		}
		r := ir.BufferRegion{Buffer: buf, Region: make([]ir.Range, len(idx))}
		for d, x := range idx {
			t := bd.dimType(buf, d)
			if x.Kind != aSlice {
				p := bd.adapt(bd.prim(x), isLiteral(x), t)
				r.Region[d] = ir.Range{Min: p, Extent: ir.NewInt(p.DType(), 1)}
				continue
			}
			var lo, hi ir.PrimExpr
			if x.X != nil {
				lo = bd.adapt(bd.prim(x.X), isLiteral(x.X), t)
			} else {
				lo = ir.NewInt(t, 0)
			}
			if x.Y != nil {
				hi = bd.adapt(bd.prim(x.Y), isLiteral(x.Y), t)
			} else {
				hi = buf.Shape[d]
			}
			lo, hi = bd.unify(lo, hi, false, false)
			r.Region[d] = ir.Range{Min: lo, Extent: extentOf(lo, hi)}
		}
		out = append(out, r)
	}
	return out
}

func wholeRegion(buf *ir.Buffer) ir.BufferRegion {
	r := ir.BufferRegion{Buffer: buf, Region: make([]ir.Range, len(buf.Shape))}
	for d, ext := range buf.Shape {
		r.Region[d] = ir.Range{Min: ir.NewInt(ext.DType(), 0), Extent: ext}
	}
	return r
}
