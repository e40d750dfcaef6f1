package transform

import (
	"context"
	"fmt"
	"slices"

	"github.com/phasec/phasec/eval"
	"github.com/phasec/phasec/internal/ptrmap"
	"github.com/phasec/phasec/ir"
	"github.com/phasec/phasec/op"
	"github.com/phasec/phasec/passes"
	"github.com/phasec/phasec/phase"
	"github.com/phasec/phasec/tensor"
	"github.com/phasec/phasec/vm/abi"
	"github.com/phasec/phasec/vm/kernel"
)

// FoldConstant is TVM's src/relax/transform/fold_constant.cc: it
// evaluates, at compile time, the calls whose arguments are constants and
// puts the results in their place as constants (printed, as TVM prints
// them, through the module's metadata section). Per Relax function, in
// one pass over its bindings (post-order, as TVM's ExprMutator):
//
//   - A use of a var bound to a constant becomes the constant.
//   - R.call_tir of a PrimFunc of the module on constant arguments, with one
//     tensor output of constant shape and no tir_vars, is folded anywhere:
//     the PrimFunc is compiled by the kernel compiler (vm/kernel, once per
//     PrimFunc; one that does not compile is left alone, as TVM skips a
//     PrimFunc tir.build rejects) and run on copies of the constants.
//   - An op argument that is a var bound to an R.shape([...]) becomes the
//     shape itself, in any block (reshape then knows its result shape).
//   - In dataflow blocks only, a high-level op call is folded when TVM's
//     rule folds it: the op has a legalization (TVM's FLegalize), the
//     legalization is a single kernel call (not several bindings), the
//     kernel's inputs are all constants and its output is one tensor of
//     constant shape. The value is computed by the reference evaluator
//     (the op record's evaluation, package eval), the numeric oracle; an
//     op without one runs the legalized kernel. R.tensor_to_shape of a 1-D
//     int64 constant becomes an R.shape, and R.shape_to_tensor of an
//     R.shape of int64 constants a constant.
//   - Then every binding nothing uses is removed (TVM's RemoveAllUnused: a
//     pure binding whose var, transitively, nothing returns), so the pass
//     also drops dead pure bindings of functions where it folded nothing.
//
// As in TVM, impure calls are never folded (no op with a legalization is
// impure, and only call_tir is folded outside the op rules), and there is
// no size limit for the constants it creates (TVM's ShouldBeFolded always
// says yes: R.zeros, R.full and R.arange of constant shape fold too), save
// the reference evaluator's own limit on tensor sizes (op.MaxElements),
// above which a call is left alone. A bound var whose value becomes more
// specific is retyped, and a function whose body becomes more specific
// than its return annotation takes the body's struct info, as TVM's
// ExprMutator does. A call whose evaluation fails (a kernel fault, a
// shape the evaluator rejects) is left as it is and reported nowhere, as
// TVM's folder only logs; where TVM would abort (call_tir passing tir_vars
// to the folded kernel, R.shape_to_tensor of a non-literal shape) the call
// is left as well. PrimFuncs a fold leaves unused stay in the module:
// DeadCodeElimination removes them, as in TVM.
var FoldConstant = passes.Define(passes.Info{
	Name:     "FoldConstant",
	Doc:      "evaluate calls whose arguments are constants at compile time and use the results as constants",
	OptLevel: 0,
	Accepts:  []phase.Phase{phase.Ingest, phase.Optimize},
	Requires: map[phase.Property]string{
		phase.Normalized: "it folds calls whose operands are constant leaves (A-normal form), reads the struct info of calls and vars, and re-emits bindings through the normalizing builder",
	},
}, passes.Functions(func(env *passes.Env, mod *ir.Module, _ string, f *ir.Function) (*ir.Function, error) {
	return foldConstants(env.Context(), mod, f)
}).InParallel())

// foldConstants is FoldConstant on one function of mod (f itself when
// nothing changes). Re-normalizing what it rewrote cannot fail on a
// well-formed input; if it does, the diagnostics are the error and the
// function is not replaced.
func foldConstants(ctx context.Context, mod *ir.Module, f *ir.Function) (*ir.Function, error) {
	fd := &folder{
		mod:     mod,
		machine: eval.New(mod),
		kernels: map[*ir.PrimFunc]*kernel.Kernel{},
	}
	fd.bound.Reserve(topLevelBindings(f))
	fd.machine.Ctx = ctx
	rw := ir.NewRewriter(mod)
	rw.PostExpr = fd.post
	rw.Binding = fd.binding
	out := retypeReturn(rw, f, rw.Function(f))
	if errs := rw.B.Diagnostics(); errs.HasErrors() {
		return nil, errs.Err()
	}
	return removeAllUnused(mod, out), nil
}

