package syntax

import "github.com/phasec/phasec/ir"

// Opaque TIR intrinsics: T.* expression functions TVM v0.23's parser
// resolves (python/tvm/script/ir_builder/tir/ir.py, python/tvm/tir/op.py)
// that phasec's kernels do not compute. They parse into a PrimCall of that
// name with the result type TVM gives, and print back as written; the
// kernel interpreter reports them if a module that uses them is run.

// opaqueIntrinsics maps a name to its result type rule: "arg0" (the first
// argument's type), "dtype0" (a leading dtype string argument, as
// T.call_extern("float32", "f", x)), "arg1" (the second argument's type,
// as tvm_warp_shuffle's value), "bool", "int32", "handle", or "lanes" (the
// first argument's type widened to the constant lane count the last
// argument gives: the vector expressions T.Broadcast(value, lanes) and
// T.Ramp(base, stride, lanes), which TVM's printer writes under these
// names, src/script/printer/tir/expr.cc).
var opaqueIntrinsics = map[string]string{
	"call_extern": "dtype0", "call_pure_extern": "dtype0", "call_intrin": "dtype0",
	"call_llvm_intrin": "dtype0", "call_llvm_pure_intrin": "dtype0", "call_packed": "int32",
	"call_cpacked": "int32", "tvm_call_packed": "int32",
	"ldexp": "arg0", "nextafter": "arg0", "copysign": "arg0", "hypot": "arg0", "fmod": "arg0",
	"atan2": "arg0", "q_multiply_shift": "arg0", "q_multiply_shift_per_axis": "arg0",
	"ceildiv": "arg0", "tvm_thread_invariant": "arg0",
	"isnullptr": "bool", "assume": "bool", "vscale": "int32", "dp4a": "int32",
	"Broadcast": "lanes", "Ramp": "lanes",
	// Lowered-TIR builtins (python/tvm/tir/op.py gives their types).
	"tvm_storage_sync": "int32", "tvm_call_packed_lowered": "int32", "tvm_call_cpacked": "int32",
	"tvm_call_cpacked_lowered": "int32", "call_packed_lowered": "int32", "call_cpacked_lowered": "int32",
	"tvm_warp_shuffle": "arg1", "tvm_warp_shuffle_up": "arg1", "tvm_warp_shuffle_down": "arg1",
	"tvm_stack_alloca": "handle", "tvm_thread_allreduce": "handle", "tvm_throw_last_error": "handle",
}

// vectorArity is the argument count of the "lanes" intrinsics.
var vectorArity = map[string]int{"Broadcast": 2, "Ramp": 3}

func (bd *builder) opaqueIntrinsic(a *ast, name, ret string) ir.PrimExpr {
	args := a.Items
	if len(args) == 0 && ret != "int32" && ret != "handle" {
		bd.fail(a.Span, "T.%s takes arguments", name)
	}
	ops := make([]ir.PrimExpr, len(args))
	for i, x := range args {
		ops[i] = bd.prim(x)
	}
	var t ir.DataType
	switch ret {
	case "lanes":
		if n := vectorArity[name]; len(ops) != n {
			bd.fail(a.Span, "T.%s takes %d arguments, found %d", name, n, len(ops))
		}
		lanes, ok := ops[len(ops)-1].(*ir.IntImm)
		if !ok || lanes.Value < 2 || lanes.Value > 65535 {
			bd.fail(args[len(args)-1].Span, "expected a constant lane count of at least 2 as the last argument of T.%s", name)
		}
		elem := ops[0].DType()
		if !elem.IsScalar() {
			bd.fail(args[0].Span, "T.%s needs a scalar first argument, found %s", name, elem)
		}
		if name == "Ramp" && ops[1].DType() != elem {
			bd.fail(args[1].Span, "T.Ramp's stride must have the base's dtype %s, found %s", elem, ops[1].DType())
		}
		t = elem.WithLanes(int(lanes.Value))
	case "bool":
		t = ir.Bool
	case "int32":
		t = ir.Int32
	case "handle":
		t = ir.Handle
	case "arg1":
		if len(ops) < 2 {
			bd.fail(a.Span, "T.%s takes at least 2 arguments, found %d", name, len(ops))
		}
		t = ops[1].DType()
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
