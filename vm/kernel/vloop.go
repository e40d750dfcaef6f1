package kernel

import "github.com/phasec/phasec/ir"

// vbody is an innermost loop body in the shape vector mode accepts.
type vbody struct {
	sets   []stmt // iteration variables and lets, evaluated at a chunk start
	preds  []ir.PrimExpr
	reduce []*ir.IterVar // reduction iteration variables (T.init condition)
	values []ir.PrimExpr // their bound values
	init   []*ir.BufferStore
	body   []*ir.BufferStore
	// loadingLets are let values that load from buffers.
	loadingLets []ir.PrimExpr
	// guards holds the if/else condition of stores under one.
	guards map[*ir.BufferStore]*vguard
}

// vguard is the condition of an if/else around a store: the store runs on
// the lanes where every condition holds (else branch: where one fails).
type vguard struct {
	conds []vcondition
	neg   bool
}

// vcondition is a T.where conjunct or T.init equality over the chunk.
type vcondition struct {
	inv  iexpr // invariant condition, or nil
	op   ir.BinaryOp
	diff iexpr // (lhs - rhs) at the chunk start, for an affine condition
	coef int64 // its change per iteration
}

// compileVector compiles an innermost loop for vector mode, or reports
// false when its body does not qualify (the scalar path runs it then).
func (c *compiler) compileVector(s *ir.For, lo, ext iexpr, slot int) (run stmt, ok bool) {
	vc := &vcomp{c: c, x: s.Var, xslot: slot, sub: map[*ir.PrimVar]ir.PrimExpr{}}
	defer func() {
		if r := recover(); r != nil {
			if _, no := r.(notVector); !no {
				panic(r)
			}
			run, ok = nil, false
			c.scalarLoops = append(c.scalarLoops, r.(notVector).why)
		}
	}()
	vb := &vbody{}
	vc.flatten(s.Body, vb, true)
	vc.checkAccesses(vb)

	var preds []vcondition
	for _, p := range vb.preds {
		preds = append(preds, vc.conjuncts(p)...)
	}
	var initConds []vcondition
	for i, iv := range vb.reduce {
		eq := ir.NewBinary(ir.OpEQ, vb.values[i], iv.Dom.Min)
		initConds = append(initConds, vc.condition(eq))
	}
	varyingInit := 0
	for _, ic := range initConds {
		if ic.inv == nil {
			varyingInit++
		}
	}
	if varyingInit > 1 {
		vc.no("T.init depends on the loop variable twice")
	}
	init := vc.initStmts(vb.init, varyingInit == 1)
	body := vc.stmts(vb.body, vb.guards)
	sets := vb.sets
	setAt := func(fr *frame, x int64) {
		fr.ints[slot] = x
		for _, s := range sets {
			s(fr)
		}
	}
	hasInit := len(vb.init) > 0
	chunk := func(fr *frame, x0 int64, n int) {
		setAt(fr, x0)
		a, b := int64(0), int64(n)
		for i := range preds {
			pa, pb := preds[i].interval(fr, int64(n))
			a, b = max(a, pa), min(b, pb)
		}
		if a >= b {
			return
		}
		if a > 0 {
			x0 += a
			setAt(fr, x0)
		}
		n = int(b - a)
		if !hasInit {
			body(fr, x0, n)
			return
		}
		// T.init applies where every reduction variable is at its start:
		// nowhere, everywhere in the chunk, or at one iteration t.
		t := int64(-2) // everywhere
		for i := range initConds {
			ia, ib := initConds[i].interval(fr, int64(n))
			if ia >= ib {
				t = -1
				break
			}
			if ib-ia < int64(n) {
				t = ia // an equality holds for at most one iteration
			}
		}
		switch {
		case t == -1:
			body(fr, x0, n)
		case t == -2:
			init(fr, x0, n)
			body(fr, x0, n)
		default:
			if t > 0 {
				body(fr, x0, int(t))
				setAt(fr, x0+t)
			}
			init(fr, x0+t, 1)
			body(fr, x0+t, 1)
			if rest := n - int(t) - 1; rest > 0 {
				setAt(fr, x0+t+1)
				body(fr, x0+t+1, rest)
			}
		}
	}
	c.vectorLoops++
	return func(fr *frame) {
		start := lo(fr)
		end := start + ext(fr)
		for x0 := start; x0 < end; x0 += chunkSize {
			chunk(fr, x0, int(min(chunkSize, end-x0)))
		}
	}, true
}

