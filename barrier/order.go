package barrier

import (
	"fmt"

	"github.com/phasec/phasec/phase"
)

// Constraint is one ordering fact between two passes.
type Constraint struct {
	Before, After string
	// Property links them when the fact follows from the contracts: After
	// requires it and Before establishes it. Derived is then true.
	Property phase.Property
	Derived  bool
	// Why is the reason (from the requirement reasons, or the hidden
	// constraints' data).
	Why string
	// Enforced says how phasec enforces a constraint that no property
	// expresses.
	Enforced string
}

type reqKey struct {
	pass string
	prop phase.Property
}

// requirementReasons explains why a pass requires a property: the reason
// behind each derived ordering constraint (from the TVM sources of the passes,
// src/relax/transform/*.cc and src/relax/backend/vm/*.cc).
var requirementReasons = map[reqKey]string{
	{"LambdaLift", phase.Normalized}:                "it finds local functions as binding values, which only A-normal form guarantees",
	{"ToNonDataflow", phase.Normalized}:             "it rewrites blocks and bindings and assumes A-normal form",
	{"RemovePurityChecking", phase.Normalized}:      "it rewrites calls in bindings and assumes A-normal form",
	{"RemovePurityChecking", phase.NoDataflow}:      "unwrapped impure calls (call_packed, invoke_closure) are illegal inside dataflow blocks (WF007)",
	{"CallTIRRewrite", phase.Normalized}:            "it replaces whole bindings and needs every call_tir bound to a var",
	{"CallTIRRewrite", phase.NoDataflow}:            "the direct kernel calls it emits are impure and may not sit in dataflow blocks",
	{"CallTIRRewrite", phase.PurityRelaxed}:         "it inserts impure calls (direct PrimFunc calls, vm.call_tir_dyn) into pure functions",
	{"LegalizeOps", phase.Normalized}:               "it replaces op calls in bindings by call_tir",
	{"RewriteDataflowReshape", phase.Normalized}:    "it matches call_tir bindings",
	{"RewriteDataflowReshape", phase.Legalized}:     "it recognises reshape-pattern PrimFuncs, which LegalizeOps generates",
	{"StaticPlanBlockMemory", phase.Normalized}:     "it plans allocations and kernel calls bound to vars, binding by binding",
	{"StaticPlanBlockMemory", phase.NoCallTIR}:      "the planner only sees outputs that are explicit allocations",
	{"StaticPlanBlockMemory", phase.ExplicitMemory}: "the planner only sees builtin.alloc_tensor",
	{"LowerAllocTensor", phase.Normalized}:          "it replaces builtin.alloc_tensor bindings",
	{"LowerAllocTensor", phase.ExplicitMemory}:      "it lowers the builtin.alloc_tensor calls CallTIRRewrite emits",
	{"KillAfterLastUse", phase.Normalized}:          "it finds last uses binding by binding",
	{"KillAfterLastUse", phase.NoDataflow}:          "the kills it emits are impure and may not sit in dataflow blocks",
	{"KillAfterLastUse", phase.PurityRelaxed}:       "it inserts impure kills into pure functions",
	{"KillAfterLastUse", phase.ExplicitMemory}:      "it needs the final set of allocated, register-held values",
	{"LowerRuntimeBuiltin", phase.Normalized}:       "it rewrites calls in bindings",
	{"LowerRuntimeBuiltin", phase.NoDataflow}:       "the call_packed and call_builtin_with_ctx calls it emits are impure",
	{"LowerRuntimeBuiltin", phase.PurityRelaxed}:    "it inserts impure builtin calls into pure functions",
	{"LowerRuntimeBuiltin", phase.NoCallTIR}:        "it has no lowering for call_tir; kernels must already be called directly",
	{"LowerRuntimeBuiltin", phase.ExplicitMemory}:   "it lowers the memory ops the allocation passes produce",
	{"ComputePrimValue", phase.Normalized}:          "it replaces PrimValues in bindings by calls, which normal form then binds",
	{"ComputePrimValue", phase.NoDataflow}:          "the PrimFunc calls it emits are impure to phasec and may not sit in dataflow blocks",
	{"ComputePrimValue", phase.PurityRelaxed}:       "it inserts impure PrimFunc calls into pure functions",
	{"VMShapeLower", phase.Normalized}:              "it rewrites bindings and inserts checks between them, and needs every match_cast value bound",
	{"VMShapeLower", phase.NoDataflow}:              "the checks it emits are impure calls and may not sit in dataflow blocks",
	{"VMShapeLower", phase.PurityRelaxed}:           "it inserts impure checks (call_packed) into pure functions",
	{"VMShapeLower", phase.NoNestedFunctions}:       "VMShapeLower and VM codegen abort on local functions (LambdaLift is not in TVM's default pipeline)",
	{"VMShapeLower", phase.BuiltinsLowered}:         "it must be the last value rewriter: a later pass materializing struct info would bring back symbolic values",
}

