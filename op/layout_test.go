package op

import (
	"testing"

	"github.com/phasec/phasec/ir"

	"github.com/stretchr/testify/require"
)

// indexMap builds lambda i, j, ...: results(i, j, ...).
func indexMap(n int, results func(p []ir.PrimExpr) []ir.PrimExpr) *ir.IndexMap {
	m := &ir.IndexMap{}
	var ps []ir.PrimExpr
	for i := range n {
		v := ir.SymVar(string(rune('i' + i)))
		m.Params = append(m.Params, v)
		ps = append(ps, v)
	}
	m.Results = results(ps)
	return m
}

var (
	transpose = indexMap(2, func(p []ir.PrimExpr) []ir.PrimExpr { return []ir.PrimExpr{p[1], p[0]} })
	// lambda n, c, h, w: (n, c // 4, h, w, c % 4)
	nchw4c = indexMap(4, func(p []ir.PrimExpr) []ir.PrimExpr {
		return []ir.PrimExpr{p[0], ir.FloorDiv(p[1], ir.I64(4)), p[2], p[3], ir.FloorMod(p[1], ir.I64(4))}
	})
)

func TestInferLayoutTransform(t *testing.T) {
	at := func(m *ir.IndexMap, more ir.Attrs) ir.Attrs {
		a := ir.Attrs{"index_map": m}
		for k, v := range more {
			a[k] = v
		}
		return a
	}
	x := tensorVar("x", ir.Float32, 2, 8, symN, 3)
	runInferCases(t, nil, []inferCase{
		{"transpose", opCall(LayoutTransform, at(transpose, nil), tensorVar("x", ir.Int32, symN, 5)), tinfo(ir.Int32, 5, symN), ""},
		{"split divides", opCall(LayoutTransform, at(nchw4c, nil), x), tinfo(ir.Float32, 2, 2, symN, 3, 4), ""},
		// 10 channels in blocks of 4: 3 blocks, the last two padding.
		{"split pads", opCall(LayoutTransform, at(nchw4c, ir.Attrs{"pad_value": 1.5}), tensorVar("x", ir.Float32, 1, 10, 2, 2)), tinfo(ir.Float32, 1, 3, 2, 2, 4), ""},
		{"split symbolic", opCall(LayoutTransform, at(nchw4c, nil), tensorVar("x", ir.Float32, 1, symN, 2, 2)),
			tinfo(ir.Float32, 1, ir.FloorDiv(ir.Add(symN, ir.I64(3)), ir.I64(4)), 2, 2, 4), ""},
		{"fuse", opCall(LayoutTransform, at(indexMap(2, func(p []ir.PrimExpr) []ir.PrimExpr {
			return []ir.PrimExpr{ir.Add(ir.Mul(p[0], ir.I64(3)), p[1])}
		}), nil), tensorVar("x", ir.Float32, 4, 3)), tinfo(ir.Float32, 12), ""},
		{"unknown rank", opCall(LayoutTransform, at(nchw4c, nil), ir.NewVar("x", ir.TensorInfoNDim(ir.Float32, -1))), ir.TensorInfoNDim(ir.Float32, 5), ""},
		{"rank", opCall(LayoutTransform, at(transpose, nil), x), nil,
			"R.layout_transform: number of dimensions in input must match the number of source dimensions in index map, but got 4 != 2"},
		{"pad dtype", opCall(LayoutTransform, at(transpose, ir.Attrs{"pad_value": ir.NewFloat(ir.Float64, 1)}), tensorVar("x", ir.Float32, 2, 2)), nil,
			"layout_transform pad_value dtype (float64) and input dtype (float32) must be the same"},
		{"pad float for int", opCall(LayoutTransform, at(transpose, ir.Attrs{"pad_value": 0.5}), tensorVar("x", ir.Int32, 2, 2)), nil,
			"pad_value 0.5 is not a value of the input dtype int32"},
		{"not an index map", opCall(LayoutTransform, ir.Attrs{"index_map": int64(3)}, x), nil, "index_map must be an index map"},
		{"offset", opCall(LayoutTransform, at(indexMap(1, func(p []ir.PrimExpr) []ir.PrimExpr { return []ir.PrimExpr{ir.Add(p[0], ir.I64(1))} }), nil),
			tensorVar("x", ir.Float32, 4)), nil, "index map result 0 (i + 1) takes values from 1, not from 0"},
		{"not injective", opCall(LayoutTransform, at(indexMap(2, func(p []ir.PrimExpr) []ir.PrimExpr { return []ir.PrimExpr{ir.Add(p[0], p[1])} }), nil),
			tensorVar("x", ir.Float32, 3, 3)), nil, "the index map is not injective: it maps the 9 elements of x into 5 positions"},
		{"separators", opCall(LayoutTransform, at(transpose, ir.Attrs{"axis_separators": []any{int64(3)}}), tensorVar("x", ir.Float32, 2, 2)), nil,
			"axis_separators entry 3 is outside [0, 2]"},
	})
}

// Hand-derived: x = arange(6) as (1, 6), lambda i, j: (j // 4, i, j % 4),
// pad 9: out (2, 1, 4) = [[[0, 1, 2, 3]], [[4, 5, 9, 9]]].
func TestEvalLayoutTransform(t *testing.T) {
	ev, _ := evalOf(LayoutTransform)
	m := indexMap(2, func(p []ir.PrimExpr) []ir.PrimExpr {
		return []ir.PrimExpr{ir.FloorDiv(p[1], ir.I64(4)), p[0], ir.FloorMod(p[1], ir.I64(4))}
	})
	x := newArray(ir.Int32, []int64{1, 6})
	for k := range x.i {
		x.i[k] = int64(k)
	}
	xt, err := x.tensor()
	require.NoError(t, err)
	got, err := ev(opCall(LayoutTransform, ir.Attrs{"index_map": m, "pad_value": int64(9)}), []Value{xt})
	require.NoError(t, err)
	out, err := toArray(got)
	require.NoError(t, err)
	// i + j sends (0, 1) and (1, 0) to 1: an error, not a silent overwrite.
	sum := indexMap(2, func(p []ir.PrimExpr) []ir.PrimExpr { return []ir.PrimExpr{ir.Add(p[0], p[1])} })
	y := newArray(ir.Int32, []int64{2, 2})
	yt, _ := y.tensor()
	_, err = ev(opCall(LayoutTransform, ir.Attrs{"index_map": sum}), []Value{yt})
	require.ErrorContains(t, err, "sends both [0 1] and [1 0] to [1]", "a non-injective map")
	want := []int64{0, 1, 2, 3, 4, 5, 9, 9}
	require.True(t, sameDims(out.shape, []int64{2, 1, 4}), "shape %v, want [2 1 4]", out.shape)
	for k, w := range want {
		require.Equal(t, w, out.i[k], "element %d (got %v)", k, out.i)
	}
}
