// Package ir is phasec's intermediate representation: Relax functions and TIR
// PrimFuncs side by side in a Module, the StructInfo lattice, symbolic int64
// arithmetic, the operator registry, the normalizing Builder every pass emits
// through, traversal helpers and structural equality.
//
// # Model
//
// A Module maps unique global names to functions (Relax *Function and TIR
// *PrimFunc) and carries attributes; the module's phase lives in its
// attributes under AttrPhase.
//
// Relax expressions (Expr) are immutable trees once normalized. Variables
// (*Var) have identity by pointer; their Name is a printing hint only. A
// function body is a SeqExpr: binding blocks (plain or dataflow) followed by
// a result. Every expression except *Op carries StructInfo after
// normalization.
//
// StructInfo is Relax's type-and-static-value information: Object (top),
// Prim, Shape, Tensor, Tuple and Func. Shapes are symbolic: dimensions are
// int64 PrimExprs over *PrimVar symbolic variables, compared after canonical
// simplification (Simplify, CanProveEqual).
//
// TIR is loop-level code: PrimFuncs whose parameters are handles viewed as
// Buffers, with For loops, Blocks (iteration variables, read/write regions,
// reduction init), stores and loads.
//
// # Invariants of a normalized function
//
//   - A-normal form: call operands, tuple fields, If conditions and SeqExpr
//     results are leaves or tuples of leaves; anything else is bound first.
//   - Function bodies and If branches are SeqExprs; SeqExprs appear nowhere else.
//   - No empty blocks; no two adjacent blocks of the same kind.
//   - Every expression has struct info, and a binding's annotation is a base
//     of (less or equally specific than) its value's inferred info.
//
// # Symbolic arithmetic
//
// The canonical simplifier and prover (the arith*.go files) operate on
// PrimExprs, and ir's own definitions use them: structural equality and
// hashing compare integer expressions in canonical form (equal_prim.go,
// hash.go), the StructInfo lattice decides shape and value equality with
// CanProveEqual (lattice.go, lattice_lca.go), erasure simplifies after
// substitution (lattice_erase.go), and index maps are applied and their
// ranges bounded with them (index_map.go). An ir/arith package importing ir would therefore be an
// import cycle, and a hook installed by it would make ir's equality depend
// on what a binary links; moving PrimExpr below both takes TIR's Buffer
// with it. So the arithmetic is a separate unit inside ir, its boundary
// checked by a test (arith_boundary_test.go), not a separate package.
//
// # Rules for pass authors
//
// Never edit a node reachable from a module you were given: build new nodes
// (the Mutator helpers copy only what changed and return the same node when
// nothing did). Never recurse over bindings: iterate; recursion depth may
// grow only with expression nesting, never with program length.
package ir
