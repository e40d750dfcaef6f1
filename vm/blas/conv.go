package blas

import (
	"fmt"
	"sync"
	"sync/atomic"
)

// # Convolution
//
// Conv computes a grouped N-d convolution (1 to 3 spatial axes, any
// stride, dilation and padding, any memory layout given as per-axis
// element strides) as an implicit GEMM on the same packed micro-kernels
// as Sgemm. Per batch image n and group g:
//
//	Y[oc, p] = sum_k W[oc, k] * Col[k, p]
//
// with oc the group's output channels (the GEMM's rows), p the output
// pixels (its columns) and k = (input channel, kernel taps...) in
// row-major order. The weights are the A side: packed once into mr-row
// micro-panels (ConvWeights, cacheable across calls). Col is never
// materialised: for each block of output pixels and each kc block of k,
// the needed part of it is gathered straight from X into nr-column
// micro-panels (im2col per tile; for unit stride a panel row is one
// 16-float copy), then every (6 x 16) tile runs the register-tiled
// micro-kernel into a private scratch block of C. After the last k block
// the epilogue (bias, ReLU, a ConvRowEpilogue) is applied per output row of the block and the
// rows are stored into Y at its strides, so Y's layout (NCHW, NHWC, ...)
// costs only the final store.
//
// Depthwise convolutions (one input and one output channel per group)
// have a 1 x K x P GEMM per channel, which the 6-row tiles would waste;
// they run directly as one AXPY per tap and output row instead.
//
// Work is split over (image, group, pixel block) tasks on up to threads
// goroutines, which take tasks from a shared counter; small convolutions
// run on the caller only.

// ConvGeom is the geometry of a convolution and the layouts of its
// operands. Input coordinate of output o and tap t along spatial axis d:
// o*Stride[d] + t*Dilation[d] - Pad[d]; taps that fall outside [0, In[d])
// read zero.
type ConvGeom struct {
	Batch, Groups                          int
	InC, OutC                              int // total channels: InC = Groups*(input channels per group)
	Spatial                                int // 1..3
	In, Kernel, Out, Stride, Dilation, Pad [3]int

	// Element strides of each canonical axis in the flat operands: data
	// (N, C, spatial...), weight (O, I, kernel...), output (N, C, spatial...).
	XN, XC int
	XS     [3]int
	WO, WI int
	WS     [3]int
	YN, YC int
	YS     [3]int
}

// ConvEpilogue is applied to each output element before it is stored:
// y = Rows(act(sum + Bias[oc])). A nil Bias adds nothing, a nil Rows
// changes nothing.
type ConvEpilogue struct {
	Bias []float32 // one per output channel
	ReLU bool
	Rows ConvRowEpilogue
	// Chain, when set (with ChainLen steps per output channel), is
	// applied after Bias and ReLU: output channel oc's elements go
	// through Chain[oc*ChainLen:(oc+1)*ChainLen] (ScalarChainF32) on
	// their way to the output.
	Chain    []ChainOp
	ChainLen int
}

func (g *ConvGeom) icg() int { return g.InC / g.Groups }
func (g *ConvGeom) ocg() int { return g.OutC / g.Groups }

// taps is the number of kernel positions; k = icg * taps.
func (g *ConvGeom) taps() int {
	t := 1
	for d := range g.Spatial {
		t *= g.Kernel[d]
	}
	return t
}

func (g *ConvGeom) pixels() int {
	p := 1
	for d := range g.Spatial {
		p *= g.Out[d]
	}
	return p
}

