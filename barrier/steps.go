package barrier

import (
	"github.com/phasec/phasec/lower"
	"github.com/phasec/phasec/passes"
	"github.com/phasec/phasec/transform"
)

// The sequences follow TVM's default_build_pipeline
// (python/tvm/relax/pipeline.py) split at the phase boundaries; the
// dispatch passes and RewriteCUDAGraph (target-specific) are left out.
var (
	canonicalizeSteps = []*passes.Pass{passes.Normalize, passes.LambdaLift}

	lowerSteps = []*passes.Pass{
		lower.LegalizeOps,
		lower.RewriteDataflowReshape,
		lower.ToNonDataflow,
		lower.RemovePurityChecking,
		lower.CallTIRRewrite,
	}

	buildSteps = []*passes.Pass{
		lower.StaticPlanBlockMemory,
		lower.LowerAllocTensor,
		lower.KillAfterLastUse,
		lower.LowerRuntimeBuiltin,
		lower.ComputePrimValue,
		lower.VMShapeLower,
		lower.AttachGlobalSymbol,
	}
)

// Registry holds every pass of phasec: the barriers, as the pipeline steps
// canonicalize, lower and build, and the passes they run. It resolves the
// names of textual pipelines (`phasec opt --passes`), lists the passes
// (`phasec passes`, PHASES.md) and is what the contract audit runs. A new
// pass that no barrier runs (an optimization) is added here.
var Registry = passes.NewRegistry(allPasses()...)

func allPasses() []*passes.Pass {
	var all []*passes.Pass
	for _, b := range Barriers() {
		all = append(all, b.Pass())
		all = append(all, b.Steps...)
		if b.Then != nil {
			all = append(all, b.Then.Steps...)
		}
	}
	// The Optimize-phase passes (package transform), run by no barrier.
	all = append(all,
		transform.FoldConstant,
		transform.BindParams,
		transform.DecomposeOpsForInference,
		transform.DecomposeOpsForTraining,
		transform.Gradient,
		transform.BindSymbolicVars,
		transform.CanonicalizeBindings,
		transform.DeadCodeElimination,
		transform.EliminateCommonSubexpr,
		transform.ConvertToDataflow,
		transform.ConvertLayout,
		transform.TopologicalSort,
		transform.RemoveUnusedParameters,
		transform.RemoveUnusedOutputsInner,
		transform.ExpandTupleArgumentsInner,
		transform.RemoveUnusedOutputs,
		transform.ExpandTupleArguments,
		transform.NormalizeGlobalVar,
		transform.InlinePrivateFunctions,
		transform.AnnotateTIROpPattern,
		transform.FuseTIR,
		transform.FuseOps,
		transform.FuseOpsByPattern,
		transform.MergeCompositeFunctions,
		transform.RunCodegen,
		transform.AlterOpImpl,
		transform.PatternMatchingRewriter,
		transform.SplitCallTIRByPattern,
		transform.ExpandMatmulOfSum,
		transform.ReorderTakeAfterMatmul,
		transform.ReorderPermuteDimsAfterConcat,
		transform.AdjustMatmulOrder,
		transform.FoldBatchnormToConv2D,
		transform.CombineParallelMatmul,
		transform.FuseTransposeMatmul,
		transform.ToMixedPrecision,
		transform.LiftTransformParams,
		transform.LazyTransformParams,
		transform.LazyGetInput,
		transform.LazySetOutput,
		transform.UpdateParamStructInfo,
		transform.SpecializePrimFuncBasedOnCallSite,
	)
	return all
}
