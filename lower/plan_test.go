package lower_test

import (
	"testing"

	"github.com/phasec/phasec/passes/passtest"
)

func TestStaticPlanBlockMemoryGolden(t *testing.T) {
	passtest.Run(t, "../testdata/passes/StaticPlanBlockMemory", "StaticPlanBlockMemory")
}

func TestStaticPlanBlockMemoryOffsetsGolden(t *testing.T) {
	passtest.Run(t, "../testdata/passes/StaticPlanBlockMemory/offsets", "StaticPlanBlockMemory{planner=offsets}")
}

func TestMemoryLoweringGolden(t *testing.T) {
	for _, pass := range []string{"LowerAllocTensor", "KillAfterLastUse", "LowerRuntimeBuiltin"} {
		t.Run(pass, func(t *testing.T) { passtest.Run(t, "../testdata/passes/"+pass, pass) })
	}
}
