package kernel

import (
	"runtime"
	"strings"
	"sync"

	"github.com/phasec/phasec/ir"
	"github.com/phasec/phasec/vm/blas"
)

// Row kernels: consecutive top-level loop nests that walk the same rows run
// one row at a time, each nest's row as vector operations on vm/blas
// (rowexpr.go compiles the expressions), so a layer norm's sums, a
// softmax's max, exp, sum and divide, or a fused residual add before a
// layer norm touch each row while it is in cache, and the rows split
// across cores.
//
// A nest is in row form when it is a perfect nest around one block (nestOf)
// storing fp32 and its variables take these roles:
//
//   - inner: the variable vector operations run over. In map form it is
//     the spatial variable of the store's last index (Out[.., j] = f(..));
//     in reduce form, when the store's last index is not spatial, the
//     reduction variable of the innermost loop, and the store is
//     Out[..] = Out[..] op term with op one of + max min (the chunks'
//     partial results combine in another order: floating-point
//     reassociation, as Sgemm's);
//   - row: every other spatial variable; each must appear as a plain
//     index of the store, so different rows write different elements;
//   - zero: variables of constant extent 1;
//   - reduce: the remaining reduction variables, iterated in order for each
//     row (map form: a reduction over a leading axis, dst[j] += a[k, j]).
//
// Vector accesses index every dimension with a variable or a constant and
// have the inner variable exactly at the last dimension (contiguous);
// subexpressions without the inner variable are per-row scalars compiled
// by the general compiler (compileF) and evaluated once per row.
//
// Nests group while every access to a buffer written in the group, in
// every nest of the group, indexes it the same way in terms of the row
// variables (by their position in the store), zero indices and the inner
// variable: then row r of every nest touches only row r of the written
// buffers, so running all nests row by row, and rows in parallel, is the
// same computation as running the nests one after another. The row
// extents must be equal at run time, and every access is bounds-checked
// before anything runs; otherwise the group's nests run on the general
// path.

// rowRole is the role of a nest variable.
type rowRole uint8

const (
	roleRow rowRole = iota
	roleZero
	roleReduce
	roleInner
)

// vIndex is one index of an access: c + sum of a*variable over terms,
// every coefficient a positive (so the index is smallest at the domain's
// start and largest at its end), e.g. group norm's channel g*3 + c.
type vIndex struct {
	terms []vTerm
	c     int64
}

type vTerm struct {
	v int   // nest variable number
	a int64 // coefficient > 0
}

// vAccess is an access with per-row offset: a vector access (inner at the
// last dimension) or the store of a reduce-form nest.
type vAccess struct {
	buf   int
	idx   []vIndex // the last one is the inner variable when inner
	inner bool
}

// rowNest is one nest compiled in row form.
type rowNest struct {
	slots []int   // int slot of each nest variable
	exts  []iexpr // extent of each nest variable
	roles []rowRole
	// zeroSlots are the slots of the zero, reduction and inner variables
	// (zero at the start of each row).
	zeroSlots []int
	rows      []int // row variables in the order of the store's indices
	reds      []int // outer reduction variables, in loop order
	inner     int
	reduce    bool
	op        ir.BinaryOp // reduce form: the combiner

	out      int // access number of the store
	accesses []vAccess
	value    vexpr // map form: the stored value; reduce form: the term
	// dotA, dotB: a sum-reduce whose term is a product of two vectors
	// (layer norm's sum of squares) runs as one dot product per chunk,
	// without writing the product.
	dotA, dotB vexpr
	initV      vexpr // map form: the T.init value (nil without one)
	initS      fexpr // reduce form: the T.init value (nil without one)
	scalars    []fexpr
	// rowScalars: some per-row scalar reads a buffer or a nest variable
	// (it differs between rows).
	rowScalars bool
	nTemps     int
	// classes: the index classes of every access to each buffer (for
	// grouping).
	classes map[int][][]idxClass
	stored  int // buffer index of the store
}

// idxClass classifies an index for grouping: a row variable by position,
// zero, the inner variable, another constant, or anything else.
type idxClass struct {
	kind uint8 // clsRow, clsZero, clsInner, clsConst, clsOther
	n    int64
}

