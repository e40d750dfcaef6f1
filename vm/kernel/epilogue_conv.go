package kernel

import (
	"math"
	"sync"

	"github.com/phasec/phasec/ir"
	"github.com/phasec/phasec/vm/blas"
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
	// bias and relu, when the program is only a per-channel bias
	// (acc + operand bias) and/or a ReLU (max(., const)), which blas.Conv
	// then applies itself in one pass (blas.ConvEpilogue): the operand
	// (-1: none) and the scalar number of the ReLU's constant (-1: none).
	bias, relu int
	// chain, when the program's vector instructions are one chain of
	// vector-scalar steps from the accumulator to the output (a batch
	// norm: subtract, divide, multiply, add), runs a row in one pass
	// (blas.ScalarChainF32) after the scalar instructions.
	chain []chainStep
}

// chainStep is a vector instruction of a chain: code[instr], as kind,
// its scalar negated (a subtraction).
type chainStep struct {
	instr int
	kind  blas.ChainKind
	neg   bool
}

// chainOf returns the chain of prog's vector instructions (nil when they
// are not one): each reads the previous one's result (the first the
// accumulator) and a scalar, the last writes the output, and no scalar
// instruction after a step overwrites the scalar it reads.
func chainOf(prog *epProgram) []chainStep {
	var steps []chainStep
	prev := epVal{kind: epAcc}
	for i := range prog.code {
		in := &prog.code[i]
		if in.sDst {
			continue
		}
		if in.fn != nil || in.vecOp != nil || in.b.kind != epScalar || in.a.kind != prev.kind || in.a.id != prev.id {
			return nil
		}
		if prev.kind == epAcc && in.a.id != 0 {
			return nil
		}
		st := chainStep{instr: i}
		switch in.op {
		case ir.OpAdd:
			st.kind = blas.ChainAdd
		case ir.OpSub:
			st.kind, st.neg = blas.ChainAdd, true // a - s == a + (-s), as vecScalar
		case ir.OpMul:
			st.kind = blas.ChainMul
		case ir.OpDiv:
			st.kind = blas.ChainDiv
		case ir.OpMax:
			st.kind = blas.ChainMax
		default:
			return nil
		}
		for j := i + 1; j < len(prog.code); j++ {
			if prog.code[j].sDst && prog.code[j].dst == in.b.id {
				return nil
			}
		}
		steps = append(steps, st)
		if in.last {
			if i != len(prog.code)-1 {
				return nil
			}
			return steps
		}
		prev = epVal{kind: epReg, id: in.dst}
	}
	return nil
}

// newConvEpilogue is the fused run of convolution cm and program prog.
func newConvEpilogue(cm *convMatch, prog *epProgram) *convEpilogue {
	ce := &convEpilogue{cm: cm, prog: prog, bias: -1, relu: -1, chain: chainOf(prog)}
	ce.states.New = func() any { return &convEpState{ce: ce} }
	code, nOps, nConsts := prog.code, len(prog.operands), len(prog.consts)
	vecScalar := func(in *epInstr, op ir.BinaryOp, a epKind) bool {
		return in.fn == nil && in.vecOp == nil && !in.sDst && in.op == op && in.a.kind == a && in.b.kind == epScalar
	}
	bias, relu := -1, -1
	switch {
	case len(code) == 1 && vecScalar(&code[0], ir.OpAdd, epAcc) && code[0].b.id < nOps:
		bias = code[0].b.id
	case len(code) == 1 && vecScalar(&code[0], ir.OpMax, epAcc):
		relu = code[0].b.id
	case len(code) == 2 && vecScalar(&code[0], ir.OpAdd, epAcc) && code[0].b.id < nOps &&
		vecScalar(&code[1], ir.OpMax, epReg) && code[1].a.id == code[0].dst:
		bias, relu = code[0].b.id, code[1].b.id
	default:
		return ce
	}
	if relu >= 0 && (relu < nOps || relu >= nOps+nConsts) {
		return ce // the bound is no per-call constant
	}
	if bias >= 0 && prog.operands[bias].vec {
		return ce
	}
	ce.bias, ce.relu = bias, relu
	return ce
}