// Check validates the geometry against operand lengths: every access of
// Conv stays inside x, w and y.
func (g *ConvGeom) Check(lenX, lenW, lenY int) error {
	if g.Spatial < 1 || g.Spatial > 3 {
		return fmt.Errorf("blas: conv: %d spatial axes (want 1..3)", g.Spatial)
	}
	if g.Batch < 0 || g.Groups < 1 || g.InC < 0 || g.OutC < 0 || g.InC%g.Groups != 0 || g.OutC%g.Groups != 0 {
		return fmt.Errorf("blas: conv: batch %d, groups %d, channels %d -> %d", g.Batch, g.Groups, g.InC, g.OutC)
	}
	for d := range g.Spatial {
		if g.In[d] < 0 || g.Kernel[d] < 0 || g.Out[d] < 0 || g.Stride[d] < 1 || g.Dilation[d] < 1 {
			return fmt.Errorf("blas: conv: axis %d: in %d, kernel %d, out %d, stride %d, dilation %d", d, g.In[d], g.Kernel[d], g.Out[d], g.Stride[d], g.Dilation[d])
		}
	}
	// The largest offset each operand is accessed at (strides are
	// non-negative), or -1 when it is empty.
	last := func(n, c, nStride, cStride int, ext, strides [3]int) int {
		if n == 0 || c == 0 {
			return -1
		}
		if nStride < 0 || cStride < 0 {
			return 1 << 62
		}
		off := (n-1)*nStride + (c-1)*cStride
		for d := range g.Spatial {
			if ext[d] == 0 {
				return -1
			}
			if strides[d] < 0 {
				return 1 << 62
			}
			off += (ext[d] - 1) * strides[d]
		}
		return off
	}
	ly := last(g.Batch, g.OutC, g.YN, g.YC, g.Out, g.YS)
	if ly >= lenY {
		return fmt.Errorf("blas: conv: output needs %d elements, has %d", ly+1, lenY)
	}
	if ly < 0 {
		return nil // nothing to compute
	}
	if l := last(g.OutC, g.icg(), g.WO, g.WI, g.Kernel, g.WS); l >= lenW {
		return fmt.Errorf("blas: conv: weight needs %d elements, has %d", l+1, lenW)
	}
	if l := last(g.Batch, g.InC, g.XN, g.XC, g.In, g.XS); l >= lenX {
		return fmt.Errorf("blas: conv: data needs %d elements, has %d", l+1, lenX)
	}
	return nil
}

// ConvWeights are a convolution's weights packed for Conv: per group,
// per kc block of k, the group's output channels in mr-row micro-panels
// (packA's layout), rows past the group's channels zero.
type ConvWeights struct {
	geom ConvGeom
	a    []float32
	// bt, for geometries in the pixel-row form (conv_pixels.go) instead
	// of a: the weights transposed, in nr-column panels per kc block.
	bt        []float32
	pixelRows bool
}

// PackConvWeights packs w for convolutions of geometry g (only the
// weight-related fields matter).
func PackConvWeights(g *ConvGeom, w []float32) *ConvWeights {
	ocg, icg, taps := g.ocg(), g.icg(), g.taps()
	k := icg * taps
	rows := roundUp(ocg, mr)
	pw := &ConvWeights{geom: *g, pixelRows: g.pixelRows()}
	if g.depthwise() {
		return pw // the direct path reads w as it is
	}
	if !pw.pixelRows {
		pw.a = make([]float32, g.Groups*rows*k+packSlack)
	}
	// Gather each group's (ocg x k) matrix densely, then packA it.
	dense := make([]float32, ocg*k)
	tapOff := g.tapOffsets(g.WS)
	for grp := range g.Groups {
		for o := range ocg {
			base := (grp*ocg + o) * g.WO
			row := dense[o*k : (o+1)*k]
			for c := range icg {
				for t, off := range tapOff {
					row[g.kIndex(c, t)] = w[base+c*g.WI+off]
				}
			}
		}
		if pw.pixelRows { // one group
			pw.bt = packWeightsT(g, dense, k)
			break
		}
		dst := pw.a[grp*rows*k:]
		kb := convKC(k)
		for pc := 0; pc < k; pc += kb {
			kcur := min(kb, k-pc)
			packA(dst[pc*rows:], dense, max(k, 1), false, 0, pc, ocg, kcur, 1)
		}
	}
	return pw
}

// convKC is the k block of a convolution with k = channels x taps: the
// fewest blocks of at most convMaxKC, of equal size, so that a 3x3 kernel
// over 32 channels (k = 288) is one block rather than 256 + 32 (a short
// last block pays the micro-kernel's tile load and store for little
// work). At 320, an A panel and a B panel are 27 KiB, inside L1.
func convKC(k int) int {
	blocks := max(1, ceilDiv(k, convMaxKC))
	return ceilDiv(k, blocks)
}

const convMaxKC = 320

