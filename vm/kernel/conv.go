package kernel

import (
	"runtime"
	"sync"

	"github.com/phasec/phasec/ir"
	"github.com/phasec/phasec/vm/blas"
)

// Convolution dispatch. The legalized TIR of R.nn.conv1d/2d/3d (and the
// last stage of conv*_transpose) is, whatever its names and layouts
// (python/tvm/topi/nn/conv2d.py's conv2d_nchw, conv2d_nhwc,
// group_conv2d_nchw, as op/conv.go emits them):
//
//	for n.., r..:  # spatial n.., reduction r.. = (input channel, taps..)
//	  with T.init(): Y[..] = 0
//	  Y[..] = Y[..] + X[..] * W[..]
//
// where every index of Y is one spatial variable, every index of W one
// variable (the output channel, the input channel in its group, one tap
// per spatial axis), and X's indices are the batch variable, the input
// channel (rc, or oc // (O/groups) * (I/groups) + rc when grouped) and
// per spatial axis o*stride + t*dilation + offset. The matcher reads the
// roles off these index expressions (conv_affine.go), so any permutation
// layout, stride, dilation and group count is recognised; it runs as
// vm/blas.Conv's packed implicit GEMM (depthwise directly) with the
// weights packed once per frozen weight storage (constants, bound
// weights) and otherwise cached per kernel (blas.ConvWeightCache).
//
// A fast path runs only when the loops cover the buffers exactly and
// every tap reads inside X (the padding is a separate stage in the
// legalized form, a pad nest that runs on its own fast path, pad.go);
// otherwise the general closure runs and reports what it would report.
//
// Epilogues: blas.Conv applies a bias and ReLU per output tile; convMatch
// carries the epilogue so that a fused conv+bias+relu PrimFunc (FuseTIR,
// issue 21) only needs its trailing nests recognised to use it.

// convMatch is the plan of a matched convolution nest.
type convMatch struct {
	y, x, w int // buffer indices
	spatial int
	// Buffer dimension of each canonical axis.
	yN, yC, xN, xC, wO, wI int
	yS, xS, wS             [3]int
	// Nest variables of the canonical axes.
	nVar, ocVar, icVar int
	sVar, kVar         [3]int
	stride, dil, off   [3]int64 // input coordinate = s*stride + t*dil + off
	ocPerGroup         int64    // 0 when not grouped
	icPerGroup         int64
	ext                []iexpr
	ep                 blas.ConvEpilogue

	// pad, when set, is a zero-padding stage folded into the
	// convolution (epilogue_conv.go, paddedConvAt): the convolution reads
	// the stage's input with the padding as out-of-range taps, and X (the
	// stage's output) is never written.
	pad *padMatch

	weights blas.ConvWeightCache
	mu      sync.Mutex
	plans   map[blas.ConvGeom]*blas.ConvPlan
}

// matchWindow dispatches the nests of convolution, pooling (and the
// average's division), padding and the per-channel bias (the one hook in matchNest).
func (c *compiler) matchWindow(n *nest) (string, fastPath) {
	for _, match := range []func(*nest) (string, fastPath){c.matchConv, c.matchPool, c.matchAdaptivePool, c.matchAvgDivide, c.matchPad, c.matchChannelBias} {
		if name, fast := match(n); fast != nil {
			return name, fast
		}
	}
	return "", nil
}

// matchConv recognises a convolution nest (see the comment above).
func (c *compiler) matchConv(n *nest) (string, fastPath) {
	m, name := c.convPlan(n)
	if m == nil {
		return "", nil
	}
	return name, m.run
}

