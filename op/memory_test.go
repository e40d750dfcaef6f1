package op

import (
	"math"
	"testing"

	"github.com/phasec/phasec/ir"
	"github.com/phasec/phasec/tensor"

	"github.com/stretchr/testify/require"
)

func TestInferMemoryView(t *testing.T) {
	void := func() ir.Expr { return ir.NewTuple() }
	off := func(v int64) ir.Expr { return ir.NewPrimValue(ir.I64(v)) }
	dt := func(d ir.DataType) ir.Expr { return ir.NewDataTypeImm(d) }
	x := tensorVar("x", ir.Float32, symN, 4)
	x24 := tensorVar("x", ir.Float32, 2, 4)
	runInferCases(t, nil, []inferCase{
		{"no change", opCall(MemView, nil, x, void(), void(), void()), tinfo(ir.Float32, symN, 4), ""},
		{"shape", opCall(MemView, nil, x, shapeLit(4, symN), void(), void()), tinfo(ir.Float32, 4, symN), ""},
		{"dtype", opCall(MemView, nil, x, void(), dt(ir.Int32), void()), tinfo(ir.Int32, symN, 4), ""},
		{"all", opCall(MemView, nil, x24, shapeLit(2), dt(ir.Float16), off(12)), tinfo(ir.Float16, 2), ""},
		{"exactly fits", opCall(MemView, nil, x24, shapeLit(4), dt(ir.Float32), off(16)), tinfo(ir.Float32, 4), ""},
		{"too large", opCall(MemView, nil, x24, shapeLit(9), void(), void()), nil,
			"R.memory.view: views into an existing array must fit within that array, but the view of 36 bytes at byte offset 0 exceeds the 32 bytes of data"},
		{"offset too large", opCall(MemView, nil, x24, shapeLit(4), dt(ir.Float32), off(20)), nil, "the view of 16 bytes at byte offset 20 exceeds the 32 bytes"},
		{"symbolic too large", opCall(MemView, nil, x, shapeLit(ir.Add(symN, ir.I64(1)), 4), void(), void()), nil, "must fit within that array"},
		{"offset dtype", opCall(MemView, nil, x, void(), void(), ir.NewPrimValue(ir.NewInt(ir.Int32, 0))), nil,
			"expects the relative_byte_offset to be a 64-bit integer, but received int32"},
		{"shape not a shape", opCall(MemView, nil, x, x, void(), void()), nil, "expects second argument to be a ShapeExpr, or a void-type (empty relax tuple)"},
		{"arity", opCall(MemView, nil, x, void()), nil, "should receive 4 arguments, but received 2"},
	})
}

// Hand-derived: float32 1.0 is the bit pattern 0x3f800000 = 1065353216, and
// -2.0 is 0xc0000000; an int16 view 2 bytes in sees the upper half of 1.0.
func TestEvalMemoryView(t *testing.T) {
	ev, _ := evalOf(MemView)
	x := tensor.New(tensor.Float32, 2, 2)
	for i, v := range []float64{1, -2, 0.5, 3} {
		x.SetFloat64(i, v)
	}
	call := func(args ...ir.Expr) *ir.Call { return opCall(MemView, nil, args...) }
	got, err := ev(call(), []Value{x, Tuple{}, DTypeValue(ir.Int32), Tuple{}})
	require.NoError(t, err)
	it := got.(*tensor.Tensor)
	for i, f := range []float32{1, -2, 0.5, 3} {
		require.Equal(t, float64(int32(math.Float32bits(f))), it.Float64At(i), "element %d of the int32 view", i)
	}
	require.Equal(t, float64(1065353216), it.Float64At(0), "1.0 as int32, want 0x3f800000")
	require.Equal(t, float64(-1073741824), it.Float64At(1), "-2.0 as int32, want 0xc0000000")
	got, err = ev(call(), []Value{x, Shape{1}, DTypeValue(ir.Int16), Prim{DType: ir.Int64, I: 2}})
	require.NoError(t, err)
	require.Equal(t, float64(0x3f80), got.(*tensor.Tensor).Float64At(0), "upper half of 1.0")
	got, err = ev(call(), []Value{x, Shape{3}, Tuple{}, Prim{DType: ir.Int64, I: 4}})
	require.NoError(t, err)
	v := got.(*tensor.Tensor)
	require.Equal(t, float64(-2), v.Float64At(0), "float32 view from byte 4: %v %v %v", v.Float64At(0), v.Float64At(1), v.Float64At(2))
	require.Equal(t, float64(3), v.Float64At(2), "float32 view from byte 4: %v %v %v", v.Float64At(0), v.Float64At(1), v.Float64At(2))
	_, err = ev(call(), []Value{x, Shape{4}, Tuple{}, Prim{DType: ir.Int64, I: 4}})
	require.Error(t, err, "a view past the end of data must be an error")
	_, err = ev(call(), []Value{x, Shape{1}, Tuple{}, Prim{DType: ir.Int64, I: 2}})
	require.Error(t, err, "a float32 view at byte 2 (misaligned) must be an error")
}
