package kernel

import (
	"runtime"
	"strings"
	"sync/atomic"

	"github.com/phasec/phasec/ir"
	"github.com/phasec/phasec/vm/blas"
)

// Pattern dispatch. Each top-level loop nest of a PrimFunc (the body, or
// the body of its root block) is matched structurally, whatever its
// buffer, block and variable names:
//
//   - matmul / batch_matmul: C[b.., i, j] = C + A[.., i|k, k|i] * B[.., k|j, j|k]
//     (times an optional constant) with T.init setting C to a constant,
//     fp32: vm/blas.Sgemm per batch;
//   - elementwise / broadcast: Out[idx] = x op y over the whole output
//     with op one of + - * / max, each operand the output's index (same
//     shape), a trailing-dimension row (broadcast) or a scalar, fp32:
//     vm/blas's AVX2 loops over the flattened arrays, split across cores
//     for large outputs;
//   - reduction: a nest with reduction variables (row sums, max, the
//     parts of softmax and layer norm), which the vector path already runs
//     a chunk at a time.
//
// A fast path checks at run time that the loop extents cover its buffers
// exactly and otherwise runs the nest's general closure, so a match never
// changes results beyond floating-point reassociation inside Sgemm.

// fastTaken counts fast-path runs (tests check dispatch really happens).
var fastTaken atomic.Int64

// nest is a perfect loop nest around one block (or one statement).
type nest struct {
	loops []*ir.For
	vars  []*ir.PrimVar // block iteration variables (or loop variables)
	kinds []ir.IterKind
	ext   []ir.PrimExpr // extent of each variable
	init  ir.Stmt
	body  ir.Stmt
}

// nestOf recognises a perfect nest whose block binds each iteration
// variable to one loop variable over the same extent.
func nestOf(s ir.Stmt) (*nest, bool) {
	n := &nest{}
	for {
		f, ok := s.(*ir.For)
		if !ok {
			break
		}
		if k, ok := constI(f.Min); !ok || k != 0 {
			return nil, false
		}
		n.loops = append(n.loops, f)
		s = f.Body
	}
	if len(n.loops) == 0 {
		return nil, false
	}
	r, ok := s.(*ir.BlockRealize)
	if !ok {
		for _, f := range n.loops {
			n.vars = append(n.vars, f.Var)
			n.kinds = append(n.kinds, ir.IterSpatial)
			n.ext = append(n.ext, f.Extent)
		}
		n.body = s
		return n, true
	}
	blk := r.Block
	if r.Predicate != nil || len(blk.AllocBuffers) > 0 || len(r.IterValues) != len(blk.IterVars) || len(blk.IterVars) != len(n.loops) {
		return nil, false
	}
	used := map[*ir.For]bool{}
	for i, iv := range blk.IterVars {
		v, ok := r.IterValues[i].(*ir.PrimVar)
		if !ok {
			return nil, false
		}
		var loop *ir.For
		for _, f := range n.loops {
			if f.Var == v && !used[f] {
				loop = f
			}
		}
		if loop == nil || !sameExpr(iv.Dom.Extent, loop.Extent) {
			return nil, false
		}
		if k, ok := constI(iv.Dom.Min); !ok || k != 0 {
			return nil, false
		}
		used[loop] = true
		n.vars = append(n.vars, iv.Var)
		n.kinds = append(n.kinds, iv.Kind)
		n.ext = append(n.ext, loop.Extent)
	}
	n.init, n.body = blk.Init, blk.Body
	return n, true
}

func (n *nest) varIndex(v ir.PrimExpr) int {
	for i, x := range n.vars {
		if x == v {
			return i
		}
	}
	return -1
}

