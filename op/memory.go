package op

import (
	"github.com/phasec/phasec/ir"
	"github.com/phasec/phasec/tensor"
)

// Explicit-memory ops: relax.builtin.alloc_tensor (introduced by
// CallTIRRewrite) and the relax.memory.* ops (introduced by memory planning,
// removed by LowerRuntimeBuiltin). Allocations are pure so they may sit in
// dataflow blocks; kills are impure.

var (
	// BuiltinAllocTensor is R.builtin.alloc_tensor(shape, dtype, runtime_device_index, storage_scope="global").
	BuiltinAllocTensor = Define(Def{Op: newAllocTensorOp("relax.builtin.alloc_tensor",
		"Allocates a fresh tensor of the given shape and dtype.", ir.CatBuiltin, []ir.Param{
			{Name: "shape", Kind: ir.ArgShape},
			{Name: "dtype", Kind: ir.ArgDType},
			{Name: "runtime_device_index", Kind: ir.ArgPrimValue},
			{Name: "storage_scope", Kind: ir.ArgStr, Default: ir.NewStringImm("global")},
		}, 0, 1)})
	// MemAllocStorage is R.memory.alloc_storage(size, virtual_device_index, storage_scope, dtype).
	MemAllocStorage = Define(Def{Op: newAllocStorageOp("relax.memory.alloc_storage",
		"Allocates a storage chunk of size bytes that tensors are carved from.", ir.CatMemory, []ir.Param{
			{Name: "size", Kind: ir.ArgShape},
			{Name: "virtual_device_index", Kind: ir.ArgPrimValue},
			{Name: "storage_scope", Kind: ir.ArgStr},
			{Name: "dtype", Kind: ir.ArgDType},
		})})
	// MemAllocTensor is R.memory.alloc_tensor(storage, offset, shape, dtype, runtime_device_ind=0)
	// (the keyword is python/tvm/relax/op/memory/memory.py's name).
	MemAllocTensor = Define(Def{Op: newAllocTensorOp("relax.memory.alloc_tensor",
		"Carves a tensor out of a storage at a byte offset.", ir.CatMemory, []ir.Param{
			{Name: "storage", Kind: ir.ArgExpr},
			{Name: "offset", Kind: ir.ArgPrimValue},
			{Name: "shape", Kind: ir.ArgShape},
			{Name: "dtype", Kind: ir.ArgDType},
			{Name: "runtime_device_ind", Kind: ir.ArgPrimValue, Default: ir.NewPrimValue(ir.I64(0))},
		}, 2, 3)})
	// MemKillStorage is R.memory.kill_storage(storage).
	MemKillStorage = Define(Def{Op: newKillOp("relax.memory.kill_storage",
		"Ends the lifetime of a storage; impure.", ir.CatMemory, "storage")})
	// MemKillTensor is R.memory.kill_tensor(tensor).
	MemKillTensor = Define(Def{Op: newKillOp("relax.memory.kill_tensor",
		"Ends the lifetime of a tensor; impure.", ir.CatMemory, "tensor")})
)

