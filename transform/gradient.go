package transform

import (
	"fmt"
	"slices"
	"strings"

	"github.com/phasec/phasec/diag"
	"github.com/phasec/phasec/internal/ptrmap"
	"github.com/phasec/phasec/ir"
	"github.com/phasec/phasec/op"
	"github.com/phasec/phasec/passes"
	"github.com/phasec/phasec/phase"
)

// Gradient is TVM's relax.transform.Gradient (src/relax/transform/gradient.cc,
// with gradient_simplifier.cc; each op's rule is op.Def.Gradient, ported
// from python/tvm/relax/op/_op_gradient.py): reverse-mode differentiation
// of the function func_name into a new public function
// <func_name>_adjoint, the original left as it is.
//
// The adjoint function takes the same parameters and returns
// (original result, (d target / d p for p in require_grads)). Its body is
// one dataflow block: the forward bindings, then the backward ones. The
// target (the result, or its target_index-th field when the result is a
// tuple) must be a float scalar tensor; its adjoint starts as ones. The
// forward bindings are visited last to first; the adjoint of each var is
// the sum of what its uses contribute, emitted as <var>_adjoint (the op's
// gradient rule for a call, field by field for tuples and
// tuple-get-items), and a var nothing contributes to is skipped. Each
// required parameter's adjoint (zeros when the target does not depend on
// it) is emitted as the block output <param>_adjoint_out. Bindings the
// result does not use are then removed (TVM's RemoveAllUnused), and
// gradient_simplifier's rules rewrite permute_dims of a transpose to the
// operand and permute_dims of a matmul to the matmul of the transposed
// operands.
//
// As TVM's trainer (python/tvm/relax/training/setup_trainer.py) runs
// DecomposeOpsForTraining on the loss function before Gradient, the copy
// being differentiated is decomposed first: batch_norm and layer_norm
// become the ops they are made of, which have gradient rules.
//
// Gradient checkpointing follows TVM (gradient_checkpoint.go): the
// bindings between R.grad.start_checkpoint and R.grad.end_checkpoint
// markers are recomputed for the backward pass instead of kept, and the
// markers are dropped from the adjoint.
//
// require_grads may name intermediate vars too, as in TVM: the adjoint
// then returns what flows into that var.
//
// Differences from TVM: call_tir_with_grad does not exist here; a call of
// a function (TVM silently skips it, leaving a wrong gradient) and an op
// without a gradient rule are positioned diagnostics naming the callee.
// Errors TVM reports by aborting are positioned diagnostics (OPT3xx). A
// function already named <func_name>_adjoint with the adjoint's signature
// is a declaration Gradient fills in (so that a training step calling the
// adjoint can be written in the same module); TVM would add
// <func_name>_adjoint1 beside it.
var Gradient = passes.Define(passes.Info{
	Name:     "Gradient",
	Doc:      "add <func_name>_adjoint: the function's result and the gradients of its scalar target with respect to require_grads (reverse-mode differentiation)",
	OptLevel: 0,
	Accepts:  []phase.Phase{phase.Ingest, phase.Optimize},
	Requires: map[phase.Property]string{
		phase.Normalized: "it walks the function's bindings in A-normal form and reads every argument's struct info (shapes and dtypes of the gradients)",
	},
	Precedes: map[phase.Property]string{
		phase.Legalized:  "it differentiates high-level ops through their gradient rules; a call_tir kernel has none",
		phase.NoDataflow: "it differentiates the function's one dataflow block, as TVM requires",
	},
	Options: []passes.Option{
		{Name: "func_name", Type: passes.String, Default: "main", Doc: "the function to differentiate"},
		{Name: "require_grads", Type: passes.Strings, Default: []string{},
			Doc: "the parameters whose gradients the adjoint returns, in this order; empty: every parameter"},
		{Name: "target_index", Type: passes.Int, Default: int64(0),
			Doc: "the field of a tuple result that is the target; 0 when the result is not a tuple"},
	},
}, passes.Module(func(env *passes.Env, mod *ir.Module) (*ir.Module, error) {
	o := env.Options()
	return Differentiate(mod, o.String("func_name"), o.Strings("require_grads"), int(o.Int("target_index")))
}))

