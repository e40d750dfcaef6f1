package kernel

import (
	"math"
	"runtime"
	"sync"
	"sync/atomic"

	"github.com/phasec/phasec/ir"
	"github.com/phasec/phasec/vm/blas"
)

// Layer norm and RMS norm over trailing axes, as LegalizeOps writes them
// (whatever the names): one or two row sums of X from zero,
//
//	Acc[rows..., 0...] = Acc[rows..., 0...] + X[rows..., k...]   (sum)
//	Acc[rows..., 0...] = Acc[rows..., 0...] + X[...] * X[...]   (sum of squares)
//
// over the trailing axes k (the accumulators shaped like X with unit
// trailing dimensions), then the normalization
//
//	Out[rows..., j...] = ((X[rows..., j...] - s1) * s2) * W[j...] + U[j...]
//
// in any operand order of the multiplies and the add, s1 absent (RMS norm),
// W and U each optional, with s1 and s2 per-row scalar expressions of the
// accumulators and constants (+ - * /, sqrt, rsqrt in float32: layer
// norm's mean and reciprocal standard deviation). The statements run as
// one kernel over contiguous rows instead of the row-group machinery's
// per-row closures: blocks of rows in L1, the block's sums on vm/blas
// (SumF32, DotF32), its scalars evaluated a block at a time (each
// operation over the block's rows, rounded as the general path rounds
// it), the normalization as one blas.NormF32 pass per row (which fuses
// the last multiply and add). Rows split across cores from
// normParallelMin elements. Reported as "rows".

type normRows struct {
	k      *Kernel
	nStmts int
	x, out int // buffer numbers
	xBuf   *ir.Buffer
	accs   []int // accumulator buffer numbers
	sq     []bool
	g, h   int // scale and shift buffers (-1: absent)
	lead   int // number of row dimensions
	s1, s2 blockF
	nTemps int
	ext    [][]iexpr // every nest's extents
	temps  sync.Pool // *normScratch
	partFn func(fr *frame, lo, hi int64)
}

// blockF computes a per-row scalar for the env's block of rows: a slice
// of env.b values (the env's temporaries or an accumulator's rows).
type blockF func(env *normEnv) []float32

type normEnv struct {
	b   int
	acc [2][]float32 // the block's rows of each accumulator
	tmp [][]float32
}

type normScratch struct {
	env normEnv
}

// normBlockRows is the most rows of one block (and the length of the
// scalar temporaries); normBlock the elements a block spans at most.
const (
	normBlockRows = 64
	normBlock     = 8192
)

// normTaken counts the runs of the kernel (tests check it is taken).
var normTaken atomic.Int64

// normParallelMin is the element count from which the rows split across
// cores.
const normParallelMin = 1 << 16

// matchNorm matches the statements at the start of stmts.
func (c *compiler) matchNorm(stmts []ir.Stmt) *normRows {
	var ns []*nest
	for _, s := range stmts[:min(3, len(stmts))] {
		n, ok := nestOf(s)
		if !ok {
			break
		}
		ns = append(ns, n)
	}
	var x *ir.Buffer
	var accs []*ir.Buffer
	var sq []bool
	lead := -1
	i := 0
	for ; i < len(ns) && i < 2; i++ {
		acc, xb, isSq, l, ok := matchNormSum(ns[i])
		if !ok || (x != nil && (xb != x || l != lead)) {
			break
		}
		x, lead = xb, l
		accs, sq = append(accs, acc), append(sq, isSq)
	}
	if i == 0 || i >= len(ns) {
		return nil
	}
	if len(accs) == 2 && (sq[0] == sq[1] || accs[0] == accs[1]) {
		return nil
	}
	mn := ns[i]
	st, ok := mn.body.(*ir.BufferStore)
	if !ok || mn.init != nil || len(st.Indices) != len(mn.vars) || storageOf(st.Buffer.DType) != stF32 {
		return nil
	}
	for d, e := range st.Indices {
		if e != mn.vars[d] || mn.kinds[d] != ir.IterSpatial {
			return nil
		}
	}
	if len(mn.vars) != len(x.Shape) || lead >= len(mn.vars) {
		return nil
	}
	nr := &normRows{k: c.k, nStmts: i + 1, lead: lead, g: -1, h: -1}
	nc := &normCompiler{c: c, n: mn, accs: accs, lead: lead}
	v, s1, s2, w, u, ok := nc.split(st.Value)
	if !ok || !isRowLoad(mn, v, x, true) || len(mn.vars) != len(v.(*ir.BufferLoad).Indices) {
		return nil
	}
	if nr.s2, ok = nc.scalar(s2, 0); !ok {
		return nil
	}
	if s1 != nil {
		if nr.s1, ok = nc.scalar(s1, 1); !ok {
			return nil
		}
	}
	nr.nTemps = nc.maxTemp + 1
	bufs := append([]*ir.Buffer{x, st.Buffer}, accs...)
	for _, p := range []struct {
		e   ir.PrimExpr
		num *int
	}{{w, &nr.g}, {u, &nr.h}} {
		if p.e == nil {
			continue
		}
		b, ok := nc.paramLoad(p.e)
		if !ok {
			return nil
		}
		bufs = append(bufs, b)
		*p.num = c.bufIdx[b]
	}
	for _, b := range bufs {
		if _, ok := c.bufIdx[b]; !ok || storageOf(b.DType) != stF32 {
			return nil
		}
	}
	if st.Buffer == x {
		return nil
	}
	for _, a := range accs {
		if a == st.Buffer || a == x {
			return nil
		}
	}
	nr.x, nr.out, nr.xBuf = c.bufIdx[x], c.bufIdx[st.Buffer], x
	for _, a := range accs {
		nr.accs = append(nr.accs, c.bufIdx[a])
	}
	nr.sq = sq
	for _, n := range ns[:i+1] {
		var ext []iexpr
		for _, e := range n.ext {
			ext = append(ext, c.compileI(e))
		}
		nr.ext = append(nr.ext, ext)
	}
	nr.partFn = nr.part
	return nr
}

