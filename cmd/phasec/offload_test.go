package main

import (
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// offloadPasses offloads the MLP's matmuls to the phasec_blas codegen.
const offloadPasses = `canonicalize,FuseOpsByPattern{patterns=["phasec_blas"]},MergeCompositeFunctions,RunCodegen,lower,build`

// TestBuildRunOffloadedMLP: phasec build with the offload passes writes an
// executable carrying the phasec_blas module, and phasec run computes the
// demo's committed expected output from its committed inputs (the plain Go
// reference's, which the evaluator agrees with: codegen's tests).
func TestBuildRunOffloadedMLP(t *testing.T) {
	pvm := filepath.Join(t.TempDir(), "mlp.pvm")
	code, _, errs := runCLI(t, "", "build", "--passes", offloadPasses, "-o", pvm, "../../testdata/models/mlp.tvms")
	require.Equal(t, 0, code, errs)

	code, out, errs := runCLI(t, "", "disasm", pvm)
	require.Equal(t, 0, code, errs)
	assert.Contains(t, out, "external modules (1):\n  phasec_blas: fused_relax_matmul_relax_add_relax_nn_relu_relax_matmul_relax_add_phasec_blas")
	assert.NotContains(t, out, "matmul(", "no matmul kernel is left to phasec")

	in := "../../testdata/models/mlp_inputs/"
	args := []string{"run", "--expect", in + "expected.npy"}
	for _, p := range []string{"x", "w0", "b0", "w1", "b1"} {
		args = append(args, "--input", p+"="+in+p+".npy")
	}
	code, out, errs = runCLI(t, "", append(args, pvm)...)
	require.Equal(t, 0, code, "%s%s", out, errs)
	assert.Contains(t, out, "max error")

	// The same from the source, built in memory.
	code, out, errs = runCLI(t, "", append(append(args, "--passes", offloadPasses), "../../testdata/models/mlp.tvms")...)
	require.Equal(t, 0, code, "%s%s", out, errs)
}

// TestOffloadBadInput: the offload passes' refusals reach the command line
// as positioned diagnostics.
func TestOffloadBadInput(t *testing.T) {
	code, _, errs := runCLI(t, "", "opt", "--passes", `FuseOpsByPattern{patterns=["cublas"]}`, "../../testdata/models/mlp.tvms")
	assert.NotEqual(t, 0, code)
	assert.Contains(t, errs, `OPT400`)
	assert.Contains(t, errs, `no pattern table named "cublas" is registered (registered: phasec_blas)`)

	code, _, errs = runCLI(t, "", "opt", "--passes", "RunCodegen", "../../testdata/passes/RunCodegen/bad/unknown_codegen.tvms")
	assert.NotEqual(t, 0, code)
	assert.Regexp(t, `unknown_codegen.tvms:8:\d+: error OPT410: RunCodegen: function fused_relax_nn_relu_dnnl names codegen "dnnl", which nobody registered`, errs)
}
