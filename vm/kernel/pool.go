package kernel

import (
	"github.com/phasec/phasec/ir"
	"github.com/phasec/phasec/vm/blas"
)

// Pooling dispatch. LegalizeOps emits max and average pooling
// (python/tvm/topi/nn/pooling.py's pool2d as op/pool.go writes it, 1-3
// spatial axes, any layout) as a pad stage (pad.go's fast path), a
// window reduction
//
//	with T.init(): Out[v..] = init
//	Out[v..] = max(Out[v..], X[.., v_d*stride + r_d*dilation + c, ..])   # or +
//
// and, for the average, a division by the tap count (an elementwise nest
// on the general path: it touches each output once). The window
// reduction runs here: per output row along the innermost axis and per
// window tap, one vector max or add over the row (unit stride along it,
// the NCHW W axis at stride 1 or the NHWC channel axis; stride 2 along the
// NCHW W axis through blas.PoolStride2F32) or a strided loop.
// X and Out must have the same rank, axis d of X indexed by variable d of
// Out; every tap must read inside X, as the general path requires.

type poolMatch struct {
	out, x  int
	isMax   bool
	init    float32
	red     []int   // per axis: nest variable of its window, -1 for none
	stride  []int64 // per axis
	dil     []int64
	off     []int64
	outVars []int // nest variable of each axis
	ext     []iexpr
	k       *Kernel
	partFn  func(fr *frame, lo, hi int64)
}

func (c *compiler) matchPool(n *nest) (string, fastPath) {
	st, ok := n.body.(*ir.BufferStore)
	if !ok || storageOf(st.Buffer.DType) != stF32 {
		return "", nil
	}
	init, ok := n.init.(*ir.BufferStore)
	if !ok || init.Buffer != st.Buffer || !sameIndices(init.Indices, st.Indices) {
		return "", nil
	}
	iv, ok := init.Value.(*ir.FloatImm)
	if !ok {
		return "", nil
	}
	bin, ok := st.Value.(*ir.Binary)
	if !ok || (bin.Op != ir.OpMax && bin.Op != ir.OpAdd) {
		return "", nil
	}
	self, tap := loadOf(bin.A), loadOf(bin.B)
	if self == nil || self.Buffer != st.Buffer {
		self, tap = tap, self
	}
	if self == nil || tap == nil || self.Buffer != st.Buffer || tap.Buffer == st.Buffer || !sameIndices(self.Indices, st.Indices) {
		return "", nil
	}
	r := len(st.Indices)
	if len(tap.Indices) != r || r > 8 {
		return "", nil
	}
	m := &poolMatch{out: c.bufIdx[st.Buffer], x: c.bufIdx[tap.Buffer], isMax: bin.Op == ir.OpMax, init: float32(iv.Value), k: c.k,
		red: make([]int, r), stride: make([]int64, r), dil: make([]int64, r), off: make([]int64, r), outVars: make([]int, r)}
	spatial := 0
	for _, k := range n.kinds {
		if k == ir.IterSpatial {
			spatial++
		}
	}
	if spatial != r {
		return "", nil
	}
	usedRed := map[int]bool{}
	for d, e := range st.Indices {
		v := n.varIndex(e)
		if v < 0 || n.kinds[v] != ir.IterSpatial {
			return "", nil
		}
		m.outVars[d] = v
		f, ok := n.affineOf(tap.Indices[d])
		if !ok || f.gv >= 0 || f.coef[v] <= 0 {
			return "", nil
		}
		m.stride[d], m.off[d], m.red[d] = f.coef[v], f.c, -1
		for u, k := range f.coef {
			if u == v || k == 0 {
				continue
			}
			if n.kinds[u] != ir.IterReduce || k < 0 || m.red[d] >= 0 || usedRed[u] {
				return "", nil
			}
			m.red[d], m.dil[d] = u, k
			usedRed[u] = true
		}
	}
	if len(usedRed) != len(n.vars)-r {
		return "", nil
	}
	for _, e := range n.ext {
		m.ext = append(m.ext, c.compileI(e))
	}
	m.partFn = m.part
	name := "sum_pool"
	if m.isMax {
		name = "max_pool"
	}
	return name, m.run
}

func (m *poolMatch) run(fr *frame) bool {
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
	for d, v := range m.outVars {
		o := ext[v]
		if out.shape[d] != o {
			return false
		}
		total *= o
		k := int64(1)
		if m.red[d] >= 0 {
			k = ext[m.red[d]]
		}
		if o > 0 && k > 0 && (m.off[d] < 0 || (o-1)*m.stride[d]+(k-1)*m.dil[d]+m.off[d] >= x.shape[d]) {
			return false
		}
		if k == 0 {
			return false // no taps: the general path writes init
		}
	}
	if total == 0 {
		return true
	}
	runRangeMin(m.k, fr, total, out.shape[len(out.shape)-1], windowParallelMin, m.partFn)
	return true
}

