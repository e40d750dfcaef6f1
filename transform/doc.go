// Package transform holds the Optimize-phase passes, TVM's
// relax.transform: general-purpose rewrites of Relax functions that keep
// the module in phase ingest/optimize (A-normal form, dataflow blocks,
// high-level ops). One file per pass, named after TVM's source file
// (canonicalize_bindings.go follows src/relax/transform/canonicalize_bindings.cc).
//
// Invariants every pass of the package keeps:
//   - it never edits its input: rewritten nodes are new, unchanged subtrees
//     are shared, and a pass that changes nothing returns its input (the
//     same pointer);
//   - it is linear in the size of the module: no quadratic scans, and no
//     recursion whose depth grows with the number of bindings (bindings are
//     processed in loops; recursion follows expression nesting only);
//   - its output is normalized (struct info re-derived for what changed),
//     so it keeps the invariants of phase ingest;
//   - bad input (an option naming what the module lacks, a tensor of the
//     wrong dtype or shape, inconsistent match_casts) is reported as
//     positioned diagnostics, with nothing half-applied: a pass applies
//     completely or not at all.
package transform
