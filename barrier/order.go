package barrier

import (
	"github.com/phasec/phasec/lower"
	"github.com/phasec/phasec/passes"
	"github.com/phasec/phasec/phase"
)

// Constraint is one ordering fact between two passes.
type Constraint struct {
	Before, After *passes.Pass
	// Property links them when the fact follows from the contracts: After
	// requires it and Before establishes it. Derived is then true.
	Property phase.Property
	Derived  bool
	// Why is the reason: the one After's contract gives for requiring
	// Property, or the hidden constraint's.
	Why string
	// Enforced says how phasec enforces a constraint that no property
	// expresses.
	Enforced string
}

// hiddenConstraints are the ordering facts TVM's default pipeline
// (python/tvm/relax/pipeline.py) relies on without checking them, that
// no property expresses, with how phasec enforces them.
var hiddenConstraints = []Constraint{
	{Before: lower.LegalizeOps, After: passes.LambdaLift,
		Why:      "TVM: invoke_closure has no legalization",
		Enforced: "dissolved: phasec lifts at ingest (apache/tvm#15009, item P2) and Legalized (WF029) covers tensor ops only, so LegalizeOps leaves closure ops alone"},
	{Before: lower.LegalizeOps, After: lower.CallTIRRewrite,
		Why:      "DPS rewriting sees only call_tir; unlegalized ops would reach VM codegen",
		Enforced: "Legalized is a lower invariant: the lower barrier refuses to record phase lower while a high-level op remains"},
	{Before: lower.RewriteDataflowReshape, After: lower.ToNonDataflow,
		Why:      "it (like FuseOps, FoldConstant's op folding and CSE scoping) needs dataflow blocks",
		Enforced: "the lower barrier's sequence; dataflow-based optimizations belong to phase optimize, whose invariants keep dataflow blocks allowed"},
	{Before: lower.ToNonDataflow, After: lower.RemovePurityChecking,
		Why:      "unwrapped impure calls are illegal inside dataflow blocks",
		Enforced: "derived: RemovePurityChecking requires NoDataflow"},
	{Before: lower.StaticPlanBlockMemory, After: lower.LowerAllocTensor,
		Why:      "otherwise nothing is left to plan",
		Enforced: "the build barrier's sequence (no property distinguishes planned from unplanned allocations yet)"},
	{Before: lower.LowerAllocTensor, After: lower.LowerRuntimeBuiltin,
		Why:      "LowerRuntimeBuiltin aborts on builtin.alloc_tensor",
		Enforced: "the build barrier's sequence; BuiltinsLowered (WF035) rejects a leftover builtin.alloc_tensor"},
	{Before: lower.LowerAllocTensor, After: lower.KillAfterLastUse,
		Why:      "kills must see the final register-held values, after allocation lowering and before codegen",
		Enforced: "the build barrier's sequence"},
	{Before: lower.ComputePrimValue, After: lower.VMShapeLower,
		Why:      "VMShapeLower handles only bare-variable PrimValues",
		Enforced: "the build barrier's sequence; ShapesLowered (WF037) rejects symbolic PrimValues"},
	{Before: lower.VMShapeLower, After: lower.AttachGlobalSymbol,
		Why:      "AttachGlobalSymbol comes last: codegen and the TIR export need every symbol",
		Enforced: "the build barrier's sequence; GlobalSymbols (WF038) is a build invariant"},
}

// allSteps lists every barrier step in pipeline order.
func allSteps() []*passes.Pass {
	var out []*passes.Pass
	for _, b := range Barriers() {
		out = append(out, b.Steps...)
	}
	return out
}

// Constraints returns the ordering constraints: first those derived from
// the contracts of the barrier steps (A before B when B requires a
// property A establishes, for the reason B's contract gives), in pipeline
// order, then the hidden ones.
func Constraints() []Constraint {
	steps := allSteps()
	var out []Constraint
	for j, b := range steps {
		bi := b.Info()
		for _, p := range bi.RequiredProps().List() {
			for i, a := range steps {
				if i == j || !a.Info().Establishes.Has(p) {
					continue
				}
				out = append(out, Constraint{Before: a, After: b, Property: p, Derived: true, Why: bi.Requires[p]})
			}
		}
	}
	return append(out, hiddenConstraints...)
}