const (
	clsRow uint8 = iota
	clsZero
	clsInner
	clsConst
	clsOther
)

// rowGroup is a run of row-form nests executed row by row.
type rowGroup struct {
	k     *Kernel
	nests []*rowNest
	// flat: every nest maps (no reduction), indexes every buffer by all
	// its variables in store order, and has no per-row scalar; when the
	// buffers are exactly the iteration space at run time, the rows are
	// contiguous and the group runs over the flattened range in chunks
	// (a chain over 56-element rows otherwise pays the row overhead 56
	// elements at a time).
	flat     bool
	flatPart func(fr *frame, lo, hi int64)
	nRows    int       // number of row variables (equal in every nest)
	states   sync.Pool // *rowState
	calls    sync.Pool // *rowCall
	partFn   func(fr *frame, lo, hi int64)
	call     *rowCall // set only during runs on a frame-private copy; see run
	mu       sync.Mutex
}

// rowCall is the per-call data shared by the workers of one run.
type rowCall struct {
	ext  [][]int64 // per nest, per variable
	runs []bool    // per nest: whether its block executes at all
	rows int64
	// lin[nest][access] is the access's element offset as a linear
	// function of the variable slots (the inner variable excluded), with
	// this call's strides.
	lin [][]linOffset
}

type linOffset struct {
	base  int64
	terms []linTerm
}

type linTerm struct {
	slot int
	coef int64
}

// rowState is a worker's scratch: its private frame, access offsets, row
// scalars and temporaries.
type rowState struct {
	fr   *frame
	call *rowCall
	off  []int
	sc   []float32
	tmp  [][]float32
	// row is the current row's index per row variable position (equal
	// extents in every nest of the group), advanced like an odometer.
	row []int64
}

// rowChunk is the number of inner elements one vector step covers: a
// row of up to this many elements runs in one step, and the temporaries
// of an expression (a few of these) stay in L1.
const rowChunk = 1024

// rowParallelMin is the work (elements over all nests) from which a group
// splits its rows across cores.
const rowParallelMin = 1 << 17

// matchRow compiles s in row form (nil when it is not): map form when the
// store's last index can be the inner variable, else reduce form, else
// map form over a last dimension of extent 1 (softmax over a unit axis).
func (c *compiler) matchRow(s ir.Stmt) *rowNest {
	for _, mode := range []struct{ reduce, unitInner bool }{{false, false}, {true, true}, {false, true}} {
		if rn := c.matchRowAs(s, mode.reduce, mode.unitInner); rn != nil {
			return rn
		}
	}
	return nil
}

