package syntax

import (
	"slices"
	"strconv"

	"github.com/phasec/phasec/ir"
)

// Opaque TIR intrinsics: T.* expression functions TVM v0.23's parser
// resolves (python/tvm/script/ir_builder/tir/ir.py, python/tvm/kernel/op.py)
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
	// Lowered-TIR builtins (python/tvm/kernel/op.py gives their types).
	"tvm_storage_sync": "int32", "tvm_call_packed_lowered": "int32", "tvm_call_cpacked": "int32",
	"tvm_call_cpacked_lowered": "int32", "call_packed_lowered": "int32", "call_cpacked_lowered": "int32",
	"tvm_warp_shuffle": "arg1", "tvm_warp_shuffle_up": "arg1", "tvm_warp_shuffle_down": "arg1",
	"tvm_stack_alloca": "handle", "tvm_thread_allreduce": "handle", "tvm_throw_last_error": "handle",
	// Vector, pointer and GPU intrinsics (python/tvm/kernel/op.py): "dtype"
	// takes the result type as a leading dtype string that TVM prints first
	// (TScriptDtypePrintLocation kFirst, src/tir/op/builtin.cc) but does
	// not keep as an argument; "void" returns nothing (call_intrin("", ...)).
	"vectorlow": "dtype", "vectorhigh": "dtype", "vectorcombine": "dtype", "type_annotation": "dtype",
	"ptx_mma": "dtype", "ptx_mma_sp": "dtype", "ptx_ldmatrix": "dtype", "ptx_cp_async": "dtype",
	"ptx_cp_async_bulk": "dtype", "mma_store": "dtype", "mma_fill": "dtype",
	"ptx_commit_group": "void", "ptx_wait_group": "void", "ptx_cp_async_barrier": "void",
	"ptx_init_barrier_thread_count": "void", "ptx_arrive_barrier": "void", "ptx_arrive_barrier_expect_tx": "void",
	"ptx_wait_barrier": "void", "create_barriers": "void",
	"tvm_access_ptr": "handle", "address_of": "handle", "tvm_mma_sync": "handle", "tvm_bmma_sync": "handle",
	"tvm_fill_fragment": "handle", "tvm_load_matrix_sync": "handle", "tvm_store_matrix_sync": "handle",
	"Shuffle": "shuffle",
	// Host-side builtins of lowered PrimFuncs (MakePackedAPI,
	// LowerTVMBuiltin, profiling; python/tvm/kernel/op.py gives their types).
	// "dtypeLast" takes the result type as a trailing dtype string, printed
	// last (TScriptDtypePrintLocation kLast): T.tvm_struct_get(A, 0, 1, "int32").
	"tvm_struct_get": "dtypeLast", "tvm_struct_set": "int32", "tvm_stack_make_shape": "handle",
	"tvm_stack_make_array": "handle", "tvm_tuple": "handle", "tvm_warp_activemask": "uint32",
	"handle_add_byte_offset": "handle", "undef": "int32", "lookup_param": "handle",
	"TVMBackendAllocWorkspace": "handle", "TVMBackendFreeWorkspace": "int32",
	"start_profile_intrinsic": "handle", "end_profile_intrinsic": "handle",
	"anylist_getitem": "handle", "anylist_resetitem": "int32",
	"anylist_setitem_call_packed": "int32", "anylist_setitem_call_cpacked": "int32",
	"thread_return": "void", "continue_loop": "void", "break_loop": "void",
	"llvm_lookup_intrinsic_id": "uint32", "get_active_lane_mask": "dtype",
	"simdgroup_load": "handle", "simdgroup_store": "handle", "simdgroup_multiply_accumulate": "handle",
	"make_filled_simdgroup_matrix": "handle",
}

// opaqueArity is the argument count python/tvm/kernel/op.py's builder takes
// (after the leading dtype for "dtype" ops; -1 with a minimum for optional
// trailing arguments).
var opaqueArity = map[string][2]int{
	"vectorlow": {1, 1}, "vectorhigh": {1, 1}, "vectorcombine": {2, 2}, "type_annotation": {0, 0},
	"ptx_mma": {13, 14}, "ptx_mma_sp": {16, 16}, "ptx_ldmatrix": {7, 7}, "ptx_cp_async": {5, 5},
	"ptx_cp_async_bulk": {6, 6}, "mma_store": {6, 6}, "mma_fill": {3, 3},
	"ptx_commit_group": {0, 0}, "ptx_wait_group": {1, 1}, "ptx_cp_async_barrier": {1, 1},
	"ptx_init_barrier_thread_count": {2, 2}, "ptx_arrive_barrier": {1, 1}, "ptx_arrive_barrier_expect_tx": {2, 2},
	"ptx_wait_barrier": {1, 1}, "create_barriers": {1, 1},
	"tvm_access_ptr": {5, 5}, "address_of": {1, 1}, "tvm_mma_sync": {8, 8}, "tvm_bmma_sync": {8, 8},
	"tvm_fill_fragment": {6, 6}, "tvm_load_matrix_sync": {8, 8}, "tvm_store_matrix_sync": {8, 8},
	"Shuffle":        {2, 2},
	"tvm_struct_get": {3, 3}, "tvm_struct_set": {4, 4}, "tvm_stack_make_array": {6, 6},
	"tvm_warp_activemask": {0, 0}, "handle_add_byte_offset": {2, 2}, "undef": {0, 0}, "lookup_param": {1, 1},
	"TVMBackendAllocWorkspace": {5, 5}, "TVMBackendFreeWorkspace": {3, 3},
	"start_profile_intrinsic": {1, 1}, "end_profile_intrinsic": {1, 1},
	"anylist_getitem": {2, 2}, "anylist_resetitem": {2, 2},
	"thread_return": {0, 0}, "continue_loop": {0, 0}, "break_loop": {0, 0},
	"llvm_lookup_intrinsic_id": {1, 1}, "get_active_lane_mask": {2, 2},
	"simdgroup_load": {6, 7}, "simdgroup_store": {6, 7}, "simdgroup_multiply_accumulate": {8, 8},
	"make_filled_simdgroup_matrix": {3, 5},
}

