package lower

import (
	"github.com/phasec/phasec/ir"
	"github.com/phasec/phasec/op"
)

// The straight-line path of VMShapeLower. Re-emitting every binding
// through the Builder (ir.Rewriter) re-infers every call whose operands
// change, and after VMShapeLower that is nearly every call of a function
// with a symbolic batch: each allocation's shape operand becomes a
// make_shape var, which re-types the allocation (TVM re-infers
// R.Tensor(ndim=...)), which changes every call using it. For functions
// without If, match_cast or local functions the bindings are rebuilt here
// directly, in normal form and with struct info, inferring only calls of
// ops and Relax functions; the output is the Rewriter path's exactly
// (TestVMShapeLowerSplicePath compares them). On a 100k-binding symbolic
// chain this is ~4x faster.

// useRewriter forces the Rewriter path (for the equivalence test).
var useRewriter = false

// straightLine reports whether fn's body is one scope of plain bindings
// whose values are leaves, tuples, projections or calls.
func straightLine(fn *ir.Function) bool {
	seq, ok := fn.Body.(*ir.SeqExpr)
	if !ok || useRewriter {
		return false
	}
	for _, blk := range seq.Blocks {
		for _, bind := range blk.Bindings {
			vb, ok := bind.(*ir.VarBinding)
			if !ok {
				return false
			}
			switch vb.Value.(type) {
			case *ir.If, *ir.Function, *ir.SeqExpr:
				return false
			}
		}
	}
	return true
}

// functionSpliced is rw.FunctionAround(fn, prologue, epilogue) for a
// straight-line function.
func (l *shapeLowering) functionSpliced(fn *ir.Function, prologue func(*ir.Rewriter), epilogue func(*ir.Rewriter, ir.Expr)) *ir.Function {
	b := l.rw.B
	b.BeginScope(fn.Params)
	b.BeginBlock(false)
	prologue(l.rw)
	pre := b.EndBlock()
	seq := fn.Body.(*ir.SeqExpr)
	// The blocks are plain (NoDataflow), so they merge into one: build it
	// in place rather than have FinishScope concatenate copies.
	n := len(pre.Bindings)
	for _, blk := range seq.Blocks {
		n += len(blk.Bindings) + len(blk.Bindings)/2
	}
	sp := splicing{l: l, remap: map[*ir.Var]*ir.Var{}, out: append(make([]ir.Binding, 0, n+8), pre.Bindings...)}
	var blocks []*ir.BindingBlock
	for _, blk := range seq.Blocks {
		if blk.Dataflow { // not expected (NoDataflow), but kept apart if present
			blocks = append(blocks, &ir.BindingBlock{Bindings: sp.out})
			sp.out = nil
			for _, bind := range blk.Bindings {
				sp.binding(bind.(*ir.VarBinding))
			}
			nb := &ir.BindingBlock{Bindings: sp.out, Dataflow: true}
			nb.SetSpan(blk.Span())
			blocks = append(blocks, nb)
			sp.out = nil
			continue
		}
		for _, bind := range blk.Bindings {
			sp.binding(bind.(*ir.VarBinding))
		}
	}
	b.BeginBlock(false)
	res := sp.value(seq.Body)
	if _, ok := res.(*ir.Call); ok {
		res = b.Normalize(res)
	}
	res = b.NormalizeArgument(res)
	epilogue(l.rw, res)
	sp.out = append(sp.out, b.EndBlock().Bindings...)
	blocks = append(blocks, &ir.BindingBlock{Bindings: sp.out})
	nseq := b.FinishScope(blocks, res)
	nf := &ir.Function{Params: fn.Params, Body: nseq, Ret: fn.Ret, Pure: fn.Pure, Attrs: fn.Attrs}
	nf.SetSpan(fn.Span())
	out, _ := b.Normalize(nf).(*ir.Function)
	return out
}

// splicing rebuilds one function's bindings.
type splicing struct {
	l     *shapeLowering
	remap map[*ir.Var]*ir.Var // re-typed vars
	out   []ir.Binding        // the block being built
}