// initStmts compiles T.init stores. One whose element is invariant in the
// loop is only valid when T.init applies at a single iteration (peeled),
// where it runs as a scalar store.
func (vc *vcomp) initStmts(ss []*ir.BufferStore, peeled bool) vstmt {
	var parts []vstmt
	for _, s := range ss {
		invariant := true
		for _, i := range s.Indices {
			if vc.varies(i) {
				invariant = false
			}
		}
		if !invariant {
			parts = append(parts, vc.store(s))
			continue
		}
		if !peeled {
			vc.no("T.init store invariant in the loop")
		}
		st := vc.c.store(s)
		parts = append(parts, func(fr *frame, _ int64, _ int) { st(fr) })
	}
	return seqV(parts)
}

// stmts compiles a list of stores into one vector statement. Two
// consecutive float32 sum reductions (a mean and a mean of squares, as
// layer norm has) run in one interleaved loop: each keeps its own
// sequential order, and the two dependency chains overlap.
func (vc *vcomp) stmts(ss []*ir.BufferStore, guards map[*ir.BufferStore]*vguard) vstmt {
	var parts []vstmt
	for i := 0; i < len(ss); i++ {
		if i+1 < len(ss) && guards[ss[i]] == nil && guards[ss[i+1]] == nil {
			if p := vc.sumPair(ss[i], ss[i+1]); p != nil {
				parts = append(parts, p)
				i++
				continue
			}
		}
		st := vc.store(ss[i])
		if g := guards[ss[i]]; g != nil {
			st = g.wrap(st, vc.xslot)
		}
		parts = append(parts, st)
	}
	return seqV(parts)
}

// wrap runs st only on the lanes the guard selects.
func (g *vguard) wrap(st vstmt, xslot int) vstmt {
	return func(fr *frame, x0 int64, n int) {
		a, b := int64(0), int64(n)
		for i := range g.conds {
			pa, pb := g.conds[i].intervalAt(fr, x0, int64(n), xslot)
			a, b = max(a, pa), min(b, pb)
		}
		if !g.neg {
			if a < b {
				st(fr, x0+a, int(b-a))
			}
			return
		}
		if a >= b {
			st(fr, x0, n)
			return
		}
		if a > 0 {
			st(fr, x0, int(a))
		}
		if b < int64(n) {
			st(fr, x0+b, n-int(b))
		}
	}
}

// sumPair fuses two float32 sum reductions into distinct invariant
// elements, or returns nil.
func (vc *vcomp) sumPair(s1, s2 *ir.BufferStore) vstmt {
	type red struct {
		a *vaddr
		v operand[float32]
	}
	var rs [2]red
	for i, s := range []*ir.BufferStore{s1, s2} {
		if storageOf(s.Buffer.DType) != stF32 {
			return nil
		}
		for _, ix := range s.Indices {
			if vc.varies(ix) {
				return nil
			}
		}
		op, e, ok := vc.reduction(s)
		if !ok || op != ir.OpAdd || !vc.varies(e) {
			return nil
		}
		if i == 1 && (s.Buffer == s1.Buffer || mentionsBuffer(e, s1.Buffer)) {
			return nil
		}
		rs[i] = red{vc.addr(s.Buffer, s.Indices, s.Value), floatOperand[float32](vc, e)}
	}
	return func(fr *frame, x0 int64, n int) {
		off1, _ := rs[0].a.at(fr, x0, 1)
		off2, _ := rs[1].a.at(fr, x0, 1)
		b1, b2 := fr.bufs[rs[0].a.buf].f32, fr.bufs[rs[1].a.buf].f32
		x, y := rs[0].v.eval(fr, x0, n), rs[1].v.eval(fr, x0, n)
		acc1, acc2 := b1[off1], b2[off2]
		y = y[:len(x)]
		for i, v := range x {
			acc1 += v
			acc2 += y[i]
		}
		b1[off1], b2[off2] = acc1, acc2
	}
}

func mentionsBuffer(e ir.PrimExpr, b *ir.Buffer) bool {
	found := false
	walkExpr(e, func(x ir.PrimExpr) {
		if l, ok := x.(*ir.BufferLoad); ok && l.Buffer == b {
			found = true
		}
	})
	return found
}

func seqV(parts []vstmt) vstmt {
	switch len(parts) {
	case 0:
		return func(*frame, int64, int) {}
	case 1:
		return parts[0]
	}
	return func(fr *frame, x0 int64, n int) {
		for _, p := range parts {
			p(fr, x0, n)
		}
	}
}

