package ir

// VM-level ops: the only ops (with call_builtin_with_ctx and null_value)
// that CodeGenVM accepts, introduced by LowerRuntimeBuiltin and CallTIRRewrite.

var (
	// OpVMAllocStorage is R.vm.alloc_storage(size, runtime_device_index, dtype, storage_scope="global").
	OpVMAllocStorage = RegisterOp(newAllocStorageOp("relax.vm.alloc_storage",
		"Allocates VM storage of size bytes (vm.builtin.alloc_storage).", CatVM, []Param{
			{Name: "size", Kind: ArgShape},
			{Name: "runtime_device_index", Kind: ArgPrimValue},
			{Name: "dtype", Kind: ArgDType},
			{Name: "storage_scope", Kind: ArgStr, Default: NewStringImm("global")},
		}))
	// OpVMAllocTensor is R.vm.alloc_tensor(storage, offset, shape, dtype).
	OpVMAllocTensor = RegisterOp(newAllocTensorOp("relax.vm.alloc_tensor",
		"Carves a tensor out of VM storage at a byte offset (vm.builtin.alloc_tensor).", CatVM, []Param{
			{Name: "storage", Kind: ArgExpr},
			{Name: "offset", Kind: ArgPrimValue},
			{Name: "shape", Kind: ArgShape},
			{Name: "dtype", Kind: ArgDType},
		}, 2, 3))
	// OpVMKillObject is R.vm.kill_object(obj).
	OpVMKillObject = RegisterOp(newKillOp("relax.vm.kill_object",
		"Clears the register holding obj, releasing it; impure.", CatVM, "obj"))
	// OpVMCallTIRDyn is R.vm.call_tir_dyn(func, args): args are inputs, outputs and a trailing shape of tir_vars.
	OpVMCallTIRDyn = RegisterOp(newCallTIRDynOp())
)

func newCallTIRDynOp() *Op {
	op := &Op{
		Name:     "relax.vm.call_tir_dyn",
		Doc:      "Calls a PrimFunc with symbolic scalar arguments unpacked from a trailing shape; impure.",
		Category: CatVM,
		Params: []Param{
			{Name: "func", Kind: ArgExpr},
			{Name: "args", Kind: ArgTuple},
		},
	}
	op.Infer = func(_ *InferCtx, call *Call) (StructInfo, error) {
		if err := opCheckArity(op, call); err != nil {
			return nil, err
		}
		if _, ok := call.Args[0].(*GlobalVar); !ok {
			return nil, opErrorf(op, "callee must be a global PrimFunc, got %s", exprKind(call.Args[0]))
		}
		infos := argListInfos(call.Args[1])
		if len(infos) == 0 {
			return nil, opErrorf(op, "args must end with the shape of tir_vars")
		}
		if _, ok := infos[len(infos)-1].(*ShapeInfo); !ok {
			return nil, opErrorf(op, "the last of args must be the shape of tir_vars, got %s", sinfoKind(infos[len(infos)-1]))
		}
		return VoidInfo(), nil
	}
	return op
}
