package lower_test

import (
	"testing"

	_ "github.com/phasec/phasec/lower"
	"github.com/phasec/phasec/passes/passtest"
)

func TestGolden(t *testing.T) {
	for _, pass := range []string{"ToNonDataflow", "RemovePurityChecking", "CallTIRRewrite", "AttachGlobalSymbol"} {
		t.Run(pass, func(t *testing.T) { passtest.Run(t, "../testdata/passes/"+pass, pass) })
	}
}