// folder is the state of one function's folding.
type folder struct {
	mod     *ir.Module
	machine *eval.Machine
	// bound is the value of every binding emitted so far (TVM's
	// LookupBinding).
	bound ptrmap.Map[ir.Var, ir.Expr]
	// kernels caches compiled PrimFuncs (nil: it does not compile).
	kernels map[*ir.PrimFunc]*kernel.Kernel
}

// binding re-emits a binding with its rewritten value as TVM's
// ExprMutator::ReEmitBinding does: a var whose struct info is not
// structurally that of its new value is replaced by one that has the
// value's (TVM's WithStructInfo), and the emitted value is recorded. A
// local function (always a binding's value in A-normal form) the rewrite
// changed gets TVM's return rule.
func (fd *folder) binding(rw *ir.Rewriter, bind ir.Binding, value ir.Expr) bool {
	vb, ok := bind.(*ir.VarBinding)
	if !ok {
		return false
	}
	if old, ok := vb.Value.(*ir.Function); ok {
		if nf, ok := value.(*ir.Function); ok {
			value = retypeReturn(rw, old, nf)
		}
	}
	if value == vb.Value {
		rw.B.EmitBinding(vb)
		fd.bound.Set(vb.Var, vb.Value)
		return true
	}
	nv := rw.B.Normalize(value)
	v := vb.Var
	if s := nv.StructInfo(); s != nil && !ir.StructuralEqual(v.StructInfo(), s, ir.EqualOptions{}) {
		fresh := ir.NewVar(v.Name, s)
		fresh.Dataflow = v.Dataflow
		fresh.SetSpan(v.Span())
		rw.Remap(v, fresh)
		v = fresh
	}
	nb := ir.NewVarBinding(v, nv)
	nb.SetSpan(vb.Span())
	rw.B.EmitBinding(nb)
	fd.bound.Set(v, nv)
	return true
}

// retypeReturn applies TVM's rule for the return struct info of a function
// the rewrite changed (ExprMutator::VisitExpr_(FunctionNode)): the
// annotation stays when the new body's struct info is a base of it, and
// is otherwise the body's.
func retypeReturn(rw *ir.Rewriter, old, nf *ir.Function) *ir.Function {
	if nf == old || nf.Ret == nil {
		return nf
	}
	body := nf.Body.StructInfo()
	if body == nil || ir.IsBaseOf(body, nf.Ret) {
		return nf
	}
	g := &ir.Function{Params: nf.Params, Body: nf.Body, Pure: nf.Pure, Attrs: nf.Attrs}
	g.SetSpan(nf.Span())
	if out, ok := rw.B.Normalize(g).(*ir.Function); ok {
		return out
	}
	return nf
}

// post folds an expression whose operands were rewritten.
func (fd *folder) post(rw *ir.Rewriter, e ir.Expr) ir.Expr {
	switch e := e.(type) {
	case *ir.Var:
		if b, ok := fd.bound.Get(e); ok {
			if c, ok := b.(*ir.Constant); ok {
				return c
			}
		}
	case *ir.Call:
		return fd.call(rw, e)
	}
	return e
}

// call folds a call, or returns it (its shape-variable operands replaced
// by their shapes).
func (fd *folder) call(rw *ir.Rewriter, c *ir.Call) ir.Expr {
	o, ok := c.Op.(*ir.Op)
	if !ok {
		return c
	}
	if o == op.CallTIR {
		if k := fd.foldCallTIR(c); k != nil {
			return k
		}
		return c
	}
	c = fd.inlineShapes(c)
	if !rw.B.InDataflowBlock() {
		return c
	}
	switch o {
	case op.TensorToShape:
		if s := tensorToShape(c); s != nil {
			return s
		}
		return c
	case op.ShapeToTensor:
		if k := shapeToTensor(c); k != nil {
			return k
		}
		return c
	}
	if d, ok := op.DefOf(o); ok && d.Legalize != nil && o.Pure && (o.Category == ir.CatTensor || o == op.Reshape) {
		if k := fd.foldOp(rw, c, d); k != nil {
			return k
		}
	}
	return c
}

