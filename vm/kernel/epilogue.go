package kernel

import (
	"github.com/phasec/phasec/ir"
)

// GEMM and convolution epilogues. FuseTIR writes a fused dense layer
// (matmul + bias + gelu, conv + bias + relu, matmul + bias + residual add,
// ...) as the producer nest storing into a T.alloc_buffer intermediate,
// then elementwise nests over the same index space, each reading the
// previous intermediates at its own index, the last storing into the
// output parameter:
//
//	for i, j, k: mm[i, j] = mm[i, j] + A[i, k] * B[k, j]   (producer)
//	for i, j:    t[i, j] = mm[i, j] + bias[j]              (epilogue)
//	for i, j:    out[i, j] = t[i, j] * (0.5 + erf(...) * 0.5)
//
// Such a run compiles, whatever its names, into one epProgram: a short
// list of vector instructions over a row segment of the producer's
// output, whose operands are the producer's value (the accumulator),
// earlier results (registers), other buffers read at the same index or
// broadcast (a bias over the last dimension, a per-channel bias, a
// residual of the same shape, a 0-d scale: any buffer whose every index
// is one of the nest's variables or a constant) and scalars. vm/blas runs
// it on every output tile while the tile is in cache (epilogue_gemm.go:
// blas.SgemmEpilogue; epilogue_conv.go: blas.ConvRowEpilogue), so the
// intermediates are never written and the output is written once.
//
// Instructions are + - * / max min (vector-vector, vector-scalar,
// scalar-vector, scalar-scalar, as the row kernels run them: the general
// path's float32 results exactly), the vector math of vm/blas (exp, erf,
// tanh, sigmoid, ...; GELU's two legalized forms as one call, matchGelu)
// and float32 casts of float32 values. Anything else leaves the run to the
// unfused dispatch.
//
// Invariants the matcher checks: every intermediate of the run is a
// T.alloc_buffer that no statement after the run reads; each epilogue nest
// stores its own variables in order (Out[v0, .., vp-1], p = the
// producer's rank) and reads intermediates only at that index; its loop
// extents equal the producer's output extents (checked per call, with the
// operands' shapes: on a mismatch the unfused closures run).

// epKind is the kind of an instruction argument.
type epKind uint8

const (
	epAcc    epKind = iota // the producer's value (the row segment being finished)
	epReg                  // a vector register
	epVec                  // an operand varying along the row
	epScalar               // a scalar: id numbers the thread's scalars (see epProgram.nScalars)

	// Scalars while compiling, numbered in their own spaces until finish
	// makes them epScalar.
	epOpScalar // an operand constant along the row (per row)
	epConst    // a per-call constant
	epSReg     // a scalar register
)

func (k epKind) scalar() bool { return k >= epScalar }

// epVal is an instruction argument.
type epVal struct {
	kind epKind
	id   int // register, operand or scalar number
}

// epInstr is one instruction: dst = a op b (binary), dst = fn(a), or for
// a scalar dst = sfn(a).
type epInstr struct {
	fn    func(dst, x []float32)    // unary (nil: binary)
	sfn   func(float64) float64     // unary of a scalar (sDst): float32(sfn(a))
	vecOp func(dst, a, b []float32) // binary of two vectors
	op    ir.BinaryOp
	a, b  epVal
	dst   int  // vector register, or the scalar number when sDst
	sDst  bool // a scalar result (both operands scalars)
	last  bool // writes the output row instead of a register
}

// epDim is how one dimension of an operand is indexed: by the producer's
// dimension dim (dim >= 0) or by the constant c.
type epDim struct {
	dim int
	c   int64
}

// epOperand is a buffer the epilogue reads.
type epOperand struct {
	buf  int
	dims []epDim
	vec  bool // varies along the row's columns
}

// epProgram is a compiled epilogue.
type epProgram struct {
	code     []epInstr
	operands []epOperand
	consts   []fexpr // per-call scalars
	nRegs    int
	// The thread's scalars: one per operand (the scalar operands' values
	// for the current row), then the consts, then the scalar registers.
	nScalars int
	// out is the output buffer; nestExt the extents of every epilogue nest
	// (checked against the producer's output per call).
	out     int
	nestExt [][]iexpr
	// readsOut: the output parameter is also an operand (an in-place
	// update), so a GEMM cannot accumulate in it.
	readsOut bool
	names    []string
}

// epCompiler compiles one run's epilogue nests.
type epCompiler struct {
	c       *compiler
	p       *epProgram
	rank    int
	cols    map[int]bool         // producer dimensions along a row
	regs    map[*ir.Buffer]epVal // intermediates computed so far
	written map[*ir.Buffer]bool  // every buffer the run stores
	n       *nest
	store   *ir.BufferStore
	sRegs   int
}

