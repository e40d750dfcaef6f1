package kernel

import (
	"github.com/phasec/phasec/ir"
)

// Take (gather along one axis, embedding lookups), as LegalizeOps writes
// R.take, whatever the names: one nest of spatial variables
// v = (o..., i..., t...) storing Out[v...] = A[o..., I[i...], t...], where
// I is an int32 or int64 index buffer (its load possibly cast), the o
// variables index A's leading dimensions and the t variables its trailing
// ones, each in order. Every (o, i) point then copies one contiguous slab
// of A (the trailing dimensions: an embedding row) with copy(), instead of
// an element-by-element gather with a bounds check per lane. The indices
// are all checked against A's extent before anything is written; an
// index out of bounds (or a negative one: the legalized TIR does not
// wrap) leaves the nest to the general path, which reports it. Slabs
// split across cores for large outputs (runRange's threshold). Reported
// as "take".

type take struct {
	k          *Kernel
	out, a, ix int // buffer numbers
	st         storage
	ixSt       storage
	axis       int     // A's indexed dimension
	ext        []iexpr // the nest's extents
	partFn     func(fr *frame, lo, hi int64)
}

// takeGeom is one call's geometry: outer points (A's leading dimensions),
// indices per outer point, A's extent along the axis and the slab length.
type takeGeom struct {
	outer, nIdx, rows, slab int64
}

// matchTake returns the take fast path of n (nil when n is no take).
func (c *compiler) matchTake(n *nest) (string, fastPath) {
	st, ok := n.body.(*ir.BufferStore)
	if !ok || n.init != nil {
		return "", nil
	}
	for _, k := range n.kinds {
		if k != ir.IterSpatial {
			return "", nil
		}
	}
	ld, ok := st.Value.(*ir.BufferLoad)
	if !ok || ld.Buffer == st.Buffer || ld.Buffer.DType != st.Buffer.DType || storageOf(st.Buffer.DType) == stNone {
		return "", nil
	}
	// Out[v0, ..., vk-1]: every variable, in order.
	if len(st.Indices) != len(n.vars) {
		return "", nil
	}
	for d, e := range st.Indices {
		if n.varIndex(e) != d {
			return "", nil
		}
	}
	// A[o..., I[i...], t...]: exactly one index is a load.
	axis := -1
	var il *ir.BufferLoad
	for d, e := range ld.Indices {
		if cast, ok := e.(*ir.Cast); ok && cast.Type.IsInt() {
			e = cast.Value
		}
		if l, ok := e.(*ir.BufferLoad); ok {
			if axis >= 0 {
				return "", nil
			}
			axis, il = d, l
		}
	}
	if axis < 0 || len(il.Indices) == 0 || len(ld.Indices)-1+len(il.Indices) != len(n.vars) {
		return "", nil
	}
	ixSt := storageOf(il.Buffer.DType)
	if ixSt != stI32 && ixSt != stI64 {
		return "", nil
	}
	v := 0 // next expected variable
	for d, e := range ld.Indices {
		if d == axis {
			for _, ie := range il.Indices {
				if n.varIndex(ie) != v {
					return "", nil
				}
				v++
			}
			continue
		}
		if n.varIndex(e) != v {
			return "", nil
		}
		v++
	}
	out, ok1 := c.bufIdx[st.Buffer]
	a, ok2 := c.bufIdx[ld.Buffer]
	ix, ok3 := c.bufIdx[il.Buffer]
	if !ok1 || !ok2 || !ok3 {
		return "", nil
	}
	t := &take{k: c.k, out: out, a: a, ix: ix, st: storageOf(st.Buffer.DType), ixSt: ixSt, axis: axis}
	for _, e := range n.ext {
		t.ext = append(t.ext, c.compileI(e))
	}
	t.partFn = t.part
	return "take", t.run
}