// convPlan matches a convolution nest (nil when n is none).
func (c *compiler) convPlan(n *nest) (*convMatch, string) {
	st, ok := n.body.(*ir.BufferStore)
	if !ok || storageOf(st.Buffer.DType) != stF32 {
		return nil, ""
	}
	r := len(st.Indices)
	sp := r - 2
	if sp < 1 || sp > 3 || len(n.vars) != r+1+sp {
		return nil, ""
	}
	init, ok := n.init.(*ir.BufferStore)
	if !ok || init.Buffer != st.Buffer || !sameIndices(init.Indices, st.Indices) {
		return nil, ""
	}
	if iv, ok := init.Value.(*ir.FloatImm); !ok || iv.Value != 0 {
		return nil, ""
	}
	add, ok := st.Value.(*ir.Binary)
	if !ok || add.Op != ir.OpAdd {
		return nil, ""
	}
	prod := add.B
	self := loadOf(add.A)
	if self == nil || self.Buffer != st.Buffer {
		self, prod = loadOf(add.B), add.A
	}
	if self == nil || self.Buffer != st.Buffer || !sameIndices(self.Indices, st.Indices) {
		return nil, ""
	}
	mul, ok := prod.(*ir.Binary)
	if !ok || mul.Op != ir.OpMul {
		return nil, ""
	}
	a, b := loadOf(mul.A), loadOf(mul.B)
	if a == nil || b == nil || len(a.Indices) != r || len(b.Indices) != r {
		return nil, ""
	}
	// Y's indices: distinct spatial variables.
	yDim := map[int]int{} // nest variable -> dimension of Y
	for d, e := range st.Indices {
		v := n.varIndex(e)
		if v < 0 || n.kinds[v] != ir.IterSpatial {
			return nil, ""
		}
		if _, dup := yDim[v]; dup {
			return nil, ""
		}
		yDim[v] = d
	}
	m, ok := matchConvOperands(n, yDim, a, b)
	if !ok {
		if m, ok = matchConvOperands(n, yDim, b, a); !ok {
			return nil, ""
		}
		a, b = b, a
	}
	m.y, m.x, m.w = c.bufIdx[st.Buffer], c.bufIdx[a.Buffer], c.bufIdx[b.Buffer]
	if m.y == m.x || m.y == m.w {
		return nil, ""
	}
	for _, e := range n.ext {
		m.ext = append(m.ext, c.compileI(e))
	}
	m.plans = map[blas.ConvGeom]*blas.ConvPlan{}
	return m, "conv" + string(rune('0'+sp)) + "d"
}