// Codes of Gradient.
var (
	codeGradNoFunc      = optCodes.Define("OPT300", "Gradient: func_name is not a Relax function of the module")
	codeGradBody        = optCodes.Define("OPT301", "Gradient: the function's body is not one dataflow block")
	codeGradTarget      = optCodes.Define("OPT302", "Gradient: the target is not a float scalar tensor bound to a var, or target_index is out of range")
	codeGradRequire     = optCodes.Define("OPT303", "Gradient: a require_grads name is not a parameter, is repeated, or is not a float tensor (or tuple of them)")
	codeGradNoRule      = optCodes.Define("OPT304", "Gradient: a call the target depends on has no gradient (an op without a rule, a function or kernel call)")
	codeGradRule        = optCodes.Define("OPT305", "Gradient: an op's gradient rule cannot handle a call (unknown shape, unsupported layout or attribute)")
	codeGradExists      = optCodes.Define("OPT307", "Gradient: <func_name>_adjoint is already defined, and not as a declaration with the adjoint's signature")
	codeGradUnsupported = optCodes.Define("OPT306", "Gradient: a binding the target depends on is of a kind that cannot be differentiated (match_cast, if, shape computation)")
)

// Differentiate is Gradient's work: mod with <funcName>_adjoint added.
func Differentiate(mod *ir.Module, funcName string, requireGrads []string, targetIndex int) (*ir.Module, error) {
	var errs diag.List
	at := diag.Span{File: mod.Source}
	f := mod.Func(funcName)
	if f == nil {
		d := errs.Add(at, codeGradNoFunc, "func_name %q is not a Relax function of the module", funcName)
		if _, ok := mod.Lookup(funcName); ok {
			d.Msg += " (it is a PrimFunc or an external function)"
		} else if c := diag.Closest(funcName, mod.Names()); c != "" {
			d.Msg += fmt.Sprintf(" (did you mean %q?)", c)
		}
		return nil, errs
	}
	decomposed, derrs := decomposeFunction(mod, f, true)
	if err := derrs.Err(); err != nil {
		return nil, err
	}
	g := &gradientBuilder{name: funcName, rw: ir.NewRewriter(mod)}
	adj := g.function(f, decomposed, requireGrads, targetIndex)
	if err := g.errs.Err(); err != nil {
		return nil, err
	}
	if err := g.rw.B.Diagnostics().Err(); err != nil {
		return nil, err
	}
	name := funcName + "_adjoint"
	out := mod.Clone()
	adj = removeAllUnused(out, adj)
	adj = simplifyGradient(out, adj)
	if prev, ok := mod.Lookup(name); ok {
		if !declaresAdjoint(prev, adj) {
			var span diag.Span
			if pf, ok := prev.(*ir.Function); ok {
				span = pf.Span()
			}
			errs.Add(span, codeGradExists, "%s is already defined, not with the adjoint's signature %s", name, adjointSignature(adj))
			return nil, errs
		}
	}
	out.Set(name, adj)
	return out, nil
}

// declaresAdjoint: prev is a Relax function with adj's signature, a
// declaration of the adjoint that other functions (a training step) call
// and Gradient fills in. TVM would add <name>_adjoint1 beside it instead;
// here the module can be written, adjoint calls included, in one file.
func declaresAdjoint(prev ir.BaseFunc, adj *ir.Function) bool {
	f, ok := prev.(*ir.Function)
	if !ok || len(f.Params) != len(adj.Params) || f.Ret == nil ||
		!ir.StructuralEqual(f.Ret, adj.Ret, ir.EqualOptions{}) {
		return false
	}
	for i, p := range f.Params {
		if !ir.StructuralEqual(p.StructInfo(), adj.Params[i].StructInfo(), ir.EqualOptions{}) {
			return false
		}
	}
	return true
}

func adjointSignature(f *ir.Function) string {
	params := make([]string, len(f.Params))
	for i, p := range f.Params {
		params[i] = fmt.Sprintf("%s: %s", p.Name, p.StructInfo())
	}
	return fmt.Sprintf("(%s) -> %s", strings.Join(params, ", "), f.Ret)
}

