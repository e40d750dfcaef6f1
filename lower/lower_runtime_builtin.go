package lower

import (
	"github.com/phasec/phasec/diag"
	"github.com/phasec/phasec/ir"
	"github.com/phasec/phasec/op"
	"github.com/phasec/phasec/passes"
	"github.com/phasec/phasec/phase"
	"github.com/phasec/phasec/vm/abi"
)

// LowerRuntimeBuiltin is TVM's src/relax/backend/vm/lower_runtime_builtin.cc
// (formerly VMBuiltinLower).
var LowerRuntimeBuiltin = passes.Define(passes.Info{
	Name:     "LowerRuntimeBuiltin",
	Doc:      "lower memory, closure, reshape and shape ops to VM builtins",
	OptLevel: 0,
	Requires: map[phase.Property]string{
		phase.Normalized: "it rewrites calls in bindings",
		// The contract audit found R.add surviving the pass.
		phase.Legalized:      "it has no lowering for high-level tensor ops: one left in place would make its BuiltinsLowered claim false",
		phase.NoDataflow:     "the call_packed and call_builtin_with_ctx calls it emits are impure",
		phase.PurityRelaxed:  "it inserts impure builtin calls into pure functions",
		phase.NoCallTIR:      "it has no lowering for call_tir; kernels must already be called directly",
		phase.ExplicitMemory: "it lowers the memory ops the allocation passes produce",
	},
	Establishes: phase.Of(phase.BuiltinsLowered),
}, passes.Module(func(_ *passes.Env, mod *ir.Module) (*ir.Module, error) {
	out, errs := lowerRuntimeBuiltin(mod)
	if err := errs.Err(); err != nil {
		return nil, err
	}
	return out, nil
}))

// DiagUnloweredAlloc: a builtin.alloc_tensor reached LowerRuntimeBuiltin.
var DiagUnloweredAlloc = lowCodes.Define("LOW013", "a builtin.alloc_tensor reached LowerRuntimeBuiltin")

// DiagBuiltinArgs: an op whose arguments LowerRuntimeBuiltin cannot lower.
var DiagBuiltinArgs = lowCodes.Define("LOW014", "an op whose arguments LowerRuntimeBuiltin cannot lower")

// DiagNoVMLowering: an op that is neither lowered here nor handled by VM
// codegen (R.print, R.assert_op: TVM's LegalizeOps turns them into packed
// calls). The pass fails rather than claim BuiltinsLowered.
var DiagNoVMLowering = lowCodes.Define("LOW020", "an op neither LowerRuntimeBuiltin nor VM codegen lowers")

