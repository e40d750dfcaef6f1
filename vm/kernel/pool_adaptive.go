package kernel

import (
	"sync"

	"github.com/phasec/phasec/ir"
	"github.com/phasec/phasec/vm/blas"
)

// Adaptive (and global) average pooling. LegalizeOps writes the sum of
// adaptive_avg_pool*d (topi's adaptive_pool) with windows that depend on
// the output coordinate:
//
//	Out[v..] = Out[v..] + T.if_then_else(S_d(v_d) + r_d < E_d(v_d) and ..,
//	                                     X[.., S_d(v_d) + r_d, ..], 0)
//
// with S_d = floor(v_d*In/Out) and E_d = ceil((v_d+1)*In/Out), the
// reduction extent the largest window. The fast path evaluates S_d and
// E_d once per output coordinate of each axis (compiled closures of the
// index expressions, whatever they are), then sums each window with
// vector row sums along the innermost axis when it is a window axis of
// unit stride. Taps where the condition fails are never read, as in the
// general path; taps where it holds must lie inside X.

type adaptiveMatch struct {
	out, x  int
	outVars []int   // nest variable of each axis
	slots   []int   // int slot of each axis's variable
	red     []int   // reduction variable of each window axis, -1 otherwise
	start   []iexpr // S_d (window axes)
	end     []iexpr // E_d, nil without a condition on the axis
	ext     []iexpr
	k       *Kernel
	windows sync.Pool // *adaptiveWindows
	partFn  func(fr *frame, lo, hi int64)
	cur     *adaptiveWindows // the running call's windows (set per call; see run)
	mu      sync.Mutex
}

// adaptiveWindows holds, per axis, the window [lo, hi) of each output
// coordinate, concatenated.
type adaptiveWindows struct {
	lo, hi []int64
	base   [8]int
}

func (c *compiler) matchAdaptivePool(n *nest) (string, fastPath) {
	st, ok := n.body.(*ir.BufferStore)
	if !ok || storageOf(st.Buffer.DType) != stF32 {
		return "", nil
	}
	init, ok := n.init.(*ir.BufferStore)
	if !ok || init.Buffer != st.Buffer || !sameIndices(init.Indices, st.Indices) {
		return "", nil
	}
	if iv, ok := init.Value.(*ir.FloatImm); !ok || iv.Value != 0 {
		return "", nil
	}
	add, ok := st.Value.(*ir.Binary)
	if !ok || add.Op != ir.OpAdd {
		return "", nil
	}
	self, other := loadOf(add.A), add.B
	if self == nil || self.Buffer != st.Buffer {
		self, other = loadOf(add.B), add.A
	}
	if self == nil || self.Buffer != st.Buffer || !sameIndices(self.Indices, st.Indices) {
		return "", nil
	}
	call, ok := other.(*ir.PrimCall)
	if !ok || call.Op != "if_then_else" || len(call.Args) != 3 {
		return "", nil
	}
	tap := loadOf(call.Args[1])
	if z, ok := call.Args[2].(*ir.FloatImm); !ok || z.Value != 0 || tap == nil || tap.Buffer == st.Buffer {
		return "", nil
	}
	r := len(st.Indices)
	if len(tap.Indices) != r || r > 8 {
		return "", nil
	}
	m := &adaptiveMatch{out: c.bufIdx[st.Buffer], x: c.bufIdx[tap.Buffer], k: c.k,
		outVars: make([]int, r), slots: make([]int, r), red: make([]int, r), start: make([]iexpr, r), end: make([]iexpr, r)}
	reduce := 0
	for _, k := range n.kinds {
		if k == ir.IterReduce {
			reduce++
		}
	}
	if len(n.vars)-reduce != r {
		return "", nil
	}
	used := map[int]bool{}
	for d, e := range st.Indices {
		v := n.varIndex(e)
		if v < 0 || n.kinds[v] != ir.IterSpatial {
			return "", nil
		}
		m.outVars[d], m.red[d] = v, -1
		m.slots[d] = c.intVar(n.vars[v])
		ix := tap.Indices[d]
		if ix == n.vars[v] {
			continue
		}
		// S + r_d with S over v_d only.
		b, ok := ix.(*ir.Binary)
		if !ok || b.Op != ir.OpAdd {
			return "", nil
		}
		s, rv := b.A, n.varIndex(b.B)
		if rv < 0 {
			s, rv = b.B, n.varIndex(b.A)
		}
		if rv < 0 || n.kinds[rv] != ir.IterReduce || used[rv] || hasLoad(s) || !onlyVar(n, s, n.vars[v]) {
			return "", nil
		}
		used[rv] = true
		m.red[d], m.start[d] = rv, c.compileI(s)
	}
	if len(used) != reduce {
		return "", nil
	}
	// The condition: S_d + r_d < E_d per window axis.
	conds := []ir.PrimExpr{call.Args[0]}
	for len(conds) > 0 {
		e := conds[len(conds)-1]
		conds = conds[:len(conds)-1]
		b, ok := e.(*ir.Binary)
		if !ok {
			return "", nil
		}
		if b.Op == ir.OpAnd {
			conds = append(conds, b.A, b.B)
			continue
		}
		if b.Op != ir.OpLT {
			return "", nil
		}
		d := -1
		for i, ix := range tap.Indices {
			if m.red[i] >= 0 && sameExpr(ix, b.A) {
				d = i
			}
		}
		if d < 0 || m.end[d] != nil || hasLoad(b.B) || !onlyVar(n, b.B, n.vars[m.outVars[d]]) {
			return "", nil
		}
		m.end[d] = c.compileI(b.B)
	}
	for _, e := range n.ext {
		m.ext = append(m.ext, c.compileI(e))
	}
	m.windows.New = func() any { return new(adaptiveWindows) }
	m.partFn = m.part
	return "adaptive_pool", m.run
}

