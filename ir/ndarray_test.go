package ir

import "testing"

func TestNewNDArrayShapes(t *testing.T) {
	a, err := NewNDArray(Float32, []int64{2, 3})
	if err != nil || len(a.Data) != 24 || a.NumElements() != 6 {
		t.Fatalf("NewNDArray(float32, [2 3]) = %v, %v", a, err)
	}
	if a, err := NewNDArray(Int64, []int64{0, 5}); err != nil || len(a.Data) != 0 {
		t.Errorf("an empty array: %v, %v", a, err)
	}
	for _, bad := range [][]int64{{-1}, {-2, -3}, {1 << 20, 1 << 20}, {1 << 40, 1 << 40, 1 << 40}} {
		if a, err := NewNDArray(Int8, bad); err == nil {
			t.Errorf("NewNDArray(%v) = array of %d elements, want an error", bad, a.NumElements())
		}
	}
}

func TestNDArrayElementRoundTrip(t *testing.T) {
	for _, c := range []struct {
		t DataType
		v float64
	}{{Float32, 1.5}, {Float64, -0.1}, {Float16, 0.5}, {Float16, -65504}, {BFloat16, 2}, {Int8, -3}, {UInt8, 200}, {Int64, -7}, {Bool, 1}} {
		a := NewScalarArray(c.t, c.v)
		if got := a.Float(0); got != c.v {
			t.Errorf("%v: stored %v, read %v", c.t, c.v, got)
		}
	}
	if a := NewScalarArray(Int32, -5); a.Int(0) != -5 {
		t.Errorf("int32 -5 read back as %d", a.Int(0))
	}
}
