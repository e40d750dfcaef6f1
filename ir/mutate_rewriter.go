package ir

import (
	"github.com/phasec/phasec/diag"
	"github.com/phasec/phasec/internal/ptrmap"
)

// Rewriter re-emits functions through a Builder binding by binding (TVM's
// ExprMutator): a pass replaces expressions bottom-up (PostExpr) or whole
// bindings (Binding), and may emit extra bindings through rw.B at any
// point; they land in the current block, before the binding being
// rewritten. Everything emitted is normalized, so the output is in normal
// form with struct info.
//
// When a binding's value changes and the bound var's struct info is no
// longer a base of the new value's, the binding gets a fresh var and later
// uses of the old var are remapped to it (Remap does the same by hand).
//
// Blocks, scopes and functions that come out unchanged are returned as the
// same pointers. Bindings are processed in a loop; recursion follows
// expression nesting only.
//
//	rw := ir.NewRewriter(mod)
//	rw.Binding = func(rw *ir.Rewriter, bind ir.Binding, value ir.Expr) bool {
//		c, ok := value.(*ir.Call)
//		if !ok || c.Op != opFoo {
//			return false // re-emit as usual
//		}
//		tmp := rw.B.Emit(ir.NewCall(opBar, c.Args...), "tmp")
//		rw.ReEmit(bind, ir.NewCall(opBaz, tmp))
//		return true
//	}
//	out, diags := rw.Module(mod)
type Rewriter struct {
	// B is the builder everything is emitted through.
	B *Builder
	// PostExpr is called on each expression after its operands were
	// rewritten and variable uses remapped (e may be rebuilt and is not yet
	// normalized); it returns the replacement, or e itself.
	PostExpr func(rw *Rewriter, e Expr) Expr
	// Binding is called for each binding with its rewritten value. It
	// returns true when it emitted the binding's replacement itself (or
	// dropped it, after remapping the var if it is still used); false
	// re-emits the binding with the value (see ReEmit).
	Binding func(rw *Rewriter, bind Binding, value Expr) bool
	// Branch, when set, is called before an If's then branch is rewritten
	// (BeforeThen), before its else branch (BeforeElse) and after both
	// (AfterIf), so a pass whose state follows control flow (what is known
	// at this point) can fork it per branch and join it after.
	Branch func(rw *Rewriter, e *If, at BranchPoint)

	// remap is what uses of a var become (a ptrmap, as Mutator's).
	remap ptrmap.Map[Var, Expr]
}

// BranchPoint says where in an If the Rewriter's Branch hook is called.
type BranchPoint uint8

const (
	BeforeThen BranchPoint = iota
	BeforeElse
	AfterIf
)

// NewRewriter returns a rewriter emitting through a fresh Builder resolving
// globals in mod.
func NewRewriter(mod *Module) *Rewriter { return &Rewriter{B: NewBuilder(mod)} }

// Remap makes later uses of old refer to e.
func (rw *Rewriter) Remap(old *Var, e Expr) {
	rw.remap.Set(old, e)
}

// Lookup returns what uses of v currently become (v itself when not remapped).
func (rw *Rewriter) Lookup(v *Var) Expr {
	if e, ok := rw.remap.Get(v); ok {
		return e
	}
	return v
}

// Module rewrites every Relax function of mod, returning a new module (the
// input is not modified) and the builder's diagnostics, sorted.
func (rw *Rewriter) Module(mod *Module) (*Module, diag.List) {
	out := mod.Clone()
	for _, name := range mod.Names() {
		if f := mod.Func(name); f != nil {
			if nf := rw.Function(f); nf != f {
				out.Set(name, nf)
			}
		}
	}
	errs := rw.B.Diagnostics()
	errs.Sort()
	return out, errs
}

// Function rewrites a function's body in a new function scope and returns
// the normalized result (f itself when nothing changed).
func (rw *Rewriter) Function(f *Function) *Function {
	rw.B.BeginScope(f.Params)
	body := rw.scopeBody(f.Body)
	if body == f.Body {
		return f
	}
	nf := &Function{Params: f.Params, Body: body, Ret: f.Ret, Pure: f.Pure, Attrs: f.Attrs}
	nf.span = f.span
	out, _ := rw.B.Normalize(nf).(*Function)
	return out
}

// scopeBody rewrites the body of the scope just begun and closes it.
func (rw *Rewriter) scopeBody(body Expr) Expr {
	b := rw.B
	seq, ok := body.(*SeqExpr)
	if !ok {
		seq = &SeqExpr{Body: body}
	}
	blocks, changed := rw.blocks(seq.Blocks)
	b.BeginBlock(false)
	res := rw.Expr(seq.Body)
	tail := b.EndBlock()
	if ok && !changed && res == seq.Body && len(tail.Bindings) == 0 && seq.sinfo != nil {
		b.EndScope()
		b.markScope(seq) // every binding went through the builder
		return seq
	}
	if len(tail.Bindings) > 0 {
		blocks = append(blocks, tail)
	}
	return b.FinishScope(blocks, res)
}

// blocks rewrites a list of blocks, each into a block of its own kind.
func (rw *Rewriter) blocks(in []*BindingBlock) ([]*BindingBlock, bool) {
	return mapList(in, rw.block)
}

// block re-emits a block's bindings into a block of the same kind.
func (rw *Rewriter) block(blk *BindingBlock) *BindingBlock {
	rw.B.beginBlockLike(blk)
	for _, bind := range blk.Bindings {
		rw.binding(bind)
	}
	return rw.B.endBlockLike(blk)
}