func (c *compiler) matchRowAs(s ir.Stmt, reduce, unitInner bool) *rowNest {
	n, ok := nestOf(s)
	if !ok || n.body == nil {
		return nil
	}
	st, ok := n.body.(*ir.BufferStore)
	if !ok || storageOf(st.Buffer.DType) != stF32 || len(st.Indices) == 0 {
		return nil
	}
	rn := &rowNest{inner: -1, classes: map[int][][]idxClass{}, stored: c.bufIdx[st.Buffer]}
	for _, v := range n.vars {
		slot, ok := c.ints[v]
		if !ok {
			return nil
		}
		rn.slots = append(rn.slots, slot)
	}
	for _, e := range n.ext {
		rn.exts = append(rn.exts, c.compileI(e))
	}
	rn.roles = make([]rowRole, len(n.vars))
	unit := func(v int) bool { k, ok := constI(n.ext[v]); return ok && k == 1 }
	// loopOf[i] is the loop (outermost 0) nest variable i is bound to.
	loopOf, ok := loopPositions(s, n)
	if !ok {
		return nil
	}
	// The inner variable.
	last := n.varIndex(st.Indices[len(st.Indices)-1])
	if !reduce {
		if last < 0 || n.kinds[last] != ir.IterSpatial || (unit(last) && !unitInner) {
			return nil
		}
		rn.inner = last
	} else {
		// Reduce form: the reduction variable of the innermost loop.
		for i := range n.vars {
			if n.kinds[i] == ir.IterReduce && loopOf[i] == len(n.loops)-1 {
				rn.inner = i
			}
		}
		if rn.inner < 0 {
			return nil
		}
		rn.reduce = true
	}
	inStore := map[int]bool{}
	for _, e := range st.Indices {
		if v := n.varIndex(e); v >= 0 {
			inStore[v] = true
		}
	}
	for i := range n.vars {
		switch {
		case i == rn.inner:
			rn.roles[i] = roleInner
		case unit(i):
			rn.roles[i] = roleZero
		case n.kinds[i] == ir.IterReduce:
			rn.roles[i] = roleReduce
		case n.kinds[i] == ir.IterSpatial && inStore[i]:
			rn.roles[i] = roleRow
		default:
			return nil
		}
	}
	for i, role := range rn.roles {
		if role != roleRow {
			rn.zeroSlots = append(rn.zeroSlots, rn.slots[i])
		}
	}
	for _, e := range st.Indices {
		if v := n.varIndex(e); v >= 0 && rn.roles[v] == roleRow {
			rn.rows = append(rn.rows, v)
		}
	}
	for l := range n.loops {
		for i := range n.vars {
			if rn.roles[i] == roleReduce && loopOf[i] == l {
				rn.reds = append(rn.reds, i)
			}
		}
	}
	if len(rn.reds)+len(rn.rows)+1 != countRoles(rn.roles, roleRow, roleReduce, roleInner) {
		return nil
	}
	rc := &rowCompiler{c: c, n: n, rn: rn}
	// The store and its value.
	outAcc, ok := rc.access(st.Buffer, st.Indices, !rn.reduce)
	if !ok {
		return nil
	}
	rn.out = outAcc
	value := st.Value
	if rn.reduce {
		bin, ok := value.(*ir.Binary)
		if !ok || (bin.Op != ir.OpAdd && bin.Op != ir.OpMax && bin.Op != ir.OpMin) {
			return nil
		}
		self, term := bin.A, bin.B
		if !isSelfLoad(self, st) {
			self, term = bin.B, bin.A
		}
		if !isSelfLoad(self, st) || loadsBuffer(term, st.Buffer) {
			return nil
		}
		rn.op = bin.Op
		value = term
		if !rc.classify(self) {
			return nil
		}
	}
	if rn.value, ok = rc.vector(value, 0); !ok {
		return nil
	}
	if bin, isMul := value.(*ir.Binary); isMul && rn.reduce && rn.op == ir.OpAdd && bin.Op == ir.OpMul {
		a, okA := rc.operand(bin.A, 0)
		b, okB := rc.operand(bin.B, 1)
		if okA && okB && a.vec != nil && b.vec != nil {
			rn.dotA, rn.dotB = a.vec, b.vec
		}
	}
	if n.init != nil {
		ist, ok := n.init.(*ir.BufferStore)
		if !ok || ist.Buffer != st.Buffer || !sameIndices(ist.Indices, st.Indices) {
			return nil
		}
		if rn.reduce {
			if mentionsVars(ist.Value, n.vars) || hasLoad(ist.Value) {
				return nil
			}
			rn.initS = c.compileF(ist.Value)
		} else if rn.initV, ok = rc.vector(ist.Value, 0); !ok {
			return nil
		}
	}
	rn.nTemps = rc.maxTemp + 2
	return rn
}

// loopPositions returns, for each variable of nest n (of statement s), the
// position of the loop it is bound to (its own loop without a block).
func loopPositions(s ir.Stmt, n *nest) ([]int, bool) {
	pos := make([]int, len(n.vars))
	for {
		f, ok := s.(*ir.For)
		if !ok {
			break
		}
		s = f.Body
	}
	r, isBlock := s.(*ir.BlockRealize)
	for i, v := range n.vars {
		lv := v
		if isBlock {
			lv = r.IterValues[i].(*ir.PrimVar) // nestOf checked
		}
		pos[i] = -1
		for l, f := range n.loops {
			if f.Var == lv {
				pos[i] = l
			}
		}
		if pos[i] < 0 {
			return nil, false
		}
	}
	return pos, true
}

