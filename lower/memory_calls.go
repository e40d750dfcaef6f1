package lower

import (
	"github.com/phasec/phasec/ir"
	"github.com/phasec/phasec/op"
)

// The memory calls the allocation passes emit, built directly in normal
// form with their struct info: the normalizer then only fills in the leaf
// arguments' struct info and skips inference, which is most of these
// passes' cost on large functions. The golden tests compare the results
// with what parsing (and so full normalization) of the same text gives.

// memAllocStorage is R.memory.alloc_storage(R.shape([bytes]), dev, scope, dtype): an R.Object.
func memAllocStorage(b *ir.Builder, bytes ir.PrimExpr, dev, scope ir.Expr, dtype ir.DataType) ir.Expr {
	c := ir.NewCall(op.MemAllocStorage, ir.NewShapeExpr(bytes), dev, scope, ir.NewDataTypeImm(dtype))
	c.SetStructInfo(ir.Object())
	return b.Normalize(c)
}

// memAllocTensor is R.memory.alloc_tensor(storage, R.prim_value(offset),
// shape, dtype, R.prim_value(0)) (runtime_device_index at its default, as
// the canonical form spells it), of the struct info of the
// builtin.alloc_tensor it replaces.
func memAllocTensor(b *ir.Builder, storage *ir.Var, offset int64, shape ir.Expr, ti *ir.TensorInfo) ir.Expr {
	return memAllocTensorOn(b, storage, offset, shape, ti, smallValue(0))
}

// memAllocTensorOn is memAllocTensor with the runtime_device_index dev
// (TVM's StaticPlanBlockMemory passes on the builtin.alloc_tensor's).
func memAllocTensorOn(b *ir.Builder, storage *ir.Var, offset int64, shape ir.Expr, ti *ir.TensorInfo, dev ir.Expr) ir.Expr {
	c := ir.NewCall(op.MemAllocTensor, storage, smallValue(offset), shape, ir.NewDataTypeImm(ti.DType), dev)
	c.SetStructInfo(ti)
	return b.Normalize(c)
}
