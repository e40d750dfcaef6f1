package ir

import (
	"testing"

	"github.com/stretchr/testify/assert"
)

func f32T(dims ...PrimExpr) *TensorInfo { return TensorInfoOf(Float32, dims...) }

func TestStructInfoBaseCheck(t *testing.T) {
	n, m := SymVar("n"), SymVar("m")
	tensorOfShapeVar := func(s *Var) *TensorInfo { return &TensorInfo{Shape: s, DType: Float32, NDim: 2} }
	sv := NewVar("s", ShapeInfoOf(n, I64(4)))
	cases := []struct {
		name          string
		base, derived StructInfo
		want          BaseCheckResult
	}{
		// Object is the base of everything.
		{"object/tensor", Object(), f32T(n), Pass},
		{"object/object", Object(), Object(), Pass},
		{"object/func", Object(), NewFuncInfo(nil, Object(), true), Pass},

		// Prim.
		{"prim/object", NewPrimInfo(Int64), Object(), FailL1},
		{"prim/tensor", NewPrimInfo(Int64), f32T(), FailL0},
		{"prim/dtype", NewPrimInfo(Int64), NewPrimInfo(Int32), FailL0},
		{"prim/value derived", NewPrimInfo(Int64), PrimInfoOf(n), Pass},
		{"prim/value unknown", PrimInfoOf(n), NewPrimInfo(Int64), FailL2},
		{"prim/const mismatch", PrimInfoOf(I64(4)), PrimInfoOf(I64(5)), FailL0},
		{"prim/const match", PrimInfoOf(I64(4)), PrimInfoOf(I64(4)), Pass},
		{"prim/symbolic mismatch", PrimInfoOf(n), PrimInfoOf(m), FailL2},
		{"prim/canonical", PrimInfoOf(Add(n, I64(1))), PrimInfoOf(Add(I64(1), n)), Pass},

		// Shape.
		{"shape/unknown ndim base", ShapeInfoNDim(-1), ShapeInfoOf(n, I64(4)), Pass},
		{"shape/ndim mismatch", ShapeInfoNDim(2), ShapeInfoNDim(3), FailL0},
		{"shape/ndim unknown derived", ShapeInfoNDim(2), ShapeInfoNDim(-1), FailL1},
		{"shape/ndim only base", ShapeInfoNDim(2), ShapeInfoOf(n, m), Pass},
		{"shape/values unknown derived", ShapeInfoOf(n, I64(4)), ShapeInfoNDim(2), FailL2},
		{"shape/const mismatch", ShapeInfoOf(n, I64(4)), ShapeInfoOf(n, I64(5)), FailL0},
		{"shape/symbolic mismatch", ShapeInfoOf(n, I64(4)), ShapeInfoOf(m, I64(4)), FailL2},
		{"shape/canonical", ShapeInfoOf(Mul(I64(2), n)), ShapeInfoOf(Add(n, n)), Pass},
		{"shape/object", ShapeInfoNDim(2), Object(), FailL1},
		{"shape/tensor", ShapeInfoNDim(2), f32T(n, m), FailL0},

		// Tensor.
		{"tensor/any", TensorInfoNDim(Void, -1), f32T(n, I64(4)), Pass},
		{"tensor/dtype mismatch", f32T(n), TensorInfoOf(Float16, n), FailL0},
		{"tensor/dtype unknown derived", TensorInfoNDim(Float32, 2), TensorInfoNDim(Void, 2), FailL1},
		{"tensor/void base dtype", TensorInfoNDim(Void, 2), f32T(n, m), Pass},
		{"tensor/ndim mismatch", TensorInfoNDim(Float32, 2), TensorInfoNDim(Float32, 3), FailL0},
		{"tensor/ndim unknown derived", TensorInfoNDim(Float32, 2), TensorInfoNDim(Float32, -1), FailL1},
		{"tensor/shape unknown derived", f32T(n, I64(4)), TensorInfoNDim(Float32, 2), FailL2},
		{"tensor/same shape", f32T(n, I64(4)), f32T(n, I64(4)), Pass},
		{"tensor/symbolic mismatch", f32T(n, I64(4)), f32T(m, I64(4)), FailL2},
		{"tensor/const mismatch", f32T(I64(2), I64(4)), f32T(I64(2), I64(5)), FailL0},
		{"tensor/canonical", f32T(Mul(n, I64(4))), f32T(Mul(I64(4), n)), Pass},
		{"tensor/object", f32T(n), Object(), FailL1},
		{"tensor/shape info", f32T(n), ShapeInfoOf(n), FailL0},
		{"tensor/shape var values", f32T(n, I64(4)), tensorOfShapeVar(sv), Pass},
		{"tensor/shape var same", tensorOfShapeVar(sv), tensorOfShapeVar(sv), Pass},

		// Tuple: elementwise, the minimum.
		{"tuple/equal", NewTupleInfo(f32T(n), NewPrimInfo(Int64)), NewTupleInfo(f32T(n), NewPrimInfo(Int64)), Pass},
		{"tuple/length", NewTupleInfo(f32T(n)), NewTupleInfo(f32T(n), f32T(n)), FailL0},
		{"tuple/min of L2 and L1",
			NewTupleInfo(f32T(n), TensorInfoNDim(Float32, -1)),
			NewTupleInfo(f32T(m), TensorInfoNDim(Void, -1)), FailL1},
		{"tuple/L0 wins", NewTupleInfo(f32T(n), f32T()), NewTupleInfo(f32T(m), NewPrimInfo(Int64)), FailL0},
		{"tuple/object", VoidInfo(), Object(), FailL1},
		{"tuple/empty", VoidInfo(), NewTupleInfo(), Pass},

		// Func.
		{"func/pure is a subtype of impure",
			NewFuncInfo([]StructInfo{f32T(n)}, f32T(n), false),
			NewFuncInfo([]StructInfo{f32T(n)}, f32T(n), true), Pass},
		{"func/impure is not a subtype of pure",
			NewFuncInfo([]StructInfo{f32T(n)}, f32T(n), true),
			NewFuncInfo([]StructInfo{f32T(n)}, f32T(n), false), FailL0},
		{"func/opaque base", OpaqueFuncInfo(Object(), false), NewFuncInfo([]StructInfo{f32T(n)}, f32T(n), false), Pass},
		{"func/opaque base ret", OpaqueFuncInfo(f32T(), false), NewFuncInfo(nil, NewPrimInfo(Int64), false), FailL0},
		{"func/opaque derived", NewFuncInfo(nil, Object(), false), OpaqueFuncInfo(Object(), false), FailL2},
		{"func/alpha renamed",
			NewFuncInfo([]StructInfo{f32T(n, I64(4))}, f32T(n), true),
			NewFuncInfo([]StructInfo{f32T(m, I64(4))}, f32T(m), true), Pass},
		{"func/param L1 counts as L2",
			NewFuncInfo([]StructInfo{TensorInfoNDim(Float32, 2)}, Object(), true),
			NewFuncInfo([]StructInfo{TensorInfoNDim(Void, 2)}, Object(), true), FailL2},
		{"func/param L0 stays L0",
			NewFuncInfo([]StructInfo{TensorInfoNDim(Float32, 2)}, Object(), true),
			NewFuncInfo([]StructInfo{TensorInfoNDim(Float16, 2)}, Object(), true), FailL0},
		{"func/ret covariant",
			NewFuncInfo([]StructInfo{f32T(I64(2))}, TensorInfoNDim(Float32, -1), true),
			NewFuncInfo([]StructInfo{f32T(I64(2))}, f32T(I64(3)), true), Pass},
		{"func/ret not covariant the other way",
			NewFuncInfo([]StructInfo{f32T(I64(2))}, f32T(I64(3)), true),
			NewFuncInfo([]StructInfo{f32T(I64(2))}, TensorInfoNDim(Float32, 1), true), FailL2},
		{"func/ret of unknown rank",
			NewFuncInfo([]StructInfo{f32T(I64(2))}, f32T(I64(3)), true),
			NewFuncInfo([]StructInfo{f32T(I64(2))}, TensorInfoNDim(Float32, -1), true), FailL1},
		{"func/arity", NewFuncInfo([]StructInfo{Object()}, Object(), true), NewFuncInfo(nil, Object(), true), FailL0},
		{"func/object", NewFuncInfo(nil, Object(), true), Object(), FailL1},
		{"func/tensor", NewFuncInfo(nil, Object(), true), f32T(), FailL0},
	}
	for _, c := range cases {
		assert.Equal(t, c.want, StructInfoBaseCheck(c.base, c.derived), "%s: StructInfoBaseCheck(%s, %s)", c.name,
			FormatStructInfo(c.base, nil), FormatStructInfo(c.derived, nil))
		assert.Equal(t, c.want == Pass, IsBaseOf(c.base, c.derived), "%s: IsBaseOf disagrees with the base check", c.name)
	}
}

