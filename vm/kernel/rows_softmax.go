package kernel

import (
	"runtime"

	"github.com/phasec/phasec/ir"
	"github.com/phasec/phasec/vm/blas"
)

// Softmax and log-softmax over the last axis, as LegalizeOps writes them
// (whatever the names): a max reduction M = max(M, X[r, k]) from a
// constant; then softmax's E = exp(X - M), S = S + E (from 0) and
// O = E / S, or log-softmax's S = S + exp(X - M) and O = X - M - log(S).
// The group runs as one kernel over contiguous rows on vm/blas's
// SoftmaxRowsF32 / LogSoftmaxRowsF32: blocks of rows in L1, one 512-bit
// pass over the block for the max, one for exp(x - m) written straight
// into the output with its sum (log form: the sum only), one for the
// normalization (log form: (x - m) - log s); the row-group path would
// write and re-read E and run each nest's expression tree. M and S are
// written too, and E when it is not a local buffer of the PrimFunc.
// O = E / S is computed as E * (1/S), within an ulp of the division; the
// log form's log s is blas.LogF32's (LogMaxULP). Rows split across cores
// from softmaxParallelMin elements. Reported as "rows".

type softmaxRows struct {
	k               *Kernel
	x, out, m, s, e int // buffer numbers (e: -1 in log form)
	eLocal          bool
	log             bool
	init            float32   // the max's T.init value
	ext             [][]iexpr // every nest's extents: rows..., n
	partFn          func(fr *frame, lo, hi int64)
	nStmts          int
}

// matchSoftmax matches the statements at the start of stmts; local says
// which buffers the PrimFunc allocates.
func (c *compiler) matchSoftmax(stmts []ir.Stmt, local map[*ir.Buffer]bool) *softmaxRows {
	if len(stmts) < 3 {
		return nil
	}
	var ns []*nest
	for _, s := range stmts[:min(4, len(stmts))] {
		n, ok := nestOf(s)
		if !ok {
			break
		}
		ns = append(ns, n)
	}
	if len(ns) < 3 {
		return nil
	}
	// The max.
	mBuf, xBuf, init, ok := matchRowReduce(ns[0], ir.OpMax)
	if !ok {
		return nil
	}
	sm := &softmaxRows{k: c.k, e: -1, init: init}
	term := func(n *nest) ir.PrimExpr {
		st := n.body.(*ir.BufferStore)
		bin := st.Value.(*ir.Binary)
		if isSelfLoad(bin.A, st) {
			return bin.B
		}
		return bin.A
	}
	if xl, ok := term(ns[0]).(*ir.BufferLoad); !ok || xl.Buffer != xBuf {
		return nil
	}
	// log form: S = S + exp(X - M); O = X - M - log(S).
	if sBuf, _, init, ok := matchRowReduce(ns[1], ir.OpAdd); ok && init == 0 && isExpXMinusM(ns[1], term(ns[1]), xBuf, mBuf) {
		st, ok := ns[2].body.(*ir.BufferStore)
		if !ok || ns[2].init != nil || !rowMap(ns[2], st.Indices, true) {
			return nil
		}
		// (X - M) - log(S)
		var a, b ir.PrimExpr
		if !binOf(st.Value, ir.OpSub, &a, &b) || !isXMinusM(ns[2], a, xBuf, mBuf) {
			return nil
		}
		lg := intrinsicArg(b, "log")
		if lg == nil || !isRowLoad(ns[2], lg, sBuf, false) {
			return nil
		}
		sm.log, sm.nStmts = true, 3
		return sm.finish(c, ns[:3], xBuf, st.Buffer, mBuf, sBuf, nil, local)
	}
	if len(ns) < 4 {
		return nil
	}
	// softmax: E = exp(X - M); S = S + E; O = E / S.
	est, ok := ns[1].body.(*ir.BufferStore)
	if !ok || ns[1].init != nil || !rowMap(ns[1], est.Indices, true) {
		return nil
	}
	if arg := intrinsicArg(est.Value, "exp"); arg == nil || !isXMinusM(ns[1], arg, xBuf, mBuf) {
		return nil
	}
	sBuf, eBuf, init, ok := matchRowReduce(ns[2], ir.OpAdd)
	if !ok || init != 0 || eBuf != est.Buffer {
		return nil
	}
	ost, ok := ns[3].body.(*ir.BufferStore)
	if !ok || ns[3].init != nil || !rowMap(ns[3], ost.Indices, true) {
		return nil
	}
	var a, b ir.PrimExpr
	if !binOf(ost.Value, ir.OpDiv, &a, &b) || !isRowLoad(ns[3], a, eBuf, true) || !isRowLoad(ns[3], b, sBuf, false) {
		return nil
	}
	sm.nStmts = 4
	return sm.finish(c, ns, xBuf, ost.Buffer, mBuf, sBuf, eBuf, local)
}