// newAllocTensorOp builds an op returning a tensor whose shape and dtype are
// the arguments at positions shapePos and dtypePos.
func newAllocTensorOp(name, doc string, cat ir.OpCategory, params []ir.Param, shapePos, dtypePos int) *ir.Op {
	op := &ir.Op{Name: name, Doc: doc, Pure: true, Category: cat, Pattern: ir.PatternOpaque,
		LegalAtBuild: cat == ir.CatVM, // the relax.vm.* form is what VM codegen emits
		Params:       params}
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
	op := &ir.Op{Name: name, Doc: doc, Pure: true, Category: cat, Pattern: ir.PatternOpaque,
		LegalAtBuild: cat == ir.CatVM, // the relax.vm.* form is what VM codegen emits
		Params:       params}
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
	op := &ir.Op{Name: name, Doc: doc, Category: cat, Pattern: ir.PatternOpaque,
		LegalAtBuild: cat == ir.CatVM, // the relax.vm.* form is what VM codegen emits
		Params:       []ir.Param{{Name: param, Kind: ir.ArgExpr}}}
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

// MemView is R.memory.view(data, shape=None, dtype=None,
// relative_byte_offset=None) (TVM's src/relax/op/memory/view.cc): data's
// bytes seen with another shape and dtype, starting relative_byte_offset
// bytes in. An omitted argument is the void tuple R.tuple() and keeps
// data's shape or dtype (offset 0). The view must fit within data. It is
// pure and aliases data; LowerRuntimeBuiltin lowers it, as TVM's
// FLowerBuiltin does, to the packed function runtime.TVMArrayCreateView.
var MemView = Define(newMemViewOp())

func newMemViewOp() Def {
	op := &ir.Op{Name: "relax.memory.view", Doc: "A view of data's bytes with another shape, dtype and byte offset.", Pure: true, Category: ir.CatMemory, Pattern: ir.PatternOpaque,
		Params: []ir.Param{{Name: "data", Kind: ir.ArgExpr},
			{Name: "shape", Kind: ir.ArgShape, Default: ir.NewTuple()},
			{Name: "dtype", Kind: ir.ArgDType, Default: ir.NewTuple()},
			{Name: "relative_byte_offset", Kind: ir.ArgPrimValue, Default: ir.NewTuple()}}}
	op.Infer = func(_ *ir.InferCtx, call *ir.Call) (ir.StructInfo, error) {
		if len(call.Args) != 4 {
			return nil, opErrorf(op, "should receive 4 arguments, but received %d", len(call.Args))
		}
		t, err := tensorArg(op, call, 0)
		if err != nil {
			return nil, err
		}
		v, err := viewArgs(op, call)
		if err != nil {
			return nil, err
		}
		inDims, inKnown := t.Dims()
		outDims, outKnown, ndim := inDims, inKnown, t.NDim
		if v.shape != nil {
			outDims, outKnown, ndim = v.shape.Values, v.shape.Known(), v.shape.NDim
		}
		dt := t.DType
		if v.dtypeSet {
			dt = v.dtype
		}
		// TVM's bounds check, when everything is known.
		if inKnown && outKnown && !t.DType.IsVoid() && !dt.IsVoid() && v.offset != nil {
			inBytes := ir.Mul(shapeProduct(inDims), ir.I64(elemBytes(t.DType)))
			outBytes := ir.Mul(shapeProduct(outDims), ir.I64(elemBytes(dt)))
			var an ir.Analyzer
			if an.CanProve(ir.NewBinary(ir.OpGT, ir.Add(outBytes, v.offset), inBytes)) {
				return nil, opErrorf(op, "views into an existing array must fit within that array, but the view of %s bytes at byte offset %s exceeds the %s bytes of data",
					fmtDim(ir.Simplify(outBytes)), fmtDim(v.offset), fmtDim(ir.Simplify(inBytes)))
			}
		}
		if outKnown {
			return ir.TensorInfoOf(dt, outDims...), nil
		}
		return ir.TensorInfoNDim(dt, ndim), nil
	}
	op.Normalize = schemaNormalize(op)
	eval := func(call *ir.Call, args []Value) (Value, error) {
		x, ok := args[0].(*tensor.Tensor)
		if !ok {
			return nil, opErrorf(op, "data must be a tensor, got %s", KindOf(args[0]))
		}
		shape, dt, offset := x.Shape, x.DType, int64(0)
		if s, ok := args[1].(Shape); ok {
			shape = s
		}
		if d, ok := args[2].(DTypeValue); ok {
			var err error
			if dt, err = TensorDType(ir.DataType(d)); err != nil {
				return nil, opErrorf(op, "dtype: %v", err)
			}
		}
		if p, ok := args[3].(Prim); ok {
			offset = p.I
		}
		v, err := tensor.CreateView(x, shape, dt, offset)
		if err != nil {
			return nil, opErrorf(op, "%v", err)
		}
		return v, nil
	}
	return Def{Op: op, Eval: eval}
}

// viewArguments are R.memory.view's shape, dtype and offset: nil / unset
// when given as the void tuple.
type viewArguments struct {
	shape    *ir.ShapeInfo
	dtype    ir.DataType
	dtypeSet bool
	offset   ir.PrimExpr // nil when its value is unknown
}

func viewArgs(op *ir.Op, call *ir.Call) (viewArguments, error) {
	var v viewArguments
	isVoid := func(e ir.Expr) bool {
		t, ok := argStructInfo(e).(*ir.TupleInfo)
		return ok && len(t.Fields) == 0
	}
	switch s := argStructInfo(call.Args[1]).(type) {
	case *ir.ShapeInfo:
		v.shape = s
	default:
		if !isVoid(call.Args[1]) {
			return v, opErrorf(op, "expects second argument to be a ShapeExpr, or a void-type (empty relax tuple), but received %s", sinfoKind(s))
		}
	}
	if d, ok := call.Args[2].(*ir.DataTypeImm); ok {
		v.dtype, v.dtypeSet = d.Value, true
	} else if !isVoid(call.Args[2]) {
		if _, ok := argStructInfo(call.Args[2]).(*ir.ObjectInfo); !ok {
			return v, opErrorf(op, "expects the dtype argument to be a relax::DataTypeImm, but received %s", exprKind(call.Args[2]))
		}
		v.dtype, v.dtypeSet = ir.Void, true // a dtype known only at run time
	}
	v.offset = ir.I64(0)
	if !isVoid(call.Args[3]) {
		p, ok := argStructInfo(call.Args[3]).(*ir.PrimInfo)
		if !ok {
			return v, opErrorf(op, "expects the relative_byte_offset argument to be a Relax PrimValue, but received %s", sinfoKind(argStructInfo(call.Args[3])))
		}
		if p.DType != ir.Int64 {
			return v, opErrorf(op, "expects the relative_byte_offset to be a 64-bit integer, but received %s", p.DType)
		}
		v.offset = p.Value
	}
	return v, nil
}

// elemBytes is the size of one (vector) element of dt in bytes.
func elemBytes(dt ir.DataType) int64 {
	lanes := int64(max(dt.Lanes, 1))
	return (int64(dt.Bits)*lanes + 7) / 8
}