// onlyVar reports whether e mentions no variable of the nest (block
// iteration variables and loop variables) other than v.
func onlyVar(n *nest, e ir.PrimExpr, v *ir.PrimVar) bool {
	ok := true
	walkExpr(e, func(x ir.PrimExpr) {
		u, isVar := x.(*ir.PrimVar)
		if !isVar || u == v {
			return
		}
		if n.varIndex(u) >= 0 {
			ok = false
		}
		for _, f := range n.loops {
			if f.Var == u {
				ok = false
			}
		}
	})
	return ok
}

func (m *adaptiveMatch) run(fr *frame) bool {
	var ext [12]int64
	if len(m.ext) > len(ext) {
		return false
	}
	for i, e := range m.ext {
		ext[i] = e(fr)
	}
	out, x := &fr.bufs[m.out], &fr.bufs[m.x]
	if out.f32 == nil || x.f32 == nil {
		return false
	}
	total := int64(1)
	w := m.windows.Get().(*adaptiveWindows)
	defer m.windows.Put(w)
	w.lo, w.hi = w.lo[:0], w.hi[:0]
	for d, v := range m.outVars {
		o := ext[v]
		if out.shape[d] != o {
			return false
		}
		total *= o
		w.base[d] = len(w.lo)
		if m.red[d] < 0 {
			if x.shape[d] != o {
				return false
			}
			continue
		}
		k := ext[m.red[d]]
		for i := range o {
			fr.ints[m.slots[d]] = i
			lo := m.start[d](fr)
			hi := lo + k
			if m.end[d] != nil {
				hi = min(hi, m.end[d](fr))
			}
			if hi > lo && (lo < 0 || hi > x.shape[d]) {
				return false
			}
			w.lo, w.hi = append(w.lo, lo), append(w.hi, max(hi, lo))
		}
	}
	if total == 0 {
		return true
	}
	// part reads the windows through m.cur; calls of one kernel may run
	// concurrently, so the windows are handed over under a lock per call.
	m.mu.Lock()
	defer m.mu.Unlock()
	m.cur = w
	runRange(m.k, fr, total, 1, m.partFn)
	m.cur = nil
	return true
}

