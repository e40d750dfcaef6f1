package passes_test

import (
	"testing"

	"github.com/phasec/phasec/passes"
	"github.com/phasec/phasec/passes/passtest"
)

func TestLambdaLiftGolden(t *testing.T) {
	passtest.Run(t, passes.NewRegistry(passes.LambdaLift), "../testdata/passes/LambdaLift", "LambdaLift")
}
