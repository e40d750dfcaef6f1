package lower

import (
	"math"
	"sort"

	"github.com/phasec/phasec/diag"
	"github.com/phasec/phasec/internal/ptrmap"
	"github.com/phasec/phasec/ir"
	"github.com/phasec/phasec/op"
)

// The storage-token analysis of StaticPlanBlockMemory, after TVM's
// src/relax/transform/static_plan_block_memory.cc (StorageAllocatorInit,
// StorageAllocator, TokenAllocator1D). A token is one chunk of memory an
// R.builtin.alloc_tensor asks for; the analysis runs per function in two
// walks over the bindings in program order:
//
//  1. init: every alloc_tensor creates a token; tokens flow through
//     variables, tuples, tuple projections and the aliasing ops (reshape,
//     memory.view, memory.ensure_zero_offset). An argument of a call to a
//     PrimFunc of the module, an extern function or vm.call_tir_dyn is a use
//     (ref count +1), unless the token was created in another binding block,
//     in which case it is discarded: planning is block-local. A token that
//     reaches anything else (other calls, If conditions and results, the
//     function's result, a local function) escapes and is discarded too;
//     its allocation stays R.builtin.alloc_tensor.
//  2. allocate: each surviving token either reuses a released storage of
//     its reuse class (storage scope and dtype) or gets a new one; every
//     use decrements the ref count of the storage, which is released at 0.
//
// Both walks iterate over bindings; recursion follows If nesting only.
//
// Deviations from TVM, each avoiding a wrong or ill-formed plan: a
// match_cast var aliases its value (TVM gives it no tokens, so a use
// through it does not keep the storage alive); storages created inside an
// If branch are not reused outside it (TVM's output would name a variable
// out of scope); an allocation whose struct info has no ShapeExpr is left
// unplanned, and one whose size is negative or overflows is reported
// (TVM aborts on both).

// token is a storage token: a prototype (one per planned alloc_tensor)
// and, once allocated, possibly the storage other prototypes reuse.
type token struct {
	bytes ir.PrimExpr // upper-bounded byte count
	size  int64       // bytes as a constant, -1 when symbolic
	dtype ir.DataType
	scope string
	dev   ir.Expr // the alloc's runtime_device_index (a PrimValue)
	refs  int
	block *ir.BindingBlock // where the alloc sits; uses elsewhere discard
	// discarded: the allocation escapes or is used outside its block; it
	// is not planned.
	discarded bool

	// Set by the allocate walk on prototypes.
	storage    *token // the storage this prototype was given (itself when fresh)
	start, end int    // binding indices of the allocation and the release
	// Set on storages: the If branch the storage was created in (0:
	// function level).
	branch int

	// Set by the offsets planner on prototypes of constant size.
	arena  *arena
	offset int64
}

// toks is what an expression holds: nothing, one token, or a tuple of toks.
type toks struct {
	leaf   *token
	fields []toks
	tuple  bool
}

// each calls f on every token of t that has not been discarded.
func (t toks) each(f func(*token)) {
	if t.leaf != nil {
		if !t.leaf.discarded {
			f(t.leaf)
		}
		return
	}
	for _, ft := range t.fields {
		ft.each(f)
	}
}

// discard marks every token of t as escaping.
func (t toks) discard() { t.each(func(tk *token) { tk.discarded = true }) }

// funcPlan is the planning state of one function.
type funcPlan struct {
	fn     *ir.Function
	mod    *ir.Module
	bounds *upperBounds
	vars   ptrmap.Map[ir.Var, toks]
	allocs ptrmap.Map[ir.Call, *token] // alloc_tensor call -> its prototype
	protos []*token                    // in program order
	errs   *diag.List

	// allocate walk
	pool     map[classKey]*classPool
	index    int // binding counter
	branchID int
	branches []int
}

// classKey is a reuse class: storages are shared only within one.
type classKey struct {
	scope string
	dtype ir.DataType
}

func newFuncPlan(mod *ir.Module, fn *ir.Function, bounds *upperBounds, errs *diag.List) *funcPlan {
	return &funcPlan{fn: fn, mod: mod, bounds: bounds, errs: errs}
}

// exprToks returns the tokens e holds.
func (p *funcPlan) exprToks(e ir.Expr) toks {
	switch e := e.(type) {
	case *ir.Var:
		t, _ := p.vars.Get(e)
		return t
	case *ir.Tuple:
		fields := make([]toks, len(e.Fields))
		for i, f := range e.Fields {
			fields[i] = p.exprToks(f)
		}
		return toks{fields: fields, tuple: true}
	case *ir.TupleGetItem:
		t := p.exprToks(e.Tuple)
		if t.tuple && e.Index >= 0 && e.Index < len(t.fields) {
			return t.fields[e.Index]
		}
	}
	return toks{}
}