// matchNormSum matches Acc[s...] = Acc[s...] + X[...] (or X[...] *
// X[...]) from T.init 0, the nest's variables its D spatial variables
// (the store's indices, in order) then its reductions, X indexed by the
// first lead spatial variables then the reductions in order, the other
// spatial variables of extent 1.
func matchNormSum(n *nest) (acc, x *ir.Buffer, sq bool, lead int, ok bool) {
	st, isStore := n.body.(*ir.BufferStore)
	if !isStore || n.init == nil || storageOf(st.Buffer.DType) != stF32 {
		return nil, nil, false, 0, false
	}
	d := len(st.Indices)
	r := len(n.vars) - d
	if r < 1 || r > d {
		return nil, nil, false, 0, false
	}
	lead = d - r
	for i, v := range n.vars {
		want := ir.IterSpatial
		if i >= d {
			want = ir.IterReduce
		}
		if n.kinds[i] != want {
			return nil, nil, false, 0, false
		}
		if i < d && st.Indices[i] != v {
			return nil, nil, false, 0, false
		}
		if i >= lead && i < d {
			if k, isK := constI(n.ext[i]); !isK || k != 1 {
				return nil, nil, false, 0, false
			}
		}
	}
	ist, isStore := n.init.(*ir.BufferStore)
	if !isStore || ist.Buffer != st.Buffer || !sameIndices(ist.Indices, st.Indices) || !isConst(ist.Value, 0) {
		return nil, nil, false, 0, false
	}
	bin, isBin := st.Value.(*ir.Binary)
	if !isBin || bin.Op != ir.OpAdd {
		return nil, nil, false, 0, false
	}
	term := bin.B
	if !isSelfLoad(bin.A, st) {
		if !isSelfLoad(bin.B, st) {
			return nil, nil, false, 0, false
		}
		term = bin.A
	}
	var a, b ir.PrimExpr
	if binOf(term, ir.OpMul, &a, &b) && sameExpr(a, b) {
		term, sq = a, true
	}
	l, isLoad := term.(*ir.BufferLoad)
	if !isLoad || len(l.Indices) != d || l.Buffer == st.Buffer {
		return nil, nil, false, 0, false
	}
	for i, e := range l.Indices {
		want := n.vars[i]
		if i >= lead {
			want = n.vars[d+i-lead]
		}
		if e != want {
			return nil, nil, false, 0, false
		}
	}
	return st.Buffer, l.Buffer, sq, lead, true
}

// normCompiler compiles the normalization's parts.
type normCompiler struct {
	c       *compiler
	n       *nest
	accs    []*ir.Buffer
	lead    int
	maxTemp int
}

