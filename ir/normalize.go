package ir

import (
	"fmt"
	"strings"
)

// This file is the expression half of the Builder: Normalize and
// NormalizeArgument, struct info inference per node kind, scopes (function
// bodies, If branches) and block normalization.
//
// Recursion follows expression nesting only: a SeqExpr's bindings are
// visited in a loop, so depth never grows with the number of bindings.

// maxRevisit bounds how often an op's Normalize hook may rewrite a call
// before the builder gives up (a hook that never reaches a fixpoint is a bug).
const maxRevisit = 16

// Normalize fills struct info bottom-up and puts e in A-normal form,
// emitting bindings for nested non-leaf operands into the current block.
// The result itself may be a non-leaf (a Call, an If, ...): bind it with
// Emit or EmitBinding. Unchanged subtrees are returned as is.
func (b *Builder) Normalize(e Expr) Expr {
	switch e := e.(type) {
	case *Var:
		if e.sinfo == nil {
			b.errorAt(e, DiagUndefined, "variable %s has no struct info (used before its definition?)", e.Name)
		}
		return e
	case *Constant:
		if e.sinfo == nil {
			e.sinfo = constantInfo(e)
		}
		return e
	case *ShapeExpr:
		if e.sinfo == nil {
			e.sinfo = ShapeInfoOf(e.Values...)
		}
		return e
	case *PrimValue:
		if e.sinfo == nil {
			e.sinfo = PrimInfoOf(e.Value)
		}
		return e
	case *StringImm:
		if e.sinfo == nil {
			e.sinfo = Object()
		}
		return e
	case *DataTypeImm:
		if e.sinfo == nil {
			e.sinfo = Object()
		}
		return e
	case *GlobalVar:
		if e.sinfo == nil {
			if s, ok := b.globalInfo(e); ok {
				e.sinfo = s
			} else {
				b.errorAt(e, DiagUndefined, "unknown global function @%s", e.Name)
			}
		}
		return e
	case *ExternFunc:
		if e.sinfo == nil {
			e.sinfo = ExternFuncInfo()
		}
		return e
	case *Op:
		return e
	case *Tuple:
		return b.normalizeTuple(e)
	case *TupleGetItem:
		return b.normalizeTupleGetItem(e)
	case *Call:
		return b.normalizeCall(e)
	case *If:
		return b.normalizeIf(e)
	case *SeqExpr:
		return b.normalizeSeq(e, nil)
	case *Function:
		return b.normalizeFunction(e)
	case nil:
		b.Errorf(b.span, DiagInternal, "internal: normalizing a nil expression")
		return NewTuple()
	}
	b.errorAt(e, DiagInternal, "internal: cannot normalize expression of type %T", e)
	return e
}

// NormalizeArgument normalizes an operand position (call argument, tuple
// field, If condition, SeqExpr result): anything that is not a leaf or a
// tuple of leaves is bound to a fresh var in the current block. The same
// operand object is bound only once per block.
func (b *Builder) NormalizeArgument(e Expr) Expr {
	if IsLeaf(e) {
		// A leaf normalizes to itself and is never hoisted, so it is
		// never in the memo: most operands skip the lookup.
		return b.Normalize(e)
	}
	fr := b.curBlock()
	if fr != nil && fr.memo != nil {
		if v, ok := fr.memo[e]; ok {
			return v
		}
	}
	post := b.Normalize(e)
	if IsLeafOrTuple(post) { // a tuple whose fields were just hoisted stays
		return post
	}
	fr = b.mustBlock("hoisting a nested expression")
	name := "gv"
	if fr.dataflow {
		name = "lv"
	}
	v := b.emitFresh(post, name, fr.dataflow)
	if fr.memo == nil {
		fr.memo = map[Expr]*Var{}
	}
	fr.memo[e] = v
	return v
}

// normalizeArgs normalizes each operand, copying the slice only when one
// changes.
func (b *Builder) normalizeArgs(args []Expr) ([]Expr, bool) {
	return mapList(args, b.NormalizeArgument)
}

func (b *Builder) normalizeTuple(t *Tuple) Expr {
	fields, changed := b.normalizeArgs(t.Fields)
	if changed {
		nt := &Tuple{Fields: fields}
		nt.span = t.span
		t = nt
	}
	if t.sinfo == nil {
		infos := make([]StructInfo, len(t.Fields))
		for i, f := range t.Fields {
			infos[i] = infoOrObject(f)
		}
		t.sinfo = NewTupleInfo(infos...)
	}
	return t
}

