package op

import (
	"testing"

	"github.com/phasec/phasec/ir"

	"github.com/stretchr/testify/require"
)

func TestInferScatterND(t *testing.T) {
	x := tensorVar("x", ir.Float32, symN, 4, 5)
	i2 := tensorVar("i", ir.Int64, 7, 2)
	runInferCases(t, nil, []inferCase{
		{"scatter_nd", opCall(ScatterND, nil, x, i2, tensorVar("u", ir.Float32, 7, 5)), tinfo(ir.Float32, symN, 4, 5), ""},
		{"scatter_nd full index", opCall(ScatterND, ir.Attrs{"reduction": "max"}, x, tensorVar("i", ir.Int32, 2, 3, 3), tensorVar("u", ir.Float32, 2, 3)), tinfo(ir.Float32, symN, 4, 5), ""},
		{"scatter_nd unknown shapes", opCall(ScatterND, nil, tensorVar("x", ir.Float32, symN, 4), ir.NewVar("i", ir.TensorInfoNDim(ir.Int64, 2)), tensorVar("u", ir.Float32, 1)), tinfo(ir.Float32, symN, 4), ""},
		{"scatter_nd rank", opCall(ScatterND, nil, x, i2, tensorVar("u", ir.Float32, 7)), nil,
			"R.scatter_nd: updates must have rank data + indices - indices.shape[-1] - 1, got data.shape [n, 4, 5], indices.shape [7, 2], updates.shape [7]"},
		{"scatter_nd shape", opCall(ScatterND, nil, x, i2, tensorVar("u", ir.Float32, 7, 4)), nil,
			"updates.shape must be indices.shape[:-1] + data.shape[K:], got updates.shape [7, 4], indices.shape [7, 2], data.shape [n, 4, 5]"},
		{"scatter_nd symbolic unproven", opCall(ScatterND, nil, x, tensorVar("i", ir.Int64, symM, 1), tensorVar("u", ir.Float32, symN, 4, 5)), nil,
			"updates.shape must be indices.shape[:-1] + data.shape[K:]"},
		{"scatter_nd K too large", opCall(ScatterND, nil, tensorVar("x", ir.Float32, 5), tensorVar("i", ir.Int64, 2, 2, 3), tensorVar("u", ir.Float32)), nil,
			"indices.shape[-1] must be at most data's rank, got data.shape [5], indices.shape [2, 2, 3]"},
		{"scatter_nd symbolic K", opCall(ScatterND, nil, x, tensorVar("i", ir.Int64, 2, symM), tensorVar("u", ir.Float32, 2, 5)), nil,
			"the last axis of indices must have a static extent, got indices.shape [2, m]"},
		{"scatter_nd dtype", opCall(ScatterND, nil, x, i2, tensorVar("u", ir.Float64, 7, 5)), nil,
			"data and updates must have the same dtype, got data: float32, updates: float64"},
		{"scatter_nd float indices", opCall(ScatterND, nil, x, tensorVar("i", ir.Float32, 7, 2), tensorVar("u", ir.Float32, 7, 5)), nil,
			"indices must have an integer dtype, got float32"},
		{"scatter_nd reduction", opCall(ScatterND, ir.Attrs{"reduction": "mean"}, x, i2, tensorVar("u", ir.Float32, 7, 5)), nil,
			"reduction must be one of update, add, mul, min, max; got \"mean\""},
	})
}

// Hand-derived: data = [[0, 1], [2, 3], [4, 5]] (3x2), indices [[2], [0], [2]],
// updates [[10, 20], [30, 40], [50, 60]].
func TestEvalScatterND(t *testing.T) {
	ev, _ := evalOf(ScatterND)
	data := newArray(ir.Int32, []int64{3, 2})
	for k := range data.i {
		data.i[k] = int64(k)
	}
	idx := newArray(ir.Int64, []int64{3, 1})
	copy(idx.i, []int64{2, 0, -1})
	upd := newArray(ir.Int32, []int64{3, 2})
	copy(upd.i, []int64{10, 20, 30, 40, 50, 60})
	args := make([]Value, 3)
	for i, a := range []*array{data, idx, upd} {
		v, err := a.tensor()
		require.NoError(t, err)
		args[i] = v
	}
	for _, c := range []struct {
		red  string
		want []int64
	}{
		{"update", []int64{30, 40, 2, 3, 50, 60}}, // the last of rows 2 wins
		{"add", []int64{30, 41, 2, 3, 64, 85}},    // 4+10+50, 5+20+60
		{"mul", []int64{0, 40, 2, 3, 2000, 6000}}, // 4*10*50, 5*20*60
		{"max", []int64{30, 40, 2, 3, 50, 60}},
		{"min", []int64{0, 1, 2, 3, 4, 5}},
	} {
		got, err := ev(opCall(ScatterND, ir.Attrs{"reduction": c.red}), args)
		require.NoError(t, err)
		out, err := toArray(got)
		require.NoError(t, err)
		for k, w := range c.want {
			require.Equal(t, w, out.i[k], "%s: element %d (got %v)", c.red, k, out.i)
		}
	}
	copy(idx.i, []int64{3, 0, 0})
	bad, _ := idx.tensor()
	_, err := ev(opCall(ScatterND, nil), []Value{args[0], bad, args[2]})
	require.Error(t, err, "index 3 of a dimension of 3 must be an error")
}
