package lower_test

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/phasec/phasec/barrier"
	"github.com/phasec/phasec/diag"
	"github.com/phasec/phasec/ir"
	"github.com/phasec/phasec/passes"
	"github.com/phasec/phasec/syntax"
)

// FuzzMemoryPasses runs the memory and shape passes of the build barrier
// (StaticPlanBlockMemory to VMShapeLower), each on its own and in the build
// barrier's order, on every module the parser accepts: a pass may
// refuse the module (contracts) or report diagnostics, but never panic
// (the pass manager turns a panic into a PassError with Panic set) or
// report an internal error.
//
//	go test ./lower -run='^$' -fuzz=FuzzMemoryPasses -fuzztime=1m
func FuzzMemoryPasses(f *testing.F) {
	for _, glob := range []string{"../testdata/passes/StaticPlanBlockMemory/*.tvms", "../testdata/passes/StaticPlanBlockMemory/offsets/*.tvms",
		"../testdata/passes/LowerAllocTensor/*.tvms", "../testdata/passes/KillAfterLastUse/*.tvms",
		"../testdata/passes/LowerRuntimeBuiltin/*.tvms", "../testdata/passes/ComputePrimValue/*.tvms",
		"../testdata/passes/VMShapeLower/*.tvms", "../testdata/passes/barriers/build/*.tvms", "../testdata/lowered_*.tvms"} {
		paths, err := filepath.Glob(glob)
		require.NoError(f, err)
		for _, p := range paths {
			src, err := os.ReadFile(p)
			require.NoError(f, err)
			f.Add(src)
		}
	}
	pipelines := []string{
		"StaticPlanBlockMemory", "StaticPlanBlockMemory{planner=offsets}", "LowerAllocTensor", "KillAfterLastUse", "LowerRuntimeBuiltin",
		"ComputePrimValue", "VMShapeLower", "VMShapeLower{emit_err_ctx=false}",
		"StaticPlanBlockMemory{planner=offsets},LowerAllocTensor,KillAfterLastUse,LowerRuntimeBuiltin,ComputePrimValue,VMShapeLower,AttachGlobalSymbol",
	}
	built := make([]*passes.Pass, len(pipelines))
	for i, text := range pipelines {
		p, errs := barrier.Registry.ParseAndBuild("--passes", text)
		require.Nil(f, errs)
		built[i] = p
	}
	f.Fuzz(func(t *testing.T, src []byte) {
		mod, diags := syntax.Parse("fuzz.tvms", src)
		if mod == nil || len(diags) > 0 {
			return
		}
		for i, p := range built {
			_, err := passes.NewPassContext().Run(context.Background(), p, mod)
			var pe *passes.PassError
			if errors.As(err, &pe) {
				require.False(t, pe.Panic, "%s panicked: %v\n%s", pipelines[i], pe.Err, pe.Stack)
			}
			var dl diag.List
			if errors.As(err, &dl) {
				for _, d := range dl {
					require.NotEqual(t, ir.DiagInternal, d.Code, "%s: internal error %v", pipelines[i], d)
				}
			}
		}
	})
}
