package ir

import (
	"fmt"
	"slices"

	"github.com/phasec/phasec/diag"
)

// Builder is the normalizing block builder every pass emits through (TVM's
// BlockBuilder). It keeps two stacks:
//
//   - scopes: function bodies (BeginScope) and If branches (BeginInnerScope).
//     A scope records which symbolic variables are defined in it (by the
//     function's parameters and by MatchCast bindings) so that struct info
//     leaving the scope can be erased to what is still well defined outside.
//   - blocks: binding blocks (dataflow or not) being filled in the current
//     scope. Emit* append bindings to the innermost block; normalization
//     hoists nested non-leaf operands into fresh bindings of that block.
//
// Normalize establishes the invariants listed in the package documentation
// (A-normal form, SeqExpr scopes, flat and merged blocks, struct info on
// every expression). Problems in the input (failed inference, contradicting
// annotations, unknown globals) become diagnostics and the offending
// expression gets R.Object so building continues; misuse of the Builder API
// itself (emitting with no open block, unbalanced scopes) is a bug in the
// caller and panics.
//
// Nodes are filled in place only where nothing was known before: a node or
// variable whose struct info is nil gets it set exactly once ("fill once").
// Any structural change (a hoisted operand, a flattened block) produces new
// nodes; unchanged subtrees are returned as the same pointers.
type Builder struct {
	mod  *Module
	ctx  InferCtx
	errs diag.List

	scopes []*scopeFrame
	blocks []*blockFrame

	// span is the span of the binding currently being normalized; it
	// positions diagnostics about nodes that carry no span of their own.
	span diag.Span
	// scopeDone holds the scope SeqExprs this builder produced, so that
	// normalizing an enclosing If or Function again does not re-walk them.
	scopeDone map[*SeqExpr]struct{}
	// revisit guards against op Normalize hooks that never reach a fixpoint.
	revisit int
	// globals caches the struct info of each global by name, with the
	// function it was computed from (the module may gain or replace
	// functions while the builder works, as LegalizeOps does): every call
	// of one PrimFunc then shares one FuncInfo instead of allocating its
	// own (~0.5 KB per call).
	globals map[string]globalInfoEntry
	// owned is the call EmitVar's caller handed over with its value:
	// normalizeCall completes it in place rather than copying it.
	owned *Call
}

type globalInfoEntry struct {
	fn    BaseFunc
	sinfo StructInfo
}

// normCodes is the family of the codes the Builder reports.
var normCodes = diag.NewFamily("NORM", "the IR normalizer (ir.Builder): struct info inference and annotations, as a module is built or rewritten")

// Diagnostic codes the Builder reports.
var (
	DiagInference  = normCodes.Define("NORM001", "struct info inference of a call failed")
	DiagAnnotation = normCodes.Define("NORM002", "an annotation contradicts the inferred struct info")
	DiagUndefined  = normCodes.Define("NORM003", "a variable without struct info, or an unknown global")
	DiagValidate   = normCodes.Define("NORM004", "an op's Validate hook rejected a call")
	DiagInternal   = normCodes.Define("NORM900", "a bug in phasec found while normalizing: an op without struct info inference, a Normalize hook without a fixpoint")
)

type scopeFrame struct {
	fn     bool        // a function scope (symbolic vars do not cross it)
	parent *scopeFrame // the enclosing scope, for inner scopes
	params []*Var
	// entrySyms are the symbolic vars the function's parameters define;
	// syms are those MatchCast bindings in this scope define.
	entrySyms map[*PrimVar]struct{}
	syms      map[*PrimVar]struct{}
	// blockDepth is len(b.blocks) when the scope began.
	blockDepth int
}

type blockFrame struct {
	dataflow bool
	// While the emitted bindings equal orig[:same], nothing is copied;
	// bindings is materialized at the first divergence.
	orig     []Binding
	same     int
	diverged bool
	bindings []Binding
	// memo maps an operand object already hoisted in this block to its var.
	memo map[Expr]*Var
}

// NewBuilder returns a builder whose calls resolve globals in mod (may be nil).
func NewBuilder(mod *Module) *Builder {
	return &Builder{mod: mod, ctx: InferCtx{Module: mod}}
}

// Module returns the module globals resolve against.
func (b *Builder) Module() *Module { return b.mod }

// Diagnostics returns the errors found while normalizing (inference failures,
// contradicting annotations), each with the span of the offending node.
func (b *Builder) Diagnostics() diag.List { return b.errs }

// Errorf records a diagnostic at span (or, when span is unknown, at the
// binding being normalized). Passes emitting through the builder may use it.
func (b *Builder) Errorf(span diag.Span, code diag.Code, format string, args ...any) {
	if !span.IsValid() {
		span = b.span
	}
	b.errs.Add(span, code, format, args...)
}