// tapOffsets returns, for each kernel tap in row-major order, the sum of
// tap coordinate times strides[d] (dilation is not applied).
func (g *ConvGeom) tapOffsets(strides [3]int) []int {
	out := make([]int, 0, g.taps())
	var t [3]int
	for range g.taps() {
		off := 0
		for d := range g.Spatial {
			off += t[d] * strides[d]
		}
		out = append(out, off)
		for d := g.Spatial - 1; d >= 0; d-- {
			t[d]++
			if t[d] < g.Kernel[d] {
				break
			}
			t[d] = 0
		}
	}
	return out
}

// kIndex is the GEMM's k of input channel c (in its group) and tap t.
// The order only has to agree between the weight packing and the data
// gather; it is chosen so that consecutive k step through the data by a
// constant stride for as long as possible, since each such run is one
// AVX2 panel copy: channels innermost (stride XC, runs of the channel
// count) unless the kernel's last axis is longer (stride dilation).
func (g *ConvGeom) kIndex(c, t int) int {
	if g.icg() >= g.Kernel[g.Spatial-1] {
		return t*g.icg() + c
	}
	return c*g.taps() + t
}

func (g *ConvGeom) depthwise() bool { return g.icg() == 1 && g.ocg() == 1 && g.Groups > 1 }

// ConvPlan holds what Conv precomputes for a geometry: the data offset
// and per-axis input displacement of every k, and the output offset of
// every pixel. Plans are immutable; callers cache them per geometry.
type ConvPlan struct {
	geom    ConvGeom
	k       int
	koff    []int    // data offset of k = (c, taps): c*XC + sum tap*dil*XS
	koffMax []int    // koffMax[k] = max(koff[:k+1])
	kdisp   [][3]int // per k, tap*dil per axis (bounds checks)
	runLen  []int    // per k, length of the run of k with a constant positive koff step
	wOff    []int    // per tap, weight offset (depthwise)
	pixIn   [][3]int // per pixel, o*stride - pad per axis
	pixOff  []int    // per pixel, data offset of pixIn (may be negative)
	yOff    []int    // per pixel, output offset
	yDense  bool     // yOff[p] == p
	inRange bool     // every tap of every pixel is inside the data
	// pixelRows: the pixel-row form (conv_pixels.go) computes it.
	pixelRows bool
	// slab, when taps fall outside the data (padding), is the plan over a
	// zero-padded copy of the rows a task reads (conv_slab.go).
	slab *ConvPlan
}

// NewConvPlan checks g and precomputes its plan.
func NewConvPlan(g *ConvGeom) *ConvPlan {
	icg, taps := g.icg(), g.taps()
	p := &ConvPlan{geom: *g, k: icg * taps, inRange: true}
	p.koff = make([]int, 0, p.k)
	p.kdisp = make([][3]int, 0, p.k)
	var dil [3]int
	for d := range g.Spatial {
		dil[d] = g.Dilation[d] * g.XS[d]
	}
	tapX := g.tapOffsets(dil)
	// Per tap, the displacement along each axis.
	disps := make([][3]int, 0, taps)
	var t [3]int
	for range taps {
		var disp [3]int
		for d := range g.Spatial {
			disp[d] = t[d] * g.Dilation[d]
		}
		disps = append(disps, disp)
		for d := g.Spatial - 1; d >= 0; d-- {
			t[d]++
			if t[d] < g.Kernel[d] {
				break
			}
			t[d] = 0
		}
	}
	p.koff = p.koff[:p.k]
	p.kdisp = p.kdisp[:p.k]
	for c := range icg {
		for ti := range taps {
			k := g.kIndex(c, ti)
			p.koff[k] = c*g.XC + tapX[ti]
			p.kdisp[k] = disps[ti]
		}
	}
	p.wOff = g.tapOffsets(g.WS)
	p.koffMax = make([]int, p.k)
	for k, off := range p.koff {
		p.koffMax[k] = off
		if k > 0 {
			p.koffMax[k] = max(off, p.koffMax[k-1])
		}
	}
	p.runLen = make([]int, p.k)
	for k := p.k - 1; k >= 0; k-- {
		p.runLen[k] = 1
		if k+1 < p.k {
			switch step := p.koff[k+1] - p.koff[k]; {
			case step <= 0:
			case p.runLen[k+1] > 1 && p.koff[k+2]-p.koff[k+1] == step:
				p.runLen[k] = p.runLen[k+1] + 1
			default:
				p.runLen[k] = 2
			}
		}
	}
	for d := range g.Spatial {
		if g.Out[d] == 0 || g.Kernel[d] == 0 {
			continue
		}
		lo := -g.Pad[d]
		hi := (g.Out[d]-1)*g.Stride[d] + (g.Kernel[d]-1)*g.Dilation[d] - g.Pad[d]
		if lo < 0 || hi >= g.In[d] {
			p.inRange = false
		}
	}
	np := g.pixels()
	p.pixIn = make([][3]int, np)
	p.pixOff = make([]int, np)
	p.yOff = make([]int, np)
	p.yDense = true
	var o [3]int
	for px := range np {
		off, yoff := 0, 0
		for d := range g.Spatial {
			in := o[d]*g.Stride[d] - g.Pad[d]
			p.pixIn[px][d] = in
			off += in * g.XS[d]
			yoff += o[d] * g.YS[d]
		}
		p.pixOff[px], p.yOff[px] = off, yoff
		if yoff != px {
			p.yDense = false
		}
		for d := g.Spatial - 1; d >= 0; d-- {
			o[d]++
			if o[d] < g.Out[d] {
				break
			}
			o[d] = 0
		}
	}
	p.pixelRows = g.pixelRows()
	p.slab = p.slabPlan()
	return p
}