// compileTop compiles a PrimFunc body with pattern dispatch: the root
// block's allocations, then each top-level statement, a matched nest
// trying its fast path before its general closure. It returns the
// pattern name ("general" when nothing matched).
func (c *compiler) compileTop(body ir.Stmt) (stmt, string) {
	var allocs stmt
	var local []*ir.Buffer
	if r, ok := body.(*ir.BlockRealize); ok && len(r.IterValues) == 0 && len(r.Block.IterVars) == 0 && r.Predicate == nil && r.Block.Init == nil {
		allocs = c.allocs(r.Block.AllocBuffers)
		local = r.Block.AllocBuffers
		body = r.Block.Body
	}
	var stmts []ir.Stmt
	if s, ok := body.(*ir.SeqStmt); ok {
		stmts = s.Stmts
	} else {
		stmts = []ir.Stmt{body}
	}
	if fused, name, ok := c.compileEpilogueTop(allocs, stmts); ok {
		return fused, name
	}
	if rows, name, ok := c.compileRowTop(allocs, local, stmts); ok {
		return rows, name
	}
	var names []string
	var parts []stmt
	for _, s := range stmts {
		general := c.compileStmt(s)
		name, fast := c.matchNest(s)
		if fast != nil {
			parts = append(parts, fastOr(fast, general))
		} else {
			parts = append(parts, general)
		}
		if name != "" && (len(names) == 0 || names[len(names)-1] != name) {
			names = append(names, name)
		}
	}
	name := strings.Join(names, "+")
	if name == "" {
		name = "general"
	}
	return func(fr *frame) {
		if allocs != nil {
			allocs(fr)
		}
		for _, p := range parts {
			p(fr)
		}
	}, name
}

// matchNest returns the pattern of one top-level statement and its fast
// path (nil when it runs on the general path).
func (c *compiler) matchNest(s ir.Stmt) (string, fastPath) {
	n, ok := nestOf(s)
	if !ok {
		return "", nil
	}
	if name, fast := c.matchWindow(n); fast != nil { // conv.go
		return name, fast
	}
	reduce := 0
	for _, k := range n.kinds {
		if k == ir.IterReduce {
			reduce++
		}
	}
	if reduce > 0 {
		if name, fast := c.matchMatmul(n); fast != nil {
			return name, fast
		}
		return "reduction", nil
	}
	if name, fast := c.matchTake(n); fast != nil { // take.go (issue 23, kbert)
		return name, fast
	}
	if name, fast := c.matchPermute(n); fast != nil { // permute.go
		return name, fast
	}
	return c.matchElementwise(n)
}

// loadOf returns e as a float32 load.
func loadOf(e ir.PrimExpr) *ir.BufferLoad {
	l, ok := e.(*ir.BufferLoad)
	if !ok || storageOf(l.Buffer.DType) != stF32 {
		return nil
	}
	return l
}

// matmul is the plan of a matched matmul nest.
type matmul struct {
	c, a, b          int // buffer indices
	cRank            int
	aIdx, bIdx       []int // per A/B dimension: nest variable index or -1 for a constant 0
	transA, transB   bool
	iVar, jVar, kVar int
	batch            []int // nest variable indices of C's batch dimensions
	ext              []iexpr
	init             float32
	alpha            float32 // constant factor of each product
}

func (c *compiler) matchMatmul(n *nest) (string, fastPath) {
	m, name := c.matmulPlan(n)
	if m == nil {
		return "", nil
	}
	return name, m.run
}

