package main

import (
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/phasec/phasec/tensor"
)

// TestRunLiftedTransformParams: a model built after LiftTransformParams
// runs main_transform_params on its weights (given as .npy files, or
// random), and main on the input and those outputs computes what the
// unlifted model computes on the input and weights.
func TestRunLiftedTransformParams(t *testing.T) {
	dir := t.TempDir()
	model := "../../testdata/passes/LiftTransformParams/basic.tvms"
	lifted := filepath.Join(dir, "lifted.pvm")
	plain := filepath.Join(dir, "plain.pvm")
	code, _, errs := runCLI(t, "", "build", "--passes", "canonicalize,LiftTransformParams{bundle_params=false},optimize,lower,build", "-o", lifted, model)
	require.Equal(t, 0, code, errs)
	code, _, errs = runCLI(t, "", "build", "-o", plain, model)
	require.Equal(t, 0, code, errs)

	// Seeded inputs and weights, written as the files a user gives.
	write := func(name string, shape ...int64) string {
		x := tensor.New(tensor.Float32, shape...)
		for i := range int(x.NumElements()) {
			x.SetFloat64(i, float64((i*7+len(name)*3)%11)/5-1)
		}
		path := filepath.Join(dir, name+".npy")
		require.NoError(t, tensor.WriteNpyFile(path, x))
		return path
	}
	x, w1, w2 := write("x", 1, 3, 6, 6), write("w1", 3, 4, 3, 3), write("w2", 4, 4, 3, 3)

	transformed := filepath.Join(dir, "transformed.npz")
	code, out, errs := runCLI(t, "", "run", "--func", "main_transform_params", "--input", "w1="+w1, "--input", "w2="+w2, "-o", transformed, lifted)
	require.Equal(t, 0, code, errs)
	assert.Contains(t, out, "main_transform_params: 2 output(s)")
	outs, err := tensor.ReadNpz(transformed)
	require.NoError(t, err)
	require.Len(t, outs, 2)
	// main now takes (x, w2, w1_transformed): the weights main still uses
	// come first, then the computed ones.
	w2out := filepath.Join(dir, "w2_out.npy")
	w1t := filepath.Join(dir, "w1_transformed.npy")
	require.NoError(t, tensor.WriteNpyFile(w2out, outs[0].Tensor))
	require.NoError(t, tensor.WriteNpyFile(w1t, outs[1].Tensor))
	// The transform is IOHW -> OIHW: w1t[o, i, h, w] = w1[i, o, h, w].
	w1in, err := tensor.ReadNpyFile(w1)
	require.NoError(t, err)
	assert.Equal(t, []int64{4, 3, 3, 3}, outs[1].Tensor.Shape)
	for o := range 4 {
		for i := range 3 {
			for k := range 9 {
				assert.Equal(t, w1in.Float64At((i*4+o)*9+k), outs[1].Tensor.Float64At((o*3+i)*9+k), "w1_transformed[%d, %d, %d]", o, i, k)
			}
		}
	}

	got := filepath.Join(dir, "got.npz")
	code, _, errs = runCLI(t, "", "run", "--input", "x="+x, "--input", "w2="+w2out, "--input", "w1_transformed="+w1t, "-o", got, lifted)
	require.Equal(t, 0, code, errs)
	want := filepath.Join(dir, "want.npz")
	code, _, errs = runCLI(t, "", "run", "--input", "x="+x, "--input", "w1="+w1, "--input", "w2="+w2, "-o", want, plain)
	require.Equal(t, 0, code, errs)
	g, err := tensor.ReadNpz(got)
	require.NoError(t, err)
	w, err := tensor.ReadNpz(want)
	require.NoError(t, err)
	require.Len(t, g, 1)
	require.Len(t, w, 1)
	require.Equal(t, w[0].Tensor.Shape, g[0].Tensor.Shape)
	for i := range int(w[0].Tensor.NumElements()) {
		assert.InDelta(t, w[0].Tensor.Float64At(i), g[0].Tensor.Float64At(i), 1e-5, "output element %d", i)
	}

	// Random weights work too: the transform function's parameters are
	// plain tensors.
	code, out, errs = runCLI(t, "", "run", "--func", "main_transform_params", "--random-inputs", lifted)
	require.Equal(t, 0, code, errs)
	assert.Contains(t, out, "output_1: float32 (4, 3, 3, 3)")
}