// split takes e apart as ((V - s1) * s2) * W + U (s1, W, U optional; the
// multiplies and the add in either order): V, W and U mention the
// trailing variables, s1 and s2 do not.
func (nc *normCompiler) split(e ir.PrimExpr) (v, s1, s2, w, u ir.PrimExpr, ok bool) {
	trailing := nc.n.vars[nc.lead:]
	isVec := func(x ir.PrimExpr) bool { return mentionsVars(x, trailing) }
	var a, b ir.PrimExpr
	p := e
	if addOf(e, &a, &b) {
		switch {
		case isVec(a) && isVec(b) && isLoadExpr(b):
			p, u = a, b
		case isVec(a) && isVec(b) && isLoadExpr(a):
			p, u = b, a
		default:
			return nil, nil, nil, nil, nil, false
		}
	}
	// p = q * W or q itself, q = (V - s1) * s2 or V * s2 (either order).
	q := func(e ir.PrimExpr) bool {
		var c, d ir.PrimExpr
		if !mulOf(e, &c, &d) {
			return false
		}
		if isVec(d) {
			c, d = d, c
		}
		if !isVec(c) || isVec(d) {
			return false
		}
		v, s1, s2 = c, nil, d
		var x, y ir.PrimExpr
		if binOf(c, ir.OpSub, &x, &y) && isVec(x) && !isVec(y) {
			v, s1 = x, y
		}
		return isLoadExpr(v)
	}
	if mulOf(p, &a, &b) {
		for _, pair := range [][2]ir.PrimExpr{{a, b}, {b, a}} {
			if isLoadExpr(pair[1]) && isVec(pair[1]) && q(pair[0]) {
				return v, s1, s2, pair[1], u, true
			}
		}
	}
	if q(p) {
		return v, s1, s2, nil, u, true
	}
	return nil, nil, nil, nil, nil, false
}

func isLoadExpr(e ir.PrimExpr) bool { _, ok := e.(*ir.BufferLoad); return ok }

// paramLoad matches P[j...], the trailing variables in order.
func (nc *normCompiler) paramLoad(e ir.PrimExpr) (*ir.Buffer, bool) {
	l, ok := e.(*ir.BufferLoad)
	trailing := nc.n.vars[nc.lead:]
	if !ok || len(l.Indices) != len(trailing) {
		return nil, false
	}
	for i, x := range l.Indices {
		if x != trailing[i] {
			return nil, false
		}
	}
	return l.Buffer, true
}

// scalar compiles a per-row scalar into temporary t and up: float32
// constants, accumulator loads Acc[rows..., 0...], + - * /, sqrt and
// rsqrt, each rounded to float32 as the general path rounds it.
func (nc *normCompiler) scalar(e ir.PrimExpr, t int) (blockF, bool) {
	nc.maxTemp = max(nc.maxTemp, t)
	if dt := e.DType(); !isFloatType(dt) || dt.Bits != 32 || dt.Lanes != 1 || dt.Code == ir.CodeBFloat {
		return nil, false
	}
	switch e := e.(type) {
	case *ir.FloatImm:
		v := float32(e.Value)
		return func(env *normEnv) []float32 {
			d := env.tmp[t][:env.b]
			for i := range d {
				d[i] = v
			}
			return d
		}, true
	case *ir.Cast:
		if dt := e.Value.DType(); !isFloatType(dt) || dt.Bits != 32 || dt.Code == ir.CodeBFloat {
			return nil, false
		}
		return nc.scalar(e.Value, t)
	case *ir.BufferLoad:
		for k, a := range nc.accs {
			if e.Buffer != a || len(e.Indices) != len(nc.n.vars) {
				continue
			}
			for d, x := range e.Indices {
				if d < nc.lead && x != nc.n.vars[d] {
					return nil, false
				}
				if c, ok := constI(x); d >= nc.lead && (!ok || c != 0) {
					return nil, false
				}
			}
			return func(env *normEnv) []float32 { return env.acc[k][:env.b] }, true
		}
		return nil, false
	case *ir.PrimCall:
		if len(e.Args) != 1 || (e.Op != "rsqrt" && e.Op != "sqrt") {
			return nil, false
		}
		a, ok := nc.scalar(e.Args[0], t)
		if !ok {
			return nil, false
		}
		if e.Op == "sqrt" {
			return func(env *normEnv) []float32 {
				x, d := a(env), env.tmp[t][:env.b]
				for i, v := range x {
					d[i] = float32(math.Sqrt(float64(v)))
				}
				return d
			}, true
		}
		return func(env *normEnv) []float32 {
			x, d := a(env), env.tmp[t][:env.b]
			for i, v := range x {
				d[i] = float32(1 / math.Sqrt(float64(v)))
			}
			return d
		}, true
	case *ir.Binary:
		a, ok := nc.scalar(e.A, t)
		if !ok {
			return nil, false
		}
		b, ok := nc.scalar(e.B, t+1)
		if !ok {
			return nil, false
		}
		var f func(d, x, y []float32)
		switch e.Op {
		case ir.OpAdd:
			f = func(d, x, y []float32) {
				for i := range d {
					d[i] = x[i] + y[i]
				}
			}
		case ir.OpSub:
			f = func(d, x, y []float32) {
				for i := range d {
					d[i] = x[i] - y[i]
				}
			}
		case ir.OpMul:
			f = func(d, x, y []float32) {
				for i := range d {
					d[i] = x[i] * y[i]
				}
			}
		case ir.OpDiv:
			f = func(d, x, y []float32) {
				for i := range d {
					d[i] = x[i] / y[i]
				}
			}
		default:
			return nil, false
		}
		return func(env *normEnv) []float32 {
			x, y := a(env), b(env)
			d := env.tmp[t][:env.b]
			f(d, x[:len(d)], y[:len(d)])
			return d
		}, true
	}
	return nil, false
}