// gradientBuilder builds one adjoint function (TVM's GradientMutator and
// BackwardBindingGenerator).
type gradientBuilder struct {
	// name is the function differentiated.
	name string
	// rw copies the forward bindings (its remap takes the original
	// function's vars to the adjoint function's) and its builder emits
	// everything.
	rw *ir.Rewriter
	// adjoint maps a var of the adjoint function to the var holding its
	// adjoint so far.
	adjoint ptrmap.Map[ir.Var, *ir.Var]
	// cp is the checkpointing state (gradient_checkpoint.go), nil when
	// the function has no checkpoint markers.
	cp   *checkpoints
	errs diag.List
}

// adjointOf returns the var holding v's adjoint so far, or nil.
func (g *gradientBuilder) adjointOf(v *ir.Var) *ir.Var {
	a, _ := g.adjoint.Get(v)
	return a
}

func (g *gradientBuilder) b() *ir.Builder { return g.rw.B }

// function checks f (as written, for positions) and returns the adjoint
// of fwd, f after the training decomposition.
func (g *gradientBuilder) function(f, fwd *ir.Function, requireGrads []string, targetIndex int) *ir.Function {
	seq, ok := fwd.Body.(*ir.SeqExpr)
	if !ok || len(seq.Blocks) != 1 || !seq.Blocks[0].Dataflow {
		n := 0
		if ok {
			n = len(seq.Blocks)
		}
		g.errs.Add(f.Span(), codeGradBody, "the body of %s must be exactly one dataflow block (it has %s); run ConvertToDataflow, or move the other bindings out", g.name, blocksNote(seq, n))
		return nil
	}
	target := g.target(f, seq.Body, targetIndex)
	require := g.requireGrads(f, fwd, requireGrads)
	if target == nil || len(g.errs) > 0 {
		return nil
	}

	b := g.b()
	params := make([]*ir.Var, len(fwd.Params))
	for i, p := range fwd.Params {
		params[i] = copyVar(p)
		g.rw.Remap(p, params[i])
	}
	g.cp = newCheckpoints(seq.Blocks[0], params)
	b.BeginScope(params)
	b.BeginBlock(true)
	forward := g.copyForward(seq.Blocks[0])
	if len(g.errs) > 0 {
		b.EndBlock()
		b.EndScope()
		return nil
	}
	newTarget := g.rw.Expr(target).(*ir.Var)
	ts := newTarget.StructInfo().(*ir.TensorInfo)
	g.adjoint.Set(newTarget, b.Emit(gradCall(op.Ones, ir.Attrs{"dtype": ts.DType}, ts.Shape), newTarget.Name+"_adjoint"))
	for i := len(forward) - 1; i >= 0; i-- {
		g.backward(forward[i])
	}
	outs := make([]ir.Expr, len(require))
	for i, p := range require {
		np := g.rw.Expr(p).(*ir.Var)
		if g.adjointOf(np) == nil {
			g.update(np, g.zeros(np.StructInfo(), np.Span()), np.Span())
		}
		if a := g.adjointOf(np); a != nil {
			outs[i] = b.EmitOutput(a, np.Name+"_adjoint_out")
		}
	}
	if len(g.errs) > 0 {
		b.EndBlock()
		b.EndScope()
		return nil
	}
	result := ir.NewTuple(g.rw.Expr(seq.Body), ir.NewTuple(outs...))
	blk := b.EndBlock()
	body := b.FinishScope([]*ir.BindingBlock{blk}, result)
	attrs := fwd.Attrs.With(ir.AttrGlobalSymbol, g.name+"_adjoint")
	nf := &ir.Function{Params: params, Body: body, Ret: body.StructInfo(), Pure: fwd.Pure, Attrs: attrs}
	nf.SetSpan(f.Span())
	return nf
}

func blocksNote(seq *ir.SeqExpr, n int) string {
	switch {
	case n == 1:
		return "one block, not a dataflow one"
	case n == 0:
		return "no binding block"
	}
	return fmt.Sprintf("%d binding blocks", n)
}

// copyVar is a fresh var with v's name, struct info, kind and position.
func copyVar(v *ir.Var) *ir.Var {
	n := ir.NewVar(v.Name, v.StructInfo())
	n.Dataflow = v.Dataflow
	n.SetSpan(v.Span())
	return n
}