// matmulPlan matches a matmul nest (nil when n is none).
func (c *compiler) matmulPlan(n *nest) (*matmul, string) {
	st, ok := n.body.(*ir.BufferStore)
	if !ok || storageOf(st.Buffer.DType) != stF32 || len(st.Indices) < 2 {
		return nil, ""
	}
	init, ok := n.init.(*ir.BufferStore)
	if !ok || init.Buffer != st.Buffer || !sameIndices(init.Indices, st.Indices) {
		return nil, ""
	}
	iv, ok := init.Value.(*ir.FloatImm)
	if !ok {
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
	// A constant factor (attention scores: Q*K*0.125) becomes alpha.
	alpha := float32(1)
	for {
		m, ok := prod.(*ir.Binary)
		if !ok || m.Op != ir.OpMul {
			break
		}
		if c, ok := m.B.(*ir.FloatImm); ok {
			alpha *= float32(c.Value)
			prod = m.A
			continue
		}
		if c, ok := m.A.(*ir.FloatImm); ok {
			alpha *= float32(c.Value)
			prod = m.B
			continue
		}
		break
	}
	mul, ok := prod.(*ir.Binary)
	if !ok || mul.Op != ir.OpMul {
		return nil, ""
	}
	x, y := loadOf(mul.A), loadOf(mul.B)
	if x == nil || y == nil {
		return nil, ""
	}
	p := len(st.Indices)
	m := &matmul{cRank: p, init: float32(iv.Value), alpha: alpha}
	seen := map[int]bool{}
	for _, e := range st.Indices {
		v := n.varIndex(e)
		if v < 0 || seen[v] || n.kinds[v] != ir.IterSpatial {
			return nil, ""
		}
		seen[v] = true
	}
	m.iVar, m.jVar = n.varIndex(st.Indices[p-2]), n.varIndex(st.Indices[p-1])
	for _, e := range st.Indices[:p-2] {
		m.batch = append(m.batch, n.varIndex(e))
	}
	m.kVar = -1
	for v, k := range n.kinds {
		if k == ir.IterReduce {
			m.kVar = v
		}
	}
	if len(n.vars) != p+1 {
		return nil, ""
	}
	// Which operand holds i (A) and which holds j (B).
	operand := func(l *ir.BufferLoad, row int) (idx []int, trans bool, ok bool) {
		r := len(l.Indices)
		if r < 2 || r > p {
			return nil, false, false
		}
		last2 := [2]int{n.varIndex(l.Indices[r-2]), n.varIndex(l.Indices[r-1])}
		switch {
		case row == m.iVar && last2 == [2]int{m.iVar, m.kVar}, row == m.jVar && last2 == [2]int{m.kVar, m.jVar}:
		case row == m.iVar && last2 == [2]int{m.kVar, m.iVar}, row == m.jVar && last2 == [2]int{m.jVar, m.kVar}:
			trans = true
		default:
			return nil, false, false
		}
		for d, e := range l.Indices[:r-2] {
			// Aligned from the right with C's batch dimensions.
			cb := p - 2 - (r - 2) + d
			if k, isConst := constI(e); isConst && k == 0 {
				idx = append(idx, -1)
				continue
			}
			if v := n.varIndex(e); v >= 0 && v == m.batch[cb] {
				idx = append(idx, v)
				continue
			}
			return nil, false, false
		}
		return append(idx, last2[0], last2[1]), trans, true
	}
	a, b := x, y
	aIdx, tA, okA := operand(a, m.iVar)
	bIdx, tB, okB := operand(b, m.jVar)
	if !okA || !okB {
		a, b = y, x
		aIdx, tA, okA = operand(a, m.iVar)
		bIdx, tB, okB = operand(b, m.jVar)
		if !okA || !okB {
			return nil, ""
		}
	}
	m.aIdx, m.bIdx, m.transA, m.transB = aIdx, bIdx, tA, tB
	m.c, m.a, m.b = c.bufIdx[st.Buffer], c.bufIdx[a.Buffer], c.bufIdx[b.Buffer]
	if m.c == m.a || m.c == m.b {
		return nil, ""
	}
	for _, e := range n.ext {
		m.ext = append(m.ext, c.compileI(e))
	}
	name := "matmul"
	if p > 2 {
		name = "batch_matmul"
	}
	return m, name
}

// run executes the matmul with Sgemm when the buffers have exactly the
// extents the loops cover.
func (m *matmul) run(fr *frame) bool { return m.exec(fr, m.c, nil) }

// exec runs the matmul into buffer target (C or a buffer of C's shape),
// with ep (nil: none) finishing each tile (epilogue_gemm.go).
func (m *matmul) exec(fr *frame, target int, ep *gemmEpState) bool {
	var ext [8]int64
	if len(m.ext) > len(ext) {
		return false
	}
	for i, e := range m.ext {
		ext[i] = e(fr)
	}
	C, A, B := &fr.bufs[target], &fr.bufs[m.a], &fr.bufs[m.b]
	for d := 0; d < m.cRank-2; d++ {
		if C.shape[d] != ext[m.batch[d]] {
			return false
		}
	}
	M, N, K := ext[m.iVar], ext[m.jVar], ext[m.kVar]
	if C.shape[m.cRank-2] != M || C.shape[m.cRank-1] != N {
		return false
	}
	check := func(bd *bufData, idx []int) bool {
		for d, v := range idx {
			if v < 0 {
				if bd.shape[d] < 1 {
					return false
				}
			} else if bd.shape[d] != ext[v] {
				return false
			}
		}
		return true
	}
	if !check(A, m.aIdx) || !check(B, m.bIdx) {
		return false
	}
	total := M * N
	for _, v := range m.batch {
		total *= ext[v]
	}
	if total == 0 || K == 0 {
		// The block never runs (an epilogue would read C unwritten: left
		// to the general path).
		return ep == nil
	}
	var finish blas.Epilogue
	threads := runtime.GOMAXPROCS(0)
	if ep != nil {
		if fr.inParallel {
			threads = 1
		}
		if !ep.start(fr, C.shape, threads) {
			return false
		}
		finish = ep
	}
	lda, ldb := K, N
	if m.transA {
		lda = M
	}
	if m.transB {
		ldb = K
	}
	beta := float32(0)
	if m.init != 0 {
		for i := range C.f32[:total] {
			C.f32[i] = m.init
		}
		beta = 1
	}
	pb := m.packedB(B, int(N), int(K), int(ldb)) // nil: B is packed per call
	if m.runBatches(fr, threads, A, B, C, M, N, K, lda, ldb, beta, pb, ep) {
		return true
	}
	// Iterate over C's batch indices.
	var bi [8]int64
	nb := m.cRank - 2
	for {
		offC := int64(0)
		for d := range nb {
			offC = offC*C.shape[d] + bi[d]
		}
		offC *= M * N
		offA := batchOffset(A, m.aIdx, m.batch, bi[:nb], nb)
		offB := batchOffset(B, m.bIdx, m.batch, bi[:nb], nb)
		if ep != nil {
			ep.batch(bi[:nb], offC)
		}
		if pb != nil {
			blas.SgemmPackedB(threads, m.transA, int(M), m.alpha, A.f32[offA:], int(lda), pb, beta, C.f32[offC:], int(N), finish)
		} else {
			blas.SgemmEpilogue(threads, m.transA, m.transB, int(M), int(N), int(K), m.alpha,
				A.f32[offA:], int(lda), B.f32[offB:], int(ldb), beta, C.f32[offC:], int(N), finish)
		}
		d := nb - 1
		for ; d >= 0; d-- {
			bi[d]++
			if bi[d] < C.shape[d] {
				break
			}
			bi[d] = 0
		}
		if d < 0 {
			return true
		}
	}
}

// batchOffset is the element offset of the matrix of an operand for C's
// batch index bi (operand batch dimensions align right with C's).
func batchOffset(bd *bufData, idx []int, cBatch []int, bi []int64, nb int) int64 {
	r := len(idx)
	off := int64(0)
	for d := 0; d < r-2; d++ {
		i := int64(0)
		if idx[d] >= 0 {
			i = bi[nb-(r-2)+d]
		}
		off += i * bd.stride[d]
	}
	return off
}

// operandKind classifies an elementwise operand.
type operandKind uint8

const (
	opFull   operandKind = iota // indexed like the output
	opRow                       // indexed by a suffix of the output's index
	opScalar                    // invariant
)

type ewOperand struct {
	kind operandKind
	buf  int
	load *ir.BufferLoad
	s    fexpr
}

func (c *compiler) ewOperand(n *nest, out []ir.PrimExpr, e ir.PrimExpr) (ewOperand, bool) {
	if isFloatType(e.DType()) && !mentionsVars(e, n.vars) && !hasLoad(e) {
		return ewOperand{kind: opScalar, s: c.compileF(e)}, true
	}
	l := loadOf(e)
	if l == nil {
		return ewOperand{}, false
	}
	if sameIndices(l.Indices, out) {
		return ewOperand{kind: opFull, buf: c.bufIdx[l.Buffer], load: l}, true
	}
	// A row: leading zeros, then a suffix of the output's index.
	r := len(l.Indices)
	lead := 0
	for lead < r {
		if k, ok := constI(l.Indices[lead]); !ok || k != 0 {
			break
		}
		lead++
	}
	suffix := l.Indices[lead:]
	if len(suffix) == 0 || len(suffix) >= len(out) || !sameIndices(suffix, out[len(out)-len(suffix):]) {
		return ewOperand{}, false
	}
	return ewOperand{kind: opRow, buf: c.bufIdx[l.Buffer], load: l}, true
}

func mentionsVars(e ir.PrimExpr, vars []*ir.PrimVar) bool {
	found := false
	walkExpr(e, func(x ir.PrimExpr) {
		if v, ok := x.(*ir.PrimVar); ok {
			for _, w := range vars {
				if v == w {
					found = true
				}
			}
		}
	})
	return found
}

// elementwise is the plan of a matched elementwise nest.
type elementwise struct {
	out  int
	x, y ewOperand
	op   ir.BinaryOp
	ext  []iexpr
	// rowDims is the number of trailing output dimensions of the row
	// operand (0 without one).
	rowDims int
	sSlot   int // float slot for the scalar operand's value
	k       *Kernel
	partFn  func(fr *frame, lo, hi int64) // ew.part, bound once (a method value allocates)
}

func (c *compiler) matchElementwise(n *nest) (string, fastPath) {
	st, ok := n.body.(*ir.BufferStore)
	if !ok || storageOf(st.Buffer.DType) != stF32 || len(st.Indices) != len(n.vars) {
		return "", nil
	}
	for i, e := range st.Indices {
		if e != n.vars[i] {
			return "", nil
		}
	}
	bin, ok := st.Value.(*ir.Binary)
	if !ok {
		return "elementwise", nil
	}
	switch bin.Op {
	case ir.OpAdd, ir.OpSub, ir.OpMul, ir.OpDiv, ir.OpMax:
	default:
		return "elementwise", nil
	}
	x, okx := c.ewOperand(n, st.Indices, bin.A)
	y, oky := c.ewOperand(n, st.Indices, bin.B)
	if !okx || !oky {
		return "elementwise", nil
	}
	ew := &elementwise{out: c.bufIdx[st.Buffer], x: x, y: y, op: bin.Op, k: c.k}
	commutative := bin.Op == ir.OpAdd || bin.Op == ir.OpMul || bin.Op == ir.OpMax
	if ew.x.kind != opFull && commutative {
		ew.x, ew.y = ew.y, ew.x
	}
	name := "elementwise"
	switch {
	case ew.x.kind != opFull:
		return "broadcast", nil
	case ew.y.kind == opRow:
		if bin.Op != ir.OpAdd && bin.Op != ir.OpMul {
			return "broadcast", nil
		}
		name = "broadcast"
		ew.rowDims = len(ew.y.load.Indices)
		for _, e := range ew.y.load.Indices {
			if k, ok := constI(e); ok && k == 0 {
				ew.rowDims--
			}
		}
	case ew.y.kind == opScalar:
		if bin.Op == ir.OpDiv {
			return "elementwise", nil
		}
		slot := ir.NewPrimVar("s", ir.Float32)
		c.defineVar(slot)
		ew.sSlot = c.flts[slot]
	}
	for _, e := range n.ext {
		ew.ext = append(ew.ext, c.compileI(e))
	}
	ew.partFn = ew.part
	return name, ew.run
}

// parallelMin is the output size from which elementwise kernels split
// across cores (below it, waking a worker costs more than it saves).
const parallelMin = 1 << 18

func (ew *elementwise) run(fr *frame) bool {
	out := &fr.bufs[ew.out]
	total := int64(1)
	for d, e := range ew.ext {
		x := e(fr)
		if out.shape[d] != x {
			return false
		}
		total *= x
	}
	if fr.bufs[ew.x.buf].f32 == nil || int64(len(fr.bufs[ew.x.buf].f32)) != total {
		return false
	}
	row := int64(1)
	switch ew.y.kind {
	case opFull:
		if int64(len(fr.bufs[ew.y.buf].f32)) != total {
			return false
		}
	case opRow:
		yb := &fr.bufs[ew.y.buf]
		r := len(yb.shape)
		for d := range r {
			want := int64(1)
			if d >= r-ew.rowDims {
				want = out.shape[len(out.shape)-(r-d)]
			}
			if yb.shape[d] != want {
				return false
			}
		}
		row = int64(len(yb.f32))
		if row == 0 {
			return total == 0
		}
	case opScalar:
		fr.flts[ew.sSlot] = ew.y.s(fr)
	}
	if total == 0 {
		return true
	}
	runRange(ew.k, fr, total, row, ew.partFn)
	return true
}

// part computes output elements [lo, hi) (whole rows for a broadcast).
func (ew *elementwise) part(fr *frame, lo, hi int64) {
	dst := fr.bufs[ew.out].f32[lo:hi]
	a := fr.bufs[ew.x.buf].f32[lo:hi]
	switch ew.y.kind {
	case opFull:
		b := fr.bufs[ew.y.buf].f32[lo:hi]
		switch ew.op {
		case ir.OpAdd:
			blas.AddF32(dst, a, b)
		case ir.OpSub:
			blas.SubF32(dst, a, b)
		case ir.OpMul:
			blas.MulF32(dst, a, b)
		case ir.OpDiv:
			blas.DivF32(dst, a, b)
		case ir.OpMax:
			for i := range dst {
				dst[i] = max(a[i], b[i])
			}
		}
	case opRow:
		row := fr.bufs[ew.y.buf].f32
		if ew.op == ir.OpAdd {
			blas.AddRowF32(dst, a, row)
		} else {
			blas.MulRowF32(dst, a, row)
		}
	case opScalar:
		s := float32(fr.flts[ew.sSlot])
		switch ew.op {
		case ir.OpAdd:
			blas.AddScalarF32(dst, a, s)
		case ir.OpSub:
			blas.AddScalarF32(dst, a, -s)
		case ir.OpMul:
			blas.ScaleF32(dst, a, s)
		case ir.OpMax:
			if s != s {
				for i := range dst {
					dst[i] = max(a[i], s)
				}
				return
			}
			blas.MaxScalarF32(dst, a, s)
		}
	}
}

// fastOr runs fast, counted as taken (fastTaken), or general when fast
// declines the call (a shape, stride or alias it does not take).
func fastOr(fast func(*frame) bool, general stmt) stmt {
	return func(fr *frame) {
		if fast(fr) {
			fastTaken.Add(1)
			return
		}
		general(fr)
	}
}

// seq runs parts in order.
func seq(parts []stmt) stmt {
	if len(parts) == 1 {
		return parts[0]
	}
	return func(fr *frame) {
		for _, p := range parts {
			p(fr)
		}
	}
}

// runRange runs part over [0, total) split into multiples of unit across
// the worker pool when total is large.
func runRange(k *Kernel, fr *frame, total, unit int64, part func(fr *frame, lo, hi int64)) {
	runRangeMin(k, fr, total, unit, parallelMin, part)
}

// runRangeMin is runRange splitting from minTotal elements on.
func runRangeMin(k *Kernel, fr *frame, total, unit, minTotal int64, part func(fr *frame, lo, hi int64)) {
	workers := int64(runtime.GOMAXPROCS(0))
	if total < minTotal || workers <= 1 || fr.inParallel {
		part(fr, 0, total)
		return
	}
	units := total / unit
	workers = min(workers, units, 64)
	if workers <= 1 {
		part(fr, 0, total)
		return
	}
	workersOnce.Do(startWorkers)
	runChunked(fr, total, unit, workers, part) // parallel.go
}
