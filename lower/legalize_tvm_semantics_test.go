package lower_test

import "testing"

// TestLegalizeTVMSemantics: op forms TVM v0.23 accepts that phasec used to
// refuse, legalized and run through the TIR interpreter against values
// derived by hand (runHandCases also requires the reference evaluator to
// agree).
func TestLegalizeTVMSemantics(t *testing.T) {
	x := `x = R.const([[-1, 2, -3], [4, -5, 6]], "float32")`
	runHandCases(t, []handCase{
		// A one-element alpha broadcasts over the channel axis, as TVM's
		// topi.nn.prelu (python/tvm/topi/nn/elemwise.py) computes it.
		{"prelu one-element alpha", x + "\na = R.const([0.25], \"float32\")\ngv = R.nn.prelu(x, a)",
			`R.const([[-0.25, 2, -0.75], [4, -1.25, 6]], "float32")`},
		{"prelu per-channel alpha", x + "\na = R.const([0.5, 2, 10], \"float32\")\ngv = R.nn.prelu(x, a)",
			`R.const([[-0.5, 2, -30], [4, -10, 6]], "float32")`},
		// Sections that do not divide the axis: ceil(5 / 3) = 2 entries,
		// the last part the remaining 1 (TVM's InferStructInfoSplit,
		// src/relax/op/tensor/manipulate.cc).
		{"split uneven", `x = R.const([[0, 1, 2, 3, 4], [5, 6, 7, 8, 9]], "int32")` +
			"\nt = R.split(x, indices_or_sections=3, axis=1)\ngv = t[2]", `R.const([[4], [9]], "int32")`},
		{"split uneven first", `x = R.const([[0, 1, 2, 3, 4], [5, 6, 7, 8, 9]], "int32")` +
			"\nt = R.split(x, indices_or_sections=3, axis=1)\ngv = t[1]", `R.const([[2, 3], [7, 8]], "int32")`},
	})
}
