// Package barrier moves modules between phases. A barrier runs a fixed
// sequence of passes and then checks every invariant of its target phase
// with package wellformed; only when all hold does it record the phase in
// the module (phase.Record). Otherwise it returns an *Error holding the
// checker's diagnostics, the last pass that ran, and, for each missing
// property, the pass that would establish it.
//
// The four barriers, each usable as a Go function and as a pipeline step
// of the same name (Barrier.Pass):
//
//	Canonicalize  any well-formed module -> Ingest   (step "canonicalize")
//	Optimize      Ingest/Optimize -> Optimize         (step "optimize")
//	Lower         Ingest/Optimize -> Lower            (step "lower")
//	Build         Lower -> Build                      (step "build")
//
// Optimize is TVM's named optimization pipeline (relax.get_pipeline): it
// runs optimizeSteps to a fixpoint, each pass gated by the opt level, and
// is itself gated at opt level 1, so at -O0 a pipeline skips it and the
// module reaches the lower barrier in phase ingest. The other barriers
// always run and run every step.
//
// A barrier's sequence is data (Barrier.Steps): a list of pass values, so
// a missing step is a compile error, and the generated PHASES.md shows the
// whole pipeline with every step's contract. The passes a barrier runs are
// not gated by the opt level (those of Optimize are): a barrier is one step
// of the enclosing pipeline, and as a pipeline step it runs them through
// passes.Env.Run, so instruments see each of them.
//
// Registry holds every pass of phasec (the barriers and their steps); it
// resolves the names of textual pipelines and is what the contract audit
// runs and PHASES.md lists.
//
// Ordering facts that do not follow from the property contracts are data
// too (Constraints), each with its reason: the derived ones take it from
// the requiring pass's contract (passes.Info.Requires), the others state
// it; PHASES.md lists both kinds.
package barrier
