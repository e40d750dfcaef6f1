// Package lower holds the lowering passes that take a module from the
// Ingest/Optimize phases towards Lower and Build, after TVM's
// src/relax/transform/{to_non_dataflow,remove_purity_checking,call_tir_rewrite,
// static_plan_block_memory,lower_alloc_tensor,kill_after_last_use,compute_prim_value,
// attach_global_symbol}.cc and src/relax/backend/vm/{lower_runtime_builtin,vm_shape_lower}.cc:
//
//   - ToNonDataflow: dataflow blocks become plain blocks, dataflow vars
//     plain vars (establishes NoDataflow).
//   - RemovePurityChecking: relax.force_pure on every pure function, the
//     pure overrides call_pure_packed / call_inplace_packed /
//     invoke_pure_closure unwrapped
//     (requires NoDataflow, establishes PurityRelaxed).
//   - CallTIRRewrite: call_tir / call_tir_inplace / call_dps_packed become
//     explicit R.builtin.alloc_tensor outputs plus a direct DPS call, or
//     R.vm.call_tir_dyn when tir_vars are given (requires NoDataflow and
//     PurityRelaxed, establishes NoCallTIR and ExplicitMemory).
//   - StaticPlanBlockMemory: storage tokens, block-local reuse by reuse
//     class (storage scope and dtype) within TVM's size window, sizes bounded
//     by tir_var_upper_bound; planned allocations become
//     R.memory.alloc_storage + R.memory.alloc_tensor. Option
//     planner=offsets places tensors at offsets in one arena per reuse class
//     instead; the plan's bytes, the other planner's and the lower bound
//     (peak live bytes) are pass statistics (--summary).
//   - LowerAllocTensor: the remaining R.builtin.alloc_tensor get a uint8
//     storage each.
//   - KillAfterLastUse: R.memory.kill_tensor / kill_storage / R.vm.kill_object
//     after each value's last use, after removing trivial bindings.
//   - LowerRuntimeBuiltin: memory ops to R.vm.*, reshape, shape_of,
//     tensor_to_shape, call_tir_dyn and closures to vm.builtin packed calls
//     (establishes BuiltinsLowered).
//   - ComputePrimValue: R.prim_value expressions that are neither constants
//     nor bare variables become calls to generated host PrimFuncs
//     (compute_symbolic_expr).
//   - VMShapeLower: the per-call shape heap; argument checks at function
//     entry, match_cast and return checks (vm.builtin.check_*_info,
//     match_shape, match_prim_value), composite dimensions computed by
//     generated shape_func PrimFuncs, symbolic ShapeExpr and PrimValue values
//     built from the heap (make_shape, make_prim_value); requires
//     NoNestedFunctions (establishes ShapesLowered).
//   - AttachGlobalSymbol: global_symbol on every function (establishes
//     GlobalSymbols).
//
// Memory planning (plan_tokens.go, plan_bounds.go, plan_offsets.go) walks
// bindings in loops; recursion follows If nesting only, and its per-var
// tables are address-keyed ptrmaps, so 100k-binding functions plan in
// linear time.
//
// Every pass is a package-level value (passes.Define) carrying its
// contract, so the static pipeline check enforces the ordering the passes
// rely on (PHASES.md lists them): CallTIRRewrite before ToNonDataflow is
// refused before any IR is touched. The reason behind each requirement sits
// next to it in the contract (Info.Requires), read by the PHASES.md
// generator. The function doing a pass's work has another name (LegalizeOps
// runs LegalizeModule, StaticPlanBlockMemory PlanBlockMemory, VMShapeLower
// LowerShapes, ComputePrimValue ComputePrimValues).
//
// The passes never edit their input: they rebuild what changes
// (copy-on-write through ir.Mutator or ir.Rewriter) and re-normalize it, so
// every output is in normal form with struct info.
package lower
