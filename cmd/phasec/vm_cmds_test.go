package main

import (
	"math"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/phasec/phasec/tensor"
)

func TestBuildDisasmRun(t *testing.T) {
	dir := t.TempDir()
	pvm := filepath.Join(dir, "m.pvm")
	code, out, errs := runCLI(t, "", "build", "-o", pvm, "../../codegen/testdata/static_build.tvms")
	require.Equal(t, 0, code, errs)
	assert.Contains(t, out, "wrote "+pvm)

	code, out, errs = runCLI(t, "", "disasm", pvm)
	require.Equal(t, 0, code, errs)
	assert.Contains(t, out, `@main(x: R.Tensor((2, 4), dtype="float32")) registers=5:`)
	assert.Contains(t, out, "call  exp              in: %0, %2       dst: %void")

	x := tensor.New(tensor.Float32, 2, 4)
	for i := range 8 {
		x.SetFloat64(i, float64(i)*0.25)
	}
	xin := filepath.Join(dir, "x.npy")
	f, err := os.Create(xin)
	require.NoError(t, err)
	require.NoError(t, tensor.WriteNpy(f, x))
	require.NoError(t, f.Close())
	npz := filepath.Join(dir, "out.npz")
	code, out, errs = runCLI(t, "", "run", "--input", "x="+xin, "-o", npz, "--stats", pvm)
	require.Equal(t, 0, code, errs)
	assert.Contains(t, out, "output_0: float32 (8,) [1 1.284 1.649 2.117 2.718 3.49 4.482 5.755]")
	assert.Contains(t, out, "instructions executed: 16")
	got, err := tensor.ReadNpz(npz)
	require.NoError(t, err)
	require.Len(t, got, 1)
	assert.Equal(t, "output_0", got[0].Name)
	for i := range 8 {
		assert.InEpsilon(t, math.Exp(float64(i)*0.25), got[0].Tensor.Float64At(i), 1e-6)
	}
}

func TestRunErrors(t *testing.T) {
	dir := t.TempDir()
	bad := filepath.Join(dir, "bad.pvm")
	require.NoError(t, os.WriteFile(bad, []byte("PHASECVM garbage"), 0o644))
	code, _, errs := runCLI(t, "", "run", bad)
	assert.Equal(t, 1, code)
	assert.Contains(t, errs, "bad executable")

	code, _, errs = runCLI(t, "", "disasm", bad)
	assert.Equal(t, 1, code)
	assert.Contains(t, errs, "bad executable")

	code, _, errs = runCLI(t, "", "run", "../../codegen/testdata/static_build.tvms")
	assert.Equal(t, 1, code)
	assert.Contains(t, errs, "parameter x of main has no value: give --input x=FILE.npy, --inputs FILE.npz or --random-inputs")

	code, _, errs = runCLI(t, "", "run", "--func", "nope", "--random-inputs", "../../codegen/testdata/static_build.tvms")
	assert.Equal(t, 1, code)
	assert.Contains(t, errs, `has no function "nope"`)

	code, _, errs = runCLI(t, "", "build", "-")
	assert.Equal(t, 2, code, "build of stdin without -o is a usage error")
	assert.Contains(t, errs, "-o OUT.pvm (or -o -) is needed")
}

// TestDisasmMLPGolden: the demo model's executable, disassembled (TVM's
// as_text layout, with source positions, the constant pool and the kernels).
func TestDisasmMLPGolden(t *testing.T) {
	pvm := filepath.Join(t.TempDir(), "mlp.pvm")
	code, _, errs := runCLI(t, "", "build", "-o", pvm, "../../testdata/models/mlp_legalized.tvms")
	require.Equal(t, 0, code, errs)
	code, out, errs := runCLI(t, "", "disasm", pvm)
	require.Equal(t, 0, code, errs)
	compareGolden(t, "testdata/disasm/mlp.golden", out)
}