// hiddenConstraints are the ordering facts TVM's default pipeline
// (python/tvm/relax/pipeline.py) relies on without checking them, that
// no property expresses, with how phasec enforces them.
var hiddenConstraints = []Constraint{
	{Before: "LegalizeOps", After: "LambdaLift",
		Why:      "TVM: invoke_closure has no legalization",
		Enforced: "dissolved: phasec lifts at ingest (apache/tvm#15009, item P2) and Legalized (WF029) covers tensor ops only, so LegalizeOps leaves closure ops alone"},
	{Before: "LegalizeOps", After: "CallTIRRewrite",
		Why:      "DPS rewriting sees only call_tir; unlegalized ops would reach VM codegen",
		Enforced: "Legalized is a lower invariant: the lower barrier refuses to record phase lower while a high-level op remains"},
	{Before: "RewriteDataflowReshape", After: "ToNonDataflow",
		Why:      "it (like FuseOps, FoldConstant's op folding and CSE scoping) needs dataflow blocks",
		Enforced: "the lower barrier's sequence; dataflow-based optimizations belong to phase optimize, whose invariants keep dataflow blocks allowed"},
	{Before: "ToNonDataflow", After: "RemovePurityChecking",
		Why:      "unwrapped impure calls are illegal inside dataflow blocks",
		Enforced: "derived: RemovePurityChecking requires NoDataflow"},
	{Before: "StaticPlanBlockMemory", After: "LowerAllocTensor",
		Why:      "otherwise nothing is left to plan",
		Enforced: "the build barrier's sequence (no property distinguishes planned from unplanned allocations yet)"},
	{Before: "LowerAllocTensor", After: "LowerRuntimeBuiltin",
		Why:      "LowerRuntimeBuiltin aborts on builtin.alloc_tensor",
		Enforced: "the build barrier's sequence; BuiltinsLowered (WF035) rejects a leftover builtin.alloc_tensor"},
	{Before: "LowerAllocTensor", After: "KillAfterLastUse",
		Why:      "kills must see the final register-held values, after allocation lowering and before codegen",
		Enforced: "the build barrier's sequence"},
	{Before: "ComputePrimValue", After: "VMShapeLower",
		Why:      "VMShapeLower handles only bare-variable PrimValues",
		Enforced: "the build barrier's sequence; ShapesLowered (WF037) rejects symbolic PrimValues"},
	{Before: "VMShapeLower", After: "AttachGlobalSymbol",
		Why:      "AttachGlobalSymbol comes last: codegen and the TIR export need every symbol",
		Enforced: "the build barrier's sequence; GlobalSymbols (WF038) is a build invariant"},
}

// allSteps lists every barrier step in pipeline order.
func allSteps() []Step {
	var out []Step
	for _, b := range Barriers() {
		out = append(out, b.Steps...)
	}
	return out
}

// Constraints returns the ordering constraints: first those derived from
// the contracts of the barrier steps (A before B when B requires a
// property A establishes), in pipeline order, then the hidden ones.
func Constraints() []Constraint {
	steps := allSteps()
	var out []Constraint
	for j, b := range steps {
		bi := b.Info()
		for _, p := range bi.RequiresProps.List() {
			for i, a := range steps {
				if i == j || !a.Info().Establishes.Has(p) {
					continue
				}
				why := requirementReasons[reqKey{bi.Name, p}]
				if why == "" {
					why = fmt.Sprintf("%s needs %v", bi.Name, p)
				}
				out = append(out, Constraint{Before: a.Pass, After: b.Pass, Property: p, Derived: true, Why: why})
			}
		}
	}
	return append(out, hiddenConstraints...)
}
