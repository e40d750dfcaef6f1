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