// setToks records what v holds; vars holding nothing (most of them: kernel
// calls' void results) are not stored.
func (p *funcPlan) setToks(v *ir.Var, t toks) {
	if t.leaf != nil || t.tuple {
		p.vars.Set(v, t)
	}
}

// isAliasOp reports the ops whose result shares its input's storage.
func isAliasOp(op ir.Expr) bool {
	o, ok := op.(*ir.Op)
	if !ok {
		return false
	}
	switch o.Name {
	case "relax.reshape", "relax.memory.view", "relax.memory.ensure_zero_offset",
		"relax.to_vdevice", "relax.hint_on_device": // the host VM's to_device returns its input
		return true
	}
	return false
}

// countsUses reports the callees whose arguments are uses that end when
// the call returns: PrimFuncs of the module, extern functions and
// vm.call_tir_dyn.
func (p *funcPlan) countsUses(c *ir.Call) bool {
	switch op := c.Op.(type) {
	case *ir.ExternFunc:
		return true
	case *ir.GlobalVar:
		return p.mod.PrimFunc(op.Name) != nil
	}
	return c.Op == op.VMCallTIRDyn
}

// ---- walk 1: tokens, uses and escapes ----

// initFunction runs the init walk over the function.
func (p *funcPlan) initFunction() {
	seq, ok := p.fn.Body.(*ir.SeqExpr)
	if !ok {
		p.exprToks(p.fn.Body).discard()
		return
	}
	n := 0
	for _, blk := range seq.Blocks {
		n += len(blk.Bindings)
	}
	// Typically a third of the bindings are allocations and a third
	// aliases of them; sizing the tables once avoids rehashing.
	p.vars.Reserve(n * 2 / 3)
	p.allocs.Reserve(n / 3)
	p.initSeq(seq).discard() // the function's result escapes
}

func (p *funcPlan) initSeq(seq *ir.SeqExpr) toks {
	for _, blk := range seq.Blocks {
		for _, bind := range blk.Bindings {
			switch b := bind.(type) {
			case *ir.VarBinding:
				p.setToks(b.Var, p.initValue(blk, b.Value, b))
			case *ir.MatchCast:
				// The cast var names the same tensor. (TVM gives it no
				// tokens, so a use through it is not counted and the
				// storage can be reused while it is live; phasec aliases.)
				p.setToks(b.Var, p.exprToks(b.Value))
			}
		}
	}
	return p.exprToks(seq.Body)
}

func (p *funcPlan) initValue(blk *ir.BindingBlock, value ir.Expr, bind *ir.VarBinding) toks {
	switch e := value.(type) {
	case *ir.Call:
		switch {
		case e.Op == op.BuiltinAllocTensor:
			return p.createToken(blk, e, bind)
		case isAliasOp(e.Op):
			if len(e.Args) > 0 {
				return p.exprToks(e.Args[0])
			}
		case p.countsUses(e):
			for _, a := range e.Args {
				t := p.exprToks(a)
				t.each(func(tk *token) {
					if tk.block != blk {
						tk.discarded = true
					}
				})
				t.each(func(tk *token) { tk.refs++ })
			}
		default:
			p.exprToks(e.Op).discard() // a closure call
			for _, a := range e.Args {
				p.exprToks(a).discard()
			}
		}
		return toks{}
	case *ir.If:
		p.exprToks(e.Cond).discard()
		for _, br := range []ir.Expr{e.Then, e.Else} {
			if seq, ok := br.(*ir.SeqExpr); ok {
				p.initSeq(seq).discard()
			} else {
				p.exprToks(br).discard()
			}
		}
		return toks{}
	case *ir.Function:
		// A local function: whatever it captures escapes, and its own
		// allocations are not planned (they would need storage of their own
		// per call).
		ir.Inspect(e, func(x ir.Expr) bool {
			if v, ok := x.(*ir.Var); ok {
				p.exprToks(v).discard()
			}
			return true
		})
		return toks{}
	case *ir.SeqExpr:
		return p.initSeq(e)
	}
	return p.exprToks(value)
}

// DiagAllocDType: an alloc_tensor whose dtype disagrees with its struct info.
var DiagAllocDType = lowCodes.Define("LOW010", "an alloc_tensor's dtype disagrees with its struct info")

// DiagAllocSize: an alloc_tensor with a negative or overflowing size.
var DiagAllocSize = lowCodes.Define("LOW011", "an alloc_tensor's size is negative, overflows or is not known")

// DiagUpperBound: a malformed tir_var_upper_bound or tir_non_negative_var attribute.
var DiagUpperBound = lowCodes.Define("LOW012", "a malformed tir_var_upper_bound or tir_non_negative_var attribute")

