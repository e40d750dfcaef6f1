package kernel

import (
	"math"
	"sync"

	"github.com/phasec/phasec/ir"
)

// convEpilogue is a convolution whose output rows run through an epilogue
// program (epilogue.go): blas.Conv computes each output row (one channel
// of one image over a block of pixels) in private scratch, the program
// finishes it there, and Conv stores it straight into the run's output.
// A row's columns are the output pixels in the row-major order of the
// spatial extents, so an operand read along the row (a residual) must be
// laid out the same way over the spatial dimensions (NCHW-style, checked
// per call); per-channel operands (the bias) are per-row scalars.
type convEpilogue struct {
	cm     *convMatch
	prog   *epProgram
	states sync.Pool // *convEpState
}

// run executes the fused run with the output as the convolution's
// destination: the epilogue reads an operand element before Conv stores
// the same element, so even an in-place update of the output is safe.
func (ce *convEpilogue) run(fr *frame) bool {
	s := ce.states.Get().(*convEpState)
	defer ce.states.Put(s)
	return ce.cm.exec(fr, ce.prog.out, s)
}

// convEpState is one call's epilogue state (pooled).
type convEpState struct {
	ce      *convEpilogue
	binds   []epBind
	consts  []float32
	threads []epThread
}

// start binds the call: shape is the output's shape (checked against the
// loops), threads the convolution's goroutines.
func (s *convEpState) start(fr *frame, shape []int64, threads int) bool {
	p, cm := s.ce.prog, s.ce.cm
	if !p.checkNests(fr, shape) {
		return false
	}
	if len(s.binds) < len(p.operands) {
		s.binds = make([]epBind, len(p.operands))
	}
	if !p.bindOperands(fr, shape, s.binds) {
		return false
	}
	for o := range p.operands {
		if !p.operands[o].vec {
			continue
		}
		// Along the row: the pixels in row-major order of the spatial
		// extents.
		want := int64(1)
		for i := cm.spatial - 1; i >= 0; i-- {
			d := cm.yS[i]
			if s.binds[o].stride[d] != want && shape[d] != 1 {
				return false
			}
			want *= shape[d]
		}
	}
	s.consts = p.evalConsts(fr, s.consts)
	if len(s.threads) < threads {
		s.threads = append(s.threads, make([]epThread, threads-len(s.threads))...)
	}
	for t := range threads {
		s.threads[t].prepare(p, s.consts)
	}
	return true
}

// Row finishes output channel oc of image n for pixels p0.. in place
// (blas.ConvRowEpilogue).
func (s *convEpState) Row(tid int, row []float32, n, oc, p0 int) {
	p, cm := s.ce.prog, s.ce.cm
	th := &s.threads[tid]
	for o := range p.operands {
		b := &s.binds[o]
		off := b.off + int64(n)*b.stride[cm.yN] + int64(oc)*b.stride[cm.yC]
		if p.operands[o].vec {
			th.rowOff[o] = off + int64(p0)
		} else {
			th.sc[o] = b.data[off]
		}
	}
	for j := 0; j < len(row); j += epWidth {
		w := min(epWidth, len(row)-j)
		for o := range p.operands {
			if p.operands[o].vec {
				th.vecs[o] = s.binds[o].data[th.rowOff[o]+int64(j):][:w]
			}
		}
		seg := row[j : j+w]
		p.runRow(th, seg, seg)
	}
}

// paddedConvAt compiles a zero-padding stage at stmts[i] feeding the
// convolution at stmts[i+1] (LegalizeOps' pad_temp + conv2d_nchw, with
// any epilogue nests after it) as one run in which the convolution reads
// the stage's input and the padding is its out-of-range taps (vm/blas
// reads those as zero): the padded copy is never written. The stage must
// pad with +0 only the convolution's spatial axes, store a buffer local
// to the PrimFunc that nothing but the convolution reads. It returns the
// run, its pattern name and end (nil when stmts[i] is no such stage);
// calls whose shapes the fold does not take run the stages unfused.
func (c *compiler) paddedConvAt(stmts []ir.Stmt, i int) (stmt, string, int) {
	if i+1 >= len(stmts) {
		return nil, "", 0
	}
	pn, ok := nestOf(stmts[i])
	if !ok {
		return nil, "", 0
	}
	cn, ok := nestOf(stmts[i+1])
	if !ok {
		return nil, "", 0
	}
	// The nests' variables get their slots first, as in fusedAt.
	for _, n := range []*nest{pn, cn} {
		for _, v := range n.vars {
			if !isFloatType(v.Type) && !v.Type.IsHandle() && v.Type.Lanes == 1 {
				c.defineVar(v)
			}
		}
	}
	pm := c.padPlan(pn)
	if pm == nil || pm.fill != 0 || math.Signbit(float64(pm.fill)) {
		return nil, "", 0
	}
	pst := pn.body.(*ir.BufferStore)
	if isParamOf(c.f, pst.Buffer) {
		return nil, "", 0
	}
	cm, cname := c.convPlan(cn)
	if cm == nil || cm.x != pm.out || pm.pads[cm.xN] != 0 || pm.pads[cm.xC] != 0 {
		return nil, "", 0
	}
	for _, s := range stmts[i+2:] {
		if stmtReads(s, pst.Buffer) {
			return nil, "", 0
		}
	}
	cm.pad = pm
	cst := cn.body.(*ir.BufferStore)
	run, name, end := cm.run, cname+"_padded", i+2
	cols := make([]int, cm.spatial)
	copy(cols, cm.yS[:cm.spatial])
	if prog, k := c.compileEpilogue(cst.Buffer, len(cst.Indices), cols, stmts[i+2:]); prog != nil {
		ce := &convEpilogue{cm: cm, prog: prog}
		ce.states.New = func() any { return &convEpState{ce: ce} }
		run, name, end = ce.run, name+"+epilogue", end+k
	}
	unfused, _ := c.plainTop(stmts[i:end])
	return func(fr *frame) {
		if run(fr) {
			fastTaken.Add(1)
			return
		}
		unfused(fr)
	}, name, end
}