func countRoles(roles []rowRole, want ...rowRole) int {
	k := 0
	for _, r := range roles {
		for _, w := range want {
			if r == w {
				k++
			}
		}
	}
	return k
}

func isSelfLoad(e ir.PrimExpr, st *ir.BufferStore) bool {
	l, ok := e.(*ir.BufferLoad)
	return ok && l.Buffer == st.Buffer && sameIndices(l.Indices, st.Indices)
}

func loadsBuffer(e ir.PrimExpr, b *ir.Buffer) bool {
	found := false
	walkExpr(e, func(x ir.PrimExpr) {
		if l, ok := x.(*ir.BufferLoad); ok && l.Buffer == b {
			found = true
		}
	})
	return found
}

// formRowGroups splits the top-level statements into row groups: each
// returned group lists consecutive statement numbers; a statement in no
// group has a nil nest.
func formRowGroups(nests []*rowNest) [][]int {
	var groups [][]int
	var cur []int
	flush := func() {
		if len(cur) > 0 {
			groups = append(groups, cur)
		}
		cur = nil
	}
	for i, rn := range nests {
		if rn == nil {
			flush()
			continue
		}
		if len(cur) > 0 && groupable(nests, append(cur[:len(cur):len(cur)], i)) {
			cur = append(cur, i)
			continue
		}
		flush()
		if groupable(nests, []int{i}) {
			cur = []int{i}
		} else {
			nests[i] = nil
		}
	}
	flush()
	return groups
}

// groupable checks the row alignment of the nests in members: equal
// numbers of row variables, and every access to a written buffer indexed
// the same way.
func groupable(nests []*rowNest, members []int) bool {
	written := map[int][]idxClass{}
	nRows := len(nests[members[0]].rows)
	for _, m := range members {
		rn := nests[m]
		if len(rn.rows) != nRows {
			return false
		}
		written[rn.stored] = nil
	}
	for b := range written {
		var want []idxClass
		for _, m := range members {
			for _, cl := range nests[m].classes[b] {
				for _, x := range cl {
					if x.kind == clsOther {
						return false
					}
				}
				if want == nil {
					want = cl
				} else if !sameClasses(want, cl) {
					return false
				}
			}
		}
	}
	return true
}

func sameClasses(a, b []idxClass) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}

// compileRowGroup returns the fast path of a group.
func (c *compiler) compileRowGroup(nests []*rowNest) fastPath {
	g := &rowGroup{k: c.k, nests: nests, nRows: len(nests[0].rows)}
	g.partFn = g.part
	g.flat = flatGroup(nests)
	g.flatPart = g.flatRange
	return g.run
}

func (g *rowGroup) run(fr *frame) bool {
	call, _ := g.calls.Get().(*rowCall)
	if call == nil {
		call = &rowCall{ext: make([][]int64, len(g.nests)), runs: make([]bool, len(g.nests)), lin: make([][]linOffset, len(g.nests))}
		for ni, rn := range g.nests {
			call.ext[ni] = make([]int64, len(rn.exts))
			call.lin[ni] = make([]linOffset, len(rn.accesses))
		}
	}
	defer g.calls.Put(call)
	call.rows = 1
	work := int64(0)
	for ni, rn := range g.nests {
		ext := call.ext[ni]
		runs := true
		for i, e := range rn.exts {
			ext[i] = e(fr)
			if ext[i] <= 0 {
				runs = false
			}
		}
		call.ext[ni], call.runs[ni] = ext, runs
		rows := int64(1)
		for _, v := range rn.rows {
			rows *= max(ext[v], 0)
		}
		if ni == 0 {
			call.rows = rows
		}
		// Equal row extents, position by position.
		for p, v := range rn.rows {
			if ext[v] != call.ext[0][g.nests[0].rows[p]] {
				return false
			}
		}
		if runs && !rn.inBounds(fr, ext) {
			return false
		}
		if runs {
			rn.linearize(fr, call.lin[ni])
		}
		if runs {
			w := int64(1)
			for _, x := range ext {
				w *= x
			}
			work += w
		}
	}
	if call.rows == 0 {
		return true
	}
	if g.flat && g.flatFits(fr, call) {
		total := call.rows * call.ext[0][g.nests[0].inner]
		if total < parallelMin || runtime.GOMAXPROCS(0) <= 1 || fr.inParallel {
			rs := g.state(call, fr)
			g.flatOn(rs, 0, total)
			g.states.Put(rs)
			return true
		}
		g.mu.Lock()
		defer g.mu.Unlock()
		g.call = call
		runRange(g.k, fr, total, 1, g.flatPart)
		g.call = nil
		return true
	}
	workers := int64(runtime.GOMAXPROCS(0))
	if work < rowParallelMin || workers <= 1 || fr.inParallel || call.rows < 2 {
		rs := g.state(call, fr)
		g.rowsOn(rs, 0, call.rows)
		g.states.Put(rs)
		return true
	}
	g.mu.Lock() // one parallel run of this group at a time shares call
	defer g.mu.Unlock()
	g.call = call
	runParts(g.k, fr, call.rows, workers, g.partFn)
	g.call = nil
	return true
}

