package op

import (
	"testing"

	"github.com/phasec/phasec/ir"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestInferBinary(t *testing.T) {
	sv := ir.NewVar("s", ir.ShapeInfoNDim(2))
	sameA := ir.NewVar("a", &ir.TensorInfo{Shape: sv, DType: ir.Float32, NDim: 2})
	sameB := ir.NewVar("b", &ir.TensorInfo{Shape: sv, DType: ir.Float32, NDim: 2})
	runInferCases(t, nil, []inferCase{
		{"static broadcast", opCall(Add, nil, tensorVar("x", ir.Float32, 2, 3), tensorVar("y", ir.Float32, 3)),
			tinfo(ir.Float32, 2, 3), ""},
		{"symbolic unit broadcast", opCall(Multiply, nil, tensorVar("x", ir.Float32, symN, 1), tensorVar("y", ir.Float32, 1, symM)),
			tinfo(ir.Float32, symN, symM), ""},
		{"equal symbolic dims", opCall(Subtract, nil, tensorVar("x", ir.Float32, symN, 4), tensorVar("y", ir.Float32, symN, 4)),
			tinfo(ir.Float32, symN, 4), ""},
		{"unprovable symbolic dims degrade to rank", opCall(Add, nil, tensorVar("x", ir.Float32, symN, 4), tensorVar("y", ir.Float32, symM, 4)),
			ir.TensorInfoNDim(ir.Float32, 2), ""},
		{"static mismatch", opCall(Add, nil, tensorVar("x", ir.Float32, 2, 3), tensorVar("y", ir.Float32, 2, 4)),
			nil, "R.add: cannot broadcast dimension 3 with 4"},
		{"dtype mix", opCall(Divide, nil, tensorVar("x", ir.Float32, 2), tensorVar("y", ir.Int32, 2)),
			nil, "R.divide: data types float32 and int32 must be equal"},
		{"unknown dtype is accepted", opCall(Add, nil, tensorVar("x", ir.Void, 2), tensorVar("y", ir.Int32, 2)),
			tinfo(ir.Void, 2), ""},
		{"comparison gives bool", opCall(Less, nil, tensorVar("x", ir.Float32, symN, 4), tensorVar("y", ir.Float32, 4)),
			tinfo(ir.Bool, symN, 4), ""},
		{"tensor with scalar", opCall(Power, nil, tensorVar("x", ir.Float32, symN), ir.NewVar("p", ir.NewPrimInfo(ir.Float32))),
			tinfo(ir.Float32, symN), ""},
		{"two scalars", opCall(Maximum, nil, ir.NewVar("p", ir.NewPrimInfo(ir.Int64)), ir.NewVar("q", ir.NewPrimInfo(ir.Int64))),
			ir.NewPrimInfo(ir.Int64), ""},
		{"unknown rank", opCall(Minimum, nil, ir.NewVar("x", ir.TensorInfoNDim(ir.Float32, -1)), tensorVar("y", ir.Float32, 3)),
			ir.TensorInfoNDim(ir.Float32, -1), ""},
		{"shared shape var is kept", opCall(Add, nil, sameA, sameB),
			&ir.TensorInfo{Shape: sv, DType: ir.Float32, NDim: 2}, ""},
		{"object operand", opCall(Add, nil, ir.NewVar("o", ir.Object()), tensorVar("y", ir.Float32, 3)),
			nil, "R.add: x1 must be a tensor or a scalar, got R.Object"},
		{"too many args", opCall(Add, nil, tensorVar("x", ir.Float32, 3), tensorVar("y", ir.Float32, 3), tensorVar("z", ir.Float32, 3)),
			nil, "R.add: expects at most 2 arguments, got 3"},
	})
}

func TestInferUnary(t *testing.T) {
	x := tensorVar("x", ir.Float32, symN, 4)
	got, err := inferOf(opCall(Exp, nil, x), nil)
	require.NoError(t, err, "R.exp should return its operand's info unchanged")
	require.Same(t, x.StructInfo(), got, "R.exp should return its operand's info unchanged")
	runInferCases(t, nil, []inferCase{
		{"float op on int", opCall(Sqrt, nil, tensorVar("i", ir.Int32, 3)), nil, "R.sqrt: requires a float tensor, got int32"},
		{"relu on int", opCall(Relu, nil, tensorVar("i", ir.Int32, 3)), tinfo(ir.Int32, 3), ""},
		{"gelu on float", opCall(Gelu, nil, x), tinfo(ir.Float32, symN, 4), ""},
		{"not a tensor", opCall(Negative, nil, ir.NewVar("s", ir.ShapeInfoNDim(2))), nil, "R.negative: x must be a tensor, got R.Shape"},
		{"missing arg", opCall(Abs, nil), nil, "R.abs: expects at least 1 arguments, got 0"},
	})
}

func TestInferMatmul(t *testing.T) {
	runInferCases(t, nil, []inferCase{
		{"batched symbolic", opCall(Matmul, nil, tensorVar("a", ir.Float32, symB, symN, symK), tensorVar("b", ir.Float32, symK, symM)),
			tinfo(ir.Float32, symB, symN, symM), ""},
		{"vector times matrix", opCall(Matmul, nil, tensorVar("a", ir.Float32, symK), tensorVar("b", ir.Float32, symK, symM)),
			tinfo(ir.Float32, symM), ""},
		{"matrix times vector", opCall(Matmul, nil, tensorVar("a", ir.Float32, symN, symK), tensorVar("b", ir.Float32, symK)),
			tinfo(ir.Float32, symN), ""},
		{"dot product", opCall(Matmul, nil, tensorVar("a", ir.Float32, 3), tensorVar("b", ir.Float32, 3)),
			tinfo(ir.Float32), ""},
		{"broadcast batch", opCall(Matmul, nil, tensorVar("a", ir.Float32, 2, 1, symN, 3), tensorVar("b", ir.Float32, 5, 3, 4)),
			tinfo(ir.Float32, 2, 5, symN, 4), ""},
		{"reduction mismatch", opCall(Matmul, nil, tensorVar("a", ir.Float32, symN, 3), tensorVar("b", ir.Float32, 5, symM)),
			nil, "R.matmul: reduction dims 3 and 5 differ"},
		{"symbolic reduction accepted", opCall(Matmul, nil, tensorVar("a", ir.Float32, 2, symN), tensorVar("b", ir.Float32, symM, 4)),
			tinfo(ir.Float32, 2, 4), ""},
		{"out_dtype", opCall(Matmul, ir.Attrs{"out_dtype": ir.Float32}, tensorVar("a", ir.Float16, 2, 3), tensorVar("b", ir.Float16, 3, 4)),
			tinfo(ir.Float32, 2, 4), ""},
		{"dtype mix", opCall(Matmul, nil, tensorVar("a", ir.Float16, 2, 3), tensorVar("b", ir.Float32, 3, 4)),
			nil, "R.matmul: data types float16 and float32 must be equal"},
		{"unknown rank", opCall(Matmul, nil, ir.NewVar("a", ir.TensorInfoNDim(ir.Float32, -1)), tensorVar("b", ir.Float32, 3, 4)),
			ir.TensorInfoNDim(ir.Float32, -1), ""},
		{"unknown shape known rank", opCall(Matmul, nil, ir.NewVar("a", ir.TensorInfoNDim(ir.Float32, 3)), tensorVar("b", ir.Float32, 3, 4)),
			ir.TensorInfoNDim(ir.Float32, 3), ""},
		{"unprovable batch", opCall(Matmul, nil, tensorVar("a", ir.Float32, symN, 2, 3), tensorVar("b", ir.Float32, symM, 3, 4)),
			ir.TensorInfoNDim(ir.Float32, 3), ""},
		{"batch mismatch", opCall(Matmul, nil, tensorVar("a", ir.Float32, 2, 2, 3), tensorVar("b", ir.Float32, 3, 3, 4)),
			nil, "R.matmul: cannot broadcast dimension 2 with 3"},
		{"rank 0", opCall(Matmul, nil, tensorVar("a", ir.Float32), tensorVar("b", ir.Float32, 3)),
			nil, "rank-0"},
	})
}

func TestInferReshape(t *testing.T) {
	s2 := ir.NewVar("s", ir.ShapeInfoNDim(2))
	runInferCases(t, nil, []inferCase{
		{"symbolic", opCall(Reshape, nil, tensorVar("x", ir.Float32, symN, 4), shapeLit(ir.Mul(symN, ir.I64(4)))),
			tinfo(ir.Float32, ir.Mul(symN, ir.I64(4))), ""},
		{"infer -1", opCall(Reshape, nil, tensorVar("x", ir.Float32, 2, 3, 4), shapeLit(-1, 4)),
			tinfo(ir.Float32, 6, 4), ""},
		{"infer symbolic -1", opCall(Reshape, nil, tensorVar("x", ir.Float32, symN, 4, 2), shapeLit(-1, 8)),
			tinfo(ir.Float32, symN, 8), ""},
		{"-1 with unknown input", opCall(Reshape, nil, ir.NewVar("x", ir.TensorInfoNDim(ir.Float32, 2)), shapeLit(-1, 8)),
			ir.TensorInfoNDim(ir.Float32, 2), ""},
		{"element count mismatch", opCall(Reshape, nil, tensorVar("x", ir.Float32, 2, 3), shapeLit(5)),
			nil, "R.reshape: cannot reshape 6 elements into a shape of 5 elements"},
		{"-1 not dividing", opCall(Reshape, nil, tensorVar("x", ir.Float32, 2, 3), shapeLit(-1, 4)),
			nil, "R.reshape: cannot reshape 6 elements"},
		{"two -1", opCall(Reshape, nil, tensorVar("x", ir.Float32, 2, 3), shapeLit(-1, -1)),
			nil, "at most one dimension"},
		{"unprovable symbolic accepted", opCall(Reshape, nil, tensorVar("x", ir.Float32, symN, 4), shapeLit(symM)),
			tinfo(ir.Float32, symM), ""},
		{"shape var", opCall(Reshape, nil, tensorVar("x", ir.Float32, symN, 4), s2),
			&ir.TensorInfo{Shape: s2, DType: ir.Float32, NDim: 2}, ""},
		{"not a shape", opCall(Reshape, nil, tensorVar("x", ir.Float32, 4), tensorVar("y", ir.Int64, 1)),
			nil, "R.reshape: shape must be a shape, got R.Tensor(ndim=1)"},
	})
}

func TestReshapeNormalizeResolvesMinusOne(t *testing.T) {
	call := opCall(Reshape, nil, tensorVar("x", ir.Float32, 2, 3, 4), shapeLit(-1, 4))
	got, err := Reshape.Normalize(nil, call)
	require.NoError(t, err)
	se := got.(*ir.Call).Args[1].(*ir.ShapeExpr)
	require.True(t, dimListEqual(se.Values, toDims([]any{6, 4})), "shape not resolved: %s", descDims(se.Values))
	again, _ := Reshape.Normalize(nil, got.(*ir.Call))
	require.Same(t, got, again, "normalizing a canonical reshape should return it unchanged")
}

func TestInferReductions(t *testing.T) {
	x := tensorVar("x", ir.Float32, symN, 4, 5)
	runInferCases(t, nil, []inferCase{
		{"sum axis", opCall(Sum, ir.Attrs{"axis": []any{int64(1)}}, x), tinfo(ir.Float32, symN, 5), ""},
		{"sum keepdims", opCall(Sum, ir.Attrs{"axis": []any{int64(1)}, "keepdims": true}, x), tinfo(ir.Float32, symN, 1, 5), ""},
		{"sum all", opCall(Sum, nil, x), tinfo(ir.Float32), ""},
		{"mean negative axis", opCall(Mean, ir.Attrs{"axis": []any{int64(-1), int64(0)}}, x), tinfo(ir.Float32, 4), ""},
		{"max keepdims all", opCall(Max, ir.Attrs{"keepdims": true}, x), tinfo(ir.Float32, 1, 1, 1), ""},
		{"min scalar axis attr", opCall(Min, ir.Attrs{"axis": int64(0)}, x), tinfo(ir.Float32, 4, 5), ""},
		{"prod unknown shape", opCall(Prod, ir.Attrs{"axis": []any{int64(0)}}, ir.NewVar("y", ir.TensorInfoNDim(ir.Int32, 3))),
			ir.TensorInfoNDim(ir.Int32, 2), ""},
		{"unknown rank all", opCall(Sum, nil, ir.NewVar("y", ir.TensorInfoNDim(ir.Float32, -1))), tinfo(ir.Float32), ""},
		{"unknown rank axis", opCall(Sum, ir.Attrs{"axis": []any{int64(0)}}, ir.NewVar("y", ir.TensorInfoNDim(ir.Float32, -1))),
			ir.TensorInfoNDim(ir.Float32, -1), ""},
		{"axis out of range", opCall(Sum, ir.Attrs{"axis": []any{int64(3)}}, x), nil, "R.sum: axis 3 is out of range for a tensor of rank 3"},
		{"repeated axis", opCall(Sum, ir.Attrs{"axis": []any{int64(1), int64(-2)}}, x), nil, "R.sum: axis 1 appears twice"},
		{"bad attr type", opCall(Sum, ir.Attrs{"keepdims": "yes"}, x), nil, "R.sum: attribute keepdims must be a bool"},
	})
}

func TestInferNN(t *testing.T) {
	x := tensorVar("x", ir.Float32, symN, 4)
	runInferCases(t, nil, []inferCase{
		{"softmax", opCall(Softmax, nil, x), tinfo(ir.Float32, symN, 4), ""},
		{"log_softmax axis", opCall(LogSoftmax, ir.Attrs{"axis": int64(0)}, x), tinfo(ir.Float32, symN, 4), ""},
		{"softmax axis range", opCall(Softmax, ir.Attrs{"axis": int64(2)}, x), nil, "R.nn.softmax: axis 2 is out of range"},
		{"softmax int", opCall(Softmax, nil, tensorVar("i", ir.Int32, 3)), nil, "R.nn.softmax: requires a float tensor"},
		{"layer_norm", opCall(LayerNorm, ir.Attrs{"axes": []any{int64(-1)}}, x, tensorVar("g", ir.Float32, 4), tensorVar("b", ir.Float32, 4)),
			tinfo(ir.Float32, symN, 4), ""},
		{"layer_norm gamma dim", opCall(LayerNorm, ir.Attrs{"axes": []any{int64(-1)}}, x, tensorVar("g", ir.Float32, 5), tensorVar("b", ir.Float32, 4)),
			nil, "R.nn.layer_norm: gamma dimension 0 is 5 but data dimension 1 is 4"},
		{"layer_norm beta rank", opCall(LayerNorm, ir.Attrs{"axes": []any{int64(-1)}}, x, tensorVar("g", ir.Float32, 4), tensorVar("b", ir.Float32, 1, 4)),
			nil, "R.nn.layer_norm: beta must have rank 1"},
		{"layer_norm dtype", opCall(LayerNorm, ir.Attrs{"axes": []any{int64(1)}}, x, tensorVar("g", ir.Float16, 4), tensorVar("b", ir.Float32, 4)),
			nil, "gamma has dtype float16 but data has float32"},
		{"rms_norm default axes", opCall(RMSNorm, nil, x, tensorVar("w", ir.Float32, 4)), tinfo(ir.Float32, symN, 4), ""},
		{"rms_norm symbolic weight", opCall(RMSNorm, ir.Attrs{"axes": []any{int64(0)}}, x, tensorVar("w", ir.Float32, symN)), tinfo(ir.Float32, symN, 4), ""},
	})
}

func TestInferCreation(t *testing.T) {
	s := ir.NewVar("s", ir.ShapeInfoNDim(3))
	one := ir.NewVar("c", tinfo(ir.Float32))
	runInferCases(t, nil, []inferCase{
		{"astype", opCall(AsType, ir.Attrs{"dtype": ir.Float16}, tensorVar("x", ir.Float32, symN, 4)), tinfo(ir.Float16, symN, 4), ""},
		{"astype string dtype", opCall(AsType, ir.Attrs{"dtype": "int8"}, tensorVar("x", ir.Float32, 2)), tinfo(ir.Int8, 2), ""},
		{"full", opCall(Full, nil, shapeLit(2, symN), one), tinfo(ir.Float32, 2, symN), ""},
		{"full dtype", opCall(Full, ir.Attrs{"dtype": ir.Int32}, shapeLit(2), one), tinfo(ir.Int32, 2), ""},
		{"full shape var", opCall(Full, nil, s, one), &ir.TensorInfo{Shape: s, DType: ir.Float32, NDim: 3}, ""},
		{"full non-scalar", opCall(Full, nil, shapeLit(2), tensorVar("v", ir.Float32, 2)), nil, "R.full: fill_value must be a scalar tensor"},
		{"zeros", opCall(Zeros, ir.Attrs{"dtype": ir.Int32}, shapeLit(symN)), tinfo(ir.Int32, symN), ""},
		{"ones", opCall(Ones, ir.Attrs{"dtype": ir.Float32}, shapeLit(3, 3)), tinfo(ir.Float32, 3, 3), ""},
		{"zeros_like", opCall(ZerosLike, nil, tensorVar("x", ir.Float16, symN)), tinfo(ir.Float16, symN), ""},
		{"ones_like dtype", opCall(OnesLike, ir.Attrs{"dtype": ir.Int8}, tensorVar("x", ir.Float16, symN)), tinfo(ir.Int8, symN), ""},
		{"full_like", opCall(FullLike, nil, tensorVar("x", ir.Float32, 2, 2), one), tinfo(ir.Float32, 2, 2), ""},
	})
}

// TestInferBinaryShares: an elementwise result equal to its first operand's
// struct info is that struct info (immutable, shared); any difference (a
// broadcast dimension, the dtype of a comparison, a virtual device) builds
// a new one, equal to what the rules give.
func TestInferBinaryShares(t *testing.T) {
	x := tensorVar("x", ir.Float32, symN, 16)
	y := tensorVar("y", ir.Float32, symN, 16)
	got, err := inferOf(opCall(Add, nil, x, y), nil)
	require.NoError(t, err)
	assert.Same(t, x.StructInfo(), got, "add(x, y) with equal shapes: a new struct info %s, want x's", descInfo(got))
	vdev := &ir.VDevice{Target: "cuda", Scope: "global"}
	onDevice := ir.NewVar("d", &ir.TensorInfo{Shape: x.StructInfo().(*ir.TensorInfo).Shape, DType: ir.Float32, NDim: 2, VDevice: vdev})
	for _, c := range []struct {
		name string
		call *ir.Call
		want *ir.TensorInfo
	}{
		{"broadcast", opCall(Add, nil, tensorVar("o", ir.Float32, 1, 16), y), tinfo(ir.Float32, symN, 16)},
		{"comparison", opCall(Less, nil, x, y), tinfo(ir.Bool, symN, 16)},
		{"virtual device", opCall(Add, nil, onDevice, y), tinfo(ir.Float32, symN, 16)},
	} {
		got, err := inferOf(c.call, nil)
		require.NoError(t, err)
		assert.NotSame(t, c.call.Args[0].StructInfo(), got, "%s: shares the first operand's struct info", c.name)
		assert.Empty(t, infoDiff(got, c.want), c.name)
	}
}