// target is the var the function differentiates (TVM's CheckAndSetTarget):
// the result, or its target_index-th field, a float scalar tensor.
func (g *gradientBuilder) target(f *ir.Function, ret ir.Expr, index int) *ir.Var {
	var v *ir.Var
	switch r := ret.(type) {
	case *ir.Var:
		if index != 0 {
			g.errs.Add(spanOr(ret, f), codeGradTarget, "target_index=%d, but %s returns one value (target_index must be 0)", index, g.name)
			return nil
		}
		v = r
	case *ir.Tuple:
		if index < 0 || index >= len(r.Fields) {
			g.errs.Add(spanOr(ret, f), codeGradTarget, "target_index=%d is out of range: %s returns %d values", index, g.name, len(r.Fields))
			return nil
		}
		fv, ok := r.Fields[index].(*ir.Var)
		if !ok {
			g.errs.Add(spanOr(ret, f), codeGradTarget, "the target (field %d of the result) must be a var, got a %T", index, r.Fields[index])
			return nil
		}
		v = fv
	default:
		g.errs.Add(spanOr(ret, f), codeGradTarget, "the result of %s must be a var or a tuple, got a %T", g.name, ret)
		return nil
	}
	t, ok := v.StructInfo().(*ir.TensorInfo)
	if !ok || t.NDim != 0 || !t.DType.IsFloat() {
		g.errs.Add(spanOr(v, f), codeGradTarget, "the target %s must be a float scalar (a 0-dim tensor), but it is %s", v.Name, v.StructInfo())
		return nil
	}
	return v
}

// spanOr is e's span, or the function's when e has none.
func spanOr(e ir.Expr, f *ir.Function) diag.Span {
	if s := e.Span(); s.IsValid() {
		return s
	}
	return f.Span()
}

// requireGrads resolves the names (every parameter when names is empty)
// to fwd's parameters or, as TVM's CheckAndMapRequireGrads, to the vars
// its bindings bind (a parameter first, where both have the name).
func (g *gradientBuilder) requireGrads(f, fwd *ir.Function, names []string) []*ir.Var {
	if len(names) == 0 {
		return g.checkFloat(f, fwd.Params, fwd.Params)
	}
	byName := map[string]*ir.Var{}
	var paramNames []string
	for _, p := range fwd.Params {
		byName[p.Name] = p
		paramNames = append(paramNames, p.Name)
	}
	for _, bind := range fwd.Body.(*ir.SeqExpr).Blocks[0].Bindings {
		if vb, ok := bind.(*ir.VarBinding); ok {
			if _, taken := byName[vb.Var.Name]; !taken {
				byName[vb.Var.Name] = vb.Var
				paramNames = append(paramNames, vb.Var.Name)
			}
		}
	}
	seen := map[string]bool{}
	var out []*ir.Var
	for _, n := range names {
		p, ok := byName[n]
		switch {
		case !ok:
			d := g.errs.Add(f.Span(), codeGradRequire, "require_grads names %q, which is not a parameter of %s nor a var it binds", n, g.name)
			if c := diag.Closest(n, paramNames); c != "" {
				d.Msg += fmt.Sprintf(" (did you mean %q?)", c)
			}
		case seen[n]:
			g.errs.Add(f.Span(), codeGradRequire, "require_grads names %q more than once", n)
		default:
			seen[n] = true
			out = append(out, p)
		}
	}
	return g.checkFloat(f, fwd.Params, out)
}

// checkFloat reports the vars that are not float tensors or tuples of them.
func (g *gradientBuilder) checkFloat(f *ir.Function, params, vs []*ir.Var) []*ir.Var {
	for _, v := range vs {
		if !floatTensors(v.StructInfo()) {
			what := "var"
			if slices.Contains(params, v) {
				what = "parameter"
			}
			g.errs.Add(spanOr(v, f), codeGradRequire, "only float tensors or tuples of them can require gradients, but %s %s is %s", what, v.Name, v.StructInfo())
		}
	}
	return vs
}

func floatTensors(s ir.StructInfo) bool {
	switch s := s.(type) {
	case *ir.TensorInfo:
		return s.DType.IsFloat()
	case *ir.TupleInfo:
		for _, f := range s.Fields {
			if !floatTensors(f) {
				return false
			}
		}
		return true
	}
	return false
}