// part runs rows [lo, hi) on a private copy of the parent frame.
func (g *rowGroup) part(parent *frame, lo, hi int64) {
	fr := g.k.getFrame()
	defer g.k.putFrame(fr)
	fr.copyFrom(parent)
	rs := g.state(g.call, fr)
	defer g.states.Put(rs)
	g.rowsOn(rs, lo, hi)
}

func (g *rowGroup) state(call *rowCall, fr *frame) *rowState {
	rs, _ := g.states.Get().(*rowState)
	if rs == nil {
		rs = &rowState{}
		nAcc, nSc, nTmp := 0, 0, 0
		for _, rn := range g.nests {
			nAcc = max(nAcc, len(rn.accesses))
			nSc = max(nSc, len(rn.scalars))
			nTmp = max(nTmp, rn.nTemps)
		}
		rs.off = make([]int, nAcc)
		rs.row = make([]int64, g.nRows)
		rs.sc = make([]float32, nSc)
		rs.tmp = make([][]float32, nTmp)
		for i := range rs.tmp {
			rs.tmp[i] = make([]float32, rowChunk)
		}
	}
	rs.fr, rs.call = fr, call
	return rs
}

// rowsOn runs rows [lo, hi) of every nest, row by row.
func (g *rowGroup) rowsOn(rs *rowState, lo, hi int64) {
	// The row extents, position by position, from the first nest.
	first, ext0 := g.nests[0], rs.call.ext[0]
	row := rs.row[:len(first.rows)]
	r := lo
	for p := len(row) - 1; p >= 0; p-- {
		e := ext0[first.rows[p]]
		row[p] = r % e
		r /= e
	}
	for r := lo; r < hi; r++ {
		for ni, rn := range g.nests {
			if rs.call.runs[ni] {
				rn.runRow(rs, rs.call.ext[ni], rs.call.lin[ni], row)
			}
		}
		for p := len(row) - 1; p >= 0; p-- {
			row[p]++
			if row[p] < ext0[first.rows[p]] {
				break
			}
			row[p] = 0
		}
	}
}

// flatGroup reports whether the group may run flattened (rowGroup.flat):
// every access indexes dimension d by one variable, the row variables in
// store order with unit variables (extent 1) anywhere between them, and
// the inner variable last.
func flatGroup(nests []*rowNest) bool {
	for _, rn := range nests {
		if rn.reduce || len(rn.reds) > 0 || rn.rowScalars || rn.initV != nil {
			return false
		}
		for _, a := range rn.accesses {
			if !a.inner {
				return false
			}
			p := 0
			for _, x := range a.idx[:len(a.idx)-1] {
				if x.c != 0 || len(x.terms) != 1 || x.terms[0].a != 1 {
					return false
				}
				v := x.terms[0].v
				switch {
				case rn.roles[v] == roleZero:
				case p < len(rn.rows) && v == rn.rows[p]:
					p++
				default:
					return false
				}
			}
			if p != len(rn.rows) {
				return false
			}
		}
	}
	return true
}

