package kernel

import (
	"github.com/phasec/phasec/ir"
)

// Constant padding: the pad stage LegalizeOps puts before convolutions
// and pools (topi's nn.pad, op/conv.go padAxes) and R.nn.pad itself:
//
//	Out[v..] = T.if_then_else(lo_d <= v_d < hi_d and .., A[v_d - p_d, ..], c)
//
// runs as row copies and fills when the condition is exactly "inside A"
// (lo_d = p_d, hi_d = p_d + extent of A) on every padded axis.

type padMatch struct {
	out, in int
	pads    []int64 // p_d per axis
	lo      []int64 // -1: axis without a condition
	hi      []iexpr
	fill    float32
	ext     []iexpr
	k       *Kernel
	partFn  func(fr *frame, lo, hi int64)
}

func (c *compiler) matchPad(n *nest) (string, fastPath) {
	m := c.padPlan(n)
	if m == nil {
		return "", nil
	}
	return "pad", m.run
}

// padPlan matches a constant padding nest (nil when n is none).
func (c *compiler) padPlan(n *nest) *padMatch {
	st, ok := n.body.(*ir.BufferStore)
	if !ok || storageOf(st.Buffer.DType) != stF32 || len(st.Indices) != len(n.vars) {
		return nil
	}
	for i, e := range st.Indices {
		if e != n.vars[i] || n.kinds[i] != ir.IterSpatial {
			return nil
		}
	}
	call, ok := st.Value.(*ir.PrimCall)
	if !ok || call.Op != "if_then_else" || len(call.Args) != 3 {
		return nil
	}
	load := loadOf(call.Args[1])
	fill, ok := call.Args[2].(*ir.FloatImm)
	if load == nil || !ok || len(load.Indices) != len(n.vars) || load.Buffer == st.Buffer {
		return nil
	}
	r := len(n.vars)
	m := &padMatch{out: c.bufIdx[st.Buffer], in: c.bufIdx[load.Buffer], fill: float32(fill.Value), k: c.k,
		pads: make([]int64, r), lo: make([]int64, r), hi: make([]iexpr, r)}
	for d, e := range load.Indices {
		f, ok := n.affineOf(e)
		if !ok || f.gv >= 0 || f.c > 0 {
			return nil
		}
		for v, k := range f.coef {
			if (v == d) != (k == 1) {
				return nil
			}
		}
		m.pads[d] = -f.c
		m.lo[d] = -1
	}
	// The condition: a conjunction of v >= lo and v < hi.
	conds := []ir.PrimExpr{call.Args[0]}
	for len(conds) > 0 {
		e := conds[len(conds)-1]
		conds = conds[:len(conds)-1]
		b, ok := e.(*ir.Binary)
		if !ok {
			return nil
		}
		if b.Op == ir.OpAnd {
			conds = append(conds, b.A, b.B)
			continue
		}
		v, ok := b.A.(*ir.PrimVar)
		d := n.varIndex(v)
		if !ok || d < 0 {
			return nil
		}
		switch b.Op {
		case ir.OpGE:
			k, ok := constI(b.B)
			if !ok || m.lo[d] >= 0 {
				return nil
			}
			m.lo[d] = k
		case ir.OpLT:
			if m.hi[d] != nil || mentionsVars(b.B, n.vars) || hasLoad(b.B) {
				return nil
			}
			m.hi[d] = c.compileI(b.B)
		default:
			return nil
		}
	}
	for d := range r {
		if (m.lo[d] >= 0) != (m.hi[d] != nil) || (m.lo[d] >= 0 && m.lo[d] != m.pads[d]) {
			return nil
		}
	}
	for _, e := range n.ext {
		m.ext = append(m.ext, c.compileI(e))
	}
	m.partFn = m.part
	return m
}

func (m *padMatch) run(fr *frame) bool {
	total, ok := m.fits(fr)
	if !ok {
		return false
	}
	if total == 0 {
		return true
	}
	out := &fr.bufs[m.out]
	last := out.shape[len(out.shape)-1]
	runRangeMin(m.k, fr, total, last, windowParallelMin, m.partFn)
	return true
}

// fits reports whether the call's shapes are the ones the plan handles
// (the output's element count with it): the loops cover the output and
// every condition is exactly "inside A".
func (m *padMatch) fits(fr *frame) (int64, bool) {
	out, in := &fr.bufs[m.out], &fr.bufs[m.in]
	if out.f32 == nil || in.f32 == nil {
		return 0, false
	}
	total := int64(1)
	for d, e := range m.ext {
		x := e(fr)
		if out.shape[d] != x {
			return 0, false
		}
		total *= x
		if m.lo[d] < 0 {
			// No condition: every index must be inside A.
			if m.pads[d] != 0 || in.shape[d] != x {
				return 0, false
			}
		} else if m.hi[d](fr) != m.pads[d]+in.shape[d] || x < m.pads[d] {
			return 0, false
		}
	}
	return total, true
}

// part fills output rows [lo, hi) (element offsets, whole rows).
func (m *padMatch) part(fr *frame, lo, hi int64) {
	out, in := &fr.bufs[m.out], &fr.bufs[m.in]
	r := len(out.shape)
	last := out.shape[r-1]
	pl := m.pads[r-1]
	inLast := in.shape[r-1]
	for off := lo; off < hi; off += last {
		row := out.f32[off : off+last]
		// Row coordinates, outermost first, and A's row offset.
		src, inside := int64(0), true
		rem := off / last
		for d := r - 2; d >= 0; d-- {
			x := rem % out.shape[d]
			rem /= out.shape[d]
			j := x - m.pads[d]
			if j < 0 || j >= in.shape[d] {
				inside = false
				break
			}
			src += j * in.stride[d]
		}
		if !inside {
			fill(row, m.fill)
			continue
		}
		fill(row[:pl], m.fill)
		n := min(inLast, last-pl)
		copy(row[pl:pl+n], in.f32[src:src+n])
		fill(row[pl+n:], m.fill)
	}
}

func fill(s []float32, v float32) {
	if v == 0 {
		clear(s)
		return
	}
	for i := range s {
		s[i] = v
	}
}
