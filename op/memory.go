package op

import "github.com/phasec/phasec/ir"

// Explicit-memory ops: relax.builtin.alloc_tensor (introduced by
// CallTIRRewrite) and the relax.memory.* ops (introduced by memory planning,
// removed by LowerRuntimeBuiltin). Allocations are pure so they may sit in
// dataflow blocks; kills are impure.

var (
	// BuiltinAllocTensor is R.builtin.alloc_tensor(shape, dtype, runtime_device_index, storage_scope="global").
	BuiltinAllocTensor = ir.RegisterOp(newAllocTensorOp("relax.builtin.alloc_tensor",
		"Allocates a fresh tensor of the given shape and dtype.", ir.CatBuiltin, []ir.Param{
			{Name: "shape", Kind: ir.ArgShape},
			{Name: "dtype", Kind: ir.ArgDType},
			{Name: "runtime_device_index", Kind: ir.ArgPrimValue},
			{Name: "storage_scope", Kind: ir.ArgStr, Default: ir.NewStringImm("global")},
		}, 0, 1))
	// MemAllocStorage is R.memory.alloc_storage(size, virtual_device_index, storage_scope, dtype).
	MemAllocStorage = ir.RegisterOp(newAllocStorageOp("relax.memory.alloc_storage",
		"Allocates a storage chunk of size bytes that tensors are carved from.", ir.CatMemory, []ir.Param{
			{Name: "size", Kind: ir.ArgShape},
			{Name: "virtual_device_index", Kind: ir.ArgPrimValue},
			{Name: "storage_scope", Kind: ir.ArgStr},
			{Name: "dtype", Kind: ir.ArgDType},
		}))
	// MemAllocTensor is R.memory.alloc_tensor(storage, offset, shape, dtype, runtime_device_index=0).
	MemAllocTensor = ir.RegisterOp(newAllocTensorOp("relax.memory.alloc_tensor",
		"Carves a tensor out of a storage at a byte offset.", ir.CatMemory, []ir.Param{
			{Name: "storage", Kind: ir.ArgExpr},
			{Name: "offset", Kind: ir.ArgPrimValue},
			{Name: "shape", Kind: ir.ArgShape},
			{Name: "dtype", Kind: ir.ArgDType},
			{Name: "runtime_device_index", Kind: ir.ArgPrimValue, Default: ir.NewPrimValue(ir.I64(0))},
		}, 2, 3))
	// MemKillStorage is R.memory.kill_storage(storage).
	MemKillStorage = ir.RegisterOp(newKillOp("relax.memory.kill_storage",
		"Ends the lifetime of a storage; impure.", ir.CatMemory, "storage"))
	// MemKillTensor is R.memory.kill_tensor(tensor).
	MemKillTensor = ir.RegisterOp(newKillOp("relax.memory.kill_tensor",
		"Ends the lifetime of a tensor; impure.", ir.CatMemory, "tensor"))
)

// newAllocTensorOp builds an op returning a tensor whose shape and dtype are
// the arguments at positions shapePos and dtypePos.
func newAllocTensorOp(name, doc string, cat ir.OpCategory, params []ir.Param, shapePos, dtypePos int) *ir.Op {
	op := &ir.Op{Name: name, Doc: doc, Pure: true, Category: cat, Params: params}
	op.Infer = func(_ *ir.InferCtx, call *ir.Call) (ir.StructInfo, error) {
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

func newAllocStorageOp(name, doc string, cat ir.OpCategory, params []ir.Param) *ir.Op {
	op := &ir.Op{Name: name, Doc: doc, Pure: true, Category: cat, Params: params}
	op.Infer = func(_ *ir.InferCtx, call *ir.Call) (ir.StructInfo, error) {
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
		return ir.Object(), nil
	}
	op.Normalize = schemaNormalize(op)
	return op
}

func newKillOp(name, doc string, cat ir.OpCategory, param string) *ir.Op {
	op := &ir.Op{Name: name, Doc: doc, Category: cat, Params: []ir.Param{{Name: param, Kind: ir.ArgExpr}}}
	op.Infer = func(_ *ir.InferCtx, call *ir.Call) (ir.StructInfo, error) {
		if err := opCheckArity(op, call); err != nil {
			return nil, err
		}
		return ir.VoidInfo(), nil
	}
	return op
}

// checkLiteralArgs checks the literal-kind arguments of a call against the
// schema: a dtype parameter holds R.dtype, a string parameter R.str, a prim
// parameter a scalar (R.prim_value or a Prim-valued expression).
func checkLiteralArgs(op *ir.Op, call *ir.Call) error {
	// Runs for every memory call; ArgParam walks the schema without
	// allocating the list ArgParams builds.
	for i := range call.Args {
		p, ok := op.ArgParam(i)
		if !ok {
			break
		}
		a := call.Args[i]
		switch p.Kind {
		case ir.ArgDType:
			if _, ok := a.(*ir.DataTypeImm); !ok {
				return opErrorf(op, "%s must be a dtype (R.dtype), got %s", p.Name, exprKind(a))
			}
		case ir.ArgStr:
			if _, ok := a.(*ir.StringImm); !ok {
				return opErrorf(op, "%s must be a string (R.str), got %s", p.Name, exprKind(a))
			}
		case ir.ArgPrimValue:
			switch s := argStructInfo(a).(type) {
			case *ir.PrimInfo, nil:
			default:
				return opErrorf(op, "%s must be a scalar (R.prim_value), got %s", p.Name, sinfoKind(s))
			}
		}
	}
	return nil
}
