// Package barrier moves modules between phases. A barrier runs a fixed
// sequence of passes and then checks every invariant of its target phase
// with package wellformed; only when all hold does it record the phase in
// the module (phase.Record). Otherwise it returns an *Error holding the
// checker's diagnostics, the last pass that ran, and, for each missing
// property, the pass that would establish it, saying so when that pass is
// not implemented yet.
//
// The three barriers, each usable as a Go function and as a registered
// pipeline step of the same name:
//
//	Canonicalize  any well-formed module -> Ingest   (step "canonicalize")
//	Lower         Ingest/Optimize -> Lower            (step "lower")
//	Build         Lower -> Build                      (step "build")
//
// A barrier's sequence is data (Barrier.Steps): implemented passes are
// looked up in the passes registry, pending ones (LegalizeOps, VMShapeLower,
// ...) are listed with the contract they will have, so the generated
// PHASES.md shows the whole pipeline and a new pass slots in by being
// registered under its name. The passes a barrier runs are executed without
// instruments and without opt-level gating: a barrier is one step of the
// enclosing pipeline (AlwaysRun).
//
// Ordering facts that do not follow from the property contracts are data
// too (Constraints), each with its reason; PHASES.md lists both kinds.
package barrier
