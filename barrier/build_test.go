package barrier_test

import (
	"testing"

	"github.com/phasec/phasec/barrier"
	"github.com/phasec/phasec/passes/passtest"
)

// TestBuildBarrierGolden runs whole modules through every barrier: the
// build output, and the diagnostics of modules that cannot be built (the
// binding, the construct, and the pass that would fix it).
func TestBuildBarrierGolden(t *testing.T) {
	passtest.Run(t, barrier.Registry, "../testdata/passes/barriers/build", "canonicalize,lower,build")
}