func (sp *splicing) binding(vb *ir.VarBinding) {
	nv := sp.value(vb.Value)
	if nv == vb.Value {
		sp.out = append(sp.out, vb)
		return
	}
	nv = sp.infer(nv, vb.Value)
	v := vb.Var
	if s := v.StructInfo(); s != nil && nv.StructInfo() != nil && !ir.IsBaseOf(s, nv.StructInfo()) {
		fresh := ir.NewVar(v.Name, nv.StructInfo())
		fresh.Dataflow = v.Dataflow
		fresh.SetSpan(v.Span())
		sp.remap[v] = fresh
		v = fresh
	}
	nb := ir.NewVarBinding(v, nv)
	nb.SetSpan(vb.Span())
	sp.out = append(sp.out, nb)
}

// value rewrites a binding value (or the result): remapped vars, symbolic
// shapes and prim values, operands hoisted into bindings of their own.
func (sp *splicing) value(e ir.Expr) ir.Expr {
	switch e := e.(type) {
	case *ir.Var:
		if r, ok := sp.remap[e]; ok {
			return r
		}
	case *ir.ShapeExpr, *ir.PrimValue:
		return sp.l.postExpr(sp.l.rw, e)
	case *ir.Tuple:
		fields, changed := sp.operands(e.Fields)
		if changed {
			n := ir.NewTuple(fields...)
			n.SetSpan(e.Span())
			return n
		}
	case *ir.TupleGetItem:
		if t := sp.operand(e.Tuple); t != e.Tuple {
			n := &ir.TupleGetItem{Tuple: t, Index: e.Index}
			n.SetSpan(e.Span())
			return n
		}
	case *ir.Call:
		callee := sp.value(e.Op)
		args, changed := sp.operands(e.Args)
		if changed || callee != e.Op {
			n := &ir.Call{Op: callee, Args: args, Attrs: e.Attrs, SInfoArgs: e.SInfoArgs}
			n.SetSpan(e.Span())
			return n
		}
	}
	return e
}

// operand is value for an operand position: a call it yields is bound to
// a fresh var first, as the normalizer would.
func (sp *splicing) operand(e ir.Expr) ir.Expr {
	n := sp.value(e)
	if n == e || ir.IsLeafOrTuple(n) {
		if t, ok := n.(*ir.Tuple); ok && t != e {
			return sp.infer(t, nil)
		}
		return n
	}
	n = sp.infer(n, nil)
	v := ir.NewVar("gv", n.StructInfo())
	b := ir.NewVarBinding(v, n)
	b.SetSpan(n.Span())
	sp.out = append(sp.out, b)
	return v
}

func (sp *splicing) operands(in []ir.Expr) ([]ir.Expr, bool) {
	var out []ir.Expr
	for i, a := range in {
		n := sp.operand(a)
		if n != a && out == nil {
			out = append(make([]ir.Expr, 0, len(in)), in[:i]...)
		}
		if out != nil {
			out = append(out, n)
		}
	}
	if out == nil {
		return in, false
	}
	return out, true
}

// infer gives a rebuilt expression its struct info. A call of a PrimFunc,
// a packed function or vm.kill_object whose operands only changed has its
// old struct info (fixed by the callee, by sinfo_args, or void); the lowering's own calls come with
// theirs; anything else goes through the normalizer, which has nothing to
// hoist: the operands are leaves or tuples of leaves already.
func (sp *splicing) infer(e, old ir.Expr) ir.Expr {
	if e.StructInfo() != nil {
		return e
	}
	if c, ok := e.(*ir.Call); ok && old != nil && old.StructInfo() != nil {
		switch callee := c.Op.(type) {
		case *ir.ExternFunc:
			c.SetStructInfo(old.StructInfo())
			return c
		case *ir.GlobalVar:
			if pf := sp.l.rw.B.Module().PrimFunc(callee.Name); pf != nil {
				c.SetStructInfo(old.StructInfo())
				return c
			}
		case *ir.Op:
			if callee == op.VMKillObject { // void, whatever it kills
				c.SetStructInfo(old.StructInfo())
				return c
			}
		}
	}
	return sp.l.rw.B.Normalize(e)
}