// inlineShapes replaces the operands of c that are vars bound to an
// R.shape([...]) by the shape.
func (fd *folder) inlineShapes(c *ir.Call) *ir.Call {
	var args []ir.Expr
	for i, a := range c.Args {
		v, ok := a.(*ir.Var)
		if !ok {
			continue
		}
		b, _ := fd.bound.Get(v)
		s, ok := b.(*ir.ShapeExpr)
		if !ok {
			continue
		}
		if args == nil {
			args = slices.Clone(c.Args)
		}
		args[i] = s
	}
	if args == nil {
		return c
	}
	n := &ir.Call{Op: c.Op, Args: args, Attrs: c.Attrs, SInfoArgs: c.SInfoArgs}
	n.SetSpan(c.Span())
	return n
}

// foldCallTIR folds R.call_tir(f, (constants...), out_sinfo=R.Tensor(constant shape))
// by compiling and running f, or returns nil.
func (fd *folder) foldCallTIR(c *ir.Call) *ir.Constant {
	if len(c.Args) != 2 || len(c.SInfoArgs) != 1 {
		return nil
	}
	gv, ok := c.Args[0].(*ir.GlobalVar)
	if !ok {
		return nil
	}
	pf := fd.mod.PrimFunc(gv.Name)
	tup, ok := c.Args[1].(*ir.Tuple)
	if pf == nil || !ok {
		return nil
	}
	dt, shape, ok := constTensorInfo(c.SInfoArgs[0])
	if !ok {
		return nil
	}
	for _, a := range tup.Fields {
		if _, ok := a.(*ir.Constant); !ok {
			return nil
		}
	}
	return fd.runKernel(gv.Name, pf, tup.Fields, dt, shape)
}

// runKernel compiles pf (once) and runs it on args (constants, or
// constant prim values) and a fresh output tensor, which it returns as a
// constant; nil when anything fails.
func (fd *folder) runKernel(name string, pf *ir.PrimFunc, args []ir.Expr, dt ir.DataType, shape []int64) *ir.Constant {
	k, seen := fd.kernels[pf]
	if !seen {
		k, _ = kernel.Compile(pf, name)
		fd.kernels[pf] = k
	}
	if k == nil {
		return nil
	}
	out, err := newTensor(dt, shape)
	if err != nil {
		return nil
	}
	kargs := make([]abi.Arg, 0, len(args)+1)
	for _, a := range args {
		switch a := a.(type) {
		case *ir.Constant:
			t, err := tensorOf(a.Data)
			if err != nil {
				return nil
			}
			kargs = append(kargs, abi.Arg{T: t})
		case *ir.PrimValue:
			switch v := a.Value.(type) {
			case *ir.IntImm:
				kargs = append(kargs, abi.Arg{I: v.Value, F: float64(v.Value)})
			case *ir.FloatImm:
				kargs = append(kargs, abi.Arg{F: v.Value})
			default:
				return nil
			}
		default:
			return nil
		}
	}
	kargs = append(kargs, abi.Arg{T: out})
	if err := k.Call(kargs); err != nil {
		return nil
	}
	if c, err := constantOf(out); err == nil {
		return c
	}
	return nil
}

// foldOp folds a high-level op call in a dataflow block when TVM would:
// see FoldConstant. It returns nil to leave the call.
func (fd *folder) foldOp(rw *ir.Rewriter, c *ir.Call, d *op.Def) *ir.Constant {
	// Every tensor operand becomes an input of the legalized kernel
	// (TVM's call_te makes each a placeholder), so a tensor var rules the
	// fold out before anything is built.
	for _, a := range c.Args {
		if !constantOperand(a) {
			return nil
		}
	}
	call, ok := rw.B.Normalize(c).(*ir.Call)
	if !ok {
		return nil
	}
	// A legalization or evaluation that fails leaves the call, as a
	// failing tir.build does in TVM; a panic is a bug the pass runner
	// reports.
	k := op.NewKernel(call) // no Emitter: a legalization of several bindings refuses
	if err := d.Legalize(k, call); err != nil || k.Forward != nil {
		return nil // no kernel to run (an op computing an argument has nothing to fold)
	}
	pf, tirVars := k.Finish()
	if len(tirVars) > 0 {
		return nil
	}
	out := k.Result
	if out == nil {
		out = call.StructInfo()
	}
	dt, shape, ok := constTensorInfo(out)
	if !ok {
		return nil
	}
	for _, a := range k.Args {
		if !constantScalarOrTensor(a) {
			return nil
		}
	}
	if d.Eval == nil {
		return fd.runKernel(k.Name, pf, k.Args, dt, shape)
	}
	if op.CheckSize(shape) != nil {
		return nil
	}
	v, err := fd.machine.Closed(call)
	if err != nil {
		return nil
	}
	t, ok := v.(*tensor.Tensor)
	if !ok || op.IRDType(t.DType) != dt || !slices.Equal(t.Shape, shape) {
		return nil
	}
	if c, err := constantOf(t); err == nil {
		return c
	}
	return nil
}