// geometry checks that the buffers are exactly the nest's shapes (Out is
// the iteration space; A's other dimensions and I's match it) and returns
// the call's geometry; ok false otherwise.
func (t *take) geometry(fr *frame) (g takeGeom, ok bool) {
	out, a, ix := &fr.bufs[t.out], &fr.bufs[t.a], &fr.bufs[t.ix]
	if !out.has(t.st) || !a.has(t.st) || !ix.has(t.ixSt) || len(out.shape) != len(t.ext) ||
		len(a.shape)-1+len(ix.shape) != len(t.ext) {
		return g, false
	}
	for d, e := range t.ext {
		if e(fr) != out.shape[d] {
			return g, false
		}
	}
	g = takeGeom{outer: 1, nIdx: 1, rows: a.shape[t.axis], slab: 1}
	v := 0
	for d, s := range a.shape {
		if d == t.axis {
			for _, is := range ix.shape {
				if is != out.shape[v] {
					return g, false
				}
				g.nIdx *= is
				v++
			}
			continue
		}
		if s != out.shape[v] {
			return g, false
		}
		if d < t.axis {
			g.outer *= s
		} else {
			g.slab *= s
		}
		v++
	}
	return g, true
}

func (t *take) run(fr *frame) bool {
	g, ok := t.geometry(fr)
	if !ok {
		return false
	}
	if g.outer*g.nIdx*g.slab == 0 {
		return true
	}
	// Every index in bounds before anything is written.
	ix := &fr.bufs[t.ix]
	switch t.ixSt {
	case stI32:
		for _, i := range ix.i32[:g.nIdx] {
			if i < 0 || int64(i) >= g.rows {
				return false
			}
		}
	default:
		for _, i := range ix.i64[:g.nIdx] {
			if i < 0 || i >= g.rows {
				return false
			}
		}
	}
	runRange(t.k, fr, g.outer*g.nIdx*g.slab, g.slab, t.partFn)
	return true
}

// part copies the slabs of output elements [lo, hi) (multiples of the
// slab length).
func (t *take) part(fr *frame, lo, hi int64) {
	g, _ := t.geometry(fr) // run checked it
	out, a, ix := &fr.bufs[t.out], &fr.bufs[t.a], &fr.bufs[t.ix]
	idx := func(j int64) int64 {
		if t.ixSt == stI32 {
			return int64(ix.i32[j])
		}
		return ix.i64[j]
	}
	switch t.st {
	case stF32:
		takeRange(out.f32, a.f32, g, lo, hi, idx)
	case stF64:
		takeRange(out.f64, a.f64, g, lo, hi, idx)
	case stI8:
		takeRange(out.i8, a.i8, g, lo, hi, idx)
	case stI16:
		takeRange(out.i16, a.i16, g, lo, hi, idx)
	case stI32:
		takeRange(out.i32, a.i32, g, lo, hi, idx)
	case stI64:
		takeRange(out.i64, a.i64, g, lo, hi, idx)
	case stU8:
		takeRange(out.u8, a.u8, g, lo, hi, idx)
	case stU16:
		takeRange(out.u16, a.u16, g, lo, hi, idx)
	case stU32:
		takeRange(out.u32, a.u32, g, lo, hi, idx)
	case stU64:
		takeRange(out.u64, a.u64, g, lo, hi, idx)
	case stF16, stBF16:
		takeRange(out.f16, a.f16, g, lo, hi, idx)
	}
}

// takeRange copies output slabs lo/slab .. hi/slab: slab s is outer point
// s / nIdx, index s % nIdx.
func takeRange[T any](dst, src []T, g takeGeom, lo, hi int64, idx func(int64) int64) {
	for s := lo / g.slab; s < hi/g.slab; s++ {
		o, j := s/g.nIdx, s%g.nIdx
		from := (o*g.rows + idx(j)) * g.slab
		copy(dst[s*g.slab:(s+1)*g.slab], src[from:from+g.slab])
	}
}