// forwardBinding is a binding of the adjoint function's forward part.
type forwardBinding struct {
	v     *ir.Var
	value ir.Expr
	span  diag.Span
}

// copyForward emits the forward bindings with fresh vars, without the
// checkpoint markers.
func (g *gradientBuilder) copyForward(blk *ir.BindingBlock) []forwardBinding {
	b := g.b()
	out := make([]forwardBinding, 0, len(blk.Bindings))
	for _, bind := range blk.Bindings {
		vb, ok := bind.(*ir.VarBinding)
		if !ok {
			g.errs.Add(bind.Span(), codeGradUnsupported, "only var bindings can be differentiated, not a %T (TVM supports none either)", bind)
			continue
		}
		if c, ok := vb.Value.(*ir.Call); ok && isCheckpointMarker(c) {
			if fb, ok := g.dropMarker(vb, c); ok {
				out = append(out, fb)
			}
			continue
		}
		value := b.Normalize(g.rw.Expr(vb.Value))
		nv := copyVar(vb.Var)
		nb := ir.NewVarBinding(nv, value)
		nb.SetSpan(vb.Span())
		b.EmitBinding(nb)
		g.rw.Remap(vb.Var, nv)
		if g.cp != nil {
			g.cp.classify(vb.Value, nv, value, g.rw.Lookup)
		}
		out = append(out, forwardBinding{v: nv, value: value, span: vb.Span()})
	}
	return out
}

// dropMarker leaves a checkpoint marker out of the adjoint function: its
// var becomes the var it marks. As TVM's CheckpointCollector, an output
// var marking a dataflow var becomes a new output binding of that var
// (a dataflow var cannot leave the block), returned as a forward binding.
func (g *gradientBuilder) dropMarker(vb *ir.VarBinding, c *ir.Call) (forwardBinding, bool) {
	target, ok := g.rw.Expr(c.Args[0]).(*ir.Var)
	if !ok {
		g.errs.Add(vb.Span(), codeGradUnsupported, "the argument of %s must be a variable, got a %T", ir.OpPath(c.Op.(*ir.Op)), c.Args[0])
		return forwardBinding{}, false
	}
	g.cp.mark(c, target)
	if vb.Var.Dataflow || !target.Dataflow {
		g.rw.Remap(vb.Var, target)
		return forwardBinding{}, false
	}
	nv := ir.NewVar(target.Name, target.StructInfo())
	nv.SetSpan(vb.Var.Span())
	nb := ir.NewVarBinding(nv, target)
	nb.SetSpan(vb.Span())
	g.b().EmitBinding(nb)
	g.rw.Remap(vb.Var, nv)
	g.cp.alias(nv, target)
	return forwardBinding{v: nv, value: target, span: vb.Span()}, true
}

// backward emits the contributions of one forward binding to the
// adjoints of what it uses (TVM's BackwardBindingGenerator::VisitBinding).
func (g *gradientBuilder) backward(fb forwardBinding) {
	adj := g.adjointOf(fb.v)
	if adj == nil {
		return // the target does not depend on fb.v
	}
	switch val := fb.value.(type) {
	case *ir.Call:
		g.call(fb, val, adj)
	case *ir.Tuple:
		g.update(val, adj, fb.span)
	case *ir.TupleGetItem:
		g.tupleGetItem(val, adj, fb.span)
	case *ir.Var:
		g.update(val, adj, fb.span)
	case *ir.Constant:
		// A constant has no adjoint.
	default:
		g.errs.Add(fb.span, codeGradUnsupported, "cannot differentiate the binding of %s, a %T", fb.v.Name, fb.value)
	}
}

