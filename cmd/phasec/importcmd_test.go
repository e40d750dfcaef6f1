package main

import (
	"bytes"
	"math"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/phasec/phasec/frontend/onnx/onnxtest"
	"github.com/phasec/phasec/tensor"
)

// TestImportAndRunONNX imports a model to TVMScript and weights, runs
// that, and runs the .onnx file directly: the same outputs, under the
// ONNX output name, and a softmax (rows sum to 1).
func TestImportAndRunONNX(t *testing.T) {
	dir := t.TempDir()
	model := filepath.Join(dir, "mlp.onnx")
	require.NoError(t, os.WriteFile(model, onnxtest.MLP(4, 8, 3).Bytes(), 0o644))
	x := tensor.New(tensor.Float32, 2, 4)
	for i := range 8 {
		x.SetFloat64(i, float64(i)/3-1)
	}
	xPath := filepath.Join(dir, "x.npy")
	require.NoError(t, tensor.WriteNpyFile(xPath, x))

	var stdout, stderr bytes.Buffer
	tvms := filepath.Join(dir, "mlp.tvms")
	require.Equal(t, 0, run([]string{"import", "-o", tvms, model}, nil, &stdout, &stderr), stderr.String())
	require.FileExists(t, filepath.Join(dir, "mlp.npz"), "weights beside the module")
	require.Equal(t, 0, run([]string{"check", tvms}, nil, &stdout, &stderr), stderr.String())

	viaText := filepath.Join(dir, "a.npz")
	require.Equal(t, 0, run([]string{"run", "--params", filepath.Join(dir, "mlp.npz"), "--input", "x=" + xPath, "-o", viaText, tvms}, nil, &stdout, &stderr), stderr.String())
	direct := filepath.Join(dir, "b.npz")
	require.Equal(t, 0, run([]string{"run", "--input", "x=" + xPath, "-o", direct, model}, nil, &stdout, &stderr), stderr.String())
	viaEval := filepath.Join(dir, "c.npz")
	require.Equal(t, 0, run([]string{"eval", model, "--input", "x=" + xPath, "-o", viaEval}, nil, &stdout, &stderr), stderr.String())

	a, err := tensor.ReadNpz(viaText)
	require.NoError(t, err)
	b, err := tensor.ReadNpz(direct)
	require.NoError(t, err)
	c, err := tensor.ReadNpz(viaEval)
	require.NoError(t, err)
	require.Len(t, b, 1)
	assert.Equal(t, "y", b[0].Name, "outputs by ONNX name")
	assert.Equal(t, "y", c[0].Name)
	assert.Equal(t, a[0].Tensor.Bytes(), b[0].Tensor.Bytes(), "parameters and constants compute the same")
	for row := range 2 {
		s := 0.0
		for k := range 3 {
			s += b[0].Tensor.Float64At(row*3 + k)
			assert.InDelta(t, b[0].Tensor.Float64At(row*3+k), c[0].Tensor.Float64At(row*3+k), 1e-6, "VM and evaluator")
		}
		assert.InDelta(t, 1, s, 1e-6)
		assert.False(t, math.IsNaN(s))
	}

	out := filepath.Join(dir, "keep.tvms")
	require.Equal(t, 0, run([]string{"import", "--keep-params-in-module", "-o", out, model}, nil, &stdout, &stderr), stderr.String())
	text, err := os.ReadFile(out)
	require.NoError(t, err)
	assert.Contains(t, string(text), "metadata")
}

func TestImportReportsBadGraphs(t *testing.T) {
	dir := t.TempDir()
	model := filepath.Join(dir, "bad.onnx")
	g := onnxtest.New(13).Input("x", onnxtest.Float, 2).Node("late", "Relu", []string{"a"}, []string{"y"}).
		Node("early", "Relu", []string{"x"}, []string{"a"}).Output("y", onnxtest.Float, 2)
	require.NoError(t, os.WriteFile(model, g.Bytes(), 0o644))
	var stdout, stderr bytes.Buffer
	assert.Equal(t, 1, run([]string{"import", "-o", filepath.Join(dir, "bad.tvms"), model}, nil, &stdout, &stderr))
	assert.Contains(t, stderr.String(), `error ONNX002: node 0 "late" (Relu)`)
	assert.Contains(t, stderr.String(), `tensor "a"`)
	assert.NoFileExists(t, filepath.Join(dir, "bad.tvms"), "nothing half-written")
	stderr.Reset()
	assert.Equal(t, 1, run([]string{"run", "--random-inputs", model}, nil, &stdout, &stderr))
	assert.Contains(t, stderr.String(), "ONNX002")
}