// flatFits checks at run time that every nest iterates the same space and
// every buffer it touches has exactly that shape, so that the flattened
// element e of every access is the same point.
func (g *rowGroup) flatFits(fr *frame, call *rowCall) bool {
	first := g.nests[0]
	for ni, rn := range g.nests {
		if !call.runs[ni] {
			return false
		}
		ext := call.ext[ni]
		for p, v := range rn.rows {
			if ext[v] != call.ext[0][first.rows[p]] {
				return false
			}
		}
		if ext[rn.inner] != call.ext[0][first.inner] {
			return false
		}
		for _, a := range rn.accesses {
			shape := fr.bufs[a.buf].shape
			for d, x := range a.idx {
				if shape[d] != ext[x.terms[0].v] {
					return false
				}
			}
		}
	}
	return true
}

// flatRange runs flattened elements [lo, hi) on a private copy of the
// parent frame.
func (g *rowGroup) flatRange(parent *frame, lo, hi int64) {
	fr := g.k.getFrame()
	defer g.k.putFrame(fr)
	fr.copyFrom(parent)
	rs := g.state(g.call, fr)
	defer g.states.Put(rs)
	g.flatOn(rs, lo, hi)
}

// flatOn runs flattened elements [lo, hi) of every nest, a chunk of every
// nest at a time (the intermediates stay in L1).
func (g *rowGroup) flatOn(rs *rowState, lo, hi int64) {
	fr := rs.fr
	for _, rn := range g.nests {
		for _, s := range rn.slots {
			fr.ints[s] = 0
		}
	}
	for c := lo; c < hi; c += rowChunk {
		e := min(c+rowChunk, hi)
		for ni, rn := range g.nests {
			rn.offsets(rs, rs.call.lin[ni])
			if c == lo {
				rn.evalScalars(rs)
			}
			out := fr.bufs[rn.accesses[rn.out].buf].f32[rs.off[rn.out]:]
			dst := out[c:e]
			storeChunk(dst, rn.value(rs, int(c), int(e), dst))
		}
	}
}

// inBounds checks every vector access and the store over the whole
// iteration domain (all extents are positive).
func (rn *rowNest) inBounds(fr *frame, ext []int64) bool {
	for _, a := range rn.accesses {
		bd := &fr.bufs[a.buf]
		if bd.f32 == nil || len(bd.shape) != len(a.idx) {
			return false
		}
		for d, x := range a.idx {
			hi := x.c
			for _, t := range x.terms {
				hi += t.a * (ext[t.v] - 1)
			}
			if x.c < 0 || hi >= bd.shape[d] {
				return false
			}
		}
	}
	return true
}

// runRow runs one row of the nest (row: its row variables' values).
func (rn *rowNest) runRow(rs *rowState, ext []int64, lin []linOffset, row []int64) {
	fr := rs.fr
	for p, v := range rn.rows {
		fr.ints[rn.slots[v]] = row[p]
	}
	for _, s := range rn.zeroSlots {
		fr.ints[s] = 0
	}
	innerN := int(ext[rn.inner])
	if rn.reduce {
		rn.offsets(rs, lin)
		var acc float32
		if rn.initS != nil {
			acc = float32(rn.initS(fr))
		} else {
			acc = fr.bufs[rn.accesses[rn.out].buf].f32[rs.off[rn.out]]
		}
		for first := true; ; first = false {
			if !first {
				rn.offsets(rs, lin)
			}
			rn.evalScalars(rs)
			for lo := 0; lo < innerN; lo += rowChunk {
				hi := min(lo+rowChunk, innerN)
				if rn.dotA != nil {
					acc += blas.DotF32(rn.dotA(rs, lo, hi, nil), rn.dotB(rs, lo, hi, nil))
					continue
				}
				acc = combine(rn.op, acc, rn.value(rs, lo, hi, nil))
			}
			if !rn.nextReduce(fr, ext) {
				break
			}
		}
		fr.bufs[rn.accesses[rn.out].buf].f32[rs.off[rn.out]] = acc
		return
	}
	first := true
	for {
		rn.offsets(rs, lin)
		rn.evalScalars(rs)
		out := fr.bufs[rn.accesses[rn.out].buf].f32[rs.off[rn.out]:]
		for lo := 0; lo < innerN; lo += rowChunk {
			hi := min(lo+rowChunk, innerN)
			dst := out[lo:hi]
			if first && rn.initV != nil {
				storeChunk(dst, rn.initV(rs, lo, hi, dst))
			}
			storeChunk(dst, rn.value(rs, lo, hi, dst))
		}
		first = false
		if !rn.nextReduce(fr, ext) {
			return
		}
	}
}