// createToken makes the prototype token of a builtin.alloc_tensor. An
// allocation whose struct info has no ShapeExpr (a shape variable) is not
// planned; TVM aborts on it.
func (p *funcPlan) createToken(blk *ir.BindingBlock, c *ir.Call, bind *ir.VarBinding) toks {
	span := bind.Span()
	if c.Span().IsValid() {
		span = c.Span()
	}
	ti, ok := c.StructInfo().(*ir.TensorInfo)
	if !ok || len(c.Args) < 4 {
		return toks{}
	}
	dt, ok := c.Args[1].(*ir.DataTypeImm)
	if !ok {
		return toks{}
	}
	if ti.DType.IsVoid() || ti.DType != dt.Value {
		p.errs.Add(span, DiagAllocDType, "R.builtin.alloc_tensor: dtype %s disagrees with the struct info %s", dt.Value, ir.FormatStructInfo(ti, nil))
		return toks{}
	}
	if vt, ok := bind.Var.StructInfo().(*ir.TensorInfo); ok && !vt.DType.IsVoid() && vt.DType != dt.Value {
		p.errs.Add(span, DiagAllocDType, "R.builtin.alloc_tensor of dtype %s is bound to %s annotated %s", dt.Value, bind.Var.Name, ir.FormatStructInfo(vt, nil))
		return toks{}
	}
	shape, ok := ti.Shape.(*ir.ShapeExpr)
	if !ok {
		return toks{}
	}
	bytes, size, ok := p.tokenBytes(shape.Values, dt.Value, span)
	if !ok {
		return toks{}
	}
	scope := "global"
	if s, ok := c.Args[3].(*ir.StringImm); ok {
		scope = s.Value
	}
	tk := &token{bytes: bytes, size: size, dtype: dt.Value, scope: scope, dev: c.Args[2], block: blk, end: -1}
	p.allocs.Set(c, tk)
	p.protos = append(p.protos, tk)
	return toks{leaf: tk}
}

// tokenBytes computes a token's byte count from the upper-bounded shape:
// const_coeff * product(symbolic dims), const_coeff being the element size
// times the constant dims (TVM's StorageToken constructor).
func (p *funcPlan) tokenBytes(dims []ir.PrimExpr, dt ir.DataType, span diag.Span) (ir.PrimExpr, int64, bool) {
	coeff := int64(dt.Bytes())
	var sym ir.PrimExpr
	for i, d := range dims {
		ub, overflow := p.bounds.upper(d)
		if overflow {
			p.errs.Add(span, DiagAllocSize, "R.builtin.alloc_tensor: the upper bound of dimension %d (%s) overflows int64", i, ir.FormatPrim(d, nil))
			return nil, 0, false
		}
		if c, ok := ir.IntValue(ub); ok {
			if c < 0 {
				p.errs.Add(span, DiagAllocSize, "R.builtin.alloc_tensor: dimension %d is %d, a negative size", i, c)
				return nil, 0, false
			}
			if c != 0 && coeff > math.MaxInt64/c {
				p.errs.Add(span, DiagAllocSize, "R.builtin.alloc_tensor: the size in bytes of shape %s overflows int64", formatDims(dims))
				return nil, 0, false
			}
			coeff *= c
			continue
		}
		if sym == nil {
			sym = ub
		} else {
			sym = ir.Mul(sym, ub)
		}
	}
	if sym == nil {
		return ir.I64(coeff), coeff, true
	}
	if coeff == 1 {
		return sym, -1, true
	}
	return ir.Mul(ir.I64(coeff), sym), -1, true
}

func formatDims(dims []ir.PrimExpr) string {
	return ir.FormatStructInfo(ir.ShapeInfoOf(dims...), nil)
}

// ---- walk 2: allocation ----

// classPool is one reuse class's released storages, ordered by constant
// size (-1 for symbolic ones) and then by release order, like TVM's
// std::multimap<int64_t, StorageToken>.
type classPool struct {
	items []*token // sorted by size; equal sizes in release order
}

func (cp *classPool) lowerBound(size int64) int {
	return sort.Search(len(cp.items), func(i int) bool { return cp.items[i].size >= size })
}

func (cp *classPool) upperBound(size int64) int {
	return sort.Search(len(cp.items), func(i int) bool { return cp.items[i].size > size })
}

func (cp *classPool) insert(tk *token) {
	i := cp.upperBound(tk.size)
	cp.items = append(cp.items, nil)
	copy(cp.items[i+1:], cp.items[i:])
	cp.items[i] = tk
}