func (sm *softmaxRows) finish(c *compiler, ns []*nest, x, out, m, s, e *ir.Buffer, local map[*ir.Buffer]bool) *softmaxRows {
	bufs := []*ir.Buffer{x, out, m, s}
	if e != nil {
		bufs = append(bufs, e)
	}
	for _, b := range bufs {
		if storageOf(b.DType) != stF32 {
			return nil
		}
		if _, ok := c.bufIdx[b]; !ok {
			return nil
		}
	}
	if x == out || out == m || out == s || out == e {
		return nil
	}
	sm.x, sm.out, sm.m, sm.s = c.bufIdx[x], c.bufIdx[out], c.bufIdx[m], c.bufIdx[s]
	if e != nil {
		sm.e, sm.eLocal = c.bufIdx[e], local[e]
	}
	for _, n := range ns {
		var ext []iexpr
		for _, x := range n.ext {
			ext = append(ext, c.compileI(x))
		}
		sm.ext = append(sm.ext, ext)
	}
	sm.partFn = sm.part
	return sm
}

// matchRowReduce matches Acc[rows] = Acc[rows] op X[rows, k] with its
// T.init constant: the last nest variable the reduction, the others the
// rows in order. It returns the accumulator, the buffer of the term's
// first load (nil when the term is not a load) and the init value.
func matchRowReduce(n *nest, op ir.BinaryOp) (acc, x *ir.Buffer, init float32, ok bool) {
	last := len(n.vars) - 1
	st, isStore := n.body.(*ir.BufferStore)
	if !isStore || last < 0 || n.kinds[last] != ir.IterReduce || n.init == nil {
		return nil, nil, 0, false
	}
	for _, k := range n.kinds[:last] {
		if k != ir.IterSpatial {
			return nil, nil, 0, false
		}
	}
	if !rowMap(n, st.Indices, false) {
		return nil, nil, 0, false
	}
	ist, isStore := n.init.(*ir.BufferStore)
	if !isStore || ist.Buffer != st.Buffer || !sameIndices(ist.Indices, st.Indices) {
		return nil, nil, 0, false
	}
	c, isConst := ist.Value.(*ir.FloatImm)
	bin, isBin := st.Value.(*ir.Binary)
	if !isConst || !isBin || bin.Op != op {
		return nil, nil, 0, false
	}
	term := bin.B
	if !isSelfLoad(bin.A, st) {
		if !isSelfLoad(bin.B, st) {
			return nil, nil, 0, false
		}
		term = bin.A
	}
	if l, isLoad := term.(*ir.BufferLoad); isLoad {
		if !isRowLoad(n, l, l.Buffer, true) {
			return nil, nil, 0, false
		}
		x = l.Buffer
	}
	return st.Buffer, x, float32(c.Value), true
}

// rowMap reports whether idx is the nest's row variables in order, then
// (full) its last variable, then any number of constant zeros.
func rowMap(n *nest, idx []ir.PrimExpr, full bool) bool {
	r := len(n.vars) - 1
	want := r
	if full {
		want++
	}
	if len(idx) < want {
		return false
	}
	for d := range want {
		if idx[d] != n.vars[d] {
			return false
		}
	}
	for _, e := range idx[want:] {
		if k, ok := constI(e); !ok || k != 0 {
			return false
		}
	}
	return true
}

func isRowLoad(n *nest, e ir.PrimExpr, b *ir.Buffer, full bool) bool {
	l, ok := e.(*ir.BufferLoad)
	return ok && l.Buffer == b && rowMap(n, l.Indices, full)
}