// nextReduce advances the outer reduction variables (an odometer in loop
// order); false when they wrap.
func (rn *rowNest) nextReduce(fr *frame, ext []int64) bool {
	for i := len(rn.reds) - 1; i >= 0; i-- {
		v := rn.reds[i]
		s := rn.slots[v]
		fr.ints[s]++
		if fr.ints[s] < ext[v] {
			return true
		}
		fr.ints[s] = 0
	}
	return false
}

// linearize writes each access's offset function for this call's strides.
func (rn *rowNest) linearize(fr *frame, lin []linOffset) {
	for a := range rn.accesses {
		acc := &rn.accesses[a]
		stride := fr.bufs[acc.buf].stride
		l := &lin[a]
		l.base, l.terms = 0, l.terms[:0]
		for d, x := range acc.idx {
			l.base += x.c * stride[d]
			for _, t := range x.terms {
				if t.v != rn.inner {
					l.terms = append(l.terms, linTerm{slot: rn.slots[t.v], coef: t.a * stride[d]})
				}
			}
		}
	}
}

// offsets evaluates every access's offset at the current variables.
func (rn *rowNest) offsets(rs *rowState, lin []linOffset) {
	ints := rs.fr.ints
	for a := range lin {
		l := &lin[a]
		off := l.base
		for _, t := range l.terms {
			off += t.coef * ints[t.slot]
		}
		rs.off[a] = int(off)
	}
}

func (rn *rowNest) evalScalars(rs *rowState) {
	for i, s := range rn.scalars {
		rs.sc[i] = float32(s(rs.fr))
	}
}

func storeChunk(dst, v []float32) {
	if len(v) > 0 && &v[0] != &dst[0] {
		copy(dst, v)
	}
}

// runParts splits [0, total) into workers ranges on the worker pool; every
// range (the caller's too) runs through part, which takes a private frame.
func runParts(k *Kernel, fr *frame, total, workers int64, part func(fr *frame, lo, hi int64)) {
	workers = min(workers, total, 64)
	workersOnce.Do(startWorkers)
	per := (total + workers - 1) / workers
	var jobs [64]*parJob
	used := 0
	for w := int64(1); w < workers; w++ {
		lo, hi := w*per, min((w+1)*per, total)
		if lo >= hi {
			break
		}
		j := newJob(k, fr, nil, 0, lo, hi)
		j.rng = part
		jobs[used] = j
		used++
		select {
		case workCh <- j:
		default:
			j.run()
		}
	}
	own := newJob(k, fr, nil, 0, 0, min(per, total))
	own.rng = part
	own.run()
	failed := own.failed
	own.release()
	for _, j := range jobs[:used] {
		j.wg.Wait()
		if failed == nil {
			failed = j.failed
		}
		j.release()
	}
	if failed != nil {
		panic(failed)
	}
}