func (b *Builder) errorAt(e Expr, code diag.Code, format string, args ...any) {
	var span diag.Span
	if e != nil {
		span = e.Span()
	}
	b.Errorf(span, code, format, args...)
}

// BeginScope opens a function-body scope; params are in scope and the
// symbolic variables their struct info defines are visible in it. Symbolic
// variables of enclosing scopes are not (they never cross a function).
func (b *Builder) BeginScope(params []*Var) {
	fr := &scopeFrame{fn: true, params: params, blockDepth: len(b.blocks)}
	if len(b.scopes) > 0 {
		fr.parent = b.scopes[len(b.scopes)-1]
	}
	for _, p := range params {
		if p.StructInfo() == nil {
			continue
		}
		for _, v := range DefinableSymVars(p.StructInfo()) {
			if fr.entrySyms == nil {
				fr.entrySyms = map[*PrimVar]struct{}{}
			}
			fr.entrySyms[v] = struct{}{}
		}
	}
	b.scopes = append(b.scopes, fr)
}

// BeginInnerScope opens an If-branch scope: everything defined in the
// enclosing scope so far stays visible.
func (b *Builder) BeginInnerScope() {
	fr := &scopeFrame{blockDepth: len(b.blocks)}
	if len(b.scopes) > 0 {
		fr.parent = b.scopes[len(b.scopes)-1]
	}
	b.scopes = append(b.scopes, fr)
}

// EndScope closes the innermost scope. Every block begun in it must have
// ended.
func (b *Builder) EndScope() {
	if len(b.scopes) == 0 {
		panic("ir.Builder: EndScope without BeginScope")
	}
	fr := b.scopes[len(b.scopes)-1]
	if len(b.blocks) != fr.blockDepth {
		panic("ir.Builder: EndScope with an unfinished binding block")
	}
	b.scopes = b.scopes[:len(b.scopes)-1]
}

// BeginBlock starts a binding block (dataflow or not) in the current scope.
func (b *Builder) BeginBlock(dataflow bool) {
	b.blocks = append(b.blocks, &blockFrame{dataflow: dataflow, diverged: true})
}

// ReserveBindings makes room for n more bindings in the current block: a
// hint from a caller that knows the block's size (the parser), so that a
// block of a million bindings does not grow its slice by doubling.
func (b *Builder) ReserveBindings(n int) {
	if fr := b.curBlock(); fr != nil && fr.diverged {
		fr.bindings = slices.Grow(fr.bindings, n)
	}
}

// beginBlockLike starts a block that is expected to reproduce orig; while
// it does, no binding slice is built and EndBlock returns orig itself.
func (b *Builder) beginBlockLike(orig *BindingBlock) {
	b.blocks = append(b.blocks, &blockFrame{dataflow: orig.Dataflow, orig: orig.Bindings})
}

// EndBlock ends the current block and returns it (possibly with no
// bindings: callers drop empty blocks, FinishScope does so itself).
func (b *Builder) EndBlock() *BindingBlock {
	fr := b.popBlock()
	if !fr.diverged {
		fr.bindings = fr.orig[:fr.same:fr.same]
	}
	return &BindingBlock{Bindings: fr.bindings, Dataflow: fr.dataflow}
}

// endBlockLike ends a block begun with beginBlockLike(orig), returning orig
// itself when the emitted bindings are exactly orig's.
func (b *Builder) endBlockLike(orig *BindingBlock) *BindingBlock {
	fr := b.popBlock()
	if !fr.diverged {
		if fr.same == len(fr.orig) {
			return orig
		}
		fr.bindings = fr.orig[:fr.same:fr.same]
	}
	nb := &BindingBlock{Bindings: fr.bindings, Dataflow: fr.dataflow}
	nb.span = orig.span
	return nb
}

func (b *Builder) popBlock() *blockFrame {
	fr := b.curBlock()
	if fr == nil {
		panic("ir.Builder: EndBlock without BeginBlock")
	}
	b.blocks = b.blocks[:len(b.blocks)-1]
	return fr
}

// InDataflowBlock reports whether the innermost open block is a dataflow block.
func (b *Builder) InDataflowBlock() bool {
	fr := b.curBlock()
	return fr != nil && fr.dataflow
}

func (b *Builder) curBlock() *blockFrame {
	if len(b.blocks) == 0 {
		return nil
	}
	fr := b.blocks[len(b.blocks)-1]
	if len(b.scopes) > 0 && len(b.blocks) <= b.scopes[len(b.scopes)-1].blockDepth {
		return nil // the open block belongs to an enclosing scope
	}
	return fr
}