// Geom returns the plan's geometry.
func (p *ConvPlan) Geom() *ConvGeom { return &p.geom }

// minConvWorkPerThread is the multiply-add count per thread below which
// a convolution stays on fewer threads: 3M (about 30 us of the
// micro-kernel) pays for waking a sleeping helper even when it starts
// late, as it does on a loaded machine. At 1M the CNN's 16x16
// convolution at batch 1 (4.7M, three pixel blocks) went to two threads
// and the model ran slower on two cores than on one; ResNet-18's 1x1
// downsampling convolutions (6.4M) still split.
var minConvWorkPerThread = 3 << 20

// Conv computes y = epilogue(conv(x, w)) for plan p on up to threads
// goroutines. pw must come from PackConvWeights for the same weights and
// the same weight geometry (nil: packed here). It panics if the operands
// are too short for the geometry (callers check with ConvGeom.Check).
func Conv(threads int, p *ConvPlan, x []float32, w []float32, pw *ConvWeights, y []float32, ep ConvEpilogue) {
	g := &p.geom
	if err := g.Check(len(x), len(w), len(y)); err != nil {
		panic(err)
	}
	np := g.pixels()
	if g.Batch == 0 || g.OutC == 0 || np == 0 {
		return
	}
	if ep.Bias != nil && len(ep.Bias) < g.OutC {
		panic(fmt.Sprintf("blas: conv: %d biases for %d channels", len(ep.Bias), g.OutC))
	}
	if ep.Chain != nil && (ep.ChainLen < 0 || len(ep.Chain) < g.OutC*ep.ChainLen) {
		panic(fmt.Sprintf("blas: conv: %d chain steps for %d channels of %d", len(ep.Chain), g.OutC, ep.ChainLen))
	}
	for _, o := range ep.Chain {
		if o.Op > ChainMax {
			panic(fmt.Sprintf("blas: conv: chain op %d", o.Op))
		}
	}
	if !g.depthwise() && (pw == nil || pw.pixelRows != p.pixelRows) {
		pw = PackConvWeights(g, w)
	}
	// Pixel blocks of at most convPixBlock, of equal size in whole
	// panels (of nr pixels; mr in the pixel-row form).
	blocks := ceilDiv(np, convPixBlock)
	pixBlock := roundUp(ceilDiv(np, blocks), nr)
	// The channels per block come in panels of rowUnit (mr rows; nr
	// columns in the pixel-row form).
	rows, rowUnit := roundUp(g.ocg(), mr), mr
	if p.pixelRows {
		pixBlock = pixelRowBlock(np)
		rows, rowUnit = roundUp(g.OutC, nr), nr
	}
	blocks = ceilDiv(np, pixBlock)
	work := g.Batch * g.OutC * np * max(p.k, 1)
	threads = max(1, min(threads, work/minConvWorkPerThread, maxThreads))
	// Output channel blocks: when there are fewer pixel blocks than a few
	// per thread (late ResNet layers: 14x14 and 7x7 pixels, hundreds of
	// channels), the threads also split each block's channels (in whole
	// pairs of panels; each packs the pixel block's data again, which is
	// small next to the product when channels are many).
	chanRows := rows
	// Only for work that amortises waking a helper several times over
	// (the CNN's 8x8 convolutions at batch 1 ran slower on two threads).
	if pix := g.Batch * g.Groups * blocks; threads > 1 && pix < 4*threads && !g.depthwise() && work >= 4*threads*minConvWorkPerThread {
		chanRows = roundUp(ceilDiv(rows, ceilDiv(4*threads, pix)), 2*rowUnit)
	}
	chanBlocks := ceilDiv(rows, chanRows)
	tasks := g.Batch * g.Groups * blocks * chanBlocks
	threads = min(threads, tasks)
	run := convRuns.Get().(*convRun)
	run.p, run.x, run.w, run.pw, run.y, run.ep = p, x, w, pw, y, ep
	run.blocks, run.tasks, run.pixBlock, run.chanBlocks, run.chanRows = blocks, tasks, pixBlock, chanBlocks, chanRows
	run.threads = threads
	run.next.Store(0)
	run.tids.Store(0)
	// Open for helpers last: a late helper of the object's previous call
	// joins only a fully set-up run.
	run.state.Store(0)
	if threads > 1 {
		// Helpers take tasks from the same counter, so a helper that
		// starts late (or never: all busy with other calls) only does
		// less of the work.
		queue := startConvWorkers(threads - 1)
		for range threads - 1 {
			select {
			case queue <- run:
			default:
			}
		}
	}
	run.worker(0)
	// Wait only for the helpers that joined: one that has not started
	// yet (its goroutine not scheduled, on a loaded machine) finds the
	// run closed and leaves without touching it further.
	if run.state.Or(convRunClosed) != 0 {
		<-run.done // the last helper to leave signals
	}
	run.reset()
	convRuns.Put(run)
}