// matchConvOperands reads the convolution roles off data x and weight w.
func matchConvOperands(n *nest, yDim map[int]int, x, w *ir.BufferLoad) (*convMatch, bool) {
	r := len(x.Indices)
	sp := r - 2
	m := &convMatch{spatial: sp, nVar: -1, ocVar: -1, icVar: -1}
	// W: one spatial variable (the output channel) and the reductions.
	wDim := map[int]int{}
	for d, e := range w.Indices {
		v := n.varIndex(e)
		if v < 0 {
			return nil, false
		}
		if _, dup := wDim[v]; dup {
			return nil, false
		}
		wDim[v] = d
		if n.kinds[v] == ir.IterSpatial {
			if m.ocVar >= 0 {
				return nil, false
			}
			m.ocVar, m.wO = v, d
		} else if n.kinds[v] != ir.IterReduce {
			return nil, false
		}
	}
	if m.ocVar < 0 {
		return nil, false
	}
	// X: batch, channel and one spatial index per axis.
	axis := 0
	usedRed := map[int]bool{}
	for d, e := range x.Indices {
		f, ok := n.affineOf(e)
		if !ok {
			return nil, false
		}
		var sv, rv []int
		for v, k := range f.coef {
			if k == 0 {
				continue
			}
			if n.kinds[v] == ir.IterSpatial {
				sv = append(sv, v)
			} else {
				rv = append(rv, v)
			}
		}
		switch {
		case len(sv) == 1 && len(rv) == 0 && f.gv < 0 && f.c == 0 && f.coef[sv[0]] == 1 && sv[0] != m.ocVar:
			if m.nVar >= 0 {
				return nil, false
			}
			m.nVar, m.xN = sv[0], d
		case len(sv) == 0 && len(rv) == 1 && f.c == 0 && f.coef[rv[0]] == 1 && (f.gv < 0 || f.gv == m.ocVar):
			if m.icVar >= 0 {
				return nil, false
			}
			m.icVar, m.xC = rv[0], d
			if f.gv >= 0 {
				m.ocPerGroup, m.icPerGroup = f.gdiv, f.gmul
			}
		case len(sv) == 1 && sv[0] == m.ocVar && len(rv) == 1 && f.gv < 0 && f.c == 0 && f.coef[rv[0]] == 1 && f.coef[sv[0]] > 0:
			// oc * (I/groups) + rc: one output channel per group
			// (depthwise: oc // 1 * 1 + rc, simplified).
			if m.icVar >= 0 {
				return nil, false
			}
			m.icVar, m.xC = rv[0], d
			m.ocPerGroup, m.icPerGroup = 1, f.coef[sv[0]]
		case len(sv) == 1 && len(rv) == 1 && f.gv < 0 && f.coef[sv[0]] > 0 && f.coef[rv[0]] > 0 && axis < sp:
			if sv[0] == m.ocVar || usedRed[rv[0]] {
				return nil, false
			}
			usedRed[rv[0]] = true
			m.sVar[axis], m.kVar[axis], m.xS[axis] = sv[0], rv[0], d
			m.stride[axis], m.dil[axis], m.off[axis] = f.coef[sv[0]], f.coef[rv[0]], f.c
			axis++
		default:
			return nil, false
		}
	}
	if m.nVar < 0 || m.icVar < 0 || axis != sp || usedRed[m.icVar] {
		return nil, false
	}
	// Y holds n, oc and the spatial outputs; W the reductions.
	var ok bool
	if m.yN, ok = yDim[m.nVar]; !ok {
		return nil, false
	}
	if m.yC, ok = yDim[m.ocVar]; !ok {
		return nil, false
	}
	if m.wI, ok = wDim[m.icVar]; !ok {
		return nil, false
	}
	for i := range sp {
		if m.yS[i], ok = yDim[m.sVar[i]]; !ok {
			return nil, false
		}
		if m.wS[i], ok = wDim[m.kVar[i]]; !ok {
			return nil, false
		}
	}
	if m.ocPerGroup < 0 || m.icPerGroup < 0 || (m.ocPerGroup > 0) != (m.icPerGroup > 0) {
		return nil, false
	}
	return m, true
}

// run executes the convolution on vm/blas when the runtime shapes fit.
func (m *convMatch) run(fr *frame) bool { return m.exec(fr, m.y, nil) }

