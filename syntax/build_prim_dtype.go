package syntax

import (
	"slices"
	"strings"
)

// The dtype= keyword of T.* intrinsics. TVM's IR builder wraps most TIR
// intrinsics so that a dtype= keyword is dropped before the call
// (_op_wrapper in python/tvm/script/ir_builder/tir/ir.py): TVM's printer
// used to write it, and TVM's own legalized kernels still carry it,
// T.exp(x, dtype="float32"). A few intrinsics instead take it as their
// leading result type (_dtype_forward there): T.reinterpret(x,
// dtype="int32") is T.reinterpret("int32", x). dtypeKeyword applies both
// rules before the call is built.

// dtypeDropped are the intrinsics whose dtype= keyword TVM drops.
var dtypeDropped = setOf("abs acos acosh address_of asin asinh atan atan2 atanh bitwise_and " +
	"bitwise_not bitwise_or bitwise_xor ceil clz copysign cos cosh erf exp exp2 exp10 floor " +
	"ceildiv floordiv floormod fmod hypot if_then_else infinity isfinite isinf isnan isnullptr " +
	"ldexp likely log log1p log2 log10 lookup_param max_value min_value nearbyint nextafter " +
	"popcount pow q_multiply_shift q_multiply_shift_per_axis ret continue_loop break_loop round " +
	"rsqrt shift_left shift_right sigmoid sin sinh sqrt tan tanh thread_return trunc truncdiv " +
	"truncmod tvm_access_ptr tvm_throw_last_error tvm_stack_alloca tvm_stack_make_shape " +
	"tvm_stack_make_array call_packed call_cpacked call_packed_lowered call_cpacked_lowered " +
	"tvm_tuple handle_add_byte_offset tvm_struct_set tvm_thread_invariant tvm_thread_allreduce " +
	"tvm_load_matrix_sync tvm_mma_sync tvm_bmma_sync tvm_fill_fragment tvm_store_matrix_sync " +
	"ptx_wait_group ptx_commit_group ptx_cp_async_barrier ptx_init_barrier_thread_count " +
	"ptx_arrive_barrier ptx_arrive_barrier_expect_tx ptx_wait_barrier " +
	"make_filled_simdgroup_matrix simdgroup_load simdgroup_store simdgroup_multiply_accumulate " +
	"create_barriers assume undef TVMBackendAllocWorkspace TVMBackendFreeWorkspace " +
	"start_profile_intrinsic end_profile_intrinsic anylist_getitem anylist_resetitem " +
	"anylist_setitem_call_packed anylist_setitem_call_cpacked vscale ignore_loop_partition")

// dtypeForwarded are the intrinsics whose dtype= keyword TVM passes as the
// leading argument.
var dtypeForwarded = setOf("reinterpret call_extern call_intrin call_llvm_intrin " +
	"call_llvm_pure_intrin call_pure_extern ptx_mma ptx_mma_sp ptx_ldmatrix ptx_cp_async " +
	"ptx_cp_async_bulk mma_store mma_fill vectorlow vectorhigh vectorcombine " +
	"get_active_lane_mask dp4a")

func setOf(names string) map[string]bool {
	m := map[string]bool{}
	for _, n := range strings.Fields(names) {
		m[n] = true
	}
	return m
}

// dtypeKeyword returns the call a of the intrinsic name with its dtype=
// keyword applied as TVM applies it: dropped (after checking it names a
// type, which TVM does not) or moved first. Other calls come back as they
// are.
func (bd *builder) dtypeKeyword(a *ast, name string) *ast {
	k := slices.Index(a.Keywords, "dtype")
	if k < 0 || !dtypeDropped[name] && !dtypeForwarded[name] {
		return a
	}
	kw := a.Items[k]
	b := *a
	b.Items = slices.Delete(slices.Clone(a.Items), k, k+1)
	b.Keywords = slices.Delete(slices.Clone(a.Keywords), k, k+1)
	if dtypeDropped[name] {
		bd.dtypeLiteral(kw)
		return &b
	}
	b.Items = slices.Insert(b.Items, 0, kw)
	b.Keywords = slices.Insert(b.Keywords, 0, "")
	return &b
}