// convRunClosed is the bit of convRun.state that admits no more helpers.
const convRunClosed = 1 << 30

// join admits a helper unless the run is closed.
func (r *convRun) join() bool {
	for {
		s := r.state.Load()
		if s&convRunClosed != 0 {
			return false
		}
		if r.state.CompareAndSwap(s, s+1) {
			return true
		}
	}
}

// leave lets a helper go; the last one out of a closed run wakes the
// caller, which waits exactly when helpers were inside as it closed.
func (r *convRun) leave() {
	if r.state.Add(-1) == convRunClosed {
		r.done <- struct{}{}
	}
}

// reset clears r for reuse. A helper sent to r's previous call may still
// join it later: it then helps whatever call r carries (or none: closed).
func (r *convRun) reset() {
	r.p, r.x, r.w, r.y, r.pw, r.ep = nil, nil, nil, nil, nil, ConvEpilogue{}
	r.blocks, r.tasks, r.pixBlock, r.chanBlocks, r.chanRows, r.threads = 0, 0, 0, 0, 0, 0
	r.next.Store(0)
	r.tids.Store(0)
}

var convRuns = sync.Pool{New: func() any {
	r := &convRun{done: make(chan struct{}, 1)}
	r.state.Store(convRunClosed)
	return r
}}

// The conv helpers: long-lived goroutines, so a call starts none (and
// allocates nothing).
var (
	convWorkerMu sync.Mutex
	convWorkers  int
	convQueue    = make(chan *convRun, maxThreads)
)

func startConvWorkers(n int) chan *convRun {
	convWorkerMu.Lock()
	defer convWorkerMu.Unlock()
	for ; convWorkers < n; convWorkers++ {
		go func() {
			for r := range convQueue {
				if r.join() {
					// Goroutine ids from 1 (the caller is 0); a helper
					// past the call's thread count (one sent to an
					// earlier call of the same object) leaves.
					if tid := int(r.tids.Add(1)); tid < r.threads {
						r.worker(tid)
					}
					r.leave()
				}
			}
		}()
	}
	return convQueue
}