func (b *Builder) normalizeTupleGetItem(g *TupleGetItem) Expr {
	tup := b.NormalizeArgument(g.Tuple)
	if tup != g.Tuple {
		ng := &TupleGetItem{Tuple: tup, Index: g.Index}
		ng.span = g.span
		g = ng
	}
	if g.sinfo == nil {
		g.sinfo = b.tupleGetItemInfo(g)
	}
	return g
}

func (b *Builder) tupleGetItemInfo(g *TupleGetItem) StructInfo {
	switch s := g.Tuple.StructInfo().(type) {
	case *TupleInfo:
		if g.Index < 0 || g.Index >= len(s.Fields) {
			b.errorAt(g, DiagInference, "tuple index %d out of range for %s", g.Index, FormatStructInfo(s, nil))
			return failedInfo
		}
		return s.Fields[g.Index]
	case nil:
		return failedInfo // reported already
	case *ObjectInfo:
		// Unknown (a failed inference, reported already, or an opaque
		// object): nothing to add.
		if s.failed {
			return failedInfo
		}
		return Object()
	default:
		b.errorAt(g, DiagInference, "indexing [%d] into a non-tuple value of struct info %s", g.Index, FormatStructInfo(s, nil))
		return failedInfo
	}
}

func (b *Builder) normalizeCall(c *Call) Expr {
	orig := c
	op := b.NormalizeArgument(c.Op)
	args, changed := b.normalizeArgs(c.Args)
	if changed || op != c.Op {
		nc := &Call{Op: op, Args: args, Attrs: c.Attrs, SInfoArgs: c.SInfoArgs}
		nc.span = c.span
		c = nc
	}
	if c.sinfo != nil {
		return c
	}
	if c == orig && c != b.owned {
		// Never fill in the caller's node (unless EmitVar's caller gave it
		// away, see Builder.owned): its Normalize hook may rewrite
		// it, and a later normalization would take the input's call,
		// struct info now set, for canonical (found by the contract
		// audit: Normalize mutated its input).
		nc := *c
		c = &nc
	}
	nerr := len(b.errs)
	c.sinfo = b.inferCall(c)
	if len(b.errs) != nerr {
		return c
	}
	o, ok := c.Op.(*Op)
	if !ok {
		return c
	}
	if o.Normalize != nil {
		n, err := b.runNormalizeHook(o, c)
		switch {
		case err != nil:
			b.errorAt(c, DiagInference, "%s", opError(o, err))
			return c
		case n != nil && n != Expr(c):
			if b.revisit >= maxRevisit {
				b.errorAt(c, DiagInternal, "internal: the Normalize hook of %s does not reach a fixpoint", o.Name)
				return c
			}
			b.revisit++
			defer func() { b.revisit-- }()
			return b.Normalize(n)
		}
	}
	if o.Validate != nil {
		if err := b.runValidateHook(o, c); err != nil {
			b.errorAt(c, DiagValidate, "%s", opError(o, err))
		}
	}
	return c
}

// failedInfo is the struct info of a call whose inference failed: R.Object
// to everything that reads it, and a mark (ObjectInfo.failed) that keeps a
// call using the result from reporting the failure again as its own, say
// "x must be a tensor, got R.Object" at every later unannotated use.
var failedInfo = &ObjectInfo{failed: true}

// failedOperand reports whether operand a's struct info is missing or
// comes from a failed inference (directly or as a field of a tuple
// operand, as in R.concat((lv, x))): its problem was reported already.
func failedOperand(a Expr) bool {
	if _, isOp := a.(*Op); isOp {
		return false
	}
	switch s := a.StructInfo().(type) {
	case nil:
		return true
	case *ObjectInfo:
		return s.failed
	case *TupleInfo:
		for _, f := range s.Fields {
			if o, ok := f.(*ObjectInfo); ok && o.failed {
				return true
			}
		}
	}
	return false
}