func (rw *Rewriter) binding(bind Binding) {
	value := rw.Expr(bindingValue(bind))
	if rw.Binding != nil && rw.Binding(rw, bind, value) {
		return
	}
	rw.ReEmit(bind, value)
}

// ReEmit emits bind with its value replaced by value (normalized). The
// binding is emitted as is when value is its own value; a var whose struct
// info no longer describes the new value is replaced by a fresh var, and
// uses are remapped.
func (rw *Rewriter) ReEmit(bind Binding, value Expr) {
	b := rw.B
	switch bd := bind.(type) {
	case *VarBinding:
		if value == bd.Value {
			b.EmitBinding(bd)
			return
		}
		nv := b.Normalize(value)
		v := bd.Var
		if s := v.StructInfo(); s != nil && nv.StructInfo() != nil && !IsBaseOf(s, nv.StructInfo()) {
			fresh := &Var{Name: v.Name, Dataflow: v.Dataflow}
			fresh.span = v.span
			rw.Remap(v, fresh)
			v = fresh
		}
		nb := &VarBinding{Var: v, Value: nv}
		nb.span = bd.span
		b.EmitBinding(nb)
	case *MatchCast:
		if value == bd.Value {
			b.EmitBinding(bd)
			return
		}
		nb := &MatchCast{Var: bd.Var, Value: value, SInfo: bd.SInfo}
		nb.span = bd.span
		b.EmitBinding(nb)
	}
}

// Expr rewrites an expression: variable uses are remapped, operands are
// rewritten first, then PostExpr applies. If branches and nested functions
// are rewritten in their own scopes, binding by binding.
func (rw *Rewriter) Expr(e Expr) Expr {
	out := e
	switch e := e.(type) {
	case *Var:
		if r, ok := rw.remap.Get(e); ok {
			out = r
		}
	case *Tuple:
		if fields, ch := rw.exprs(e.Fields); ch {
			n := &Tuple{Fields: fields}
			n.span = e.span
			out = n
		}
	case *TupleGetItem:
		if t := rw.Expr(e.Tuple); t != e.Tuple {
			n := &TupleGetItem{Tuple: t, Index: e.Index}
			n.span = e.span
			out = n
		}
	case *Call:
		op := rw.Expr(e.Op)
		args, ch := rw.exprs(e.Args)
		if ch || op != e.Op {
			n := &Call{Op: op, Args: args, Attrs: e.Attrs, SInfoArgs: e.SInfoArgs}
			n.span = e.span
			out = n
		}
	case *If:
		cond := rw.Expr(e.Cond)
		if rw.Branch != nil {
			rw.Branch(rw, e, BeforeThen)
		}
		rw.B.BeginInnerScope()
		then := rw.scopeBody(e.Then)
		if rw.Branch != nil {
			rw.Branch(rw, e, BeforeElse)
		}
		rw.B.BeginInnerScope()
		els := rw.scopeBody(e.Else)
		if rw.Branch != nil {
			rw.Branch(rw, e, AfterIf)
		}
		if cond != e.Cond || then != e.Then || els != e.Else {
			n := &If{Cond: cond, Then: then, Else: els}
			n.span = e.span
			out = n
		}
	case *SeqExpr:
		// A SeqExpr outside a scope position: rewrite it in place; the
		// builder flattens it into the enclosing block when it is emitted.
		blocks, ch := rw.blocks(e.Blocks)
		body := rw.Expr(e.Body)
		if ch || body != e.Body {
			n := &SeqExpr{Blocks: blocks, Body: body}
			n.span = e.span
			out = n
		}
	case *Function:
		out = rw.Function(e)
	}
	if rw.PostExpr != nil {
		out = rw.PostExpr(rw, out)
	}
	return out
}

func (rw *Rewriter) exprs(in []Expr) ([]Expr, bool) { return mapList(in, rw.Expr) }

// FunctionAround rewrites f like Function, with bindings added around the
// body in its scope: prologue emits (through rw.B) before the body's
// blocks, epilogue after them, given the rewritten result (bound to a var
// first unless it is a leaf or tuple). Either may be nil. VMShapeLower uses
// it for the checks at function entry and return. The function is always
// rebuilt.
func (rw *Rewriter) FunctionAround(f *Function, prologue func(rw *Rewriter), epilogue func(rw *Rewriter, result Expr)) *Function {
	b := rw.B
	b.BeginScope(f.Params)
	b.BeginBlock(false)
	if prologue != nil {
		prologue(rw)
	}
	blocks := []*BindingBlock{b.EndBlock()}
	seq, ok := f.Body.(*SeqExpr)
	if !ok {
		seq = &SeqExpr{Body: f.Body}
	}
	body, _ := rw.blocks(seq.Blocks)
	blocks = append(blocks, body...)
	b.BeginBlock(false)
	res := b.NormalizeArgument(rw.Expr(seq.Body))
	if epilogue != nil {
		epilogue(rw, res)
	}
	blocks = append(blocks, b.EndBlock())
	nseq := b.FinishScope(blocks, res)
	nf := &Function{Params: f.Params, Body: nseq, Ret: f.Ret, Pure: f.Pure, Attrs: f.Attrs}
	nf.span = f.span
	out, _ := b.Normalize(nf).(*Function)
	return out
}