// native returns the bias and ReLU flag blas.Conv applies itself for
// the bound call (ok false: the program runs per row). The bias must be
// one contiguous value per output channel, the same for every image, and
// the ReLU's bound +0.
func (s *convEpState) native(oc int64) (bias []float32, relu, ok bool) {
	ce := s.ce
	if ce.bias < 0 && ce.relu < 0 {
		return nil, false, false
	}
	if ce.relu >= 0 {
		if v := s.consts[ce.relu-len(ce.prog.operands)]; v != 0 || math.Signbit(float64(v)) {
			return nil, false, false
		}
	}
	if ce.bias < 0 {
		return nil, true, true
	}
	b := &s.binds[ce.bias]
	cm := ce.cm
	if b.stride[cm.yN] != 0 || (b.stride[cm.yC] != 1 && oc > 1) || b.off+oc > int64(len(b.data)) {
		return nil, false, false
	}
	return b.data[b.off : b.off+oc], ce.relu >= 0, true
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
	chains  [][]blas.ChainOp // per thread: the row's chain
	// table, when the chain's scalars depend on the output channel only,
	// holds every channel's chain (len(ce.chain) ops per channel),
	// computed once per call instead of per row.
	table []blas.ChainOp
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
	for len(s.chains) < threads {
		s.chains = append(s.chains, make([]blas.ChainOp, 0, len(s.ce.chain)))
	}
	s.table = s.table[:0]
	if s.ce.chain != nil {
		s.tabulate(shape[cm.yC])
	}
	return true
}

// tabulate fills s.table for oc output channels when every operand is a
// per-channel scalar (the same for every image); otherwise (or when a
// channel's chain cannot run) it leaves the table empty and rows compute
// their chains themselves.
func (s *convEpState) tabulate(oc int64) {
	p, cm := s.ce.prog, s.ce.cm
	for o := range p.operands {
		if p.operands[o].vec || s.binds[o].stride[cm.yN] != 0 {
			return
		}
	}
	th := &s.threads[0]
	n := len(s.ce.chain)
	if int64(cap(s.table)) < oc*int64(n) {
		s.table = make([]blas.ChainOp, 0, oc*int64(n))
	}
	for c := range oc {
		for o := range p.operands {
			b := &s.binds[o]
			th.sc[o] = b.data[b.off+c*b.stride[cm.yC]]
		}
		ops, ok := s.chainOps(th, s.table[len(s.table):])
		if !ok {
			s.table = s.table[:0]
			return
		}
		s.table = s.table[:len(s.table)+len(ops)]
	}
}

// Row finishes output channel oc of image n for pixels p0.. in place
// (blas.ConvRowEpilogue).
func (s *convEpState) Row(tid int, row []float32, n, oc, p0 int) {
	if steps := len(s.ce.chain); len(s.table) > 0 {
		blas.ScalarChainF32(row, row, s.table[oc*steps:(oc+1)*steps])
		return
	}
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
	if s.ce.chain != nil && s.chainRow(tid, row) {
		return
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
		ce := newConvEpilogue(cm, prog)
		run, name, end = ce.run, name+"+epilogue", end+k
	}
	unfused, _ := c.plainTop(stmts[i:end])
	return fastOr(run, unfused), name, end
}

// chainRow finishes a row of a chain program in one pass (false: a max
// by NaN, which MaxScalarF32 does not take, so runRow runs the row).
func (s *convEpState) chainRow(tid int, row []float32) bool {
	ops, ok := s.chainOps(&s.threads[tid], s.chains[tid][:0])
	if !ok {
		return false
	}
	s.chains[tid] = ops
	blas.ScalarChainF32(row, row, ops)
	return true
}

// chainOps runs the scalar instructions as runRow does, on th's scalars
// (the operands' already loaded), and appends the chain's steps to ops
// (false: a max by NaN).
func (s *convEpState) chainOps(th *epThread, ops []blas.ChainOp) ([]blas.ChainOp, bool) {
	p := s.ce.prog
	for i := range p.code {
		in := &p.code[i]
		if !in.sDst {
			continue
		}
		if in.sfn != nil {
			th.sc[in.dst] = float32(in.sfn(float64(th.sc[in.a.id])))
		} else {
			th.sc[in.dst] = scalarOp(in.op, th.sc[in.a.id], th.sc[in.b.id])
		}
	}
	for _, st := range s.ce.chain {
		v := th.sc[p.code[st.instr].b.id]
		if st.neg {
			v = -v
		}
		if st.kind == blas.ChainMax && v != v {
			return ops, false
		}
		ops = append(ops, blas.ChainOp{Op: st.kind, S: v})
	}
	return ops, true
}