func (g *gradientBuilder) call(fb forwardBinding, c *ir.Call, adj *ir.Var) {
	o, ok := c.Op.(*ir.Op)
	if !ok {
		g.errs.Add(fb.span, codeGradNoRule, "%s is bound to a call of %s, which cannot be differentiated (only ops with gradient rules can)", fb.v.Name, gradCallee(c.Op))
		return
	}
	def, ok := op.DefOf(o)
	if !ok || def.Gradient == nil {
		g.errs.Add(fb.span, codeGradNoRule, "op %s has no gradient rule (needed for %s)", o.Name, fb.v.Name)
		return
	}
	// The rule reads the forward values through recomputation where the
	// function has checkpoints; the partials flow to c's own arguments.
	res, rc := fb.v, c
	if g.cp != nil {
		res, rc = g.cp.update(g.b(), fb.v, c)
	}
	partials, err := def.Gradient(g.b(), rc, res, adj)
	if err != nil {
		g.errs.Add(fb.span, codeGradRule, "%v (binding of %s)", err, fb.v.Name)
		return
	}
	if len(partials) != len(c.Args) {
		g.errs.Add(fb.span, codeGradRule, "the rule of %s returned %d gradients for %d arguments", o.Name, len(partials), len(c.Args))
		return
	}
	for i, p := range partials {
		if p != nil {
			g.update(c.Args[i], p, fb.span)
		}
	}
}

func gradCallee(e ir.Expr) string {
	switch e := e.(type) {
	case *ir.GlobalVar:
		return "@" + e.Name
	case *ir.ExternFunc:
		return fmt.Sprintf("%q", e.Symbol)
	case *ir.Var:
		return e.Name
	}
	return fmt.Sprintf("a %T", e)
}

// tupleGetItem adds adj to field Index of the tuple's adjoint, which is
// zeros elsewhere when the tuple had none.
func (g *gradientBuilder) tupleGetItem(t *ir.TupleGetItem, adj *ir.Var, span diag.Span) {
	tv, ok := t.Tuple.(*ir.Var)
	if !ok {
		g.errs.Add(span, codeGradUnsupported, "a tuple-get-item of a %T, not of a var", t.Tuple)
		return
	}
	cur := g.adjointOf(tv)
	var updated ir.Expr
	if cur == nil {
		zeros, ok := g.zeros(tv.StructInfo(), span).(*ir.Tuple)
		if !ok {
			return
		}
		fields := append([]ir.Expr{}, zeros.Fields...)
		fields[t.Index] = adj
		updated = ir.NewTuple(fields...)
	} else {
		updated = g.addInTuple(cur, t.Index, adj)
	}
	g.emitAdjoint(tv, updated)
}

// adjMsg is TVM's AdjointMsg: an adjoint as a (nested) tuple of tensor
// expressions, following struct info.
type adjMsg struct {
	leaf   ir.Expr
	fields []adjMsg
	nested bool
}

// msgOf splits e by its struct info into a message; a tuple var's fields
// are its tuple-get-items.
func (g *gradientBuilder) msgOf(e ir.Expr) adjMsg {
	ts, ok := e.StructInfo().(*ir.TupleInfo)
	if !ok {
		return adjMsg{leaf: e}
	}
	m := adjMsg{nested: true, fields: make([]adjMsg, len(ts.Fields))}
	for i := range ts.Fields {
		var f ir.Expr
		if t, ok := e.(*ir.Tuple); ok {
			f = t.Fields[i]
		} else {
			f = g.b().Normalize(&ir.TupleGetItem{Tuple: e, Index: i})
		}
		m.fields[i] = g.msgOf(f)
	}
	return m
}

// msgExpr rebuilds a message as an expression; fields that are the items
// of one tuple, in order, are that tuple (as TVM's NestedMsgToExpr).
func msgExpr(m adjMsg) ir.Expr {
	if !m.nested {
		return m.leaf
	}
	if t := wholeTuple(m); t != nil {
		return t
	}
	fields := make([]ir.Expr, len(m.fields))
	for i, f := range m.fields {
		fields[i] = msgExpr(f)
	}
	return ir.NewTuple(fields...)
}

// wholeTuple is the tuple whose items m's fields are, in order, or nil.
func wholeTuple(m adjMsg) ir.Expr {
	if len(m.fields) == 0 {
		return nil
	}
	var tuple ir.Expr
	for i, f := range m.fields {
		g, ok := f.leaf.(*ir.TupleGetItem)
		if f.nested || !ok || g.Index != i || (tuple != nil && g.Tuple != tuple) {
			return nil
		}
		tuple = g.Tuple
	}
	if ts, ok := tuple.StructInfo().(*ir.TupleInfo); !ok || len(ts.Fields) != len(m.fields) {
		return nil
	}
	return tuple
}

