package kernel

import (
	"github.com/phasec/phasec/ir"
	"github.com/phasec/phasec/vm/blas"
)

// Channel bias: the add after a convolution, legalized as
//
//	Out[n, c, h, w] = A[n, c, h, w] + B[0, c, 0, 0]
//
// broadcasts B along leading and trailing axes, which the trailing-row
// broadcast of pattern.go does not cover. Any operand indexed by a
// contiguous middle run of the output's variables (in order, the other
// indices 0) qualifies, for + and *: the output splits into outer x mid x
// inner, and each inner run is one vector op with B's element as scalar.
// A trailing run (B[c] for NHWC) is pattern.go's broadcast.

type biasMatch struct {
	out, a, b int
	mul       bool
	lo, hi    int   // B covers output axes [lo, hi)
	bDims     []int // per dimension of B, the output axis it follows (-1: extent 1)
	ext       []iexpr
	k         *Kernel
	partFn    func(fr *frame, lo, hi int64)
}

func (c *compiler) matchChannelBias(n *nest) (string, fastPath) {
	st, ok := n.body.(*ir.BufferStore)
	if !ok || storageOf(st.Buffer.DType) != stF32 || len(st.Indices) != len(n.vars) {
		return "", nil
	}
	for i, e := range st.Indices {
		if e != n.vars[i] || n.kinds[i] != ir.IterSpatial {
			return "", nil
		}
	}
	bin, ok := st.Value.(*ir.Binary)
	if !ok || (bin.Op != ir.OpAdd && bin.Op != ir.OpMul) {
		return "", nil
	}
	a, b := loadOf(bin.A), loadOf(bin.B)
	if a == nil || b == nil {
		return "", nil
	}
	if !sameIndices(a.Indices, st.Indices) {
		a, b = b, a
	}
	if !sameIndices(a.Indices, st.Indices) || len(b.Indices) > len(st.Indices) {
		return "", nil
	}
	r := len(st.Indices)
	lo, hi := -1, -1
	bDims := make([]int, len(b.Indices))
	for j, e := range b.Indices {
		bDims[j] = -1
		if k, ok := constI(e); ok && k == 0 {
			continue
		}
		d := n.varIndex(e)
		if d < 0 || st.Indices[d] != e || (hi >= 0 && hi != d) {
			return "", nil
		}
		if lo < 0 {
			lo = d
		}
		hi = d + 1
		bDims[j] = d
	}
	if lo < 0 || hi == r {
		return "", nil
	}
	m := &biasMatch{out: c.bufIdx[st.Buffer], a: c.bufIdx[a.Buffer], b: c.bufIdx[b.Buffer], mul: bin.Op == ir.OpMul, lo: lo, hi: hi, bDims: bDims, k: c.k}
	if m.out == m.b {
		return "", nil
	}
	for _, e := range n.ext {
		m.ext = append(m.ext, c.compileI(e))
	}
	m.partFn = m.part
	return "channel_broadcast", m.run
}

func (m *biasMatch) run(fr *frame) bool {
	out, a, b := &fr.bufs[m.out], &fr.bufs[m.a], &fr.bufs[m.b]
	if out.f32 == nil || a.f32 == nil || b.f32 == nil {
		return false
	}
	total := int64(1)
	for d, e := range m.ext {
		x := e(fr)
		if out.shape[d] != x || a.shape[d] != x {
			return false
		}
		total *= x
	}
	for j, d := range m.bDims {
		want := int64(1)
		if d >= 0 {
			want = out.shape[d]
		}
		if b.shape[j] != want {
			return false
		}
	}
	if total == 0 {
		return true
	}
	runRange(m.k, fr, total, m.inner(out), m.partFn)
	return true
}

// inner is the length of the runs that share one element of B.
func (m *biasMatch) inner(out *bufData) int64 {
	n := int64(1)
	for _, x := range out.shape[m.hi:] {
		n *= x
	}
	return n
}

// part computes elements [lo, hi) (whole inner runs).
func (m *biasMatch) part(fr *frame, lo, hi int64) {
	out, a, b := &fr.bufs[m.out], &fr.bufs[m.a], &fr.bufs[m.b]
	inner := m.inner(out)
	mid := int64(len(b.f32))
	for off := lo; off < hi; off += inner {
		s := b.f32[(off/inner)%mid]
		dst, src := out.f32[off:off+inner], a.f32[off:off+inner]
		if m.mul {
			blas.ScaleF32(dst, src, s)
		} else {
			blas.AddScalarF32(dst, src, s)
		}
	}
}
