package lower

import (
	"github.com/phasec/phasec/diag"
	"github.com/phasec/phasec/ir"
	"github.com/phasec/phasec/op"
	"github.com/phasec/phasec/passes"
	"github.com/phasec/phasec/phase"
)

// RewriteDataflowReshape is TVM's
// src/relax/transform/rewrite_dataflow_reshape.cc.
var RewriteDataflowReshape = passes.Define(passes.Info{
	Name:     "RewriteDataflowReshape",
	Doc:      "turn reshape-pattern call_tir inside dataflow blocks into relax.reshape views",
	OptLevel: 0,
	Requires: map[phase.Property]string{
		phase.Normalized: "it matches call_tir bindings",
		phase.Legalized:  "it recognises reshape-pattern PrimFuncs, which LegalizeOps generates",
	},
}, passes.Module(func(_ *passes.Env, mod *ir.Module) (*ir.Module, error) {
	out, errs := rewriteDataflowReshape(mod)
	if err := errs.Err(); err != nil {
		return nil, err
	}
	return out, nil
}))

// maxExhaustiveReshape bounds the element count up to which a static
// reshape pattern is verified element by element.
const maxExhaustiveReshape = 1 << 22

// rewriteDataflowReshape replaces, inside dataflow blocks, each binding of
// a dataflow var to R.call_tir(f, (x,), out_sinfo=T) whose PrimFunc f only
// moves elements to the same row-major position (HasReshapePattern in
// TVM's src/relax/analysis/tir_op_pattern_kind.cc), with x and T of the
// same dtype and element count, by R.reshape(x, shape of T): a view
// LowerRuntimeBuiltin lowers to vm.builtin.reshape instead of a copy.
// Bindings of output (non-dataflow) vars are left alone, as in TVM.
func rewriteDataflowReshape(mod *ir.Module) (*ir.Module, diag.List) {
	cache := map[*ir.PrimFunc]bool{}
	rw := ir.NewRewriter(mod)
	rw.Binding = func(rw *ir.Rewriter, bind ir.Binding, value ir.Expr) bool {
		vb, ok := bind.(*ir.VarBinding)
		if !ok || !vb.Var.Dataflow {
			return false
		}
		c, ok := value.(*ir.Call)
		if !ok || c.Op != op.CallTIR || len(c.Args) != 2 || len(c.SInfoArgs) != 1 {
			return false
		}
		gv, ok := c.Args[0].(*ir.GlobalVar)
		if !ok {
			return false
		}
		pf := mod.PrimFunc(gv.Name)
		args, ok := c.Args[1].(*ir.Tuple)
		if pf == nil || !ok || len(args.Fields) != 1 {
			return false
		}
		out, ok := c.SInfoArgs[0].(*ir.TensorInfo)
		if !ok {
			return false
		}
		in, ok := args.Fields[0].StructInfo().(*ir.TensorInfo)
		if !ok || in.DType != out.DType || in.DType.IsVoid() {
			return false
		}
		// The pattern check is cached per PrimFunc, so it goes before the
		// element-count proof, which costs an analyzer per call.
		is, seen := cache[pf]
		if !seen {
			is = hasReshapePattern(pf)
			cache[pf] = is
		}
		if !is {
			return false
		}
		inDims, ok1 := in.Dims()
		outDims, ok2 := out.Dims()
		if !ok1 || !ok2 || !ir.NewAnalyzer().CanProveEqual(product(inDims), product(outDims)) {
			return false
		}
		r := ir.NewCall(op.Reshape, args.Fields[0], ir.NewShapeExpr(outDims...))
		r.SetSpan(c.Span())
		rw.ReEmit(bind, r)
		return true
	}
	return rw.Module(mod)
}

func product(ds []ir.PrimExpr) ir.PrimExpr {
	var p ir.PrimExpr = ir.I64(1)
	for _, d := range ds {
		p = ir.Mul(p, d)
	}
	return ir.Simplify(p)
}