// flatten accepts: stores, lets and sequences of them, and (at the top
// only) one block realization without allocations whose body is such.
func (vc *vcomp) flatten(s ir.Stmt, vb *vbody, top bool) {
	c := vc.c
	switch s := s.(type) {
	case *ir.SeqStmt:
		for _, x := range s.Stmts {
			vc.flatten(x, vb, false)
		}
	case *ir.BufferStore:
		vb.body = append(vb.body, s)
	case *ir.LetStmt:
		if hasLoad(s.Value) {
			// Evaluated at chunk starts: valid when the loaded buffers
			// are not written in the body (checkAccesses) and no
			// predicate guards the load.
			vb.loadingLets = append(vb.loadingLets, s.Value)
		}
		vb.sets = append(vb.sets, c.assign(s.Var, s.Value))
		if vc.varies(s.Value) {
			vc.sub[s.Var] = s.Value
		}
		vc.flatten(s.Body, vb, false)
	case *ir.IfThenElse:
		// An if/else over stores whose condition is invariant or affine in
		// the loop: each branch runs on its own lanes.
		conds := vc.conjuncts(s.Cond)
		for i, branch := range []ir.Stmt{s.Then, s.Else} {
			if branch == nil {
				continue
			}
			sub := &vbody{}
			vc.flatten(branch, sub, false)
			if len(sub.sets) > 0 || len(sub.guards) > 0 || len(sub.preds) > 0 || len(sub.init) > 0 {
				vc.no("nested statements under if")
			}
			if vb.guards == nil {
				vb.guards = map[*ir.BufferStore]*vguard{}
			}
			g := &vguard{conds: conds, neg: i == 1}
			for _, st := range sub.body {
				vb.guards[st] = g
				vb.body = append(vb.body, st)
			}
		}
	case *ir.BlockRealize:
		blk := s.Block
		if !top || len(blk.AllocBuffers) > 0 || len(s.IterValues) != len(blk.IterVars) {
			vc.no("block shape")
		}
		for i, iv := range blk.IterVars {
			v := s.IterValues[i]
			if hasLoad(v) {
				vc.no("iteration value loads")
			}
			vb.sets = append(vb.sets, c.assign(iv.Var, v))
			if vc.varies(v) {
				vc.sub[iv.Var] = v
			}
			if iv.Kind == ir.IterReduce {
				vb.reduce = append(vb.reduce, iv)
				vb.values = append(vb.values, iv.Var)
			}
		}
		if s.Predicate != nil {
			vb.preds = append(vb.preds, s.Predicate)
		}
		if blk.Init != nil {
			initBody := &vbody{}
			vc.flatten(blk.Init, initBody, false)
			if len(initBody.sets) > 0 || len(initBody.guards) > 0 {
				vc.no("lets or ifs in T.init")
			}
			vb.init = initBody.body
		}
		vc.flatten(blk.Body, vb, false)
	default:
		vc.no("statement kind")
	}
}

// access is one read or write of a buffer in a loop body.
type access struct {
	idx   []ir.PrimExpr
	store *ir.BufferStore // nil for a load
}

// checkAccesses enforces what makes running the body statement by
// statement over a chunk equal to running it iteration by iteration: a
// buffer written in the body is accessed everywhere with identical index
// expressions, and a reduction target (an element invariant in the loop)
// is touched only by its own read-modify-write store.
func (vc *vcomp) checkAccesses(vb *vbody) {
	acc := map[*ir.Buffer][]access{}
	written := map[*ir.Buffer]bool{}
	addLoads := func(e ir.PrimExpr) {
		walkExpr(e, func(x ir.PrimExpr) {
			if l, ok := x.(*ir.BufferLoad); ok {
				acc[l.Buffer] = append(acc[l.Buffer], access{idx: l.Indices})
			}
		})
	}
	for _, list := range [][]*ir.BufferStore{vb.init, vb.body} {
		for _, s := range list {
			written[s.Buffer] = true
			acc[s.Buffer] = append(acc[s.Buffer], access{idx: s.Indices, store: s})
			addLoads(s.Value)
			for _, i := range s.Indices {
				addLoads(i)
			}
		}
	}
	for _, p := range vb.preds {
		addLoads(p)
	}
	if len(vb.loadingLets) > 0 && len(vb.preds) > 0 {
		vc.no("let of a load under T.where")
	}
	for _, e := range vb.loadingLets {
		walkExpr(e, func(x ir.PrimExpr) {
			if l, ok := x.(*ir.BufferLoad); ok && written[l.Buffer] {
				vc.no("let of a load from a buffer written in the loop")
			}
		})
	}
	for b := range written {
		list := acc[b]
		for _, a := range list[1:] {
			if !sameIndices(a.idx, list[0].idx) {
				vc.no("buffer written and accessed at different indices")
			}
		}
		invariant := true
		for _, i := range list[0].idx {
			if vc.varies(i) {
				invariant = false
			}
		}
		if !invariant {
			continue
		}
		// A reduction target: one body store and its self-read (plus
		// T.init stores, which run before the body on their iteration).
		bodyStores, loads := 0, 0
		for _, a := range list {
			if a.store == nil {
				loads++
			}
		}
		for _, s := range vb.body {
			if s.Buffer == b {
				bodyStores++
				if _, _, ok := vc.reduction(s); !ok {
					vc.no("invariant store that is not a reduction")
				}
			}
		}
		if bodyStores > 1 || loads > bodyStores {
			vc.no("reduction target read elsewhere")
		}
	}
}

