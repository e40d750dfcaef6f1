package transform_test

import (
	"testing"

	"github.com/phasec/phasec/barrier"
	"github.com/phasec/phasec/passes/passtest"
)

// TestGolden runs each pass on its TVM test cases, written as phasec
// modules under testdata/passes/<Pass>/.
func TestGolden(t *testing.T) {
	for _, pass := range []string{"RemoveUnusedParameters", "RemoveUnusedOutputsInner", "ExpandTupleArgumentsInner", "NormalizeGlobalVar", "InlinePrivateFunctions"} {
		t.Run(pass, func(t *testing.T) { passtest.Run(t, barrier.Registry, "../testdata/passes/"+pass, pass) })
	}
}