func TestStructInfoLCA(t *testing.T) {
	n, m := SymVar("n"), SymVar("m")
	cases := []struct {
		name string
		a, b StructInfo
		want StructInfo
	}{
		{"tensor/different shapes", f32T(n, I64(4)), f32T(m, I64(4)), TensorInfoNDim(Float32, 2)},
		{"tensor/different dtypes", f32T(n, I64(4)), TensorInfoOf(Float16, n, I64(4)), TensorInfoOf(Void, n, I64(4))},
		{"tensor/different ranks", f32T(n), f32T(n, n), TensorInfoNDim(Float32, -1)},
		{"tensor/everything differs", f32T(n), TensorInfoOf(Int32, n, n), TensorInfoNDim(Void, -1)},
		{"tensor/equal up to canonical form", f32T(Mul(I64(2), n)), f32T(Add(n, n)), f32T(Mul(I64(2), n))},
		{"kinds differ", f32T(n), NewPrimInfo(Int64), Object()},
		{"object", Object(), f32T(n), Object()},
		{"prim/same value", PrimInfoOf(n), PrimInfoOf(n), PrimInfoOf(n)},
		{"prim/different values", PrimInfoOf(n), PrimInfoOf(m), NewPrimInfo(Int64)},
		{"prim/different dtypes", NewPrimInfo(Int64), NewPrimInfo(Int32), Object()},
		{"shape/different values", ShapeInfoOf(n), ShapeInfoOf(m), ShapeInfoNDim(1)},
		{"shape/different ranks", ShapeInfoOf(n), ShapeInfoNDim(2), ShapeInfoNDim(-1)},
		{"tuple/elementwise",
			NewTupleInfo(f32T(n), NewPrimInfo(Int64)), NewTupleInfo(f32T(m), NewPrimInfo(Int64)),
			NewTupleInfo(TensorInfoNDim(Float32, 1), NewPrimInfo(Int64))},
		{"tuple/lengths differ", NewTupleInfo(f32T(n)), NewTupleInfo(f32T(n), f32T(n)), Object()},
		{"func/purity joins to impure",
			NewFuncInfo([]StructInfo{f32T(I64(2))}, f32T(I64(2)), true),
			NewFuncInfo([]StructInfo{f32T(I64(2))}, f32T(I64(2)), false),
			NewFuncInfo([]StructInfo{f32T(I64(2))}, f32T(I64(2)), false)},
		{"func/ret joins",
			NewFuncInfo([]StructInfo{f32T(I64(2))}, f32T(I64(2)), true),
			NewFuncInfo([]StructInfo{f32T(I64(2))}, f32T(I64(3)), true),
			NewFuncInfo([]StructInfo{f32T(I64(2))}, TensorInfoNDim(Float32, 1), true)},
		{"func/arity differs",
			NewFuncInfo([]StructInfo{f32T(I64(2))}, f32T(I64(2)), true),
			NewFuncInfo(nil, f32T(I64(2)), true),
			OpaqueFuncInfo(f32T(I64(2)), true)},
	}
	for _, c := range cases {
		got := StructInfoLCA(c.a, c.b)
		assert.True(t, StructuralEqual(got, c.want, EqualOptions{}), "%s: LCA(%s, %s) = %s, want %s", c.name, c.a, c.b, FormatStructInfo(got, nil), c.want)
		// The join is a base of both sides.
		assert.True(t, IsBaseOf(got, c.a), "%s: LCA %s is not a base of the left side", c.name, FormatStructInfo(got, nil))
		assert.True(t, IsBaseOf(got, c.b), "%s: LCA %s is not a base of the right side", c.name, FormatStructInfo(got, nil))
	}
	a := f32T(n)
	assert.Same(t, a, StructInfoLCA(a, a), "LCA(a, a) should return a itself")
	assert.Same(t, a, StructInfoLCA(a, f32T(n)), "LCA of equal infos should return the left one")
}

