package ir

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestNewNDArrayShapes(t *testing.T) {
	a, err := NewNDArray(Float32, []int64{2, 3})
	require.NoError(t, err, "NewNDArray(float32, [2 3])")
	require.Len(t, a.Data, 24, "NewNDArray(float32, [2 3]) bytes")
	require.Equal(t, int64(6), a.NumElements(), "NewNDArray(float32, [2 3]) elements")
	empty, err := NewNDArray(Int64, []int64{0, 5})
	if assert.NoError(t, err, "an empty array") {
		assert.Empty(t, empty.Data, "an empty array")
	}
	for _, bad := range [][]int64{{-1}, {-2, -3}, {1 << 20, 1 << 20}, {1 << 40, 1 << 40, 1 << 40}} {
		_, err := NewNDArray(Int8, bad)
		assert.Error(t, err, "NewNDArray(%v) must fail", bad)
	}
}

func TestNDArrayElementRoundTrip(t *testing.T) {
	for _, c := range []struct {
		t DataType
		v float64
	}{{Float32, 1.5}, {Float64, -0.1}, {Float16, 0.5}, {Float16, -65504}, {BFloat16, 2}, {Int8, -3}, {UInt8, 200}, {Int64, -7}, {Bool, 1}} {
		a := NewScalarArray(c.t, c.v)
		assert.Equal(t, c.v, a.Float(0), "%v: stored %v, read back", c.t, c.v)
	}
	assert.Equal(t, int64(-5), NewScalarArray(Int32, -5).Int(0), "int32 -5 read back")
}