func (b *Builder) mustBlock(what string) *blockFrame {
	fr := b.curBlock()
	if fr == nil {
		panic("ir.Builder: " + what + " outside a binding block (call BeginBlock first)")
	}
	return fr
}

func (fr *blockFrame) append(bind Binding) {
	if !fr.diverged {
		if fr.same < len(fr.orig) && fr.orig[fr.same] == bind {
			fr.same++
			return
		}
		fr.diverged = true
		fr.bindings = make([]Binding, fr.same, max(len(fr.orig)+1, 4))
		copy(fr.bindings, fr.orig[:fr.same])
	}
	fr.bindings = append(fr.bindings, bind)
}

// Emit normalizes value and binds it to a fresh var (a dataflow var inside a
// dataflow block) named name.
func (b *Builder) Emit(value Expr, name string) *Var {
	fr := b.mustBlock("Emit")
	return b.emitFresh(value, name, fr.dataflow)
}

// EmitOutput is Emit with a non-dataflow var: an output of a dataflow block.
func (b *Builder) EmitOutput(value Expr, name string) *Var {
	b.mustBlock("EmitOutput")
	return b.emitFresh(value, name, false)
}

func (b *Builder) emitFresh(value Expr, name string, dataflow bool) *Var {
	v := &Var{Name: name, Dataflow: dataflow}
	bind := &VarBinding{Var: v, Value: value}
	bind.span = value.Span()
	b.EmitBinding(bind)
	return v
}

// EmitMatchCast emits "name = R.match_cast(value, sinfo)"; the new var has
// exactly sinfo, and the symbolic vars sinfo introduces become defined.
func (b *Builder) EmitMatchCast(value Expr, sinfo StructInfo, name string) *Var {
	fr := b.mustBlock("EmitMatchCast")
	v := &Var{Name: name, Dataflow: fr.dataflow}
	bind := &MatchCast{Var: v, Value: value, SInfo: sinfo}
	bind.span = value.Span()
	b.EmitBinding(bind)
	return v
}

// EmitBinding normalizes the binding's value and appends the binding. A var
// without struct info gets the value's; an annotated var keeps its
// annotation, which must not contradict the inferred info (an unprovable
// symbolic difference is allowed). A value that normalizes to a SeqExpr is
// flattened into the block when its blocks have the block's kind (otherwise
// the enclosing SeqExpr's block normalization splits and flattens it).
func (b *Builder) EmitBinding(bind Binding) {
	fr := b.mustBlock("EmitBinding")
	saved := b.span
	if bind.Span().IsValid() {
		b.span = bind.Span()
	}
	defer func() { b.span = saved }()
	nerr := len(b.errs)

	switch bd := bind.(type) {
	case *VarBinding:
		bind = b.normalizeVarBinding(fr, bd.Var, bd.Value, bd.span, bd, nerr)
	case *MatchCast:
		val := b.Normalize(bd.Value)
		v := bd.Var
		if v.StructInfo() == nil {
			v.SetStructInfo(bd.SInfo)
		}
		b.defineSyms(bd.SInfo)
		if val != bd.Value {
			nb := &MatchCast{Var: v, Value: val, SInfo: bd.SInfo}
			nb.span = bd.span
			bind = nb
		}
	default:
		panic(fmt.Sprintf("ir.Builder: unknown binding type %T", bind))
	}
	fr.append(bind)
}

// EmitVar is EmitBinding(NewVarBinding(v, value)) for a binding spanning
// span, allocating only the binding it appends: the parser binds every
// statement of a module through it. The caller gives value away: a call
// without struct info is completed in place, not copied as Normalize does,
// so the caller must not use value again.
func (b *Builder) EmitVar(v *Var, value Expr, span diag.Span) {
	fr := b.mustBlock("EmitVar")
	saved, savedOwned := b.span, b.owned
	if span.IsValid() {
		b.span = span
	}
	if c, ok := value.(*Call); ok {
		b.owned = c
	}
	defer func() { b.span, b.owned = saved, savedOwned }()
	fr.append(b.normalizeVarBinding(fr, v, value, span, nil, len(b.errs)))
}

// normalizeVarBinding normalizes "v = value" for EmitBinding and EmitVar: it
// returns orig when normalization kept value (and orig is not nil), else a
// new binding. nerr is the error count before the binding.
func (b *Builder) normalizeVarBinding(fr *blockFrame, v *Var, value Expr, span diag.Span, orig *VarBinding, nerr int) Binding {
	val := b.Normalize(value)
	info := infoOrObject(val)
	if v.StructInfo() == nil {
		v.SetStructInfo(info)
	} else if len(b.errs) == nerr {
		b.checkAnnotation(v.StructInfo(), info, span, v.Name)
	}
	if seq, ok := val.(*SeqExpr); ok && b.spliceSeq(fr, seq) {
		val = seq.Body
	}
	if orig != nil && val == orig.Value {
		return orig
	}
	nb := &VarBinding{Var: v, Value: val}
	nb.span = span
	return nb
}