// windowParallelMin is the output size from which pools and pads split
// across cores: below the elementwise kernels' threshold, since they do
// several loads per output (pools) or sit between convolutions that run
// on every core (a CNN's pads and pools were all serial at batch 16).
const windowParallelMin = 1 << 15

// part computes output rows [lo, hi) (element offsets, whole rows).
func (m *poolMatch) part(fr *frame, lo, hi int64) {
	out, x := &fr.bufs[m.out], &fr.bufs[m.x]
	r := len(out.shape)
	last := out.shape[r-1]
	var taps [8]int64 // window extent per axis
	var t [8]int64    // current tap per axis
	nTaps := int64(1)
	for d := range r {
		taps[d] = 1
		if m.red[d] >= 0 {
			taps[d] = m.ext[m.red[d]](fr)
		}
		nTaps *= taps[d]
	}
	step := m.stride[r-1] * x.stride[r-1] // data step between row elements
	// Stride 2 along a contiguous axis whose window taps are consecutive
	// elements: all taps along it in one blas.PoolStride2F32 call (in the
	// general path's order: the last axis's taps innermost).
	lastTaps := taps[r-1]
	rowTaps := step == 2 && (lastTaps == 1 || m.dil[r-1]*x.stride[r-1] == 1)
	if rowTaps {
		taps[r-1] = 1
		nTaps /= lastTaps
	}
	// At most one other window axis (2-d pooling): the output rows of one
	// plane in one blas.PoolRowsF32 call (the per-row work here cost more
	// than the pooling of a 16-wide row).
	winAxis, winAxes := -1, 0
	for d := range r - 1 {
		if taps[d] > 1 {
			winAxis, winAxes = d, winAxes+1
		}
	}
	if rowTaps && r >= 2 && winAxes <= 1 {
		m.planeRows(fr, lo, hi, lastTaps, winAxis, taps)
		return
	}
	for off := lo; off < hi; off += last {
		row := out.f32[off : off+last]
		fill(row, m.init)
		// The data offset of the row's first element at tap 0.
		base := int64(0)
		rem := off / last
		for d := r - 2; d >= 0; d-- {
			o := rem % out.shape[d]
			rem /= out.shape[d]
			base += (o*m.stride[d] + m.off[d]) * x.stride[d]
		}
		base += m.off[r-1] * x.stride[r-1]
		clear(t[:r])
		for range nTaps {
			src := base
			for d := range r {
				src += t[d] * m.dil[d] * x.stride[d]
			}
			switch {
			case rowTaps:
				blas.PoolStride2F32(row, x.f32[src:src+(last-1)*2+lastTaps], int(lastTaps), m.isMax)
			case step == 2: // dilated taps: one at a time
				blas.PoolStride2F32(row, x.f32[src:src+(last-1)*2+1], 1, m.isMax)
			case step == 1:
				in := x.f32[src : src+last]
				if m.isMax {
					blas.MaximumF32(row, row, in)
				} else {
					blas.AddF32(row, row, in)
				}
			default:
				in := x.f32[src : src+(last-1)*step+1]
				if m.isMax {
					for j := range row {
						row[j] = max(row[j], in[int64(j)*step])
					}
				} else {
					for j := range row {
						row[j] += in[int64(j)*step]
					}
				}
			}
			for d := r - 1; d >= 0; d-- {
				t[d]++
				if t[d] < taps[d] {
					break
				}
				t[d] = 0
			}
		}
	}
}

// planeRows computes output rows [lo, hi) (element offsets, whole rows)
// of a pooling with stride 2 and lastTaps consecutive taps along the
// contiguous last axis and a window along at most one other axis,
// winAxis (-1: none) of taps[winAxis] taps: each run of rows that
// differ only in the second-to-last coordinate is one blas.PoolRowsF32
// call.
func (m *poolMatch) planeRows(fr *frame, lo, hi, lastTaps int64, winAxis int, taps [8]int64) {
	out, x := &fr.bufs[m.out], &fr.bufs[m.x]
	r := len(out.shape)
	last := out.shape[r-1]
	kh, hstride := int64(1), int64(0)
	if winAxis >= 0 {
		kh, hstride = taps[winAxis], m.dil[winAxis]*x.stride[winAxis]
	}
	rowAxis := r - 2
	rowStep := m.stride[rowAxis] * x.stride[rowAxis] // data step between rows of a run
	for off := lo; off < hi; {
		base := int64(0)
		rem := off / last
		var oRow int64
		for d := r - 2; d >= 0; d-- {
			o := rem % out.shape[d]
			rem /= out.shape[d]
			if d == rowAxis {
				oRow = o
			}
			base += (o*m.stride[d] + m.off[d]) * x.stride[d]
		}
		base += m.off[r-1] * x.stride[r-1]
		rows := min(out.shape[rowAxis]-oRow, (hi-off)/last)
		blas.PoolRowsF32(out.f32[off:off+rows*last], x.f32[base:], int(rows), int(last), int(last), int(rowStep),
			int(kh), int(hstride), int(lastTaps), m.init, m.isMax)
		off += rows * last
	}
}