func sameIndices(a, b []ir.PrimExpr) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if !sameExpr(a[i], b[i]) {
			return false
		}
	}
	return true
}

// sameExpr is syntactic equality with variables compared by identity.
func sameExpr(a, b ir.PrimExpr) bool {
	switch x := a.(type) {
	case *ir.PrimVar:
		return a == b
	case *ir.IntImm:
		y, ok := b.(*ir.IntImm)
		return ok && x.Value == y.Value && x.Type == y.Type
	case *ir.FloatImm:
		y, ok := b.(*ir.FloatImm)
		return ok && x.Value == y.Value && x.Type == y.Type
	case *ir.Binary:
		y, ok := b.(*ir.Binary)
		return ok && x.Op == y.Op && sameExpr(x.A, y.A) && sameExpr(x.B, y.B)
	case *ir.Cast:
		y, ok := b.(*ir.Cast)
		return ok && x.Type == y.Type && sameExpr(x.Value, y.Value)
	case *ir.Not:
		y, ok := b.(*ir.Not)
		return ok && sameExpr(x.A, y.A)
	case *ir.Select:
		y, ok := b.(*ir.Select)
		return ok && sameExpr(x.Cond, y.Cond) && sameExpr(x.True, y.True) && sameExpr(x.False, y.False)
	case *ir.BufferLoad:
		y, ok := b.(*ir.BufferLoad)
		return ok && x.Buffer == y.Buffer && sameIndices(x.Indices, y.Indices)
	case *ir.PrimCall:
		y, ok := b.(*ir.PrimCall)
		return ok && x.Op == y.Op && x.Type == y.Type && sameIndices(x.Args, y.Args)
	}
	return false
}

// reduction recognises s as target = target op e (op commutative) and
// returns op and e.
func (vc *vcomp) reduction(s *ir.BufferStore) (ir.BinaryOp, ir.PrimExpr, bool) {
	isSelf := func(e ir.PrimExpr) bool {
		l, ok := e.(*ir.BufferLoad)
		return ok && l.Buffer == s.Buffer && sameIndices(l.Indices, s.Indices)
	}
	mentions := func(e ir.PrimExpr) bool {
		found := false
		walkExpr(e, func(x ir.PrimExpr) {
			if l, ok := x.(*ir.BufferLoad); ok && l.Buffer == s.Buffer {
				found = true
			}
		})
		return found
	}
	b, ok := s.Value.(*ir.Binary)
	if !ok {
		return 0, nil, false
	}
	switch b.Op {
	case ir.OpAdd, ir.OpMul, ir.OpMin, ir.OpMax:
	default:
		return 0, nil, false
	}
	switch {
	case isSelf(b.A) && !mentions(b.B):
		return b.Op, b.B, true
	case isSelf(b.B) && !mentions(b.A):
		return b.Op, b.A, true
	}
	return 0, nil, false
}