func TestEraseToWellDefined(t *testing.T) {
	n, k := SymVar("n"), SymVar("k")
	inN := func(v *PrimVar) bool { return v == n }
	s := NewVar("s", ShapeInfoOf(n, I64(4)))
	sk := NewVar("sk", ShapeInfoOf(k, I64(4)))
	shapeVarTensor := func(v *Var) *TensorInfo { return &TensorInfo{Shape: v, DType: Float32, NDim: 2} }
	cases := []struct {
		name string
		in   StructInfo
		prim func(*PrimVar) bool
		rvar func(*Var) bool
		want StructInfo
		same bool // the input itself must come back
	}{
		{"tensor/one dim out of scope", f32T(Add(n, I64(1)), k), inN, nil, TensorInfoNDim(Float32, 2), false},
		{"tensor/all in scope", f32T(Add(n, I64(1)), I64(4)), inN, nil, nil, true},
		{"tensor/nothing in scope", f32T(n), nil, nil, TensorInfoNDim(Float32, 1), false},
		{"tensor/unknown shape", TensorInfoNDim(Float32, 3), nil, nil, nil, true},
		{"prim/value out of scope", PrimInfoOf(Mul(k, I64(2))), inN, nil, NewPrimInfo(Int64), false},
		{"prim/value in scope", PrimInfoOf(n), inN, nil, nil, true},
		{"shape/out of scope", ShapeInfoOf(n, k), inN, nil, ShapeInfoNDim(2), false},
		{"shape/in scope", ShapeInfoOf(n, I64(3)), inN, nil, nil, true},
		{"tuple/fields", NewTupleInfo(f32T(n), f32T(k), Object()), inN, nil,
			NewTupleInfo(f32T(n), TensorInfoNDim(Float32, 1), Object()), false},
		{"shape var out of scope, values in scope", shapeVarTensor(s), inN, nil, f32T(n, I64(4)), false},
		{"shape var out of scope, values out of scope", shapeVarTensor(sk), inN, nil, TensorInfoNDim(Float32, 2), false},
		{"shape var in scope", shapeVarTensor(sk), nil, func(v *Var) bool { return v == sk }, nil, true},
		{"func is kept", NewFuncInfo([]StructInfo{f32T(k)}, f32T(k), true), nil, nil, nil, true},
	}
	for _, c := range cases {
		got := EraseToWellDefined(c.in, c.prim, c.rvar)
		if c.same {
			assert.Same(t, c.in, got, "%s: want the input back unchanged, got %s", c.name, FormatStructInfo(got, nil))
			continue
		}
		assert.True(t, StructuralEqual(got, c.want, EqualOptions{}), "%s: Erase(%s) = %s, want %s", c.name, FormatStructInfo(c.in, nil),
			FormatStructInfo(got, nil), FormatStructInfo(c.want, nil))
	}
}