// part computes output elements [lo, hi).
func (m *adaptiveMatch) part(fr *frame, lo, hi int64) {
	out, x := &fr.bufs[m.out], &fr.bufs[m.x]
	w := m.cur
	r := len(out.shape)
	var o, wlo, whi, t [8]int64
	for off := lo; off < hi; off++ {
		rem := off
		for d := r - 1; d >= 0; d-- {
			o[d] = rem % out.shape[d]
			rem /= out.shape[d]
			if m.red[d] >= 0 {
				wlo[d], whi[d] = w.lo[w.base[d]+int(o[d])], w.hi[w.base[d]+int(o[d])]
			} else {
				wlo[d], whi[d] = o[d], o[d]+1
			}
		}
		sum := float32(0)
		empty := false
		for d := range r {
			t[d] = wlo[d]
			empty = empty || whi[d] <= wlo[d]
		}
		// Rows along the last axis, contiguous when it has unit stride;
		// when the window spans whole rows of a dense plane (a global
		// pool), the window's rows are one run.
		rowLen := whi[r-1] - wlo[r-1]
		outer := r - 2 // the innermost axis the row loop steps
		if r >= 2 && x.stride[r-1] == 1 && rowLen == x.shape[r-1] && x.stride[r-2] == rowLen && !empty {
			rowLen *= whi[r-2] - wlo[r-2]
			outer--
		}
		for !empty {
			src := int64(0)
			for d := range r {
				src += t[d] * x.stride[d]
			}
			if x.stride[r-1] == 1 {
				sum += blas.SumF32(x.f32[src : src+rowLen])
			} else {
				for j := range rowLen {
					sum += x.f32[src+j*x.stride[r-1]]
				}
			}
			d := outer
			for ; d >= 0; d-- {
				t[d]++
				if t[d] < whi[d] {
					break
				}
				t[d] = wlo[d]
			}
			if d < 0 {
				break
			}
		}
		out.f32[off] = sum
	}
}

// The division of an average pooling by its window's tap count (adaptive
// and count_include_pad=False pools, topi's pool_avg):
//
//	Out[v..] = Sum[v..] / T.Cast("float32", E)
//
// with E an integer expression of the nest's variables (no loads). The
// general path evaluates E per element, vectorized along the innermost
// axis, which for a global pool (innermost extents 1) costs hundreds of
// nanoseconds an element. Here E is evaluated once per combination of the
// axes it mentions (a table, before the split over threads), and each
// output row along the innermost axis divides by the table's entries (the
// same float32 division as the general path, so the results are equal).

type avgDivMatch struct {
	out, sum int
	count    iexpr
	slots    []int  // int slot of each axis's variable
	uses     []bool // per axis: E mentions its variable
	ext      []iexpr
	k        *Kernel
	partFn   func(fr *frame, lo, hi int64)
	tables   sync.Pool // *avgDivTable
	mu       sync.Mutex
	cur      *avgDivTable // the running call's table (see run)
}

// avgDivTable holds E's values, indexed by the mentioned axes'
// coordinates (row-major over them; stride 0 along the others).
type avgDivTable struct {
	den    []float32
	stride [8]int64
}

// maxAvgDivTable bounds the table: more distinct tap counts than this is
// not a pooling's division, and stays on the general path.
const maxAvgDivTable = 1 << 16