// spliceSeq appends the bindings of a normalized SeqExpr to fr when all its
// blocks are of fr's kind, reporting whether it did.
func (b *Builder) spliceSeq(fr *blockFrame, seq *SeqExpr) bool {
	for _, blk := range seq.Blocks {
		if blk.Dataflow != fr.dataflow {
			return false
		}
	}
	for _, blk := range seq.Blocks {
		for _, bind := range blk.Bindings {
			fr.append(bind)
		}
	}
	return true
}

// checkAnnotation reports an annotation that is provably wrong for the
// inferred info (FailL0/FailL1); FailL2 (unprovable symbolic mismatch) is
// allowed, as TVM does, and caught by run-time checks.
func (b *Builder) checkAnnotation(ann, inferred StructInfo, span diag.Span, name string) {
	if StructInfoBaseCheck(ann, inferred) >= FailL2 {
		return
	}
	b.Errorf(span, DiagAnnotation, "annotation %s of %s contradicts inferred %s",
		FormatStructInfo(ann, nil), name, FormatStructInfo(inferred, nil))
}

// defineSyms records the symbolic vars s defines in the current scope.
func (b *Builder) defineSyms(s StructInfo) {
	if len(b.scopes) == 0 || s == nil {
		return
	}
	fr := b.scopes[len(b.scopes)-1]
	for _, v := range DefinableSymVars(s) {
		if fr.syms == nil {
			fr.syms = map[*PrimVar]struct{}{}
		}
		fr.syms[v] = struct{}{}
	}
}

// symDefined reports whether v is defined in scope fr or the scopes it can
// see (up to and including the nearest function scope).
func symDefined(fr *scopeFrame, v *PrimVar) bool {
	for ; fr != nil; fr = fr.parent {
		if _, ok := fr.syms[v]; ok {
			return true
		}
		if _, ok := fr.entrySyms[v]; ok {
			return true
		}
		if fr.fn {
			return false
		}
	}
	return false
}

// eraseLeaving erases s, the info of the result of scope fr, to what is well
// defined outside fr: for a function, the parameters' symbolic vars; for an
// inner scope, whatever the enclosing scope defines.
func (b *Builder) eraseLeaving(fr *scopeFrame, s StructInfo) StructInfo {
	if fr.fn {
		entry := fr.entrySyms
		return EraseToWellDefined(s, func(v *PrimVar) bool { _, ok := entry[v]; return ok }, nil)
	}
	outer := fr.parent
	return EraseToWellDefined(s,
		func(v *PrimVar) bool { return symDefined(outer, v) },
		func(v *Var) bool { return paramOfEnclosing(outer, v) })
}

func paramOfEnclosing(fr *scopeFrame, v *Var) bool {
	for ; fr != nil; fr = fr.parent {
		for _, p := range fr.params {
			if p == v {
				return true
			}
		}
	}
	return false
}

// FinishScope closes the current scope (which must have no open block),
// building its SeqExpr from blocks (already ended, in order) and result,
// which is normalized in a trailing block. Empty blocks are dropped and
// adjacent blocks of the same kind merged; the SeqExpr's struct info is the
// result's, erased to what is well defined outside the scope.
func (b *Builder) FinishScope(blocks []*BindingBlock, result Expr) *SeqExpr {
	if len(b.scopes) == 0 {
		panic("ir.Builder: FinishScope without BeginScope")
	}
	fr := b.scopes[len(b.scopes)-1]
	b.BeginBlock(false)
	post := b.NormalizeArgument(result)
	if tail := b.EndBlock(); len(tail.Bindings) > 0 {
		blocks = append(blocks, tail)
	}
	blocks, _ = NormalizeBlocks(blocks)
	seq := &SeqExpr{Blocks: blocks, Body: post}
	seq.span = result.Span()
	seq.sinfo = b.eraseLeaving(fr, infoOrObject(post))
	b.EndScope()
	b.markScope(seq)
	return seq
}

func (b *Builder) markScope(seq *SeqExpr) {
	if b.scopeDone == nil {
		b.scopeDone = map[*SeqExpr]struct{}{}
	}
	b.scopeDone[seq] = struct{}{}
}

func infoOrObject(e Expr) StructInfo {
	if s := e.StructInfo(); s != nil {
		return s
	}
	return Object()
}