func (cp *classPool) remove(i int) *token {
	tk := cp.items[i]
	cp.items = append(cp.items[:i], cp.items[i+1:]...)
	return tk
}

// matchRange is TVM's match_range_: a constant-size request considers
// released storages between size/16 and size*16 bytes.
const matchRange = 16

// requestReuse finds a released storage for the prototype (TVM's
// TokenAllocator1D::RequestReuse), or returns nil.
func (p *funcPlan) requestReuse(proto *token) *token {
	if proto.refs == 0 {
		return nil // never used: fresh storage (dead code, left to cleanup passes)
	}
	cp := p.pool[classKey{proto.scope, proto.dtype}]
	if cp == nil {
		return nil
	}
	if proto.size < 0 {
		for i := cp.lowerBound(-1); i < cp.upperBound(-1); i++ {
			if p.bounds.an.CanProveEqual(proto.bytes, cp.items[i].bytes) {
				return cp.remove(i)
			}
		}
		return nil
	}
	size := proto.size
	begin := cp.lowerBound(size / matchRange)
	mid := cp.lowerBound(size)
	hi := size * matchRange
	if size > math.MaxInt64/matchRange {
		hi = math.MaxInt64
	}
	end := cp.upperBound(hi)
	if mid < end {
		return cp.remove(mid) // the smallest released storage that is large enough
	}
	if mid > begin {
		tk := cp.remove(mid - 1) // the largest smaller one, grown
		tk.size = size
		tk.bytes = ir.I64(size)
		return tk
	}
	return nil
}

// allocFunction runs the allocate walk: every prototype gets a storage.
func (p *funcPlan) allocFunction() {
	p.pool = map[classKey]*classPool{}
	if seq, ok := p.fn.Body.(*ir.SeqExpr); ok {
		p.allocSeq(seq)
	}
}

func (p *funcPlan) allocSeq(seq *ir.SeqExpr) {
	for _, blk := range seq.Blocks {
		var created []*token
		for _, bind := range blk.Bindings {
			p.index++
			vb, ok := bind.(*ir.VarBinding)
			if !ok {
				continue
			}
			switch e := vb.Value.(type) {
			case *ir.Call:
				if e.Op == op.BuiltinAllocTensor {
					proto, _ := p.allocs.Get(e)
					if proto == nil || proto.discarded {
						continue
					}
					p.allocate(proto)
					created = append(created, proto)
					continue
				}
				if isAliasOp(e.Op) {
					continue
				}
				for _, a := range e.Args {
					p.exprToks(a).each(func(proto *token) {
						st := proto.storage
						if st == nil || st.refs <= 0 {
							return
						}
						st.refs--
						if st.refs == 0 {
							proto.end = p.index
							p.release(st)
						}
					})
				}
			case *ir.If:
				for _, br := range []ir.Expr{e.Then, e.Else} {
					if s, ok := br.(*ir.SeqExpr); ok {
						p.enterBranch()
						p.allocSeq(s)
						p.exitBranch()
					}
				}
			}
		}
		// Tokens never used (or, defensively, never released) live to the
		// end of their block.
		for _, proto := range created {
			if proto.end < 0 {
				proto.end = p.index
			}
		}
	}
}

func (p *funcPlan) allocate(proto *token) {
	proto.start = p.index
	st := p.requestReuse(proto)
	if st == nil {
		st = proto
		if len(p.branches) > 0 {
			st.branch = p.branches[len(p.branches)-1]
		}
	} else {
		st.refs += proto.refs
	}
	proto.storage = st
}

func (p *funcPlan) release(st *token) {
	key := classKey{st.scope, st.dtype}
	cp := p.pool[key]
	if cp == nil {
		cp = &classPool{}
		p.pool[key] = cp
	}
	cp.insert(st)
}

// enterBranch and exitBranch bracket an If branch. Storages created inside
// a branch are dropped from the pool when it ends: their alloc_storage is
// bound inside the branch, so a later reuse outside it would name a
// variable out of scope (TVM shares the pool and can emit such IR).
func (p *funcPlan) enterBranch() {
	p.branchID++
	p.branches = append(p.branches, p.branchID)
}

func (p *funcPlan) exitBranch() {
	id := p.branches[len(p.branches)-1]
	p.branches = p.branches[:len(p.branches)-1]
	for _, cp := range p.pool {
		kept := cp.items[:0]
		for _, tk := range cp.items {
			if tk.branch != id {
				kept = append(kept, tk)
			}
		}
		cp.items = kept
	}
}

// planned returns the prototypes that got storage, in program order.
func (p *funcPlan) planned() []*token {
	var out []*token
	for _, tk := range p.protos {
		if !tk.discarded && tk.storage != nil {
			out = append(out, tk)
		}
	}
	return out
}