// isXMinusM reports whether e is X[rows, j] - M[rows].
func isXMinusM(n *nest, e ir.PrimExpr, x, m *ir.Buffer) bool {
	var a, b ir.PrimExpr
	return binOf(e, ir.OpSub, &a, &b) && isRowLoad(n, a, x, true) && isRowLoad(n, b, m, false)
}

func isExpXMinusM(n *nest, e ir.PrimExpr, x, m *ir.Buffer) bool {
	arg := intrinsicArg(e, "exp")
	return arg != nil && isXMinusM(n, arg, x, m)
}

// geometry returns the row count and row length, checking that every
// nest iterates the same rows and that the buffers are exactly those rows
// (X, O and E) or one element per row (M, S); ok false otherwise.
func (sm *softmaxRows) geometry(fr *frame) (rows, n int64, ok bool) {
	var firstBuf, buf [maxPermRank]int64
	first := firstBuf[:len(sm.ext[0])]
	for i, ext := range sm.ext {
		if len(ext) > maxPermRank {
			return 0, 0, false
		}
		cur := buf[:len(ext)]
		for d, e := range ext {
			cur[d] = e(fr)
		}
		if i == 0 {
			copy(first, cur)
			continue
		}
		if len(cur) != len(first) {
			return 0, 0, false
		}
		for d := range cur {
			if cur[d] != first[d] {
				return 0, 0, false
			}
		}
	}
	rows = 1
	for _, e := range first[:len(first)-1] {
		rows *= e
	}
	n = first[len(first)-1]
	if rows <= 0 || n <= 0 {
		return rows, n, rows == 0 || n == 0
	}
	full := func(b int) bool {
		bd := &fr.bufs[b]
		return bd.f32 != nil && prefixShape(bd.shape, first)
	}
	perRow := func(b int) bool {
		bd := &fr.bufs[b]
		return bd.f32 != nil && prefixShape(bd.shape, first[:len(first)-1])
	}
	if !full(sm.x) || !full(sm.out) || (sm.e >= 0 && !full(sm.e)) || !perRow(sm.m) || !perRow(sm.s) {
		return 0, 0, false
	}
	return rows, n, true
}

// prefixShape reports whether shape is want followed by ones.
func prefixShape(shape, want []int64) bool {
	if len(shape) < len(want) {
		return false
	}
	for d, w := range want {
		if shape[d] != w {
			return false
		}
	}
	for _, s := range shape[len(want):] {
		if s != 1 {
			return false
		}
	}
	return true
}

func (sm *softmaxRows) run(fr *frame) bool {
	rows, n, ok := sm.geometry(fr)
	if !ok {
		return false
	}
	if rows <= 0 || n <= 0 {
		return true
	}
	workers := int64(runtime.GOMAXPROCS(0))
	if rows*n < softmaxParallelMin || workers <= 1 || fr.inParallel || rows < 2 {
		sm.part(fr, 0, rows)
		return true
	}
	runParts(sm.k, fr, rows, workers, sm.partFn)
	return true
}

// softmaxParallelMin is the element count from which the rows split
// across cores: an exponential a element makes softmax's rows about
// three times the work of a copy, so they split earlier than the
// elementwise kernels (parallelMin).
const softmaxParallelMin = 1 << 15

// part runs rows [lo, hi).
func (sm *softmaxRows) part(fr *frame, lo, hi int64) {
	_, n, _ := sm.geometry(fr)
	x := fr.bufs[sm.x].f32[lo*n : hi*n]
	out := fr.bufs[sm.out].f32[lo*n : hi*n]
	mb, sb := fr.bufs[sm.m].f32[lo:hi], fr.bufs[sm.s].f32[lo:hi]
	if sm.log {
		blas.LogSoftmaxRowsF32(out, x, mb, sb, sm.init)
		return
	}
	blas.SoftmaxRowsF32(out, x, mb, sb, sm.init)
	if !sm.eLocal {
		// E = O * S: recompute the exponentials the fast path did not
		// keep (the E buffer is read by something else; rare).
		e := fr.bufs[sm.e].f32[lo*n : hi*n]
		for r := range hi - lo {
			blas.ExpSubSumF32(e[r*n:(r+1)*n], x[r*n:(r+1)*n], mb[r])
		}
	}
}