// update adds partial to the adjoint of each var leaf of expr (TVM's
// UpdateAdjoint); constant, shape and prim leaves take none.
func (g *gradientBuilder) update(expr, partial ir.Expr, span diag.Span) {
	partial = g.b().Normalize(partial)
	if v, ok := expr.(*ir.Var); ok && g.adjointOf(v) == nil {
		g.emitAdjoint(v, partial) // a whole tuple adjoint stays one binding
		return
	}
	g.decompose(expr, g.msgOf(partial), span)
}

func (g *gradientBuilder) decompose(expr ir.Expr, m adjMsg, span diag.Span) {
	switch e := expr.(type) {
	case *ir.Tuple:
		if !m.nested || len(m.fields) != len(e.Fields) {
			g.errs.Add(span, codeGradRule, "a gradient does not match the tuple it flows into")
			return
		}
		for i, f := range e.Fields {
			g.decompose(f, m.fields[i], span)
		}
	case *ir.Var:
		value := msgExpr(m)
		if cur := g.adjointOf(e); cur != nil {
			value = g.add(cur, value)
		}
		g.emitAdjoint(e, value)
	case *ir.Constant, *ir.ShapeExpr, *ir.PrimValue, *ir.StringImm, *ir.DataTypeImm:
		// No adjoint.
	default:
		g.errs.Add(span, codeGradUnsupported, "cannot take the adjoint of a %T", expr)
	}
}

func (g *gradientBuilder) emitAdjoint(v *ir.Var, value ir.Expr) {
	g.adjoint.Set(v, g.b().Emit(value, v.Name+"_adjoint"))
}

// add is TVM's TupleAwareAdd: l + r leaf by leaf.
func (g *gradientBuilder) add(l, r ir.Expr) ir.Expr {
	var combine func(a, b adjMsg) adjMsg
	combine = func(a, b adjMsg) adjMsg {
		if !a.nested || !b.nested {
			return adjMsg{leaf: gradCall(op.Add, nil, a.leaf, b.leaf)}
		}
		out := adjMsg{nested: true, fields: make([]adjMsg, len(a.fields))}
		for i := range a.fields {
			out.fields[i] = combine(a.fields[i], b.fields[i])
		}
		return out
	}
	return msgExpr(combine(g.msgOf(l), g.msgOf(g.b().Normalize(r))))
}

// addInTuple is TVM's AddInTuple: tuple with field index increased by inc.
func (g *gradientBuilder) addInTuple(tuple ir.Expr, index int, inc ir.Expr) ir.Expr {
	ts := tuple.StructInfo().(*ir.TupleInfo)
	fields := make([]ir.Expr, len(ts.Fields))
	for i := range fields {
		if t, ok := tuple.(*ir.Tuple); ok {
			fields[i] = t.Fields[i]
		} else {
			fields[i] = &ir.TupleGetItem{Tuple: tuple, Index: i}
		}
		if i == index {
			fields[i] = g.add(g.b().Normalize(fields[i]), inc)
		}
	}
	return ir.NewTuple(fields...)
}

// zeros is TVM's NestedZeros: zeros of s, a tensor or a tuple of them.
func (g *gradientBuilder) zeros(s ir.StructInfo, span diag.Span) ir.Expr {
	switch s := s.(type) {
	case *ir.TensorInfo:
		if s.Shape != nil {
			return gradCall(op.Zeros, ir.Attrs{"dtype": s.DType}, s.Shape)
		}
	case *ir.TupleInfo:
		fields := make([]ir.Expr, len(s.Fields))
		for i, f := range s.Fields {
			if fields[i] = g.zeros(f, span); fields[i] == nil {
				return nil
			}
		}
		return ir.NewTuple(fields...)
	}
	g.errs.Add(span, codeGradUnsupported, "cannot make a zero adjoint of %s (a tensor of known shape, or a tuple of them, is needed)", s)
	return nil
}

func gradCall(o *ir.Op, attrs ir.Attrs, args ...ir.Expr) *ir.Call {
	return &ir.Call{Op: o, Args: args, Attrs: attrs}
}

