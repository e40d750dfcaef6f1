package ir

import (
	"testing"

	"github.com/stretchr/testify/assert"
)

func TestFormatStructInfo(t *testing.T) {
	n := SymVar("n")
	s := NewVar("s", ShapeInfoNDim(2))
	cases := []struct {
		in   StructInfo
		want string
	}{
		{Object(), "R.Object"},
		{NewPrimInfo(Int64), `R.Prim("int64")`},
		{NewPrimInfo(Float32), `R.Prim("float32")`},
		{PrimInfoOf(n), "R.Prim(value=n)"},
		{ShapeInfoOf(n, I64(4)), "R.Shape([n, 4])"},
		{ShapeInfoOf(), "R.Shape([])"},
		{ShapeInfoNDim(3), "R.Shape(ndim=3)"},
		{ShapeInfoNDim(-1), "R.Shape(ndim=-1)"},
		{f32T(n, I64(4)), `R.Tensor((n, 4), dtype="float32")`},
		{f32T(n), `R.Tensor((n,), dtype="float32")`},
		{f32T(), `R.Tensor((), dtype="float32")`},
		{f32T(Add(Mul(I64(2), n), I64(2))), `R.Tensor((2 * n + 2,), dtype="float32")`},
		{TensorInfoOf(Void, n, I64(4)), `R.Tensor((n, 4))`},
		{TensorInfoNDim(Float32, 2), `R.Tensor(dtype="float32", ndim=2)`},
		{TensorInfoNDim(Void, 2), `R.Tensor(ndim=2)`},
		{TensorInfoNDim(Float32, -1), `R.Tensor(dtype="float32")`},
		{TensorInfoNDim(Void, -1), `R.Tensor`},
		{&TensorInfo{Shape: s, DType: Float32, NDim: 2}, `R.Tensor(s, dtype="float32")`},
		{NewTupleInfo(f32T(n), Object()), `R.Tuple(R.Tensor((n,), dtype="float32"), R.Object)`},
		{NewTupleInfo(Object()), `R.Tuple(R.Object)`},
		{VoidInfo(), "R.Tuple"},
		{NewFuncInfo([]StructInfo{f32T(n), Object()}, f32T(n), true),
			`R.Callable((R.Tensor((n,), dtype="float32"), R.Object), R.Tensor((n,), dtype="float32"), True)`},
		{NewFuncInfo([]StructInfo{Object()}, Object(), false), `R.Callable((R.Object,), R.Object, False)`},
		{NewFuncInfo(nil, VoidInfo(), true), `R.Callable((), R.Tuple, True)`},
		{OpaqueFuncInfo(Object(), true), `R.Callable()`},
		{OpaqueFuncInfo(Object(), false), `R.Callable(purity=False)`},
		{OpaqueFuncInfo(f32T(), false), `R.Callable(ret=R.Tensor((), dtype="float32"), purity=False)`},
	}
	for _, c := range cases {
		assert.Equal(t, c.want, FormatStructInfo(c.in, nil))
	}
	// String methods agree with FormatStructInfo.
	assert.Equal(t, `R.Tensor((n,), dtype="float32")`, f32T(n).String(), "String()")
	// Names come from the namer when one is given.
	named := FormatStructInfo(f32T(n), func(*PrimVar) string { return "batch" })
	assert.Equal(t, `R.Tensor((batch,), dtype="float32")`, named, "namer ignored")
}

func TestFormatExpr(t *testing.T) {
	x, y := NewVar("x", nil), NewVar("y", nil)
	add := testOp("relax.add")
	reshape := testOp("relax.reshape")
	cases := []struct {
		in   Expr
		want string
	}{
		{x, "x"},
		{NewShapeExpr(I64(8)), "R.shape([8])"},
		{NewShapeExpr(), "R.shape([])"},
		{NewPrimValue(I64(1)), "R.prim_value(1)"},
		{NewStringImm("x"), `R.str("x")`},
		{NewDataTypeImm(Float32), `R.dtype("float32")`},
		{&Constant{Data: NewScalarArray(Float32, 1)}, `R.const(1, "float32")`},
		{&Constant{Data: &NDArray{DType: Float32, Shape: []int64{2, 3}, Data: make([]byte, 24)}}, `R.const(<(2, 3) float32>)`},
		{NewGlobalVar("f"), "cls.f"},
		{NewCall(add, x, y), "R.add(x, y)"},
		{NewCall(reshape, x, NewShapeExpr(I64(8))), "R.reshape(x, R.shape([8]))"},
		{NewCall(NewGlobalVar("f"), x), "cls.f(x)"},
		{&Call{Op: NewExternFunc("vm.builtin.print"), Args: []Expr{x}, SInfoArgs: []StructInfo{VoidInfo()}},
			`R.call_packed("vm.builtin.print", x, sinfo_args=(R.Tuple,))`},
		{&Call{Op: testOp("relax.call_tir"), Args: []Expr{NewGlobalVar("k"), NewTuple(x)}, SInfoArgs: []StructInfo{TensorInfoOf(Float32, I64(4))}},
			`R.call_tir(cls.k, (x,), out_sinfo=R.Tensor((4,), dtype="float32"))`},
		{&Call{Op: testOp("relax.sum"), Args: []Expr{x}, Attrs: Attrs{"keepdims": false, "axis": []any{int64(1)}}},
			`R.sum(x, axis=[1], keepdims=False)`},
		{NewTuple(x, y), "(x, y)"},
		{NewTuple(x), "(x,)"},
		{NewTuple(), "()"},
		{&TupleGetItem{Tuple: x, Index: 0}, "x[0]"},
	}
	for _, c := range cases {
		assert.Equal(t, c.want, FormatExpr(c.in, nil))
	}
	assert.Equal(t, "R.add(v_x, v_y)", FormatExpr(NewCall(add, x, y), func(v *Var) string { return "v_" + v.Name }), "namer ignored")
}