// compileEpilogue compiles the epilogue nests that follow a producer
// storing buffer prod (rank dimensions; cols: the dimensions along a
// row): stmts[0:] are tried in order up to and including the first that
// stores a parameter. It returns the program and the number of
// statements it covers (0: no epilogue).
func (c *compiler) compileEpilogue(prod *ir.Buffer, rank int, cols []int, stmts []ir.Stmt) (*epProgram, int) {
	if isParamOf(c.f, prod) {
		return nil, 0
	}
	ec := &epCompiler{c: c, p: &epProgram{}, rank: rank, cols: map[int]bool{},
		regs: map[*ir.Buffer]epVal{prod: {kind: epAcc}}, written: map[*ir.Buffer]bool{prod: true}}
	for _, d := range cols {
		ec.cols[d] = true
	}
	for i, s := range stmts {
		n, ok := nestOf(s)
		if !ok || n.init != nil {
			return nil, 0
		}
		st, ok := n.body.(*ir.BufferStore)
		if !ok || storageOf(st.Buffer.DType) != stF32 || len(st.Indices) != rank || len(n.vars) != rank || ec.written[st.Buffer] {
			return nil, 0
		}
		for d, e := range st.Indices {
			if e != n.vars[d] || n.kinds[d] != ir.IterSpatial {
				return nil, 0
			}
		}
		ec.n, ec.store = n, st
		v, ok := ec.expr(st.Value)
		if !ok || (v.kind != epReg && v.kind != epAcc) {
			return nil, 0
		}
		var ext []iexpr
		for _, e := range n.ext {
			ext = append(ext, c.compileI(e))
		}
		ec.p.nestExt = append(ec.p.nestExt, ext)
		ec.written[st.Buffer] = true
		ec.regs[st.Buffer] = v
		if !isParamOf(c.f, st.Buffer) {
			continue
		}
		// The output: the last instruction writes it (a copy when the
		// value is the accumulator itself).
		if v.kind == epAcc {
			ec.emit(epInstr{fn: copyF32, a: v})
		}
		ec.p.code[len(ec.p.code)-1].last = true
		ec.p.out = c.bufIdx[st.Buffer]
		for _, o := range ec.p.operands {
			if o.buf == ec.p.out {
				ec.p.readsOut = true
			}
		}
		// Nothing after the run may read what the run keeps in registers.
		for b := range ec.written {
			if b == st.Buffer {
				continue
			}
			for _, r := range stmts[i+1:] {
				if stmtReads(r, b) {
					return nil, 0
				}
			}
		}
		ec.finish()
		return ec.p, i + 1
	}
	return nil, 0
}

// finish numbers the scalars: operands, constants, scalar registers.
func (ec *epCompiler) finish() {
	nOps, nConsts := len(ec.p.operands), len(ec.p.consts)
	flat := func(v *epVal) {
		switch v.kind {
		case epOpScalar:
			v.kind = epScalar
		case epConst:
			v.kind, v.id = epScalar, nOps+v.id
		case epSReg:
			v.kind, v.id = epScalar, nOps+nConsts+v.id
		}
	}
	for i := range ec.p.code {
		in := &ec.p.code[i]
		flat(&in.a)
		flat(&in.b)
		if in.sDst {
			in.dst += nOps + nConsts
		}
	}
	ec.p.nScalars = nOps + nConsts + ec.sRegs
}

func copyF32(dst, x []float32) { copy(dst, x) }

// stmtReads reports whether s loads buffer b anywhere.
func stmtReads(s ir.Stmt, b *ir.Buffer) bool {
	found := false
	ir.WalkStmt(s, &ir.StmtVisitor{Prim: func(e ir.PrimExpr) bool {
		if l, ok := e.(*ir.BufferLoad); ok && l.Buffer == b {
			found = true
		}
		return !found
	}})
	return found
}