// exec runs the convolution into buffer y (Y or a buffer of Y's shape),
// with ep (nil: none) finishing each output row (epilogue_conv.go).
func (m *convMatch) exec(fr *frame, y int, ep *convEpState) bool {
	var ext [12]int64
	if len(m.ext) > len(ext) {
		return false
	}
	for i, e := range m.ext {
		ext[i] = e(fr)
	}
	Y, X, W := &fr.bufs[y], &fr.bufs[m.x], &fr.bufs[m.w]
	// padded is X's shape: the extents the taps must stay inside (the
	// padded data's, when the padding is folded).
	padded := X.shape
	if m.pad != nil {
		if _, ok := m.pad.fits(fr); !ok {
			return false
		}
		X = &fr.bufs[m.pad.in]
	}
	if Y.f32 == nil || X.f32 == nil || W.f32 == nil {
		return false
	}
	batch, oc, icg := ext[m.nVar], ext[m.ocVar], ext[m.icVar]
	groups := int64(1)
	if m.ocPerGroup > 0 {
		if m.icPerGroup != icg || oc%m.ocPerGroup != 0 {
			return false
		}
		groups = oc / m.ocPerGroup
	}
	if Y.shape[m.yN] != batch || Y.shape[m.yC] != oc || X.shape[m.xN] != batch || X.shape[m.xC] != groups*icg ||
		W.shape[m.wO] != oc || W.shape[m.wI] != icg {
		return false
	}
	g := blas.ConvGeom{Batch: int(batch), Groups: int(groups), InC: int(groups * icg), OutC: int(oc), Spatial: m.spatial,
		XN: int(X.stride[m.xN]), XC: int(X.stride[m.xC]), WO: int(W.stride[m.wO]), WI: int(W.stride[m.wI]),
		YN: int(Y.stride[m.yN]), YC: int(Y.stride[m.yC])}
	empty := batch == 0 || oc == 0
	for i := range m.spatial {
		out, k, in := ext[m.sVar[i]], ext[m.kVar[i]], padded[m.xS[i]]
		if Y.shape[m.yS[i]] != out || W.shape[m.wS[i]] != k {
			return false
		}
		if out == 0 {
			empty = true
		}
		if k == 0 {
			return false // no taps: left to the general path
		}
		// Every tap must read inside X, as the general path requires.
		if out > 0 && k > 0 && (m.off[i] < 0 || (out-1)*m.stride[i]+(k-1)*m.dil[i]+m.off[i] >= in) {
			return false
		}
		g.In[i], g.Kernel[i], g.Out[i] = int(in), int(k), int(out)
		g.Stride[i], g.Dilation[i], g.Pad[i] = int(m.stride[i]), int(m.dil[i]), int(-m.off[i])
		if m.pad != nil {
			// The padded coordinate u is the datum u - pad: the taps
			// inside the padding read zero.
			g.In[i] = int(X.shape[m.xS[i]])
			g.Pad[i] += int(m.pad.pads[m.xS[i]])
		}
		g.XS[i], g.WS[i], g.YS[i] = int(X.stride[m.xS[i]]), int(W.stride[m.wS[i]]), int(Y.stride[m.yS[i]])
	}
	if empty {
		return ep == nil // an epilogue's nests are left to the general path
	}
	if icg == 0 {
		return false // no reduction: the general path writes T.init's zeros
	}
	p := m.plan(&g)
	threads := runtime.GOMAXPROCS(0)
	if fr.inParallel {
		threads = 1
	}
	cep := m.ep
	if ep != nil {
		if !ep.start(fr, Y.shape, threads) {
			return false
		}
		switch bias, relu, ok := ep.native(oc); {
		case cep.Bias != nil || cep.ReLU:
			cep.Rows = ep
		case ok:
			cep.Bias, cep.ReLU = bias, relu
		case len(ep.table) > 0:
			cep.Chain, cep.ChainLen = ep.table, len(ep.ce.chain)
		default:
			cep.Rows = ep
		}
	}
	blas.Conv(threads, p, X.f32, W.f32, m.packedWeights(&g, W), Y.f32, cep)
	return true
}

// packedWeights returns W packed for g (nil for a depthwise convolution,
// which reads W as stored). Frozen weights (constants, bound weights) are
// packed once and kept with their storage, keyed by this kernel; other
// weights go through the kernel's cache, which confirms a hit by
// comparing the weights with the copy it packed.
func (m *convMatch) packedWeights(g *blas.ConvGeom, W *bufData) *blas.ConvWeights {
	if !g.PacksWeights() {
		return nil
	}
	if pw, ok := packedOnce(m, W,
		func() *blas.ConvWeights { return blas.PackConvWeights(g, W.f32) },
		func(pw *blas.ConvWeights) bool { return pw.Fits(g) }); ok {
		return pw
	}
	return m.weights.Get(g, W.f32)
}

// plan returns the cached plan for geometry g.
func (m *convMatch) plan(g *blas.ConvGeom) *blas.ConvPlan {
	m.mu.Lock()
	defer m.mu.Unlock()
	if p, ok := m.plans[*g]; ok {
		return p
	}
	if len(m.plans) >= 8 {
		clear(m.plans) // shapes keep changing: keep the cache small
	}
	p := blas.NewConvPlan(g)
	m.plans[*g] = p
	return p
}