// hasReshapePattern reports whether f is a copy of its first buffer into
// its second that keeps every element's row-major position: loops over a
// single spatial block storing out[v...] = in[idx...] with
// linear(idx, in.shape) = linear(v, out.shape), proven by the analyzer, by
// provesSamePosition (symbolic shapes) or, for static shapes, checked for
// every element.
func hasReshapePattern(f *ir.PrimFunc) bool {
	if len(f.Params) != 2 {
		return false
	}
	inBuf, outBuf := f.ParamBuffer(0), f.ParamBuffer(1)
	if inBuf == nil || outBuf == nil || inBuf.DType != outBuf.DType {
		return false
	}
	s := f.Body
	var loops []*ir.For
	for {
		fr, ok := s.(*ir.For)
		if !ok {
			break
		}
		loops = append(loops, fr)
		s = fr.Body
	}
	br, ok := s.(*ir.BlockRealize)
	if !ok || br.Predicate != nil || br.Block.Init != nil || len(br.Block.AllocBuffers) > 0 {
		return false
	}
	b := br.Block
	store, ok := b.Body.(*ir.BufferStore)
	if !ok || store.Buffer != outBuf || len(store.Indices) != len(outBuf.Shape) {
		return false
	}
	load, ok := store.Value.(*ir.BufferLoad)
	if !ok || load.Buffer != inBuf || len(load.Indices) != len(inBuf.Shape) {
		return false
	}
	// The block must enumerate the output: iteration variable i is bound to
	// loop i and stored at dimension i, over the output's extent.
	if len(b.IterVars) != len(outBuf.Shape) || len(loops) != len(b.IterVars) {
		return false
	}
	for i, iv := range b.IterVars {
		if iv.Kind != ir.IterSpatial || br.IterValues[i] != ir.PrimExpr(loops[i].Var) || store.Indices[i] != ir.PrimExpr(iv.Var) {
			return false
		}
		if !isZero(loops[i].Min) || !isZero(iv.Dom.Min) || !ir.NewAnalyzer().CanProveEqual(loops[i].Extent, outBuf.Shape[i]) ||
			!ir.NewAnalyzer().CanProveEqual(iv.Dom.Extent, outBuf.Shape[i]) {
			return false
		}
	}
	vars := make([]*ir.PrimVar, len(b.IterVars))
	for i, iv := range b.IterVars {
		vars[i] = iv.Var
	}
	flatOut := linear(store.Indices, outBuf.Shape)
	flatIn := linear(load.Indices, inBuf.Shape)
	a := ir.NewAnalyzer()
	for i, v := range vars {
		if n, ok := ir.IntValue(outBuf.Shape[i]); ok {
			a.SetBounds(v, 0, n-1)
		} else {
			a.AssumeNonNegative(v)
		}
	}
	if a.CanProveEqual(flatIn, flatOut) || provesSamePosition(vars, outBuf.Shape, load.Indices, inBuf.Shape) {
		return true
	}
	return exhaustiveSamePosition(vars, outBuf.Shape, load.Indices, inBuf.Shape)
}

func isZero(e ir.PrimExpr) bool {
	n, ok := ir.IntValue(e)
	return ok && n == 0
}

// linear is the row-major position of idx in shape.
func linear(idx, shape []ir.PrimExpr) ir.PrimExpr {
	var flat ir.PrimExpr = ir.I64(0)
	for i, x := range idx {
		flat = ir.Add(ir.Mul(flat, shape[i]), x)
	}
	return flat
}

// exhaustiveSamePosition checks, for static shapes of at most
// maxExhaustiveReshape elements, that every output element reads the
// input element at the same row-major position (and in bounds).
func exhaustiveSamePosition(vars []*ir.PrimVar, outShape, idx, inShape []ir.PrimExpr) bool {
	out, ok1 := staticShape(outShape)
	in, ok2 := staticShape(inShape)
	if !ok1 || !ok2 {
		return false
	}
	n := int64(1)
	for _, d := range out {
		n *= d
	}
	if n > maxExhaustiveReshape {
		return false
	}
	env := map[*ir.PrimVar]int64{}
	cur := make([]int64, len(out))
	for k := int64(0); k < n; k++ {
		r := k
		for i := len(out) - 1; i >= 0; i-- {
			cur[i] = r % out[i]
			r /= out[i]
			env[vars[i]] = cur[i]
		}
		flat := int64(0)
		for j, e := range idx {
			x, ok := evalInt(e, env)
			if !ok || x < 0 || x >= in[j] {
				return false
			}
			flat = flat*in[j] + x
		}
		if flat != k {
			return false
		}
	}
	return true
}

func staticShape(ds []ir.PrimExpr) ([]int64, bool) {
	out := make([]int64, len(ds))
	for i, d := range ds {
		n, ok := ir.IntValue(d)
		if !ok {
			return nil, false
		}
		out[i] = n
	}
	return out, true
}

// evalInt evaluates an integer index expression; ok is false for anything
// beyond integer arithmetic on known variables.
func evalInt(e ir.PrimExpr, env map[*ir.PrimVar]int64) (int64, bool) {
	switch e := e.(type) {
	case *ir.IntImm:
		return e.Value, true
	case *ir.PrimVar:
		v, ok := env[e]
		return v, ok
	case *ir.Binary:
		a, ok1 := evalInt(e.A, env)
		b, ok2 := evalInt(e.B, env)
		if !ok1 || !ok2 {
			return 0, false
		}
		switch e.Op {
		case ir.OpAdd:
			return a + b, true
		case ir.OpSub:
			return a - b, true
		case ir.OpMul:
			return a * b, true
		case ir.OpMin:
			return min(a, b), true
		case ir.OpMax:
			return max(a, b), true
		}
		if b == 0 {
			return 0, false
		}
		q, r := a/b, a%b
		switch e.Op {
		case ir.OpDiv:
			return q, true
		case ir.OpMod:
			return r, true
		case ir.OpFloorDiv:
			if r != 0 && (r < 0) != (b < 0) {
				q--
			}
			return q, true
		case ir.OpFloorMod:
			if r != 0 && (r < 0) != (b < 0) {
				r += b
			}
			return r, true
		}
	}
	return 0, false
}
