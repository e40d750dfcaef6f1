package passes_test

import (
	"testing"

	"github.com/phasec/phasec/passes/passtest"
)

func TestLambdaLiftGolden(t *testing.T) {
	passtest.Run(t, "../testdata/passes/LambdaLift", "LambdaLift")
}
