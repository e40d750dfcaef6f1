package lower_test

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/phasec/phasec/eval/evaltest"
	"github.com/phasec/phasec/lower"
)

// The checkpoint markers legalize into their argument, as TVM's
// legalize_ops/grad.py: no kernel, the same values.
func TestLegalizeCheckpointMarkersOracle(t *testing.T) {
	runLegalCases(t, []legalCase{
		{name: "markers", params: []string{tensorParam("x", "(2, 3)", "float32")},
			body: "a = R.grad.start_checkpoint(x)\nb = R.exp(a)\nc = R.grad.end_checkpoint(b)\ngv = R.add(c, x)"},
		{name: "tuple", params: []string{tensorParam("x", `("n", 3)`, "float64")},
			body: "p = (x, x)\nq = R.grad.start_checkpoint(p)\nr = R.grad.end_checkpoint(q)\ngv = r[1]"},
	})
	mod := evaltest.Parse(t, "markers", legalCase{params: []string{tensorParam("x", "(2,)", "float32")},
		body: "a = R.grad.start_checkpoint(x)\ngv = R.grad.end_checkpoint(a)"}.module())
	out, errs := lower.LegalizeModule(mod, lower.LegalizeOptions{})
	require.NoError(t, errs.Err())
	require.Len(t, out.Names(), 1, "no kernel is added for a marker")
}
