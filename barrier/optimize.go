package barrier

import (
	"github.com/phasec/phasec/lower"
	"github.com/phasec/phasec/passes"
	"github.com/phasec/phasec/transform"
)

// optimizeSteps is the optimization sequence the optimize barrier runs to
// a fixpoint, each pass gated by the opt level: TVM's general-purpose
// graph optimizations in the order its documents name them (FoldConstant,
// CanonicalizeBindings, EliminateCommonSubexpr, DeadCodeElimination; run
// "possibly to fixpoint", since folding leaves trivial bindings,
// canonicalization leaves dead ones and elimination exposes more to fold).
// Their opt levels are TVM's: FoldConstant 0, the others 1.
//
// The passes live in package transform; each is listed here by value.
var optimizeSteps = []*passes.Pass{
	transform.FoldConstant,
	transform.CanonicalizeBindings,
	transform.EliminateCommonSubexpr,
	transform.DeadCodeElimination,
}

// Group is a declared unit of passes: members that only make sense
// together, in order, with the properties the module lacks between them.
// A group that a barrier runs (Barrier.Then) is one nested pipeline step,
// named after the group, so that --time-passes and the instruments show it.
type Group struct {
	// Name is the step name ("fusion").
	Name string
	// Doc is a one-line description.
	Doc string
	// OptLevel gates the group as a whole in its barrier.
	OptLevel int
	// Steps are the passes the barrier runs for the group, in order.
	Steps []*passes.Pass
	// Members names the group's own passes in order (Steps may add
	// preparation around them: LegalizeOps, FoldConstant, ...).
	Members []string
	// Hard: a member's output is only consumable by the next member.
	Hard bool
	// Why is the reasoning recorded in PHASES.md.
	Why []string

	pass *passes.Pass
}

// newGroup builds the group's pipeline step.
func newGroup(g *Group) *Group {
	if len(g.Steps) > 0 {
		g.pass = passes.Sequential(g.Name, g.Steps...)
	}
	return g
}

// FusionGroup is TVM's zero pipeline (python/tvm/relax/pipeline.py:
// LegalizeOps, AnnotateTIROpPattern, FoldConstant, FuseOps, FuseTIR),
// followed by DeadCodeElimination for the kernels fusion leaves unused.
// The optimize barrier runs it after its fixpoint at opt level 2 and above
// (the default), so `phasec build` fuses; `-O1` keeps one kernel per op.
var FusionGroup = newGroup(&Group{
	Name:     "fusion",
	Doc:      "legalize, annotate op patterns, fold, fuse by the post-dominator tree and turn each group into one PrimFunc",
	OptLevel: 2,
	Steps: []*passes.Pass{
		lower.LegalizeOps,
		transform.AnnotateTIROpPattern,
		transform.FoldConstant,
		transform.FuseOps,
		transform.FuseTIR,
		transform.DeadCodeElimination,
	},
	Members: []string{"AnnotateTIROpPattern", "FuseOps", "FuseTIR"},
	Hard:    true,
	Why: []string{
		"AnnotateTIROpPattern → FuseOps → FuseTIR are hard dependencies. FuseOps groups `call_tir` bindings by the op patterns of their PrimFuncs (`src/relax/transform/fuse_ops.cc` reads the `op_pattern` attribute; a PrimFunc without one is opaque and fuses with nothing), and it leaves `Primitive` Relax functions that nothing but FuseTIR can consume: LegalizeOps cannot legalize inside them, the lower barrier cannot lower them, VM codegen cannot call them. The property NoPrimitiveFunctions (`WF043`) says so: FuseOps invalidates it, FuseTIR establishes it, and it is an invariant of every phase, so a module between the two records no phase, is refused by every barrier and by LegalizeOps, and the diagnostic names the missing member (`run FuseTIR`).",
		"LegalizeOps runs before fusion, inside the group's step, as in TVM: TVM's FuseOps fuses `call_tir` by the patterns AnnotateTIROpPattern derives from the legalized PrimFuncs, and Relax ops carry no pattern of their own (TVM v0.23 registers no TOpPattern on Relax ops). Fusing high-level ops first (on `op.Def.Pattern`) and legalizing groups afterwards would need a second legalization path for grouped calls; legalizing first keeps one. The cost is that the optimize barrier at opt level 2 leaves a legalized module (Legalized holds, though phase optimize does not require it), and the lower barrier's LegalizeOps then finds nothing to do; on an unfused module (`-O1`, or `canonicalize,lower,build`) it legalizes as before.",
		"Passes between FuseOps and FuseTIR are not allowed by the contracts (every optimization pass accepts ingest|optimize, whose invariants include NoPrimitiveFunctions), which is TVM's practice made a rule: its pipelines never run anything between them.",
	},
})

// OffloadGroup documents the offload passes (TVM's BYOC flow,
// python/tvm/relax/transform/transform.py): FuseOpsByPattern →
// MergeCompositeFunctions → RunCodegen, soft dependencies (each may run
// alone: RunCodegen compiles what annotate_codegen already marked). No
// barrier runs it; a user puts it in a pipeline before the optimize
// barrier.
var OffloadGroup = newGroup(&Group{
	Name:    "offload",
	Doc:     "match composite patterns, merge them into functions per external codegen and compile those",
	Members: []string{"FuseOpsByPattern", "MergeCompositeFunctions", "RunCodegen"},
	Why: []string{
		"FuseOpsByPattern and MergeCompositeFunctions produce module-level functions with `Composite` and `Codegen` attributes, and MergeCompositeFunctions nests the `Composite` functions inside the `Codegen` function that calls them, as TVM does (`src/relax/transform/merge_composite_functions.cc`). Nested functions live only inside this group: it is a declared sub-phase, like the fusion group. NoNestedFunctions, NoPrimitiveFunctions and NoOffloadGroups (all Ingest invariants) are broken by its first members and restored by RunCodegen, which replaces each `Codegen` function by a call to the external kernel (`R.call_dps_packed`) and removes the functions. A module inside the group records no phase; every barrier and LegalizeOps refuse it, and `WF044` (or `WF043` for a pattern group still marked Primitive) names RunCodegen as the missing step. The two groups have a property each so that each member's contract is exact: FuseTIR establishes NoPrimitiveFunctions but leaves an offload group alone, and the contract audit holds it to that.",
		"Keeping the composite functions nested, as TVM does, gives an external codegen one function per offloaded region with its pattern matches inside; confining the nesting to a declared group keeps every phase free of nested functions, so no other pass has to expect them.",
	},
})

// Groups returns the declared groups of passes, for PHASES.md.
func Groups() []*Group { return []*Group{FusionGroup, OffloadGroup} }