// convRun is one Conv call shared by its goroutines.
type convRun struct {
	p             *ConvPlan
	x, w, y       []float32
	pw            *ConvWeights
	ep            ConvEpilogue
	blocks, tasks int
	pixBlock      int // pixels per block (the last may have fewer)
	// chanBlocks blocks of chanRows rows of each group's packed output
	// channels (the last may have fewer).
	chanBlocks, chanRows int
	threads              int // goroutines at most, the caller included
	next                 atomic.Int64
	tids                 atomic.Int32 // numbers the helpers from 1 (ConvRowEpilogue's tid)
	// state counts the helpers inside worker, plus convRunClosed once
	// the caller has finished its share (pooled runs start closed).
	state atomic.Int32
	done  chan struct{} // capacity 1: see leave
}

// convScratch is a goroutine's packing and accumulation space.
type convScratch struct {
	bp, c, row []float32
	slab       []float32 // the zero-padded data (conv_slab.go)
	tid        int
}

var convScratchPool = sync.Pool{New: func() any { return new(convScratch) }}

// worker runs tasks until none are left, as goroutine tid of the call.
func (r *convRun) worker(tid int) {
	s := convScratchPool.Get().(*convScratch)
	defer convScratchPool.Put(s)
	s.tid = tid
	g := &r.p.geom
	for {
		t := int(r.next.Add(1) - 1)
		if t >= r.tasks {
			return
		}
		cb := t % r.chanBlocks
		t /= r.chanBlocks
		blk := t % r.blocks
		grp := (t / r.blocks) % g.Groups
		n := t / r.blocks / g.Groups
		p0 := blk * r.pixBlock
		p1 := min(p0+r.pixBlock, g.pixels())
		switch {
		case g.depthwise():
			r.depthwise(s, n, grp, p0, p1)
		case r.p.pixelRows:
			c0 := cb * r.chanRows
			r.gemmBlockT(s, r.source(s, n, 0, p0, p1), n, p0, p1, c0, min(c0+r.chanRows, g.OutC))
		default:
			r0 := cb * r.chanRows
			r.gemmBlock(s, r.source(s, n, grp, p0, p1), n, grp, p0, p1, r0, min(r0+r.chanRows, roundUp(g.ocg(), mr)))
		}
	}
}

// gemmBlock computes output pixels [p0, p1) of group grp of image n, for
// the group's output channels [r0, r1) (r0, r1 multiples of mr; r1 may
// pass the group's channels, the packed weights' zero rows), gathering
// the data from src.
func (r *convRun) gemmBlock(s *convScratch, src convSource, n, grp, p0, p1, r0, r1 int) {
	p, g := src.p, &r.p.geom
	ocg := g.ocg()
	rows := roundUp(ocg, mr)
	nrows := r1 - r0
	ncur := p1 - p0
	ldc := roundUp(ncur, nr)
	s.c = growF32(s.c, nrows*ldc)
	c := s.c[:nrows*ldc]
	clear(c)
	k := p.k
	apack := r.pw.a[grp*rows*k:]
	kb := convKC(k)
	for pc := 0; pc < k; pc += kb {
		kcur := min(kb, k-pc)
		s.bp = growF32(s.bp, kcur*ldc)
		src.packCols(s.bp, pc, kcur, p0, p1)
		// The scratch C is whole tiles (ldc a multiple of nr, nrows of
		// mr), so tiles needs no edge handling.
		tiles(kcur, apack[pc*rows+r0*kcur:], s.bp, c, ldc, nrows, ldc)
	}
	// Epilogue and store, one output channel row at a time.
	ybase := n*g.YN + grp*ocg*g.YC
	for o := r0; o < min(r1, ocg); o++ {
		row := c[(o-r0)*ldc : (o-r0)*ldc+ncur]
		r.finishRow(s, row, n, grp*ocg+o, ybase+o*g.YC, p0)
	}
}