// inferCall computes the struct info of a call whose operands are
// normalized. Failures are reported and yield failedInfo; a call with a
// failed operand yields failedInfo without a report.
func (b *Builder) inferCall(c *Call) StructInfo {
	for _, a := range c.Args {
		if failedOperand(a) {
			return failedInfo
		}
	}
	if failedOperand(c.Op) {
		return failedInfo
	}
	if o, ok := c.Op.(*Op); ok {
		if o.Infer == nil {
			b.errorAt(c, DiagInternal, "internal: op %s has no struct info inference", o.Name)
			return failedInfo
		}
		s, err := b.runInferHook(o, c)
		if err != nil {
			b.errorAt(c, DiagInference, "%s", opError(o, err))
			return failedInfo
		}
		if s == nil {
			b.errorAt(c, DiagInternal, "internal: struct info inference of %s returned nothing", o.Name)
			return failedInfo
		}
		if o.SInfoArgs == NoSInfoArgs {
			s = inheritVDevice(c, s)
		}
		return s
	}
	var callee StructInfo
	if gv, ok := c.Op.(*GlobalVar); ok {
		// Resolve through the module: the GlobalVar's cached info may be
		// stale when a pass changed the callee's signature.
		if s, ok := b.globalInfo(gv); ok {
			callee = s
		} else {
			callee = gv.sinfo
		}
		if callee == nil {
			return failedInfo // reported when the GlobalVar was normalized
		}
	} else {
		callee = c.Op.StructInfo()
	}
	fi, ok := callee.(*FuncInfo)
	if !ok {
		if callee != nil {
			b.errorAt(c, DiagInference, "callee of struct info %s is not callable", FormatStructInfo(callee, nil))
		}
		return failedInfo
	}
	var (
		s   StructInfo
		err error
	)
	if fi.Derive != nil {
		s, err = fi.Derive(c)
	} else {
		s, err = DeriveCallRetStructInfo(fi, c, &b.ctx)
	}
	if err != nil {
		b.errorAt(c, DiagInference, "call to %s: %v", calleeName(c.Op), err)
		return failedInfo
	}
	if s == nil {
		return Object()
	}
	return s
}

func calleeName(e Expr) string {
	switch e := e.(type) {
	case *GlobalVar:
		return "@" + e.Name
	case *ExternFunc:
		return fmt.Sprintf("%q", e.Symbol)
	case *Var:
		return e.Name
	}
	return fmt.Sprintf("%T", e)
}

func opError(o *Op, err error) string {
	msg := err.Error()
	if strings.Contains(msg, o.Name) {
		return msg
	}
	return o.Name + ": " + msg
}

// The hooks belong to other code; a panic in one is a phasec bug, reported
// as an internal diagnostic so the rest of the module still gets checked.

func (b *Builder) runInferHook(o *Op, c *Call) (s StructInfo, err error) {
	defer func() {
		if r := recover(); r != nil {
			s, err = nil, fmt.Errorf("internal: struct info inference panicked: %v", r)
		}
	}()
	return o.Infer(&b.ctx, c)
}

func (b *Builder) runNormalizeHook(o *Op, c *Call) (e Expr, err error) {
	defer func() {
		if r := recover(); r != nil {
			e, err = nil, fmt.Errorf("internal: Normalize hook panicked: %v", r)
		}
	}()
	return o.Normalize(&b.ctx, c)
}

func (b *Builder) runValidateHook(o *Op, c *Call) (err error) {
	defer func() {
		if r := recover(); r != nil {
			err = fmt.Errorf("internal: Validate hook panicked: %v", r)
		}
	}()
	return o.Validate(&b.ctx, c)
}

func (b *Builder) globalInfo(gv *GlobalVar) (StructInfo, bool) {
	if b.mod != nil {
		if fn, ok := b.mod.Lookup(gv.Name); ok {
			if e, ok := b.globals[gv.Name]; ok && e.fn == fn {
				return e.sinfo, true
			}
			if s, ok := b.mod.GlobalInfo(gv.Name); ok {
				if b.globals == nil {
					b.globals = map[string]globalInfoEntry{}
				}
				b.globals[gv.Name] = globalInfoEntry{fn, s}
				return s, true
			}
		}
	}
	if gv.sinfo != nil {
		return gv.sinfo, true
	}
	return nil, false
}