// lowerRuntimeBuiltin rewrites the ops the VM has no instruction for into
// what CodeGenVM accepts, bottom-up:
//
//	R.vm.call_tir_dyn(f, (a...))            R.call_packed("vm.builtin.call_tir_dyn", f, a..., sinfo_args=(R.Tuple,))
//	R.reshape(x, shape)                     R.call_packed("vm.builtin.reshape", x, shape, sinfo_args=(<its struct info>,))
//	R.shape_of(x)                           R.call_packed("vm.builtin.shape_of", x, ...)
//	R.tensor_to_shape(x)                    R.call_packed("vm.builtin.tensor_to_shape", x, ...)
//	R.make_closure(f, (c...))               R.call_packed("vm.builtin.make_closure", f, c..., sinfo_args=(R.Object,))
//	R.invoke_closure(g, (a...), sinfo_args) R.call_builtin_with_ctx("vm.builtin.invoke_closure", (g, a...), sinfo_args)
//	R.memory.alloc_storage(n, dev, scope, dt) R.vm.alloc_storage(n, dev, R.dtype("uint8"), scope)
//	R.memory.alloc_tensor(s, off, shape, dt, dev) R.vm.alloc_tensor(s, off, shape, dt, dev)
//	R.memory.kill_storage(x), kill_tensor(x)  R.vm.kill_object(x)
//	R.memory.view(x, shape, dtype, offset)  runtime.TVMArrayCreateView(x, shape, dtype, offset) (a packed call)
//	R.to_vdevice(x, dst_vdevice=d)          R.call_packed("vm.builtin.to_device", x, dev_type, dev_id, ...) (TVM's MakeToDevice)
//	R.hint_on_device(x, R.device(t, i))     the same, to device (t, i): phasec has no RealizeVDevice to consume the hint
//
// A reshape whose shape is a var is given the ShapeExpr the var is bound to
// (reported when it is not bound to one). R.builtin.alloc_tensor is an
// error: LowerAllocTensor must run first.
//
//	phasec opt --passes LowerRuntimeBuiltin testdata/passes/LowerRuntimeBuiltin/basic.tvms
func lowerRuntimeBuiltin(mod *ir.Module) (*ir.Module, diag.List) {
	b := ir.NewBuilder(mod)
	rw := ir.NewRewriter(mod)
	bound := map[*ir.Var]*ir.ShapeExpr{} // shape vars, for reshape
	lower := func(bind ir.Binding, c *ir.Call, builder *ir.Builder) *ir.Call {
		span := bind.Span()
		if c.Span().IsValid() {
			span = c.Span()
		}
		return lowerBuiltinCall(builder, c, bound, span)
	}
	// Every lowering but make_closure's keeps the call's struct info, so
	// the lowered calls are spliced in without re-emitting the function.
	sp := &splicer{binding: func(bind ir.Binding) ([]ir.Binding, bool) {
		vb, ok := bind.(*ir.VarBinding)
		if !ok {
			return nil, false
		}
		if se, ok := vb.Value.(*ir.ShapeExpr); ok {
			bound[vb.Var] = se
		}
		c, ok := vb.Value.(*ir.Call)
		if !ok {
			return nil, false
		}
		n := lower(bind, c, b)
		if n == nil {
			return nil, false
		}
		n.SetStructInfo(c.StructInfo())
		return []ir.Binding{rebind(vb, b.Normalize(n))}, true
	}}
	// A function making closures goes through the Rewriter: the closure
	// becomes an R.Object, and its uses are re-inferred.
	rw.Binding = func(rw *ir.Rewriter, bind ir.Binding, value ir.Expr) bool {
		if se, ok := value.(*ir.ShapeExpr); ok {
			bound[bind.BoundVar()] = se
		}
		c, ok := value.(*ir.Call)
		if !ok {
			return false
		}
		if n := lower(bind, c, rw.B); n != nil {
			rw.ReEmit(bind, ir.Expr(n))
			return true
		}
		return false
	}
	out := mod.Clone()
	for _, name := range mod.Names() {
		fn := mod.Func(name)
		if fn == nil {
			continue
		}
		seq, ok := fn.Body.(*ir.SeqExpr)
		if !ok {
			continue
		}
		var nf *ir.Function
		if makesClosures(seq) {
			nf = rw.Function(fn)
		} else if nseq := sp.seq(seq, nil); nseq != seq {
			nf = withBody(fn, nseq)
		}
		if nf != nil && nf != fn {
			out.Set(name, nf)
		}
	}
	errs := append(b.Diagnostics(), rw.B.Diagnostics()...)
	errs.Sort()
	return out, errs
}

// makesClosures reports whether a scope (or an If branch in it) binds an
// R.make_closure.
func makesClosures(seq *ir.SeqExpr) bool {
	for _, blk := range seq.Blocks {
		for _, bind := range blk.Bindings {
			vb, ok := bind.(*ir.VarBinding)
			if !ok {
				continue
			}
			switch x := vb.Value.(type) {
			case *ir.Call:
				if x.Op == op.MakeClosure {
					return true
				}
			case *ir.If:
				for _, br := range []ir.Expr{x.Then, x.Else} {
					if s, ok := br.(*ir.SeqExpr); ok && makesClosures(s) {
						return true
					}
				}
			}
		}
	}
	return false
}

func packed(name string, sinfo ir.StructInfo, args ...ir.Expr) *ir.Call {
	return &ir.Call{Op: ir.NewExternFunc(name), Args: args, SInfoArgs: []ir.StructInfo{sinfo}}
}