func (r *convRun) finishRow(s *convScratch, row []float32, n, oc, ybase, p0 int) {
	if r.ep.Chain != nil && r.ep.Bias == nil && !r.ep.ReLU && r.ep.Rows == nil && r.p.yDense {
		// The chain on the way to the output: one pass.
		L := r.ep.ChainLen
		scalarChain(r.y[ybase+p0:ybase+p0+len(row)], row, r.ep.Chain[oc*L:(oc+1)*L])
		return
	}
	if r.ep.Bias != nil && r.ep.Rows == nil && r.p.yDense {
		// Bias (and ReLU) on the way to the output: one pass.
		biasReLU(r.y[ybase+p0:ybase+p0+len(row)], row, r.ep.Bias[oc], r.ep.ReLU)
		return
	}
	if r.ep.Bias != nil {
		AddScalarF32(row, row, r.ep.Bias[oc])
	}
	if r.ep.ReLU {
		MaxScalarF32(row, row, 0)
	}
	if r.ep.Chain != nil {
		L := r.ep.ChainLen
		scalarChain(row, row, r.ep.Chain[oc*L:(oc+1)*L])
	}
	if r.ep.Rows != nil {
		r.ep.Rows.Row(s.tid, row, n, oc, p0)
	}
	if r.p.yDense {
		copy(r.y[ybase+p0:], row)
		return
	}
	yOff := r.p.yOff[p0:]
	for j, v := range row {
		r.y[ybase+yOff[j]] = v
	}
}

// packCols gathers Col[pc:pc+kcur, p0:p1] of the source's group into
// nr-column micro-panels (packB's layout), zero past p1 and for taps
// outside the data.
func (src convSource) packCols(dst []float32, pc, kcur, p0, p1 int) {
	p, g := src.p, &src.p.geom
	x, xbase := src.x, src.base
	koff := p.koff[pc : pc+kcur]
	last := g.Spatial - 1
	unit := g.Stride[last]*g.XS[last] == 1
	for q := p0; q < p1; q += nr {
		panel := dst[(q-p0)*kcur : (q-p0+nr)*kcur]
		cols := min(nr, p1-q)
		pix := p.pixOff[q : q+cols]
		// Pixels of one output row with unit stride along it read 16
		// consecutive data elements per k.
		contiguous := cols == nr && unit && pix[nr-1]-pix[0] == nr-1
		switch {
		case p.inRange && contiguous:
			// Runs of k whose data offsets step by a constant (the taps
			// along the last axis, the channels of a 1x1 kernel) are
			// rows of a strided matrix: one AVX2 panel copy each.
			base := xbase + pix[0]
			for kk := 0; kk < kcur; {
				run := min(p.runLen[pc+kk], kcur-kk)
				ko := koff[kk]
				if run > 1 && packBFullPanel(panel[kk*nr:], x[base+ko:], koff[kk+1]-ko, run) {
					kk += run
					continue
				}
				copy16(panel[kk*nr:], x[base+ko:])
				kk++
			}
		case p.inRange && cols == nr && evenStep(pix, 2):
			// Stride 2 along one output row (a ResNet stem or
			// downsampling convolution): every other element of 31.
			base := xbase + pix[0]
			for kk, ko := range koff {
				copy16Stride2(panel[kk*nr:], x[base+ko:])
			}
		default:
			p.gatherPanel(panel, x, xbase, pc, q, nr, koff, pix)
		}
	}
}

// depthwise computes output pixels [p0, p1) of channel grp of image n
// of a depthwise convolution: for each tap, y += w[tap] * x shifted.
func (r *convRun) depthwise(s *convScratch, n, grp, p0, p1 int) {
	p, g := r.p, &r.p.geom
	ncur := p1 - p0
	taps := g.taps()
	xbase := n*g.XN + grp*g.XC
	wbase := grp * g.WO
	s.c = growF32(s.c, ncur)
	acc := s.c
	clear(acc)
	last := g.Spatial - 1
	step := g.Stride[last] * g.XS[last] // input elements between neighbouring output pixels
	for t := range taps {
		wt := r.w[wbase+p.wOff[t]]
		ko := p.koff[t]
		disp := &p.kdisp[t]
		// Along the last axis, output o reads input o*stride + base: the
		// outputs whose input is inside [0, In) form one run per output
		// row, [oMin, oMax).
		s, base := g.Stride[last], disp[last]-g.Pad[last]
		oMin := floorDiv(-base+s-1, s)
		oMax := floorDiv(g.In[last]-1-base, s) + 1
		for j := 0; j < ncur; {
			px := p0 + j
			oLast := p.pixInLastIndex(px)
			row := min(g.Out[last]-oLast, ncur-j) // pixels of this output row in the block
			inside := true
			for a := range last {
				if v := p.pixIn[px][a] + disp[a]; v < 0 || v >= g.In[a] {
					inside = false
				}
			}
			lo, hi := max(oMin, oLast), min(oMax, oLast+row)
			if inside && lo < hi {
				jj, cnt := j+lo-oLast, hi-lo
				xs := r.x[xbase+ko+p.pixOff[p0+jj]:]
				if step == 1 {
					AxpyF32(wt, xs[:cnt], acc[jj:jj+cnt])
				} else {
					a := acc[jj : jj+cnt]
					xs = xs[:(cnt-1)*step+1]
					for i := range a {
						a[i] += wt * xs[i*step]
					}
				}
			}
			j += row
		}
	}
	r.finishRow(s, acc, n, grp, n*g.YN+grp*g.YC, p0)
}