func (b *Builder) normalizeIf(n *If) Expr {
	cond := b.NormalizeArgument(n.Cond)
	then := b.normalizeScope(n.Then, nil, false)
	els := b.normalizeScope(n.Else, nil, false)
	if cond != n.Cond || then != n.Then || els != n.Else {
		nn := &If{Cond: cond, Then: then, Else: els}
		nn.span = n.span
		n = nn
	}
	if n.sinfo == nil {
		n.sinfo = StructInfoLCA(infoOrObject(then), infoOrObject(els))
	}
	return n
}

func (b *Builder) normalizeFunction(f *Function) Expr {
	for _, p := range f.Params {
		if p.sinfo == nil {
			b.errorAt(p, DiagUndefined, "parameter %s has no struct info annotation", p.Name)
			p.sinfo = Object()
		}
	}
	body := b.normalizeScope(f.Body, f.Params, true)
	ret := f.Ret
	bodyInfo := infoOrObject(body)
	// After an error, R.Object stands in for what could not be inferred:
	// comparing the return annotation with it would only add noise.
	_, bodyFailed := bodyInfo.(*ObjectInfo)
	bodyFailed = bodyFailed && len(b.errs) > 0
	// TVM's Function constructor (src/relax/ir/expr.cc) keeps a return
	// annotation the body does not provably satisfy: R.Callable over a
	// closure that lowering made an R.Object (L1) is fine; only value sets
	// that cannot meet (L0) are reported.
	if ret == nil {
		ret = bodyInfo
	} else if !bodyFailed && StructInfoBaseCheck(ret, bodyInfo) == FailL0 {
		span := f.Span()
		if !span.IsValid() {
			span = body.Span()
		}
		b.Errorf(span, DiagAnnotation, "return annotation %s contradicts the body's inferred %s",
			FormatStructInfo(ret, nil), FormatStructInfo(bodyInfo, nil))
	}
	if body != f.Body || ret != f.Ret {
		nf := &Function{Params: f.Params, Body: body, Ret: ret, Pure: f.Pure, Attrs: f.Attrs}
		nf.span = f.span
		f = nf
	}
	if f.sinfo == nil {
		f.sinfo = FuncInfoOf(f)
	}
	return f
}

// normalizeScope normalizes a function body (fn, with params) or an If
// branch in its own scope; the result is always a SeqExpr.
func (b *Builder) normalizeScope(body Expr, params []*Var, fn bool) *SeqExpr {
	if seq, ok := body.(*SeqExpr); ok && seq.sinfo != nil {
		if _, done := b.scopeDone[seq]; done {
			return seq
		}
	}
	if fn {
		b.BeginScope(params)
	} else {
		b.BeginInnerScope()
	}
	fr := b.scopes[len(b.scopes)-1]
	var out *SeqExpr
	if seq, ok := body.(*SeqExpr); ok {
		out = b.normalizeSeq(seq, fr)
	} else {
		b.BeginBlock(false)
		post := b.NormalizeArgument(body)
		var blocks []*BindingBlock
		if blk := b.EndBlock(); len(blk.Bindings) > 0 {
			blocks = []*BindingBlock{blk}
		}
		out = &SeqExpr{Blocks: blocks, Body: post}
		out.span = body.Span()
		out.sinfo = b.eraseLeaving(fr, infoOrObject(post))
	}
	b.EndScope()
	b.markScope(out)
	return out
}

// normalizeSeq normalizes a SeqExpr's blocks and result. scope is the scope
// the SeqExpr is the root of (its info is erased to what is defined outside),
// or nil for a SeqExpr that is about to be flattened into its context.
func (b *Builder) normalizeSeq(seq *SeqExpr, scope *scopeFrame) *SeqExpr {
	var blocks []*BindingBlock // nil until a block differs
	for i, blk := range seq.Blocks {
		b.beginBlockLike(blk)
		for _, bind := range blk.Bindings {
			b.EmitBinding(bind)
		}
		nb := b.endBlockLike(blk)
		if nb != blk && blocks == nil {
			blocks = make([]*BindingBlock, i, len(seq.Blocks)+1)
			copy(blocks, seq.Blocks[:i])
		}
		if blocks != nil {
			blocks = append(blocks, nb)
		}
	}
	b.BeginBlock(false)
	body := b.NormalizeArgument(seq.Body)
	if tail := b.EndBlock(); len(tail.Bindings) > 0 {
		if blocks == nil {
			blocks = append([]*BindingBlock(nil), seq.Blocks...)
		}
		blocks = append(blocks, tail)
	}
	if blocks == nil {
		blocks = seq.Blocks
	}
	blocks, merged := NormalizeBlocks(blocks)
	if merged || body != seq.Body || !sameBlocks(blocks, seq.Blocks) {
		ns := &SeqExpr{Blocks: blocks, Body: body}
		ns.span = seq.span
		seq = ns
	}
	if seq.sinfo == nil {
		info := infoOrObject(body)
		if scope != nil {
			info = b.eraseLeaving(scope, info)
		}
		seq.sinfo = info
	}
	return seq
}

