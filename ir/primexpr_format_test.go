package ir

import (
	"math"
	"testing"

	"github.com/stretchr/testify/assert"
)

func TestFormatPrimPrecedence(t *testing.T) {
	n, m, k := SymVar("n"), SymVar("m"), SymVar("k")
	b, c := NewPrimVar("b", Bool), NewPrimVar("c", Bool)
	cases := []struct {
		e    PrimExpr
		want string
	}{
		{Add(Mul(n, i64(2)), i64(1)), "n * 2 + 1"},
		{Max(Sub(n, m), i64(1)), "T.max(n - m, 1)"},
		{Min(n, i64(4)), "T.min(n, 4)"},
		{FloorDiv(n, i64(2)), "n // 2"},
		{FloorMod(n, i64(2)), "n % 2"},
		{Mul(Add(n, i64(1)), i64(2)), "(n + 1) * 2"},
		{Add(n, Add(m, k)), "n + (m + k)"},
		{Add(Add(n, m), k), "n + m + k"},
		{Sub(n, Add(m, i64(1))), "n - (m + 1)"},
		{Sub(n, Sub(m, i64(1))), "n - (m - 1)"},
		{Sub(Sub(n, m), i64(1)), "n - m - 1"},
		{Mul(n, Mul(m, k)), "n * (m * k)"},
		{Mul(n, FloorDiv(m, k)), "n * (m // k)"},
		{FloorDiv(Mul(n, m), k), "n * m // k"},
		{FloorDiv(Add(n, i64(1)), i64(2)), "(n + 1) // 2"},
		{FloorDiv(n, FloorDiv(m, i64(2))), "n // (m // 2)"},
		{FloorMod(FloorDiv(n, i64(4)), i64(2)), "n // 4 % 2"},
		{Add(n, FloorMod(m, i64(3))), "n + m % 3"},
		{Mul(i64(-1), n), "-1 * n"},
		{Mul(n, i64(-1)), "n * -1"},
		{Sub(n, i64(-1)), "n - -1"},
		{FloorDiv(i64(-7), i64(2)), "-7 // 2"},
		{Max(Mul(n, i64(2)), Add(m, i64(1))), "T.max(n * 2, m + 1)"},
		{Mul(Max(n, m), i64(2)), "T.max(n, m) * 2"},
		{tdiv(n, i64(2)), "T.truncdiv(n, 2)"},
		{tmod(n, i64(2)), "T.truncmod(n, 2)"},
		{lt(Add(n, i64(1)), m), "n + 1 < m"},
		{eq(lt(n, m), b), "(n < m) == b"},
		{eq(b, lt(n, m)), "b == (n < m)"},
		{and(lt(n, m), lt(m, k)), "n < m and m < k"},
		{and(b, and(c, b)), "b and (c and b)"},
		{or(b, and(c, b)), "b or c and b"},
		{and(or(b, c), b), "(b or c) and b"},
		{&Not{A: lt(n, m)}, "not n < m"},
		{&Not{A: and(b, c)}, "not (b and c)"},
		{and(&Not{A: b}, c), "not b and c"},
		{eq(&Not{A: b}, c), "(not b) == c"},
		{NewBool(true), "True"},
		{NewInt(Int32, 3), "T.int32(3)"},
		{NewFloat(Float32, 0.5), "T.float32(0.5)"},
		{nil, "None"},
	}
	for _, c := range cases {
		assert.Equal(t, c.want, FormatPrim(c.e, nil), "FormatPrim")
	}
}