// compileRowTop compiles the top-level statements of a PrimFunc when some
// of them form row groups (ok false otherwise, and nothing is compiled):
// a group runs its fast path, falling back to its nests' general closures
// in order; other statements dispatch as compileTop does. A lone nest that
// matchNest already runs on a fast path (an elementwise binary op) keeps
// that path; matmul nests never join a group.
func (c *compiler) compileRowTop(allocs stmt, local []*ir.Buffer, stmts []ir.Stmt) (stmt, string, bool) {
	nests := make([]*rowNest, len(stmts))
	names := make([]string, len(stmts))
	fasts := make([]fastPath, len(stmts))
	// Softmax, log-softmax (rows_softmax.go), layer norm and RMS norm
	// (rows_norm.go) run as one kernel each.
	isLocal := map[*ir.Buffer]bool{}
	for _, b := range local {
		isLocal[b] = true
	}
	type rowKernel struct {
		nStmts int
		run    fastPath
	}
	softmaxAt := map[int]rowKernel{}
	for i := 0; i < len(stmts); i++ {
		if sm := c.matchSoftmax(stmts[i:], isLocal); sm != nil {
			softmaxAt[i] = rowKernel{sm.nStmts, sm.run}
			i += sm.nStmts - 1
		} else if nr := c.matchNorm(stmts[i:]); nr != nil && !(i > 0 && writes(stmts[i-1], nr.xBuf)) {
			// (a nest computing X just before, a fused residual add,
			// stays in a row group with the norm: X's rows in cache)
			softmaxAt[i] = rowKernel{nr.nStmts, nr.run}
			i += nr.nStmts - 1
		}
	}
	inSoftmax := func(i int) bool {
		for j, sm := range softmaxAt {
			if i >= j && i < j+sm.nStmts {
				return true
			}
		}
		return false
	}
	for i, s := range stmts {
		if inSoftmax(i) {
			continue // nil nest: never in a group
		}
		// The nest's variables get their slots first: matchNest's fast
		// paths (the window ones) read them, as after compileStmt.
		if n, ok := nestOf(s); ok {
			for _, v := range n.vars {
				if !isFloatType(v.Type) && !v.Type.IsHandle() && v.Type.Lanes == 1 {
					c.defineVar(v)
				}
			}
		}
		names[i], fasts[i] = c.matchNest(s)
		if fasts[i] != nil && names[i] != "elementwise" && names[i] != "broadcast" {
			continue
		}
		nests[i] = c.matchRow(s)
	}
	groups := formRowGroups(nests)
	useful := groups[:0]
	for _, g := range groups {
		if len(g) > 1 || fasts[g[0]] == nil {
			useful = append(useful, g)
		}
	}
	if len(useful) == 0 && len(softmaxAt) == 0 {
		return nil, "", false
	}
	groupAt := map[int][]int{}
	inGroup := map[int]bool{}
	for _, g := range useful {
		groupAt[g[0]] = g
		for _, i := range g {
			inGroup[i] = true
		}
	}
	var parts []stmt
	var partNames []string
	for i := 0; i < len(stmts); i++ {
		if sm, ok := softmaxAt[i]; ok {
			var generals []stmt
			for _, s := range stmts[i : i+sm.nStmts] {
				generals = append(generals, c.compileStmt(s))
			}
			parts = append(parts, fastOr(sm.run, seq(generals)))
			partNames = append(partNames, "rows")
			i += sm.nStmts - 1
			continue
		}
		if g, ok := groupAt[i]; ok {
			var generals []stmt
			var members []*rowNest
			name := "elementwise"
			for _, j := range g {
				gen := c.compileStmt(stmts[j])
				generals = append(generals, gen)
				members = append(members, nests[j])
				if nests[j].reduce || len(nests[j].reds) > 0 {
					name = "rows"
				}
			}
			parts = append(parts, fastOr(c.compileRowGroup(members), seq(generals)))
			partNames = append(partNames, name)
			i = g[len(g)-1]
			continue
		}
		general := c.compileStmt(stmts[i])
		if fast := fasts[i]; fast != nil {
			parts = append(parts, fastOr(fast, general))
		} else {
			parts = append(parts, general)
		}
		partNames = append(partNames, names[i])
	}
	var joined []string
	for _, n := range partNames {
		if n != "" && (len(joined) == 0 || joined[len(joined)-1] != n) {
			joined = append(joined, n)
		}
	}
	name := strings.Join(joined, "+")
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
	}, name, true
}

// writes reports whether statement s is a nest storing into b.
func writes(s ir.Stmt, b *ir.Buffer) bool {
	n, ok := nestOf(s)
	if !ok {
		return false
	}
	st, ok := n.body.(*ir.BufferStore)
	return ok && st.Buffer == b
}
