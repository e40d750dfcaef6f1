package ir

// Explicit-memory ops: relax.builtin.alloc_tensor (introduced by
// CallTIRRewrite) and the relax.memory.* ops (introduced by memory planning,
// removed by LowerRuntimeBuiltin). Allocations are pure so they may sit in
// dataflow blocks; kills are impure.

var (
	// OpBuiltinAllocTensor is R.builtin.alloc_tensor(shape, dtype, runtime_device_index, storage_scope="global").
	OpBuiltinAllocTensor = RegisterOp(newAllocTensorOp("relax.builtin.alloc_tensor",
		"Allocates a fresh tensor of the given shape and dtype.", CatBuiltin, []Param{
			{Name: "shape", Kind: ArgShape},
			{Name: "dtype", Kind: ArgDType},
			{Name: "runtime_device_index", Kind: ArgPrimValue},
			{Name: "storage_scope", Kind: ArgStr, Default: NewStringImm("global")},
		}, 0, 1))
	// OpMemAllocStorage is R.memory.alloc_storage(size, virtual_device_index, storage_scope, dtype).
	OpMemAllocStorage = RegisterOp(newAllocStorageOp("relax.memory.alloc_storage",
		"Allocates a storage chunk of size bytes that tensors are carved from.", CatMemory, []Param{
			{Name: "size", Kind: ArgShape},
			{Name: "virtual_device_index", Kind: ArgPrimValue},
			{Name: "storage_scope", Kind: ArgStr},
			{Name: "dtype", Kind: ArgDType},
		}))
	// OpMemAllocTensor is R.memory.alloc_tensor(storage, offset, shape, dtype, runtime_device_index=0).
	OpMemAllocTensor = RegisterOp(newAllocTensorOp("relax.memory.alloc_tensor",
		"Carves a tensor out of a storage at a byte offset.", CatMemory, []Param{
			{Name: "storage", Kind: ArgExpr},
			{Name: "offset", Kind: ArgPrimValue},
			{Name: "shape", Kind: ArgShape},
			{Name: "dtype", Kind: ArgDType},
			{Name: "runtime_device_index", Kind: ArgPrimValue, Default: NewPrimValue(I64(0))},
		}, 2, 3))
	// OpMemKillStorage is R.memory.kill_storage(storage).
	OpMemKillStorage = RegisterOp(newKillOp("relax.memory.kill_storage",
		"Ends the lifetime of a storage; impure.", CatMemory, "storage"))
	// OpMemKillTensor is R.memory.kill_tensor(tensor).
	OpMemKillTensor = RegisterOp(newKillOp("relax.memory.kill_tensor",
		"Ends the lifetime of a tensor; impure.", CatMemory, "tensor"))
)

// newAllocTensorOp builds an op returning a tensor whose shape and dtype are
// the arguments at positions shapePos and dtypePos.
func newAllocTensorOp(name, doc string, cat OpCategory, params []Param, shapePos, dtypePos int) *Op {
	op := &Op{Name: name, Doc: doc, Pure: true, Category: cat, Params: params}
	op.Infer = func(_ *InferCtx, call *Call) (StructInfo, error) {
		if err := opCheckArity(op, call); err != nil {
			return nil, err
		}
		dims, ndim, shape, err := shapeArg(op, call, shapePos)
		if err != nil {
			return nil, err
		}
		if err := checkLiteralArgs(op, call); err != nil {
			return nil, err
		}
		return tensorFromShape(dtypeArg(call.Args[dtypePos]), dims, ndim, shape), nil
	}
	op.Normalize = schemaNormalize(op)
	return op
}

func newAllocStorageOp(name, doc string, cat OpCategory, params []Param) *Op {
	op := &Op{Name: name, Doc: doc, Pure: true, Category: cat, Params: params}
	op.Infer = func(_ *InferCtx, call *Call) (StructInfo, error) {
		if err := opCheckArity(op, call); err != nil {
			return nil, err
		}
		_, ndim, _, err := shapeArg(op, call, 0)
		if err != nil {
			return nil, err
		}
		if ndim != 1 && ndim != -1 {
			return nil, opErrorf(op, "size must be a 1-D shape (a byte count), got rank %d", ndim)
		}
		if err := checkLiteralArgs(op, call); err != nil {
			return nil, err
		}
		return Object(), nil
	}
	op.Normalize = schemaNormalize(op)
	return op
}

func newKillOp(name, doc string, cat OpCategory, param string) *Op {
	op := &Op{Name: name, Doc: doc, Category: cat, Params: []Param{{Name: param, Kind: ArgExpr}}}
	op.Infer = func(_ *InferCtx, call *Call) (StructInfo, error) {
		if err := opCheckArity(op, call); err != nil {
			return nil, err
		}
		return VoidInfo(), nil
	}
	return op
}

// checkLiteralArgs checks the literal-kind arguments of a call against the
// schema: a dtype parameter holds R.dtype, a string parameter R.str, a prim
// parameter a scalar (R.prim_value or a Prim-valued expression).
func checkLiteralArgs(op *Op, call *Call) error {
	for i, p := range op.ArgParams() {
		if i >= len(call.Args) {
			break
		}
		a := call.Args[i]
		switch p.Kind {
		case ArgDType:
			if _, ok := a.(*DataTypeImm); !ok {
				return opErrorf(op, "%s must be a dtype (R.dtype), got %s", p.Name, exprKind(a))
			}
		case ArgStr:
			if _, ok := a.(*StringImm); !ok {
				return opErrorf(op, "%s must be a string (R.str), got %s", p.Name, exprKind(a))
			}
		case ArgPrimValue:
			switch s := argStructInfo(a).(type) {
			case *PrimInfo, nil:
			default:
				return opErrorf(op, "%s must be a scalar (R.prim_value), got %s", p.Name, sinfoKind(s))
			}
		}
	}
	return nil
}