func sameBlocks(a, b []*BindingBlock) bool {
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

// NormalizeBlocks drops empty blocks, merges adjacent blocks of the same
// kind and flattens bindings whose value is a SeqExpr (splicing its blocks
// before the binding, which then binds the SeqExpr's result). It returns
// blocks itself, and false, when nothing needed doing.
func NormalizeBlocks(blocks []*BindingBlock) ([]*BindingBlock, bool) {
	if !needsBlockNormalization(blocks) {
		return blocks, false
	}
	var (
		out []*BindingBlock
		cur *BindingBlock
	)
	emit := func(dataflow bool, binds ...Binding) {
		if len(binds) == 0 {
			return
		}
		if cur == nil || cur.Dataflow != dataflow {
			cur = &BindingBlock{Dataflow: dataflow}
			out = append(out, cur)
		}
		cur.Bindings = append(cur.Bindings, binds...)
	}
	for _, blk := range blocks {
		start := cur
		for _, bind := range blk.Bindings {
			seq, ok := bindingValue(bind).(*SeqExpr)
			if !ok {
				emit(blk.Dataflow, bind)
				continue
			}
			// The nested blocks are normalized already (no SeqExpr values).
			for _, inner := range seq.Blocks {
				emit(inner.Dataflow, inner.Bindings...)
			}
			emit(blk.Dataflow, withValue(bind, seq.Body))
		}
		if cur != start && cur != nil && !cur.span.IsValid() {
			cur.span = blk.span
		}
	}
	return out, true
}

func needsBlockNormalization(blocks []*BindingBlock) bool {
	for i, blk := range blocks {
		if len(blk.Bindings) == 0 || (i > 0 && blocks[i-1].Dataflow == blk.Dataflow) {
			return true
		}
		for _, bind := range blk.Bindings {
			if _, ok := bindingValue(bind).(*SeqExpr); ok {
				return true
			}
		}
	}
	return false
}

func bindingValue(bind Binding) Expr {
	switch bd := bind.(type) {
	case *VarBinding:
		return bd.Value
	case *MatchCast:
		return bd.Value
	}
	return nil
}

// withValue returns a copy of bind with its value replaced.
func withValue(bind Binding, value Expr) Binding {
	switch bd := bind.(type) {
	case *VarBinding:
		nb := &VarBinding{Var: bd.Var, Value: value}
		nb.span = bd.span
		return nb
	case *MatchCast:
		nb := &MatchCast{Var: bd.Var, Value: value, SInfo: bd.SInfo}
		nb.span = bd.span
		return nb
	}
	return bind
}

// constantInfo is the struct info of a tensor literal: its exact shape and
// dtype.
func constantInfo(c *Constant) StructInfo {
	if c.Data == nil {
		return Object()
	}
	dims := make([]PrimExpr, len(c.Data.Shape))
	for i, d := range c.Data.Shape {
		dims[i] = I64(d)
	}
	return TensorInfoOf(c.Data.DType, dims...)
}

// ExternFuncInfo is the struct info of an ExternFunc (a packed function
// resolved at run time): opaque, impure, returning what the call's
// sinfo_args declare (see InferFromSInfoArgs).
func ExternFuncInfo() *FuncInfo {
	return &FuncInfo{Opaque: true, Ret: Object(), Pure: false, Derive: InferFromSInfoArgs}
}

// InferFromSInfoArgs is TVM's infer_by_sinfo_args: no sinfo_args give
// R.Object, one gives itself, several give a tuple of them.
func InferFromSInfoArgs(c *Call) (StructInfo, error) {
	switch len(c.SInfoArgs) {
	case 0:
		return Object(), nil
	case 1:
		return c.SInfoArgs[0], nil
	}
	return NewTupleInfo(c.SInfoArgs...), nil
}
