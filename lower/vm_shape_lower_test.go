package lower_test

import (
	"testing"

	"github.com/phasec/phasec/passes/passtest"
)

func TestVMShapeLowerGolden(t *testing.T) {
	passtest.Run(t, "../testdata/passes/VMShapeLower", "VMShapeLower")
}

func TestVMShapeLowerNoErrCtxGolden(t *testing.T) {
	passtest.Run(t, "../testdata/passes/VMShapeLower/no_err_ctx", "VMShapeLower{emit_err_ctx=false}")
}

func TestComputePrimValueGolden(t *testing.T) {
	passtest.Run(t, "../testdata/passes/ComputePrimValue", "ComputePrimValue")
}