func TestFormatTIR(t *testing.T) {
	i, j := NewPrimVar("i", Int32), NewPrimVar("j", Int32)
	vi := NewPrimVar("vi", Int64)
	x, y := NewPrimVar("x", Float32), NewPrimVar("y", Float32)
	cond := NewPrimVar("cond", Bool)
	A := NewBuffer("A", []PrimExpr{i64(2), i64(4)}, Float32)
	S := NewBuffer("S", nil, Float32)
	cases := []struct {
		e    PrimExpr
		want string
	}{
		{NewInt(Int32, 3), "3"},
		{NewInt(Int32, -3), "-3"},
		{I64(3), "T.int64(3)"},
		{I64(-3), "T.int64(-3)"},
		{NewInt(UInt8, 255), "T.uint8(255)"},
		{NewInt(UInt64, -1), "T.uint64(18446744073709551615)"},
		{NewInt(Int8, -1), "T.int8(-1)"},
		{NewBool(false), "False"},
		{NewFloat(Float32, 0), "T.float32(0.0)"},
		{NewFloat(Float32, 1.5), "T.float32(1.5)"},
		{NewFloat(Float64, 0.1), "T.float64(0.10000000000000001)"},
		{NewFloat(Float32, 1e20), "T.float32(100000000000000000000.0)"},
		{NewFloat(Float16, -2), "T.float16(-2.0)"},
		{NewFloat(Float32, math.Inf(1)), `T.float32("inf")`},
		{NewFloat(Float32, math.Inf(-1)), `T.float32("-inf")`},
		{NewFloat(Float32, math.NaN()), `T.float32("nan")`},
		{Add(vi, I64(1)), "vi + T.int64(1)"},
		{Add(i, NewInt(Int32, 1)), "i + 1"},
		{&Cast{Type: Float32, Value: i}, `T.Cast("float32", i)`},
		{&PrimCall{Op: "exp", Args: []PrimExpr{x}, Type: Float32}, "T.exp(x)"},
		{&PrimCall{Op: "pow", Args: []PrimExpr{x, y}, Type: Float32}, "T.pow(x, y)"},
		{&PrimCall{Op: "if_then_else", Args: []PrimExpr{cond, x, NewFloat(Float32, 0)}, Type: Float32}, "T.if_then_else(cond, x, T.float32(0.0))"},
		{&PrimCall{Op: "max_value", Args: []PrimExpr{&PrimStr{Value: "float32"}}, Type: Float32}, `T.max_value("float32")`},
		{&Select{Cond: lt(i, j), True: x, False: y}, "T.Select(i < j, x, y)"},
		{&BufferLoad{Buffer: A, Indices: []PrimExpr{i, Add(j, NewInt(Int32, 1))}}, "A[i, j + 1]"},
		{&BufferLoad{Buffer: S}, "S[()]"},
		{NewBinary(OpDiv, x, y), "x / y"},
		{NewBinary(OpDiv, x, Add(x, y)), "x / (x + y)"},
		{NewBinary(OpDiv, i, j), "T.truncdiv(i, j)"},
		{NewBinary(OpMod, i, j), "T.truncmod(i, j)"},
		{Max(x, NewFloat(Float32, 0)), "T.max(x, T.float32(0.0))"},
		{Mul(&BufferLoad{Buffer: A, Indices: []PrimExpr{i, j}}, NewFloat(Float32, 2)), "A[i, j] * T.float32(2.0)"},
	}
	for _, c := range cases {
		assert.Equal(t, c.want, FormatTIR(c.e, nil), "FormatTIR")
	}
}

func TestFormatNamers(t *testing.T) {
	n := SymVar("n")
	A := NewBuffer("A", []PrimExpr{n}, Float32)
	e := Add(&Cast{Type: Int64, Value: &BufferLoad{Buffer: A, Indices: []PrimExpr{n}}}, n)
	f := PrimFormat{
		VarName:    func(v *PrimVar) string { return v.Name + "_1" },
		BufferName: func(b *Buffer) string { return "buf_" + b.Name },
		BareInt:    Int64,
	}
	assert.Equal(t, `T.Cast("int64", buf_A[n_1]) + n_1`, f.Format(e), "Format with namers")
	assert.Equal(t, "N", FormatPrim(n, func(*PrimVar) string { return "N" }), "FormatPrim with name")
}

func TestPrimExprStringMethods(t *testing.T) {
	n := SymVar("n")
	x := NewPrimVar("x", Float32)
	A := NewBuffer("A", []PrimExpr{n}, Float32)
	cases := []struct {
		s    interface{ String() string }
		want string
	}{
		{I64(4), "4"},
		{NewFloat(Float32, 2), "T.float32(2.0)"},
		{&PrimStr{Value: "a\"b"}, `"a\"b"`},
		{n, "n"},
		{NewBinary(OpAdd, n, I64(1)), "n + 1"},
		{&Not{A: NewBool(true)}, "not True"},
		{&Select{Cond: NewBool(true), True: n, False: n}, "T.Select(True, n, n)"},
		{&Cast{Type: Int32, Value: n}, `T.Cast("int32", n)`},
		{&PrimCall{Op: "exp", Args: []PrimExpr{x}, Type: Float32}, "T.exp(x)"},
		{&BufferLoad{Buffer: A, Indices: []PrimExpr{n}}, "A[n]"},
	}
	for _, c := range cases {
		assert.Equal(t, c.want, c.s.String(), "String()")
	}
}
