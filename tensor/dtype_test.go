package tensor

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestParseDTypeRoundTripsEveryDType(t *testing.T) {
	for _, d := range DTypes {
		got, err := ParseDType(d.String())
		require.NoError(t, err, d.String())
		assert.Equal(t, d, got)
	}
}

func TestParseDTypeErrors(t *testing.T) {
	for s, want := range map[string]string{
		"float32x4":  "vector types (4 lanes of float32)",
		"int64x2":    "vector types (2 lanes of int64)",
		"int1":       "use bool",
		"handle":     "opaque pointers",
		"":           "known element type",
		"float8":     "unknown dtype",
		"complex64":  "unknown dtype",
		"float32x":   "unknown dtype",
		"float32x1":  "unknown dtype",
		"Float32":    "unknown dtype",
		"int32 ":     "unknown dtype",
		"float32x4x": "unknown dtype",
	} {
		_, err := ParseDType(s)
		require.Error(t, err, s)
		assert.Contains(t, err.Error(), want, s)
	}
	d, err := ParseDType("uint1")
	require.NoError(t, err)
	assert.Equal(t, Bool, d, "uint1 is TVM's bool")
}

func TestDTypeSizes(t *testing.T) {
	want := map[DType]int{Bool: 1, Int8: 1, Int16: 2, Int32: 4, Int64: 8, Uint8: 1, Uint16: 2, Uint32: 4, Uint64: 8,
		Float16: 2, BFloat16: 2, Float32: 4, Float64: 8}
	require.Len(t, DTypes, len(want))
	for _, d := range DTypes {
		assert.Equal(t, want[d], d.Size(), d.String())
		assert.True(t, d.Valid())
	}
	assert.False(t, Invalid.Valid())
	assert.Equal(t, 0, Invalid.Size())
	assert.Equal(t, "DType(200)", DType(200).String())
}