// constantOperand reports whether a call operand can be a constant input
// of a kernel: anything but a tensor (or untyped) var, looking into tuples.
func constantOperand(e ir.Expr) bool {
	switch e := e.(type) {
	case *ir.Var:
		switch e.StructInfo().(type) {
		case *ir.ShapeInfo, *ir.PrimInfo:
			return true
		}
		return false
	case *ir.Tuple:
		for _, f := range e.Fields {
			if !constantOperand(f) {
				return false
			}
		}
	}
	return true
}

// constantScalarOrTensor reports whether a kernel argument is a constant
// tensor or a literal prim value.
func constantScalarOrTensor(e ir.Expr) bool {
	switch e := e.(type) {
	case *ir.Constant:
		return true
	case *ir.PrimValue:
		switch e.Value.(type) {
		case *ir.IntImm, *ir.FloatImm:
			return true
		}
	}
	return false
}

// tensorToShape folds R.tensor_to_shape of a 1-D int64 constant into an
// R.shape, or returns nil.
func tensorToShape(c *ir.Call) *ir.ShapeExpr {
	k, ok := c.Args[0].(*ir.Constant)
	if !ok || len(k.Data.Shape) != 1 || k.Data.DType != ir.Int64 {
		return nil
	}
	n := int(k.Data.Shape[0])
	if len(k.Data.Data) != 8*n {
		return nil
	}
	values := make([]ir.PrimExpr, n)
	for i := range values {
		values[i] = ir.I64(k.Data.Int(i))
	}
	return ir.NewShapeExpr(values...)
}

// shapeToTensor folds R.shape_to_tensor of an R.shape of int64 literals
// into a 1-D int64 constant, or returns nil.
func shapeToTensor(c *ir.Call) *ir.Constant {
	s, ok := c.Args[0].(*ir.ShapeExpr)
	if !ok {
		return nil
	}
	a, err := ir.NewNDArray(ir.Int64, []int64{int64(len(s.Values))})
	if err != nil {
		return nil
	}
	for i, v := range s.Values {
		imm, ok := v.(*ir.IntImm)
		if !ok || imm.Type != ir.Int64 {
			return nil
		}
		a.SetInt(i, imm.Value)
	}
	return &ir.Constant{Data: a}
}

// constTensorInfo returns the dtype and shape of a tensor struct info
// whose dtype is known and whose dimensions are all literals.
func constTensorInfo(s ir.StructInfo) (ir.DataType, []int64, bool) {
	ti, ok := s.(*ir.TensorInfo)
	if !ok || ti.DType.IsVoid() {
		return ir.DataType{}, nil, false
	}
	se, ok := ti.Shape.(*ir.ShapeExpr)
	if !ok {
		return ir.DataType{}, nil, false
	}
	shape := make([]int64, len(se.Values))
	for i, d := range se.Values {
		imm, ok := d.(*ir.IntImm)
		if !ok {
			return ir.DataType{}, nil, false
		}
		shape[i] = imm.Value
	}
	return ti.DType, shape, true
}

// newTensor allocates a zeroed tensor within the evaluator's size limit.
func newTensor(dt ir.DataType, shape []int64) (*tensor.Tensor, error) {
	if err := op.CheckSize(shape); err != nil {
		return nil, err
	}
	tdt, err := op.TensorDType(dt)
	if err != nil {
		return nil, err
	}
	return tensor.NewChecked(tdt, shape)
}

// tensorOf copies a constant's data into a fresh tensor (a kernel may
// write its inputs; the module's constant must not change).
func tensorOf(a *ir.NDArray) (*tensor.Tensor, error) {
	t, err := newTensor(a.DType, a.Shape)
	if err != nil {
		return nil, err
	}
	if len(a.Data) != len(t.Bytes()) {
		return nil, fmt.Errorf("constant of shape %v has %d bytes, want %d", a.Shape, len(a.Data), len(t.Bytes()))
	}
	copy(t.Bytes(), a.Data)
	return t, nil
}