// biasReLUGo is biasReLU's portable form.
func biasReLUGo(dst, src []float32, b float32, relu bool) {
	AddScalarF32(dst, src, b)
	if relu {
		MaxScalarF32(dst, dst, 0)
	}
}

// floorDiv is a/b rounded towards negative infinity (b > 0).
// gatherPanel writes, per k of koff, the data elements of pixels pix
// (plan pixels q, q+1, ...) into one width-wide row of a micro-panel,
// zero past the pixels; taps outside the data read as zero unless the
// plan knows every tap is in range. The general case of packCols and
// packPixels, which differ only in the panel's width.
func (p *ConvPlan) gatherPanel(panel, x []float32, xbase, pc, q, width int, koff, pix []int) {
	n := len(pix)
	if p.inRange {
		for kk, ko := range koff {
			d := panel[kk*width : kk*width+width]
			src := x[xbase+ko:]
			for j, po := range pix {
				d[j] = src[po]
			}
			clear(d[n:])
		}
		return
	}
	g := &p.geom
	pin := p.pixIn[q : q+n]
	for kk, ko := range koff {
		d := panel[kk*width : kk*width+width]
		disp := &p.kdisp[pc+kk]
		for j, po := range pix {
			ok := true
			for a := range g.Spatial {
				if v := pin[j][a] + disp[a]; v < 0 || v >= g.In[a] {
					ok = false
				}
			}
			if ok {
				d[j] = x[xbase+ko+po]
			} else {
				d[j] = 0
			}
		}
		clear(d[n:])
	}
}

func floorDiv(a, b int) int {
	q := a / b
	if a%b != 0 && a < 0 {
		q--
	}
	return q
}

// pixInLastIndex is the output coordinate of pixel px along the last
// spatial axis.
func (p *ConvPlan) pixInLastIndex(px int) int {
	return px % p.geom.Out[p.geom.Spatial-1]
}

func growF32(s []float32, n int) []float32 {
	if cap(s) >= n {
		return s[:n]
	}
	return make([]float32, n)
}

// copy16 copies 16 floats without a call (a 64-byte array assignment
// goes through memmove).
func copy16(dst, src []float32) {
	d, s := dst[:16:16], src[:16:16]
	d[0], d[1], d[2], d[3], d[4], d[5], d[6], d[7] = s[0], s[1], s[2], s[3], s[4], s[5], s[6], s[7]
	d[8], d[9], d[10], d[11], d[12], d[13], d[14], d[15] = s[8], s[9], s[10], s[11], s[12], s[13], s[14], s[15]
}

// evenStep reports whether pix[j] = pix[0] + step*j for every j.
func evenStep(pix []int, step int) bool {
	for j := 1; j < len(pix); j++ {
		if pix[j]-pix[j-1] != step {
			return false
		}
	}
	return true
}

// copy16Stride2 sets dst[j] = src[2*j] for j < 16.
func copy16Stride2(dst, src []float32) {
	d, s := dst[:16:16], src[:31:31]
	d[0], d[1], d[2], d[3], d[4], d[5], d[6], d[7] = s[0], s[2], s[4], s[6], s[8], s[10], s[12], s[14]
	d[8], d[9], d[10], d[11], d[12], d[13], d[14], d[15] = s[16], s[18], s[20], s[22], s[24], s[26], s[28], s[30]
}
