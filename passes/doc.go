// Package passes is phasec's pass infrastructure: passes as Go values
// declared as data, registries of them for textual pipelines, a
// PassContext with gating and instruments, and a static check of a
// pipeline's phase/property flow before it runs.
//
// # Model
//
// A pass maps a module to a new module; it never mutates its input (the
// ImmutableInput instrument enforces this). A pass is a package-level value
// built once by Define from an Info and an implementation (Module,
// Functions, PrimFuncs, DataflowBlocks), as golang.org/x/tools/go/analysis
// defines analyzers; nothing registers itself at init. The Info holds its
// name, a one-line doc, its opt level, the passes it expects to have run
// before it (Prerequisites), its typed Options and its phase contract: the
// phases it Accepts (empty means any), the phase it Leaves the module in
// (Unchanged by default), the properties it Requires, each with the reason
// it needs it (Define rejects a requirement without one), and those it
// Establishes and Invalidates (and, rarely, Preserves). A phase is a named
// bundle of properties (phase.Phase.Invariants). Every pass needs
// WellFormed.
//
// Code that lists passes (a barrier's steps, a Go pipeline) lists the
// values, so a missing pass is a compile error. Names are resolved only
// where text is: a Registry, built from values (barrier.Registry holds
// every pass of phasec), parses textual pipelines and resolves the names
// of PassContext.Required and Disabled.
//
// # What a contract claims
//
// The state after a pass is computed by Info.Apply: a pass keeps the
// properties of phases up to its Horizon (the latest phase its contract
// names) that it does not invalidate, plus those it Preserves, and adds
// those it Establishes; properties of later phases are dropped, because a
// pass cannot vouch for properties it has never heard of (they often hold
// vacuously, and the pass may add the first counterexample). The module's
// recorded phase follows: the latest phase no later than the input's whose
// invariants still hold. The contract audit (barrier/audit_test.go) checks
// every claim of every pass of barrier.Registry on the corpus.
//
// Kinds: module passes, function passes over Relax functions (functions with
// ir.AttrSkipOptimize set are skipped; the functions can be transformed in
// parallel, with output identical to the sequential run), PrimFunc passes,
// dataflow-block passes (which may not change a block's interface: its output
// vars and their struct info) and Sequentials, which nest.
//
// # Running
//
// PassContext.Run first validates the context (unknown pass names in the
// Required and Disabled lists, unknown config keys), then statically checks
// the pipeline (Check) against what holds of the input module (StartState:
// wellformed.Infer, one walk; a recorded phase whose invariants the content
// does not satisfy is refused with CHK004 and the violations, never trusted)
// and only then touches IR. A hint for a refused step names only passes
// that can run on the module as it is, never the refused step itself, or
// the shortest chain of passes that gets the module there. Gating follows TVM: a disabled pass never runs; a required
// (or AlwaysRun) pass always runs; otherwise a pass runs when the context's
// opt level is at least the pass's. Missing Prerequisites are a
// static error unless RunPrerequisites is set, in which case a prerequisite
// that has not yet run in this Run is run just before the pass that needs it.
//
// # Instruments
//
// For each pass execution the hooks are called in this order, each in the
// order the instruments are listed in the context:
//
//	EnterContext (all, once per Run)
//	  ShouldRun   (only for optional passes; any false skips the pass)
//	  PassSkipped (when gating or ShouldRun skipped it)
//	  BeforePass
//	  <pass>
//	  AfterPass or AfterPassFailed
//	ExitContext (all whose EnterContext succeeded, even after a failure)
//
// Sequentials get BeforePass/AfterPass around their children (Event.Kind is
// KindSequential); printing instruments ignore them. A Fixpoint
// (fixpoint(...) in pipeline text) is a Sequential whose children run in
// rounds, each round a nested Sequential "round N", until a round changes
// nothing or the config key FixpointMaxIterations is reached (warning
// PIPE004).
//
// Failures: a pass that returns an error or panics is reported with its name
// and the phase the module was in (a panic is recovered, never crashes the
// caller); AfterPassFailed hooks run, the run stops, and the exit hooks still
// run. An instrument whose hook returns an error (or panics) aborts the run
// with an error naming the instrument and the hook; the exit hooks of the
// instruments that entered still run. All errors are returned together.
//
// Change detection is cheap: a pass that returns its input module pointer
// (function passes do when no function changed) is unchanged without
// hashing; otherwise one ir.StructuralHash of the output decides, the input's
// hash being remembered from the previous pass. Hashes are computed only
// when an installed instrument needs them (is not ChangeBlind).
//
// Module versions are released as soon as the pipeline is done with them:
// once a pass's BeforePass hooks have run, the runner refers to its input
// only through the pass's own argument (and through Event.Before if some
// instrument is not InputBlind), so a barrier's input can be collected while
// its later passes run.
package passes
