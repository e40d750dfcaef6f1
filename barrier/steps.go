package barrier

import (
	"github.com/phasec/phasec/passes"
	"github.com/phasec/phasec/phase"
)

// Step is one pass of a barrier's sequence.
type Step struct {
	// Pass is the pass name. A step whose pass is registered runs; any
	// other is pending (not implemented yet) and is skipped.
	Pass string
	// Pending describes a pass not implemented yet: what it will do and the
	// contract it will have. Ignored once the pass is registered.
	Pending *PendingPass
}

// PendingPass is the planned contract of a pass that does not exist yet.
type PendingPass struct {
	Doc           string
	RequiresProps phase.Set
	Establishes   phase.Set
}

// Implemented reports whether the step's pass is registered.
func (s Step) Implemented() bool {
	_, ok := passes.Lookup(s.Pass)
	return ok
}

// Info returns the step's contract: the registered one, or the planned one
// of a pending pass.
func (s Step) Info() passes.Info {
	if r, ok := passes.Lookup(s.Pass); ok {
		return r.Info
	}
	if s.Pending == nil {
		return passes.Info{Name: s.Pass}
	}
	return passes.Info{Name: s.Pass, Doc: s.Pending.Doc, RequiresProps: s.Pending.RequiresProps, Establishes: s.Pending.Establishes}
}

func pending(name, doc string, requires, establishes phase.Set) Step {
	return Step{Pass: name, Pending: &PendingPass{Doc: doc, RequiresProps: requires, Establishes: establishes}}
}

// The sequences follow TVM's default_build_pipeline
// (python/tvm/relax/pipeline.py) split at the phase boundaries; the dispatch passes and
// RewriteCUDAGraph (target-specific) are left out.
var (
	canonicalizeSteps = []Step{{Pass: "Normalize"}, {Pass: "LambdaLift"}}

	lowerSteps = []Step{
		pending("LegalizeOps", "replace high-level tensor ops by call_tir to generated PrimFuncs",
			phase.Of(phase.Normalized), phase.Of(phase.Legalized)),
		pending("RewriteDataflowReshape", "turn reshape-pattern call_tir inside dataflow blocks into relax.reshape views",
			phase.Of(phase.Normalized, phase.Legalized), 0),
		{Pass: "ToNonDataflow"},
		{Pass: "RemovePurityChecking"},
		{Pass: "CallTIRRewrite"},
	}

	buildSteps = []Step{
		pending("StaticPlanBlockMemory", "plan tensor storage statically (memory.alloc_storage/alloc_tensor), reusing freed storage",
			phase.Of(phase.NoCallTIR, phase.ExplicitMemory), 0),
		pending("LowerAllocTensor", "lower the remaining builtin.alloc_tensor to memory.alloc_storage + memory.alloc_tensor",
			phase.Of(phase.ExplicitMemory), 0),
		pending("KillAfterLastUse", "release tensors and storage after their last use (memory.kill_*, vm.kill_object)",
			phase.Of(phase.ExplicitMemory), 0),
		pending("LowerRuntimeBuiltin", "lower memory, closure, reshape and shape ops to VM builtins",
			phase.Of(phase.NoCallTIR, phase.ExplicitMemory), phase.Of(phase.BuiltinsLowered)),
		{Pass: "ComputePrimValue"},
		{Pass: "VMShapeLower"},
		{Pass: "AttachGlobalSymbol"},
	}
)