// expr compiles an epilogue expression.
func (ec *epCompiler) expr(e ir.PrimExpr) (epVal, bool) {
	if e.DType() != ir.Float32 {
		return epVal{}, false
	}
	if x, f := matchGelu(e); f != nil {
		return ec.unary(f, x)
	}
	switch e := e.(type) {
	case *ir.FloatImm:
		return ec.constant(e)
	case *ir.BufferLoad:
		return ec.load(e)
	case *ir.Cast:
		if e.Value.DType() != ir.Float32 {
			return epVal{}, false
		}
		return ec.expr(e.Value)
	case *ir.Binary:
		switch e.Op {
		case ir.OpAdd, ir.OpSub, ir.OpMul, ir.OpDiv, ir.OpMax, ir.OpMin:
		default:
			return epVal{}, false
		}
		a, ok := ec.expr(e.A)
		if !ok {
			return epVal{}, false
		}
		b, ok := ec.expr(e.B)
		if !ok {
			return epVal{}, false
		}
		in := epInstr{op: e.Op, a: a, b: b}
		if a.kind.scalar() && b.kind.scalar() {
			in.sDst, in.dst = true, ec.sRegs
			ec.sRegs++
			ec.p.code = append(ec.p.code, in)
			return epVal{kind: epSReg, id: in.dst}, true
		}
		if !a.kind.scalar() && !b.kind.scalar() {
			in.vecOp = vecVec(e.Op)
		}
		return ec.emit(in), true
	case *ir.PrimCall:
		if len(e.Args) != 1 {
			return epVal{}, false
		}
		a, ok := ec.expr(e.Args[0])
		if !ok {
			return epVal{}, false
		}
		if a.kind.scalar() {
			// Constant along the row (batch norm's sqrt(var[c] + eps)):
			// once per row, with Go's math as the general path.
			g, ok := unaryMath[e.Op]
			if !ok {
				return epVal{}, false
			}
			in := epInstr{sfn: g, a: a, sDst: true, dst: ec.sRegs}
			ec.sRegs++
			ec.p.code = append(ec.p.code, in)
			return epVal{kind: epSReg, id: in.dst}, true
		}
		f := vectorMath[e.Op]
		if f == nil {
			return epVal{}, false
		}
		return ec.emit(epInstr{fn: f, a: a}), true
	}
	if !hasLoad(e) && !mentionsVars(e, ec.n.vars) {
		return ec.scalarExpr(e)
	}
	return epVal{}, false
}

func (ec *epCompiler) emit(in epInstr) epVal {
	in.dst = ec.p.nRegs
	ec.p.nRegs++
	ec.p.code = append(ec.p.code, in)
	return epVal{kind: epReg, id: in.dst}
}

func (ec *epCompiler) unary(f func(dst, x []float32), x ir.PrimExpr) (epVal, bool) {
	a, ok := ec.expr(x)
	if !ok || a.kind.scalar() {
		return epVal{}, false
	}
	return ec.emit(epInstr{fn: f, a: a}), true
}

func (ec *epCompiler) constant(e *ir.FloatImm) (epVal, bool) { return ec.scalarExpr(e) }

// scalarExpr is a per-call scalar (no loads, no nest variables).
func (ec *epCompiler) scalarExpr(e ir.PrimExpr) (epVal, bool) {
	ec.p.consts = append(ec.p.consts, ec.c.compileF(e))
	return epVal{kind: epConst, id: len(ec.p.consts) - 1}, true
}

// load compiles a load: an intermediate at the nest's own index, or an
// operand whose indices are nest variables and constants.
func (ec *epCompiler) load(l *ir.BufferLoad) (epVal, bool) {
	if v, ok := ec.regs[l.Buffer]; ok {
		if !sameIndices(l.Indices, ec.store.Indices) {
			return epVal{}, false
		}
		return v, true
	}
	if ec.written[l.Buffer] || storageOf(l.Buffer.DType) != stF32 {
		return epVal{}, false
	}
	if l.Buffer == ec.store.Buffer && (!isParamOf(ec.c.f, l.Buffer) || !sameIndices(l.Indices, ec.store.Indices)) {
		return epVal{}, false // only an in-place update reads what it stores
	}
	o := epOperand{buf: ec.c.bufIdx[l.Buffer]}
	for _, e := range l.Indices {
		if k, ok := constI(e); ok {
			if k < 0 {
				return epVal{}, false
			}
			o.dims = append(o.dims, epDim{dim: -1, c: k})
			continue
		}
		d := ec.n.varIndex(e)
		if d < 0 {
			return epVal{}, false
		}
		o.dims = append(o.dims, epDim{dim: d})
		if ec.cols[d] {
			o.vec = true
		}
	}
	id := len(ec.p.operands)
	ec.p.operands = append(ec.p.operands, o)
	if o.vec {
		return epVal{kind: epVec, id: id}, true
	}
	return epVal{kind: epOpScalar, id: id}, true
}

// epWidth is the number of columns an epilogue step covers (a row
// segment; registers are this wide).
const epWidth = 256

// epThread is one goroutine's epilogue scratch.
type epThread struct {
	regs   []float32   // nRegs registers of epWidth
	sc     []float32   // the scalars (epProgram.nScalars)
	vecs   [][]float32 // per operand: its current row segment (vector operands)
	rowOff []int64     // per operand: the current row's element offset
	splat  []float32   // vecScalar's scratch
}