// lowerBuiltinCall returns the lowered form of c, or nil when c stays.
func lowerBuiltinCall(b *ir.Builder, c *ir.Call, bound map[*ir.Var]*ir.ShapeExpr, span diag.Span) *ir.Call {
	o, ok := c.Op.(*ir.Op)
	if !ok {
		return nil
	}
	switch o {
	case op.VMCallTIRDyn:
		if len(c.Args) != 2 {
			return nil
		}
		return packed(abi.BuiltinCallTIRDyn, ir.VoidInfo(), append([]ir.Expr{c.Args[0]}, argFields(c.Args[1])...)...)
	case op.Reshape:
		if len(c.Args) != 2 {
			return nil
		}
		shape := c.Args[1]
		if v, ok := shape.(*ir.Var); ok {
			se := bound[v]
			if se == nil {
				b.Errorf(span, DiagBuiltinArgs, "R.reshape: the shape %s must be a ShapeExpr or a var bound to one", v.Name)
				return nil
			}
			shape = se
		}
		return packed(abi.BuiltinReshape, c.StructInfo(), c.Args[0], shape)
	case op.ShapeOf:
		return packed(abi.BuiltinShapeOf, c.StructInfo(), c.Args...)
	case op.TensorToShape:
		return packed(abi.BuiltinTensorToShape, c.StructInfo(), c.Args...)
	case op.MakeClosure:
		if len(c.Args) != 2 {
			return nil
		}
		return packed(abi.BuiltinMakeClosure, ir.Object(), append([]ir.Expr{c.Args[0]}, argFields(c.Args[1])...)...)
	case op.InvokeClosure:
		if len(c.Args) != 2 || len(c.SInfoArgs) == 0 {
			return nil
		}
		args := ir.NewTuple(append([]ir.Expr{c.Args[0]}, argFields(c.Args[1])...)...)
		return &ir.Call{Op: op.CallBuiltinWithCtx, Args: []ir.Expr{ir.NewExternFunc(abi.BuiltinInvokeClosure), args}, SInfoArgs: c.SInfoArgs[:1]}
	case op.BuiltinAllocTensor:
		b.Errorf(span, DiagUnloweredAlloc, "R.builtin.alloc_tensor reached LowerRuntimeBuiltin: run LowerAllocTensor first")
		return nil
	case op.MemAllocStorage:
		if len(c.Args) != 4 {
			return nil
		}
		return ir.NewCall(op.VMAllocStorage, c.Args[0], c.Args[1], ir.NewDataTypeImm(ir.UInt8), c.Args[2])
	case op.MemAllocTensor:
		if len(c.Args) < 4 {
			return nil
		}
		// runtime_device_index carries over, as in TVM's MakeMemAllocTensor.
		var dev ir.Expr = ir.NewPrimValue(ir.I64(0))
		if len(c.Args) > 4 {
			dev = c.Args[4]
		}
		return ir.NewCall(op.VMAllocTensor, c.Args[0], c.Args[1], c.Args[2], c.Args[3], dev)
	case op.MemKillStorage, op.MemKillTensor:
		if len(c.Args) != 1 {
			return nil
		}
		return ir.NewCall(op.VMKillObject, c.Args[0])
	case op.MemView:
		return lowerView(b, c, span)
	case op.ToVDevice:
		dev, ok := c.Attrs["dst_vdevice"].(*ir.VDevice)
		if !ok || len(c.Args) != 1 {
			return nil
		}
		return toDevice(c, dev.DLDeviceType(), dev.ID)
	case op.HintOnDevice:
		typ, ok1 := c.Attrs["dev_type"].(int64)
		id, ok2 := c.Attrs["dev_id"].(int64)
		if !ok1 || !ok2 || len(c.Args) != 1 {
			return nil
		}
		return toDevice(c, typ, id)
	}
	if !o.LegalAtBuild {
		b.Errorf(span, DiagNoVMLowering, "%s has no VM lowering and VM codegen cannot handle it (TVM's LegalizeOps turns an op with an FCallPacked attribute, such as R.print or R.assert_op, into a call_packed of that function: LegalizeOps in the lower barrier must lower it)", ir.OpPath(o))
	}
	return nil
}

// toDevice is the packed call that copies c's tensor to device (typ, id);
// the VM, which runs on the host only, returns the tensor itself.
func toDevice(c *ir.Call, typ, id int64) *ir.Call {
	return packed(abi.BuiltinToDevice, c.StructInfo(), c.Args[0], ir.NewPrimValue(ir.I64(typ)), ir.NewPrimValue(ir.I64(id)))
}

// lowerView is TVM's LowerBuiltinView (src/relax/op/memory/view.cc):
// R.memory.view becomes a call of the packed function
// runtime.TVMArrayCreateView with every argument explicit (x's shape and
// dtype, offset 0, where the view left them void).
func lowerView(b *ir.Builder, c *ir.Call, span diag.Span) *ir.Call {
	if len(c.Args) != 4 {
		return nil
	}
	t, ok := c.Args[0].StructInfo().(*ir.TensorInfo)
	if !ok {
		b.Errorf(span, DiagBuiltinArgs, "R.memory.view: data must be a tensor")
		return nil
	}
	isVoid := func(e ir.Expr) bool {
		tup, ok := e.StructInfo().(*ir.TupleInfo)
		return ok && len(tup.Fields) == 0
	}
	shape, dtype, offset := c.Args[1], c.Args[2], c.Args[3]
	if isVoid(shape) {
		dims, ok := t.Dims()
		if !ok {
			b.Errorf(span, DiagBuiltinArgs, "R.memory.view: lowering needs the view's shape or the input's, but neither is known")
			return nil
		}
		shape = ir.NewShapeExpr(dims...)
	}
	if isVoid(dtype) {
		if t.DType.IsVoid() {
			b.Errorf(span, DiagBuiltinArgs, "R.memory.view: lowering needs the view's dtype or the input's, but neither is known")
			return nil
		}
		dtype = ir.NewDataTypeImm(t.DType)
	}
	if isVoid(offset) {
		offset = ir.NewPrimValue(ir.I64(0))
	}
	return packed(abi.BuiltinCreateView, c.StructInfo(), c.Args[0], shape, dtype, offset)
}
