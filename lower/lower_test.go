package lower_test

import (
	"testing"

	"github.com/phasec/phasec/barrier"
	"github.com/phasec/phasec/passes/passtest"
)

func TestGolden(t *testing.T) {
	for _, pass := range []string{"ToNonDataflow", "RemovePurityChecking", "CallTIRRewrite", "AttachGlobalSymbol"} {
		t.Run(pass, func(t *testing.T) { passtest.Run(t, barrier.Registry, "../testdata/passes/"+pass, pass) })
	}
}
