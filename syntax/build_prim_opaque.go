package syntax

import "github.com/phasec/phasec/ir"

// Opaque TIR intrinsics: T.* expression functions TVM v0.23's parser
// resolves (python/tvm/script/ir_builder/tir/ir.py, python/tvm/tir/op.py)
// that phasec's kernels do not compute. They parse into a PrimCall of that
// name with the result type TVM gives, and print back as written; the
// kernel interpreter reports them if a module that uses them is run.

// opaqueIntrinsics maps a name to its result type rule: "arg0" (the first
// argument's type), "dtype0" (a leading dtype string argument, as
// T.call_extern("float32", "f", x)), "bool", or "int32".
var opaqueIntrinsics = map[string]string{
	"call_extern": "dtype0", "call_pure_extern": "dtype0", "call_intrin": "dtype0",
	"call_llvm_intrin": "dtype0", "call_llvm_pure_intrin": "dtype0", "call_packed": "int32",
	"call_cpacked": "int32", "tvm_call_packed": "int32",
	"ldexp": "arg0", "nextafter": "arg0", "copysign": "arg0", "hypot": "arg0", "fmod": "arg0",
	"atan2": "arg0", "q_multiply_shift": "arg0", "q_multiply_shift_per_axis": "arg0",
	"ceildiv": "arg0", "tvm_thread_invariant": "arg0",
	"isnullptr": "bool", "vscale": "int32", "dp4a": "int32",
}

func (bd *builder) opaqueIntrinsic(a *ast, name, ret string) ir.PrimExpr {
	args := a.Items
	if len(args) == 0 && ret != "int32" {
		bd.fail(a.Span, "T.%s takes arguments", name)
	}
	ops := make([]ir.PrimExpr, len(args))
	for i, x := range args {
		ops[i] = bd.prim(x)
	}
	var t ir.DataType
	switch ret {
	case "bool":
		t = ir.Bool
	case "int32":
		t = ir.Int32
	case "dtype0":
		s, ok := ops[0].(*ir.PrimStr)
		if !ok {
			bd.fail(args[0].Span, "expected T.%s(dtype, ...) with a dtype string first", name)
		}
		dt, err := ir.ParseDataType(s.Value)
		if err != nil {
			bd.fail(args[0].Span, "unknown dtype %q in T.%s", s.Value, name)
		}
		t = dt
	default:
		t = ops[0].DType()
	}
	return &ir.PrimCall{Op: name, Args: ops, Type: t}
}