// vectorArity is the argument count of the "lanes" intrinsics.
var vectorArity = map[string]int{"Broadcast": 2, "Ramp": 3}

func (bd *builder) opaqueIntrinsic(a *ast, name, ret string) ir.PrimExpr {
	args := a.Items
	var dt ir.DataType
	if k := slices.Index(a.Keywords, "dtype"); k >= 0 && ret == "dtype" {
		// dtype= given by keyword, as older TVMScript wrote it.
		dt = bd.dtypeLiteral(args[k])
		args = slices.Delete(slices.Clone(args), k, k+1)
	} else if ret == "dtype" {
		if len(args) == 0 {
			bd.fail(a.Span, "T.%s takes the result dtype first", name)
		}
		dt, args = bd.dtypeLiteral(args[0]), args[1:]
	} else if ret == "dtypeLast" {
		if len(args) == 0 {
			bd.fail(a.Span, "T.%s takes the result dtype last", name)
		}
		dt, args = bd.dtypeLiteral(args[len(args)-1]), args[:len(args)-1]
	}
	if n, ok := opaqueArity[name]; ok && (len(args) < n[0] || len(args) > n[1]) {
		want := plural(n[0], "argument")
		if n[1] > n[0] {
			want = strconv.Itoa(n[0]) + " or " + strconv.Itoa(n[1]) + " arguments"
		}
		switch ret {
		case "dtype":
			want += " after the dtype"
		case "dtypeLast":
			want += " before the dtype"
		}
		bd.fail(a.Span, "T.%s takes %s, found %d", name, want, len(args))
	}
	switch name {
	case "Shuffle":
		return bd.shuffle(a)
	case "address_of":
		return &ir.PrimCall{Op: name, Args: []ir.PrimExpr{bd.addressee(args[0])}, Type: ir.Handle}
	}
	if len(args) == 0 && ret != "int32" && ret != "uint32" && ret != "handle" && ret != "dtype" && ret != "void" {
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
	case "dtype", "dtypeLast":
		t = dt
	case "uint32":
		t = ir.UInt32
	case "void":
		t = ir.Void
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

// addressee converts the argument of T.address_of: a buffer element, or a
// buffer (its first element, as python/tvm/kernel/op.py's address_of does).
func (bd *builder) addressee(a *ast) ir.PrimExpr {
	if a.Kind == aName {
		if s := bd.lookup(a.Name); s != nil && s.buf != nil {
			idx := make([]ir.PrimExpr, len(s.buf.Shape))
			for i := range idx {
				idx[i] = ir.NewInt(ir.Int32, 0)
			}
			return &ir.BufferLoad{Buffer: s.buf, Indices: idx}
		}
	}
	e := bd.prim(a)
	if _, ok := e.(*ir.BufferLoad); !ok {
		bd.fail(a.Span, "T.address_of takes a buffer element such as A[i], found %s", a.describe())
	}
	return e
}

// shuffle converts T.Shuffle(vectors, indices), TVM's Shuffle node
// (src/tir/ir/expr.cc): the lanes of the concatenated vectors picked by
// indices, of the vectors' element type with one lane per index. It is
// kept as PrimCall "Shuffle" of two tvm_tuple lists.
func (bd *builder) shuffle(a *ast) ir.PrimExpr {
	list := func(x *ast, what string) []ir.PrimExpr {
		if x.Kind != aList && x.Kind != aTuple || len(x.Items) == 0 {
			bd.fail(x.Span, "T.Shuffle takes a non-empty list of %s, found %s", what, x.describe())
		}
		out := make([]ir.PrimExpr, len(x.Items))
		for i, it := range x.Items {
			out[i] = bd.prim(it)
		}
		return out
	}
	vecs, idx := list(a.Items[0], "vectors"), list(a.Items[1], "indices")
	elem := vecs[0].DType().Element()
	lanes := 0
	for i, v := range vecs {
		if v.DType().Element() != elem {
			bd.fail(a.Items[0].Items[i].Span, "T.Shuffle's vectors must share the element type %s, found %s", elem, v.DType())
		}
		lanes += int(max(v.DType().Lanes, 1))
	}
	for i, x := range idx {
		if !x.DType().IsInteger() {
			bd.fail(a.Items[1].Items[i].Span, "a T.Shuffle index is an integer, found %s", x.DType())
		}
	}
	if len(idx) > lanes {
		bd.fail(a.Items[1].Span, "T.Shuffle picks %d lanes out of %d", len(idx), lanes)
	}
	tuple := func(l []ir.PrimExpr) ir.PrimExpr {
		return &ir.PrimCall{Op: "tvm_tuple", Args: l, Type: ir.Handle}
	}
	return &ir.PrimCall{Op: "Shuffle", Args: []ir.PrimExpr{tuple(vecs), tuple(idx)}, Type: elem.WithLanes(len(idx))}
}
