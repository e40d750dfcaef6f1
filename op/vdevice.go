package op

import (
	"fmt"

	"github.com/phasec/phasec/ir"
)

// Virtual-device ops (python/tvm/relax/op/base.py, src/relax/op/op.cc).
// phasec runs everything on the host, so both evaluate to their input.
// LegalizeOps leaves them (CatShape) and LowerRuntimeBuiltin turns them
// into vm.builtin.to_device, as TVM's MakeToDevice does for to_vdevice
// (src/relax/backend/vm/lower_runtime_builtin.cc).

var (
	// ToVDevice is R.to_vdevice(data, dst_vdevice): a copy of data on the
	// virtual device dst_vdevice (an attribute holding an *ir.VDevice).
	ToVDevice = Define(newToVDeviceOp())
	// HintOnDevice is R.hint_on_device(data, dst_vdevice, memory_scope):
	// a hint that data should live on a device (RealizeVDevice consumes it).
	HintOnDevice = Define(newHintOnDeviceOp())
)

func newToVDeviceOp() Def {
	op := &ir.Op{
		Name: "relax.to_vdevice", Doc: "Copies a tensor to a virtual device of the module.",
		Pure: true, Category: ir.CatShape, Pattern: ir.PatternOpaque,
		Params: []ir.Param{{Name: "data", Kind: ir.ArgExpr}, {Name: "dst_vdevice", Kind: ir.AttrAny}},
	}
	// TVM's InferToVDeviceStructInfo: the input's shape and dtype on the
	// destination device.
	op.Infer = func(_ *ir.InferCtx, call *ir.Call) (ir.StructInfo, error) {
		t, err := firstTensorArg(op, call)
		if err != nil {
			return nil, err
		}
		dev, ok := call.Attrs["dst_vdevice"].(*ir.VDevice)
		if !ok {
			return nil, fmt.Errorf("dst_vdevice must be a virtual device of the module, found %s", ir.FormatAttrValue(call.Attrs["dst_vdevice"]))
		}
		out := *t
		out.VDevice = dev
		return &out, nil
	}
	eval := func(_ *ir.Call, args []Value) (Value, error) { return args[0], nil }
	return Def{Op: op, Eval: eval}
}

func newHintOnDeviceOp() Def {
	op := &ir.Op{
		Name: "relax.hint_on_device", Doc: "Hints the device a tensor should live on; its value is the input.",
		Pure: true, Category: ir.CatShape, Pattern: ir.PatternOpaque,
		Params: []ir.Param{
			{Name: "data", Kind: ir.ArgExpr},
			{Name: "dev_type", Kind: ir.AttrInt}, {Name: "dev_id", Kind: ir.AttrInt},
			{Name: "memory_scope", Kind: ir.AttrStr, Default: "global"},
		},
	}
	// TVM's InferHintOnDeviceStructInfo: the input's struct info.
	op.Infer = func(_ *ir.InferCtx, call *ir.Call) (ir.StructInfo, error) {
		t, err := firstTensorArg(op, call)
		if err != nil {
			return nil, err
		}
		return t, nil
	}
	eval := func(_ *ir.Call, args []Value) (Value, error) { return args[0], nil }
	return Def{Op: op, Eval: eval}
}