// geometry returns the row count and row length, checking that the nests
// iterate the same rows and trailing axes and that the buffers are
// exactly those (X, Out), one element per row (the accumulators) or one
// row (W, U); ok false otherwise.
func (nr *normRows) geometry(fr *frame) (rows, n int64, ok bool) {
	last := nr.ext[len(nr.ext)-1]
	if len(last) > maxPermRank {
		return 0, 0, false
	}
	var shapeBuf [maxPermRank]int64
	shape := shapeBuf[:len(last)]
	rows, n = 1, 1
	for d, e := range last {
		shape[d] = e(fr)
		if d < nr.lead {
			rows *= shape[d]
		} else {
			n *= shape[d]
		}
	}
	if rows <= 0 || n <= 0 {
		return 0, 0, false // the general path's empty loops
	}
	dims := len(shape)
	for _, ext := range nr.ext[:len(nr.ext)-1] {
		for d, e := range ext {
			want := int64(1)
			switch {
			case d < nr.lead:
				want = shape[d]
			case d >= dims:
				want = shape[nr.lead+d-dims]
			}
			if e(fr) != want {
				return 0, 0, false
			}
		}
	}
	is := func(b int, want []int64, ones int) bool {
		bd := &fr.bufs[b]
		if bd.f32 == nil || len(bd.shape) != len(want)+ones {
			return false
		}
		for d, w := range want {
			if bd.shape[d] != w {
				return false
			}
		}
		for _, s := range bd.shape[len(want):] {
			if s != 1 {
				return false
			}
		}
		return true
	}
	if !is(nr.x, shape, 0) || !is(nr.out, shape, 0) {
		return 0, 0, false
	}
	for _, a := range nr.accs {
		if !is(a, shape[:nr.lead], dims-nr.lead) {
			return 0, 0, false
		}
	}
	for _, p := range []int{nr.g, nr.h} {
		if p >= 0 && !is(p, shape[nr.lead:], 0) {
			return 0, 0, false
		}
	}
	return rows, n, true
}

func (nr *normRows) run(fr *frame) bool {
	rows, n, ok := nr.geometry(fr)
	if !ok {
		return false
	}
	normTaken.Add(1)
	workers := int64(runtime.GOMAXPROCS(0))
	if rows*n < normParallelMin || workers <= 1 || fr.inParallel || rows < 2 {
		nr.part(fr, 0, rows)
		return true
	}
	runParts(nr.k, fr, rows, workers, nr.partFn)
	return true
}

// part runs rows [lo, hi), a block at a time.
func (nr *normRows) part(fr *frame, lo, hi int64) {
	_, n64, _ := nr.geometry(fr)
	n := int(n64)
	sc, _ := nr.temps.Get().(*normScratch)
	if sc == nil {
		sc = &normScratch{}
		sc.env.tmp = make([][]float32, nr.nTemps)
		for i := range sc.env.tmp {
			sc.env.tmp[i] = make([]float32, normBlockRows)
		}
	}
	defer nr.temps.Put(sc)
	env := &sc.env
	x, out := fr.bufs[nr.x].f32, fr.bufs[nr.out].f32
	var g, h []float32
	if nr.g >= 0 {
		g = fr.bufs[nr.g].f32[:n]
	}
	if nr.h >= 0 {
		h = fr.bufs[nr.h].f32[:n]
	}
	per := int64(max(1, min(normBlockRows, normBlock/n)))
	for b0 := lo; b0 < hi; b0 += per {
		b1 := min(b0+per, hi)
		env.b = int(b1 - b0)
		for k, a := range nr.accs {
			acc := fr.bufs[a].f32[b0:b1]
			env.acc[k] = acc
			for r := range acc {
				xr := x[(b0+int64(r))*n64 : (b0+int64(r)+1)*n64]
				if nr.sq[k] {
					acc[r] = blas.DotF32(xr, xr)
				} else {
					acc[r] = blas.SumF32(xr)
				}
			}
		}
		rstd := nr.s2(env)
		var mean []float32
		if nr.s1 != nil {
			mean = nr.s1(env)
		}
		for r := range env.b {
			row := (b0 + int64(r)) * n64
			var m float32
			if mean != nil {
				m = mean[r]
			}
			blas.NormF32(out[row:row+n64], x[row:row+n64], m, rstd[r], g, h)
		}
	}
}
