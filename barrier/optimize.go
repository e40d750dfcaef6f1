package barrier

import (
	"github.com/phasec/phasec/passes"
	"github.com/phasec/phasec/transform"
)

// optimizeSteps is the optimization sequence the optimize barrier runs to
// a fixpoint, each pass gated by the opt level: TVM's general-purpose
// graph optimizations in the order its documents name them (FoldConstant,
// CanonicalizeBindings, EliminateCommonSubexpr, DeadCodeElimination; run
// "possibly to fixpoint", since folding leaves trivial bindings,
// canonicalization leaves dead ones and elimination exposes more to fold).
// TVM's own pipelines (python/tvm/relax/pipeline.py) run FoldConstant
// after LegalizeOps at opt level 0 and leave the rest to the user; their
// opt levels are TVM's: FoldConstant 0, the others 1.
//
// The passes live in package transform; each is listed here by value.
var optimizeSteps = []*passes.Pass{
	transform.FoldConstant,
	transform.CanonicalizeBindings,
	transform.EliminateCommonSubexpr,
	transform.DeadCodeElimination,
}