// simplifyGradient is TVM's SimplifyGradient (gradient_simplifier.cc) on
// the adjoint function's one block: permute_dims(permute_dims(a)) -> a and
// permute_dims(matmul(a, b)) -> matmul(permute_dims(b), permute_dims(a))
// for transposes of the last two axes, reusing an operand's own transpose;
// bindings left unused are removed.
func simplifyGradient(mod *ir.Module, f *ir.Function) *ir.Function {
	seq := f.Body.(*ir.SeqExpr)
	rw := ir.NewRewriter(mod)
	b := rw.B
	// values holds the bound transposes and matmuls, the only values the
	// rules look through.
	var values ptrmap.Map[ir.Var, *ir.Call]
	bindingOf := func(e ir.Expr) (*ir.Call, bool) {
		v, ok := e.(*ir.Var)
		if !ok {
			return nil, false
		}
		return values.Get(v)
	}
	transposeOf := func(e ir.Expr) ir.Expr {
		if c, ok := bindingOf(e); ok && isTranspose(c) {
			return c.Args[0]
		}
		t, ok := e.StructInfo().(*ir.TensorInfo)
		if !ok || t.NDim == 1 {
			return e
		}
		return lastTwoTransposed(e, t.NDim)
	}
	changed := false
	b.BeginScope(f.Params)
	var blocks []*ir.BindingBlock
	for _, blk := range seq.Blocks {
		b.BeginBlock(blk.Dataflow)
		for _, bind := range blk.Bindings {
			vb, ok := bind.(*ir.VarBinding)
			if !ok {
				b.EmitBinding(bind)
				continue
			}
			value := rw.Expr(vb.Value)
			if c, ok := value.(*ir.Call); ok && isTranspose(c) {
				if prev, ok := bindingOf(c.Args[0]); ok {
					switch {
					case isTranspose(prev):
						if inner, ok := prev.Args[0].(*ir.Var); ok {
							rw.Remap(vb.Var, inner)
							changed = true
							continue
						}
					case prev.Op == op.Matmul && tensorNDim(prev.Args[0]) > 1 && tensorNDim(prev.Args[1]) > 1:
						value = &ir.Call{Op: op.Matmul, Args: []ir.Expr{transposeOf(prev.Args[1]), transposeOf(prev.Args[0])}, Attrs: prev.Attrs}
						changed = true
					}
				}
			}
			value = b.Normalize(value)
			if c, ok := value.(*ir.Call); ok && (isTranspose(c) || c.Op == op.Matmul) {
				values.Set(vb.Var, c)
			}
			nb := ir.NewVarBinding(vb.Var, value)
			nb.SetSpan(vb.Span())
			b.EmitBinding(nb)
		}
		blocks = append(blocks, b.EndBlock())
	}
	if !changed {
		b.EndScope()
		return f
	}
	body := b.FinishScope(blocks, rw.Expr(seq.Body))
	nf := &ir.Function{Params: f.Params, Body: body, Ret: f.Ret, Pure: f.Pure, Attrs: f.Attrs}
	nf.SetSpan(f.Span())
	return removeAllUnused(mod, nf)
}

func tensorNDim(e ir.Expr) int {
	if t, ok := e.StructInfo().(*ir.TensorInfo); ok {
		return t.NDim
	}
	return -1
}

// isTranspose: c swaps the last two axes of a tensor of rank 2 or more
// (TVM's IsTransposeOp).
func isTranspose(c *ir.Call) bool {
	if c.Op != op.PermuteDims {
		return false
	}
	n := tensorNDim(c.Args[0])
	if n < 2 {
		return false
	}
	axes, ok := c.Attrs.Ints("axes")
	if !ok {
		return n == 2 && c.Attrs["axes"] == nil
	}
	if len(axes) != n {
		return false
	}
	for i := 0; i < n-2; i++ {
		if axes[i] != int64(i) {
			return false
		}
	}
	return axes[n-2] == int64(n-1) && axes[n-1] == int64(n-2)
}

func lastTwoTransposed(e ir.Expr, n int) *ir.Call {
	axes := make([]any, n)
	for i := range axes {
		axes[i] = int64(i)
	}
	axes[n-2], axes[n-1] = int64(n-1), int64(n-2)
	return &ir.Call{Op: op.PermuteDims, Args: []ir.Expr{e}, Attrs: ir.Attrs{"axes": axes}}
}
