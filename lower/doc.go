// Package lower holds the lowering passes that take a module from the
// Ingest/Optimize phases towards Lower and Build (relax-semantics.md §3.12,
// §3.13, §3.14, §3.22):
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
//   - AttachGlobalSymbol: global_symbol on every function (establishes
//     GlobalSymbols).
//
// Every pass is registered in package passes with its contract, so the
// static pipeline check enforces the ordering the passes rely on (§4.6):
// CallTIRRewrite before ToNonDataflow is refused before any IR is touched.
// The reason behind each requirement is data too (requirementReasons in
// package barrier), read by the PHASES.md generator.
//
// The passes never edit their input: they rebuild what changes
// (copy-on-write through ir.Mutator or ir.Rewriter) and re-normalize it, so
// every output is in normal form with struct info.
package lower
