package op

import (
	"testing"

	"github.com/phasec/phasec/ir"

	"github.com/stretchr/testify/require"
)

func TestInferGatherNDCollapse(t *testing.T) {
	x := tensorVar("x", ir.Float32, symN, 4, 5)
	runInferCases(t, nil, []inferCase{
		{"gather_nd", opCall(GatherND, nil, x, tensorVar("i", ir.Int64, 7, 2)), tinfo(ir.Float32, 7, 5), ""},
		{"gather_nd batch", opCall(GatherND, ir.Attrs{"batch_dims": int64(1)}, x, tensorVar("i", ir.Int64, symN, 3, 1)), tinfo(ir.Float32, symN, 3, 5), ""},
		{"gather_nd too long", opCall(GatherND, nil, x, tensorVar("i", ir.Int64, 2, 4)), nil, "R.gather_nd: batch_dims 0 plus the index length 4 exceed data's rank 3"},
		{"gather_nd float indices", opCall(GatherND, nil, x, tensorVar("i", ir.Float32, 2, 1)), nil, "indices must be an integer tensor"},
		{"gather_nd batch mismatch", opCall(GatherND, ir.Attrs{"batch_dims": int64(2)}, x, tensorVar("i", ir.Int64, symN, 3, 1)), nil, "batch dimension 1 is 4 in data but 3 in indices"},
		{"collapse_sum_to", opCall(CollapseSumTo, nil, x, shapeLit(4, 1)), tinfo(ir.Float32, 4, 1), ""},
		{"collapse_sum_to bad", opCall(CollapseSumTo, nil, x, shapeLit(3, 5)), nil, "R.collapse_sum_to: shape dimension 0 (3) does not broadcast to data's 4"},
		{"collapse_sum_to rank", opCall(CollapseSumTo, nil, x, shapeLit(1, 1, 1, 1)), nil, "shape has rank 4, more than data's 3"},
		{"collapse_sum_like", opCall(CollapseSumLike, nil, x, tensorVar("y", ir.Float32, 1, 5)), tinfo(ir.Float32, 1, 5), ""},
	})
}

func TestInferScatterElements(t *testing.T) {
	x := tensorVar("x", ir.Float32, symN, 4)
	i := tensorVar("i", ir.Int64, 2, 3)
	u := tensorVar("u", ir.Float32, 2, 3)
	runInferCases(t, nil, []inferCase{
		{"scatter_elements", opCall(ScatterElements, nil, x, i, u), tinfo(ir.Float32, symN, 4), ""},
		{"scatter_elements add", opCall(ScatterElements, ir.Attrs{"axis": int64(1), "reduction": "add"}, x, i, u), tinfo(ir.Float32, symN, 4), ""},
		{"scatter_elements shapes", opCall(ScatterElements, nil, x, i, tensorVar("u", ir.Float32, 2, 2)), nil, "R.scatter_elements: indices and updates differ in dimension 1: 3 vs 2"},
		{"scatter_elements rank", opCall(ScatterElements, nil, x, tensorVar("j", ir.Int64, 3), tensorVar("v", ir.Float32, 3)), nil, "must have data's rank 2, got 1"},
		{"scatter_elements dtype", opCall(ScatterElements, nil, x, i, tensorVar("v", ir.Int32, 2, 3)), nil, "must be equal"},
		{"scatter_elements reduction", opCall(ScatterElements, ir.Attrs{"reduction": "sum"}, x, i, u), nil, "reduction must be one of"},
		{"scatter_elements mean", opCall(ScatterElements, ir.Attrs{"reduction": "mean"}, x, i, u), tinfo(ir.Float32, symN, 4), ""},
		{"scatter_elements mean bool", opCall(ScatterElements, ir.Attrs{"reduction": "mean"}, tensorVar("b", ir.Bool, 2, 3), i, tensorVar("c", ir.Bool, 2, 3)), nil,
			`R.scatter_elements: reduction "mean" needs a numeric data type, got bool`},
		{"scatter_elements axis", opCall(ScatterElements, ir.Attrs{"axis": int64(2)}, x, i, u), nil, "out of range"},
	})
}

func TestDynamicStridedSlice(t *testing.T) {
	x := tensorVar("x", ir.Float32, symN, 4)
	b := tensorVar("b", ir.Int64, 2)
	runInferCases(t, nil, []inferCase{
		{"dynamic_strided_slice", opCall(DynamicStridedSlice, nil, x, b, b, b), ir.TensorInfoNDim(ir.Float32, 2), ""},
		{"dynamic_strided_slice length", opCall(DynamicStridedSlice, nil, x, b, b, tensorVar("s", ir.Int64, 3)), nil,
			"R.dynamic_strided_slice: strides has 3 entries but x has rank 2"},
		{"dynamic_strided_slice dtype", opCall(DynamicStridedSlice, nil, x, tensorVar("s", ir.Int32, 2), b, b), nil, "begin must be an int64 tensor, got int32"},
	})
	// numpy: x[-1:0:-2, 1:10:2] of a 5x4 arange: rows 4, 2; columns 1, 3.
	ev, _ := evalOf(DynamicStridedSlice)
	data := newArray(ir.Float32, []int64{5, 4})
	for k := range data.f {
		data.f[k] = float64(k)
	}
	vec := func(v ...int64) Value {
		a := newArray(ir.Int64, []int64{int64(len(v))})
		copy(a.i, v)
		tt, _ := a.tensor()
		return tt
	}
	xt, _ := data.tensor()
	got, err := ev(opCall(DynamicStridedSlice, nil), []Value{xt, vec(-1, 1), vec(0, 10), vec(-2, 2)})
	require.NoError(t, err)
	out, err := toArray(got)
	require.NoError(t, err)
	want := []float64{4*4 + 1, 4*4 + 3, 2*4 + 1, 2*4 + 3}
	require.True(t, sameDims(out.shape, []int64{2, 2}), "shape %v, want [2 2]", out.shape)
	for i, w := range want {
		require.Equal(t, w, out.f[i], "element %d (got %v)", i, out.f)
	}
	_, err = ev(opCall(DynamicStridedSlice, nil), []Value{xt, vec(0, 0), vec(1, 1), vec(1, 0)})
	require.Error(t, err, "a zero stride must be an error")
}