// prepare sizes the thread's scratch for p and loads the per-call
// constants.
func (th *epThread) prepare(p *epProgram, consts []float32) {
	th.regs = growF32(th.regs, p.nRegs*epWidth)
	th.sc = growF32(th.sc, p.nScalars)
	th.splat = growF32(th.splat, epWidth)
	if cap(th.vecs) < len(p.operands) {
		th.vecs = make([][]float32, len(p.operands))
		th.rowOff = make([]int64, len(p.operands))
	}
	th.vecs, th.rowOff = th.vecs[:len(p.operands)], th.rowOff[:len(p.operands)]
	copy(th.sc[len(p.operands):], consts)
}

func growF32(s []float32, n int) []float32 {
	if cap(s) >= n {
		return s[:n]
	}
	return make([]float32, n)
}

// vec is the vector value of v for a segment of w columns.
func (th *epThread) vec(v epVal, acc []float32, w int) []float32 {
	switch v.kind {
	case epAcc:
		return acc
	case epReg:
		return th.regs[v.id*epWidth:][:w]
	default:
		return th.vecs[v.id][:w]
	}
}

// runRow finishes one row segment: acc holds the producer's values, out
// (acc itself or another buffer's segment of the same length) receives
// the result; the vector operands' segments are in th.vecs and the row's
// scalars in th.sc.
func (p *epProgram) runRow(th *epThread, acc, out []float32) {
	w := len(acc)
	for i := range p.code {
		in := &p.code[i]
		if in.sDst {
			if in.sfn != nil {
				th.sc[in.dst] = float32(in.sfn(float64(th.sc[in.a.id])))
			} else {
				th.sc[in.dst] = scalarOp(in.op, th.sc[in.a.id], th.sc[in.b.id])
			}
			continue
		}
		d := out
		if !in.last {
			d = th.regs[in.dst*epWidth:][:w]
		}
		switch {
		case in.fn != nil:
			in.fn(d, th.vec(in.a, acc, w))
		case in.vecOp != nil:
			in.vecOp(d, th.vec(in.a, acc, w), th.vec(in.b, acc, w))
		case in.b.kind == epScalar:
			vecScalar(in.op, d, th.vec(in.a, acc, w), th.sc[in.b.id], th.splat[:w])
		default:
			scalarVec(in.op, d, th.sc[in.a.id], th.vec(in.b, acc, w), th.splat[:w])
		}
	}
}

// scalarOp is a op b in float32, as the general path computes it.
func scalarOp(op ir.BinaryOp, a, b float32) float32 {
	switch op {
	case ir.OpAdd:
		return a + b
	case ir.OpSub:
		return a - b
	case ir.OpMul:
		return a * b
	case ir.OpDiv:
		return a / b
	case ir.OpMax:
		return max(a, b)
	default:
		return min(a, b)
	}
}

// epBind is an operand bound for one call: its data, its element stride
// along each producer dimension (the sum over the operand dimensions
// indexed by it) and the offset of its constant indices.
type epBind struct {
	data   []float32
	stride []int64
	off    int64
}

// bindOperands binds p's operands in frame fr for a producer output of
// the given shape, checking that every operand dimension indexed by a
// producer dimension has its extent and every constant index is in
// bounds; it fails (false) otherwise.
func (p *epProgram) bindOperands(fr *frame, shape []int64, binds []epBind) bool {
	for o := range p.operands {
		op := &p.operands[o]
		bd := &fr.bufs[op.buf]
		b := &binds[o]
		if bd.f32 == nil || len(bd.shape) != len(op.dims) {
			return false
		}
		b.data, b.off = bd.f32, 0
		b.stride = b.stride[:0]
		for range shape {
			b.stride = append(b.stride, 0)
		}
		for t, dm := range op.dims {
			if dm.dim >= 0 {
				if bd.shape[t] != shape[dm.dim] {
					return false
				}
				b.stride[dm.dim] += bd.stride[t]
				continue
			}
			if dm.c >= bd.shape[t] {
				return false
			}
			b.off += dm.c * bd.stride[t]
		}
	}
	return true
}

// checkNests reports whether every epilogue nest covers the producer's
// output shape exactly.
func (p *epProgram) checkNests(fr *frame, shape []int64) bool {
	for _, ext := range p.nestExt {
		for d, e := range ext {
			if e(fr) != shape[d] {
				return false
			}
		}
	}
	return true
}

// evalConsts evaluates the per-call constants into dst.
func (p *epProgram) evalConsts(fr *frame, dst []float32) []float32 {
	dst = dst[:0]
	for _, f := range p.consts {
		dst = append(dst, float32(f(fr)))
	}
	return dst
}