// store compiles one store of the body.
func (vc *vcomp) store(s *ir.BufferStore) vstmt {
	a := vc.addr(s.Buffer, s.Indices, s.Value)
	invariant := true
	for _, d := range a.dims {
		if d.coef != 0 {
			invariant = false
		}
	}
	st := storageOf(s.Buffer.DType)
	if invariant {
		op, e, ok := vc.reduction(s)
		if !ok {
			vc.no("invariant store")
		}
		switch st {
		case stF32:
			return reduceFloat(vc, a, func(bd *bufData) []float32 { return bd.f32 }, op, e)
		case stF64:
			return reduceFloat(vc, a, func(bd *bufData) []float64 { return bd.f64 }, op, e)
		case stI8, stI16, stI32, stI64, stU8, stU16, stU32:
			if s.Buffer.DType.IsBool() {
				vc.no("bool reduction")
			}
			return reduceInt(vc, s, op, e)
		}
		vc.no("reduction type")
	}
	switch st {
	case stF32:
		return storeFloat(vc, s, a, func(bd *bufData) []float32 { return bd.f32 })
	case stF64:
		return storeFloat(vc, s, a, func(bd *bufData) []float64 { return bd.f64 })
	}
	if isFloatType(s.Buffer.DType) {
		// float16 and bfloat16 have no vector loops: the scalar path
		// computes them in float32 and rounds each store.
		vc.no("float16/bfloat16 store")
	}
	v := intOperand(vc, s.Value)
	switch st {
	case stI8:
		return scatterInts(a, func(bd *bufData) []int8 { return bd.i8 }, v)
	case stI16:
		return scatterInts(a, func(bd *bufData) []int16 { return bd.i16 }, v)
	case stI32:
		return scatterInts(a, func(bd *bufData) []int32 { return bd.i32 }, v)
	case stI64:
		return scatterInts(a, func(bd *bufData) []int64 { return bd.i64 }, v)
	case stU8:
		return scatterInts(a, func(bd *bufData) []uint8 { return bd.u8 }, v)
	case stU16:
		return scatterInts(a, func(bd *bufData) []uint16 { return bd.u16 }, v)
	case stU32:
		return scatterInts(a, func(bd *bufData) []uint32 { return bd.u32 }, v)
	}
	vc.no("store type")
	return nil
}

// conjuncts splits a predicate on "and" into conditions.
func (vc *vcomp) conjuncts(p ir.PrimExpr) []vcondition {
	if b, ok := p.(*ir.Binary); ok && b.Op == ir.OpAnd {
		return append(vc.conjuncts(b.A), vc.conjuncts(b.B)...)
	}
	return []vcondition{vc.condition(p)}
}

// condition compiles a predicate that is invariant, or an integer
// comparison whose sides differ by an affine function of the loop var.
func (vc *vcomp) condition(p ir.PrimExpr) vcondition {
	if !vc.varies(p) {
		return vcondition{inv: vc.c.compileI(p)}
	}
	b, ok := p.(*ir.Binary)
	if !ok || !b.Op.IsCompare() || b.Op == ir.OpNE || !b.A.DType().IsInt() {
		vc.no("predicate shape")
	}
	ka, ok1 := vc.coef(b.A)
	kb, ok2 := vc.coef(b.B)
	if !ok1 || !ok2 || ka == kb {
		vc.no("predicate not affine")
	}
	fa, fb := vc.c.compileI(b.A), vc.c.compileI(b.B)
	return vcondition{op: b.Op, diff: func(fr *frame) int64 { return fa(fr) - fb(fr) }, coef: ka - kb}
}

// interval returns the iterations [a, b) of a chunk of n where the
// condition holds, given slots set at the chunk start.
func (vc *vcondition) interval(fr *frame, n int64) (int64, int64) {
	return vc.intervalAt(fr, 0, n, -1)
}

// intervalAt is interval for the n iterations from x0, with slots set at
// the iteration held in slot xslot (-1: at x0).
func (vc *vcondition) intervalAt(fr *frame, x0, n int64, xslot int) (int64, int64) {
	if vc.inv != nil {
		if vc.inv(fr) != 0 {
			return 0, n
		}
		return 0, 0
	}
	d, k := vc.diff(fr), vc.coef
	if xslot >= 0 {
		d += k * (x0 - fr.ints[xslot])
	}
	// The condition is d + k*t OP 0; normalise to d + k*t < c or == 0.
	switch vc.op {
	case ir.OpEQ:
		if (-d)%k != 0 {
			return 0, 0
		}
		t := -d / k
		if t < 0 || t >= n {
			return 0, 0
		}
		return t, t + 1
	case ir.OpLT:
		return ltInterval(d, k, 0, n)
	case ir.OpLE:
		return ltInterval(d, k, 1, n)
	case ir.OpGT:
		return ltInterval(-d, -k, 0, n)
	default: // OpGE
		return ltInterval(-d, -k, 1, n)
	}
}

// ltInterval solves d + k*t < c for t in [0, n).
func ltInterval(d, k, c, n int64) (int64, int64) {
	r := c - d // k*t < r
	var a, b int64
	if k > 0 {
		a, b = 0, ceilDiv(r, k) // t < r/k
	} else {
		a, b = floorDiv(r, k)+1, n // t > r/k (k < 0 flips)
	}
	return max(a, 0), min(b, n)
}

func ceilDiv(a, b int64) int64 { return -floorDiv(-a, b) }
