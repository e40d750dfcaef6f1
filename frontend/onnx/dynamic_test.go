package onnx_test

import (
	"context"
	"math"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/phasec/phasec/frontend/onnx"
	"github.com/phasec/phasec/frontend/onnx/onnxtest"
	"github.com/phasec/phasec/tensor"
	"github.com/phasec/phasec/vm"
)

func i64s(vs ...int64) *tensor.Tensor {
	t := tensor.New(tensor.Int64, int64(len(vs)))
	for i, v := range vs {
		t.SetFloat64(i, float64(v))
	}
	return t
}

// TestRunTimeShapesFollowTheirInputs builds one executable for a Reshape
// and a Slice whose shape, starts and ends are graph inputs, and runs it
// with different values: the output shapes follow the values, as ONNX
// Runtime's would, without re-importing.
func TestRunTimeShapesFollowTheirInputs(t *testing.T) {
	g := onnxtest.New(13).Input("x", onnxtest.Float, 2, 3, 4).Input("shape", onnxtest.Int64, 3).
		Input("starts", onnxtest.Int64, 1).Input("ends", onnxtest.Int64, 1).
		Init(onnxtest.Int64Tensor("axes", []int64{1}, []int64{-1})).
		Node("r", "Reshape", []string{"x", "shape"}, []string{"y"}).
		Node("s", "Slice", []string{"x", "starts", "ends", "axes"}, []string{"z"}).
		Output("y", onnxtest.Float, "a", "b", "c").Output("z", onnxtest.Float, 2, 3, "w")
	res, err := importBytes(t, g.Bytes(), onnx.Options{})
	require.NoError(t, err)
	machine, err := build(res.Module)
	require.NoError(t, err)
	x := tensor.New(tensor.Float32, 2, 3, 4)
	for i := range 24 {
		x.SetFloat64(i, float64(i))
	}
	for _, tc := range []struct {
		shape, starts, ends []int64
		wantY, wantZ        []int64
	}{
		{[]int64{4, 0, -1}, []int64{1}, []int64{3}, []int64{4, 3, 2}, []int64{2, 3, 2}},
		{[]int64{-1, 2, 2}, []int64{-3}, []int64{math.MaxInt64}, []int64{6, 2, 2}, []int64{2, 3, 3}},
	} {
		out, _, err := machine.Call(context.Background(), "main", []vm.Value{vm.TensorValue(x),
			vm.TensorValue(i64s(tc.shape...)), vm.TensorValue(i64s(tc.starts...)), vm.TensorValue(i64s(tc.ends...))})
		require.NoError(t, err)
		tu, ok := out.Tuple()
		require.True(t, ok)
		y, _ := tu.Fields[0].Tensor()
		z, _ := tu.Fields[1].Tensor()
		assert.Equal(t, tc.wantY, y.Shape, "reshape to %v", tc.shape)
		assert.Equal(t, x.Bytes(), y.Bytes())
		require.Equal(t, tc.wantZ, z.Shape, "slice %v:%v", tc.starts, tc.ends)
		// z[i, j, k] = x[i, j, start+k] with start = starts mod 4.
		start := (tc.starts[0] + 4) % 4
		for i := range int(z.NumElements()) {
			w := tc.wantZ[2]
			row, k := int64(i)/w, int64(i)%w
			assert.Equal(t, float64(row*4+start+k), z.Float64At(i), "z element %d", i)
		}
	}
}

// TestRNNSequenceLens checks a one-unit RNN against the recurrence
// h_t = tanh(w x_t + r h_{t-1}) computed here, with a batch entry whose
// sequence ends early: its state stops and its Y rows are 0.
func TestRNNSequenceLens(t *testing.T) {
	const w, r = 0.7, 0.5
	g := onnxtest.New(14).Input("x", onnxtest.Float, 3, 2, 1).Input("lens", onnxtest.Int64, 2).
		Init(onnxtest.FloatTensor("W", []int64{1, 1, 1}, []float32{w})).
		Init(onnxtest.FloatTensor("R", []int64{1, 1, 1}, []float32{r})).
		Node("rnn", "RNN", []string{"x", "W", "R", "", "lens"}, []string{"Y", "Y_h"}, onnxtest.Int("hidden_size", 1)).
		Output("Y", onnxtest.Float, 3, 1, 2, 1).Output("Y_h", onnxtest.Float, 1, 2, 1)
	res, err := importBytes(t, g.Bytes(), onnx.Options{KeepParamsInModule: true})
	require.NoError(t, err)
	machine, err := build(res.Module)
	require.NoError(t, err)
	xs := []float64{0.1, -0.4, 0.9, 0.3, -0.2, 0.8} // (t, b)
	x := tensor.New(tensor.Float32, 3, 2, 1)
	for i, v := range xs {
		x.SetFloat64(i, v)
	}
	lens := tensor.New(tensor.Int64, 2)
	lens.SetFloat64(0, 3)
	lens.SetFloat64(1, 1)
	out, _, err := machine.Call(context.Background(), "main", []vm.Value{vm.TensorValue(x), vm.TensorValue(lens)})
	require.NoError(t, err)
	tu, _ := out.Tuple()
	y, _ := tu.Fields[0].Tensor()
	yh, _ := tu.Fields[1].Tensor()
	h := []float64{0, 0}
	n := []int{3, 1}
	for step := range 3 {
		for b := range 2 {
			want := 0.0
			if step < n[b] {
				h[b] = math.Tanh(w*xs[step*2+b] + r*h[b])
				want = h[b]
			}
			assert.InDelta(t, want, y.Float64At(step*2+b), 1e-6, "Y[%d, 0, %d]", step, b)
		}
	}
	assert.InDelta(t, h[0], yh.Float64At(0), 1e-6)
	assert.InDelta(t, h[1], yh.Float64At(1), 1e-6)
}
