package kernel

import "sync"

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