func TestDeriveCallRetStructInfo(t *testing.T) {
	n, k := SymVar("n"), SymVar("k")
	arg := func(s StructInfo) Expr { return NewVar("a", s) }
	call := func(args ...Expr) *Call { return NewCall(NewGlobalVar("f"), args...) }
	sParam := NewVar("s", ShapeInfoNDim(2))
	derived := f32T(I64(7))
	cases := []struct {
		name    string
		f       *FuncInfo
		call    *Call
		want    StructInfo
		wantErr string
	}{
		{"binds n from a tensor argument",
			NewFuncInfo([]StructInfo{f32T(n, I64(4))}, f32T(Mul(n, I64(2))), true),
			call(arg(f32T(I64(8), I64(4)))), f32T(I64(16)), ""},
		{"binds n to a symbolic dimension",
			NewFuncInfo([]StructInfo{f32T(n, I64(4))}, f32T(Mul(n, I64(2))), true),
			call(arg(f32T(Add(k, I64(1)), I64(4)))), f32T(Add(Mul(k, I64(2)), I64(2))), ""},
		{"binds n from a prim value",
			NewFuncInfo([]StructInfo{PrimInfoOf(n)}, ShapeInfoOf(Add(n, I64(1))), true),
			call(arg(PrimInfoOf(I64(5)))), ShapeInfoOf(I64(6)), ""},
		{"first binding wins; the second is checked best effort",
			NewFuncInfo([]StructInfo{f32T(n), f32T(n)}, f32T(n), true),
			call(arg(f32T(I64(3))), arg(f32T(I64(4)))), f32T(I64(3)), ""},
		{"unknown argument shape erases the return",
			NewFuncInfo([]StructInfo{f32T(n, I64(4))}, f32T(Mul(n, I64(2))), true),
			call(arg(TensorInfoNDim(Float32, 2))), TensorInfoNDim(Float32, 1), ""},
		{"unbound variables are erased",
			NewFuncInfo([]StructInfo{f32T(n)}, NewTupleInfo(f32T(n), f32T(k)), true),
			call(arg(f32T(I64(2)))), NewTupleInfo(f32T(I64(2)), TensorInfoNDim(Float32, 1)), ""},
		{"shape var parameter",
			NewFuncInfo([]StructInfo{&TensorInfo{Shape: sParam, DType: Float32, NDim: 2}},
				&TensorInfo{Shape: sParam, DType: Float32, NDim: 2}, true),
			call(arg(f32T(I64(3), I64(4)))), f32T(I64(3), I64(4)), ""},
		{"arity mismatch",
			NewFuncInfo([]StructInfo{f32T(n)}, f32T(n), true),
			call(), nil, "expected 1, given 0"},
		{"argument dtype mismatch",
			NewFuncInfo([]StructInfo{f32T(n)}, f32T(n), true),
			call(arg(TensorInfoOf(Float16, I64(3)))), nil, "argument 0 type mismatch"},
		{"argument of unknown dtype (L1)",
			NewFuncInfo([]StructInfo{f32T(n)}, f32T(n), true),
			call(arg(TensorInfoNDim(Void, 1))), nil, "argument 0 type mismatch"},
		{"opaque returns ret",
			OpaqueFuncInfo(f32T(I64(2)), false), call(arg(Object()), arg(Object())), f32T(I64(2)), ""},
		{"opaque with derive",
			&FuncInfo{Opaque: true, Ret: Object(), Derive: func(*Call) (StructInfo, error) { return derived, nil }},
			call(), derived, ""},
	}
	for _, c := range cases {
		got, err := DeriveCallRetStructInfo(c.f, c.call, nil)
		if c.wantErr != "" {
			assert.ErrorContains(t, err, c.wantErr, c.name)
			continue
		}
		if !assert.NoError(t, err, c.name) {
			continue
		}
		assert.True(t, StructuralEqual(got, c.want, EqualOptions{}), "%s: got %s, want %s", c.name, FormatStructInfo(got, nil), FormatStructInfo(c.want, nil))
	}
}
