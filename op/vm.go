package op

import "github.com/phasec/phasec/ir"

// VM-level ops, introduced by CallTIRRewrite (vm.call_tir_dyn) and
// LowerRuntimeBuiltin. alloc_storage, alloc_tensor and kill_object are legal
// at Build (with call_builtin_with_ctx, call_packed and null_value: the ops
// CodeGenVM emits); vm.call_tir_dyn is not: as in TVM, LowerRuntimeBuiltin
// turns it into a call of vm.builtin.call_tir_dyn.

var (
	// VMAllocStorage is R.vm.alloc_storage(size, runtime_device_index, dtype, storage_scope="global").
	VMAllocStorage = Define(Def{Op: newAllocStorageOp("relax.vm.alloc_storage",
		"Allocates VM storage of size bytes (vm.builtin.alloc_storage).", ir.CatVM, []ir.Param{
			{Name: "size", Kind: ir.ArgShape},
			{Name: "runtime_device_index", Kind: ir.ArgPrimValue},
			{Name: "dtype", Kind: ir.ArgDType},
			{Name: "storage_scope", Kind: ir.ArgStr, Default: ir.NewStringImm("global")},
		})})
	// VMAllocTensor is R.vm.alloc_tensor(storage, offset, shape, dtype,
	// runtime_device_ind=0): TVM v0.23's five-argument form (the keyword is
	// python/tvm/relax/op/vm/vm.py's name); the parser fills the default, as
	// TVM's Python wrapper does, so the printer always writes all five.
	VMAllocTensor = Define(Def{Op: newAllocTensorOp("relax.vm.alloc_tensor",
		"Carves a tensor out of VM storage at a byte offset (vm.builtin.alloc_tensor).", ir.CatVM, []ir.Param{
			{Name: "storage", Kind: ir.ArgExpr},
			{Name: "offset", Kind: ir.ArgPrimValue},
			{Name: "shape", Kind: ir.ArgShape},
			{Name: "dtype", Kind: ir.ArgDType},
			{Name: "runtime_device_ind", Kind: ir.ArgPrimValue, Default: ir.NewPrimValue(ir.I64(0))},
		}, 2, 3)})
	// VMKillObject is R.vm.kill_object(obj).
	VMKillObject = Define(Def{Op: newKillOp("relax.vm.kill_object",
		"Clears the register holding obj, releasing it; impure.", ir.CatVM, "obj")})
	// VMCallTIRDyn is R.vm.call_tir_dyn(func, args): args are inputs, outputs and a trailing shape of tir_vars.
	VMCallTIRDyn = Define(Def{Op: newCallTIRDynOp()})
)

func newCallTIRDynOp() *ir.Op {
	op := &ir.Op{
		Name:     "relax.vm.call_tir_dyn",
		Doc:      "Calls a PrimFunc with symbolic scalar arguments unpacked from a trailing shape; impure.",
		Category: ir.CatVM, Pattern: ir.PatternOpaque,
		Params: []ir.Param{
			{Name: "func", Kind: ir.ArgExpr},
			{Name: "args", Kind: ir.ArgTuple},
		},
	}
	op.Infer = func(_ *ir.InferCtx, call *ir.Call) (ir.StructInfo, error) {
		if err := opCheckArity(op, call); err != nil {
			return nil, err
		}
		// TVM's relax.vm.call_tir_dyn infers void whatever the callee
		// (ReturnVoidStructInfo, src/relax/op/op.cc): a global PrimFunc,
		// or a function named by a string or R.ExternFunc, which the VM
		// resolves when the call runs.
		switch f := call.Args[0].(type) {
		case *ir.GlobalVar, *ir.StringImm, *ir.ExternFunc:
		default:
			if _, ok := f.StructInfo().(*ir.FuncInfo); !ok {
				return nil, opErrorf(op, "callee must be a PrimFunc, a function name or a function value, got %s", exprKind(f))
			}
		}
		infos := argListInfos(call.Args[1])
		if len(infos) == 0 {
			return nil, opErrorf(op, "args must end with the shape of tir_vars")
		}
		if _, ok := infos[len(infos)-1].(*ir.ShapeInfo); !ok {
			return nil, opErrorf(op, "the last of args must be the shape of tir_vars, got %s", sinfoKind(infos[len(infos)-1]))
		}
		return ir.VoidInfo(), nil
	}
	return op
}