func (c *compiler) matchAvgDivide(n *nest) (string, fastPath) {
	st, ok := n.body.(*ir.BufferStore)
	if !ok || storageOf(st.Buffer.DType) != stF32 || len(st.Indices) != len(n.vars) || len(n.vars) > 8 {
		return "", nil
	}
	for i, e := range st.Indices {
		if e != n.vars[i] || n.kinds[i] != ir.IterSpatial {
			return "", nil
		}
	}
	div, ok := st.Value.(*ir.Binary)
	if !ok || div.Op != ir.OpDiv {
		return "", nil
	}
	sum := loadOf(div.A)
	cast, ok := div.B.(*ir.Cast)
	if sum == nil || !ok || storageOf(sum.Buffer.DType) != stF32 || !sameIndices(sum.Indices, st.Indices) ||
		cast.Type != st.Buffer.DType || isFloatType(cast.Value.DType()) || hasLoad(cast.Value) {
		return "", nil
	}
	r := len(n.vars)
	m := &avgDivMatch{out: c.bufIdx[st.Buffer], sum: c.bufIdx[sum.Buffer], k: c.k, slots: make([]int, r), uses: make([]bool, r)}
	ok = true
	walkExpr(cast.Value, func(x ir.PrimExpr) {
		v, isVar := x.(*ir.PrimVar)
		if !isVar {
			return
		}
		if i := n.varIndex(v); i >= 0 {
			m.uses[i] = true
			return
		}
		for _, f := range n.loops {
			if f.Var == v {
				ok = false // a loop variable that is not a block variable
			}
		}
	})
	if !ok {
		return "", nil
	}
	for i, v := range n.vars {
		m.slots[i] = c.intVar(v)
	}
	m.count = c.compileI(cast.Value)
	for _, e := range n.ext {
		m.ext = append(m.ext, c.compileI(e))
	}
	m.tables.New = func() any { return new(avgDivTable) }
	m.partFn = m.part
	return "avg_divide", m.run
}

func (m *avgDivMatch) run(fr *frame) bool {
	out, sum := &fr.bufs[m.out], &fr.bufs[m.sum]
	if out.f32 == nil || sum.f32 == nil {
		return false
	}
	r := len(m.ext)
	total, entries := int64(1), int64(1)
	t := m.tables.Get().(*avgDivTable)
	defer m.tables.Put(t)
	for d := r - 1; d >= 0; d-- {
		x := m.ext[d](fr)
		if out.shape[d] != x || sum.shape[d] != x {
			return false
		}
		total *= x
		t.stride[d] = 0
		if m.uses[d] {
			t.stride[d] = entries
			entries *= x
		}
	}
	if total == 0 {
		return true
	}
	if entries > maxAvgDivTable || !denseStrides(out) || !denseStrides(sum) {
		return false
	}
	// E for every combination of the mentioned axes (the others at 0).
	if cap(t.den) < int(entries) {
		t.den = make([]float32, entries)
	}
	t.den = t.den[:entries]
	for d := range r {
		fr.ints[m.slots[d]] = 0
	}
	for i := range t.den {
		rem := int64(i)
		for d := r - 1; d >= 0; d-- {
			if m.uses[d] {
				fr.ints[m.slots[d]] = rem % out.shape[d]
				rem /= out.shape[d]
			}
		}
		t.den[i] = float32(m.count(fr))
	}
	// part reads the table through m.cur; calls of one kernel may run
	// concurrently, so the table is handed over under a lock per call.
	m.mu.Lock()
	defer m.mu.Unlock()
	m.cur = t
	runRange(m.k, fr, total, out.shape[r-1], m.partFn)
	m.cur = nil
	return true
}

// part divides output rows [lo, hi) (element offsets, whole rows).
func (m *avgDivMatch) part(fr *frame, lo, hi int64) {
	out, sum := &fr.bufs[m.out], &fr.bufs[m.sum]
	t := m.cur
	r := len(out.shape)
	last := out.shape[r-1]
	step := t.stride[r-1]
	for off := lo; off < hi; off += last {
		base, rem := int64(0), off/last
		for d := r - 2; d >= 0; d-- {
			base += rem % out.shape[d] * t.stride[d]
			rem /= out.shape[d]
		}
		o, s := out.f32[off:off+last], sum.f32[off:off+last]
		if step == 0 {
			den := t.den[base]
			for i := range o {
				o[i] = s[i] / den
			}
			continue
		}
		den := t.den[base : base+(last-1)*step+1]
		for i := range o {
			o[i] = s[i] / den[int64(i)*step]
		}
	}
}

// denseStrides reports whether b is laid out row-major without gaps.
func denseStrides(b *bufData) bool {
	want := int64(1)
	for d := len(b.shape) - 1; d >= 0; d-- {
		if b.stride[d] != want && b.shape[d] != 1 {
			return false
		}
		want *= b.shape[d]
	}
	return true
}
