package ir

import (
	"testing"

	"github.com/stretchr/testify/assert"
)

func TestParseDataTypeRoundTrips(t *testing.T) {
	for _, s := range []string{
		"bool", "handle", "int1", "int8", "int16", "int32", "int64", "uint1", "uint8", "uint16",
		"uint32", "uint64", "float16", "float32", "float64", "bfloat16", "float32x4", "int64x2",
		"boolx8",
	} {
		d, err := ParseDataType(s)
		if assert.NoError(t, err, "ParseDataType(%q)", s) {
			assert.Equal(t, s, d.String(), "ParseDataType(%q).String()", s)
		}
	}
	for s, want := range map[string]DataType{"": Void, "void": Void, "float32": Float32, "int64x4": Int64.WithLanes(4)} {
		d, err := ParseDataType(s)
		if assert.NoError(t, err, "ParseDataType(%q)", s) {
			assert.Equal(t, want, d, "ParseDataType(%q)", s)
		}
	}
}

func TestParseDataTypeRejects(t *testing.T) {
	for _, s := range []string{
		"int7", "int128", "float8", "bfloat32", "uint", "float", "int32x1", "int32x", "int32x70000",
		"tensor", "Float32", "x4",
	} {
		d, err := ParseDataType(s)
		assert.Error(t, err, "ParseDataType(%q) = %v, want an error", s, d)
	}
}

func TestDataTypeBytes(t *testing.T) {
	for _, c := range []struct {
		t    DataType
		want int
	}{{Bool, 1}, {Int8, 1}, {Float16, 2}, {BFloat16, 2}, {Int64, 8}, {Float32.WithLanes(4), 16}, {Bool.WithLanes(8), 8}} {
		assert.Equal(t, c.want, c.t.Bytes(), "%v.Bytes()", c.t)
	}
}

var dtypeSink string

// The printer spells a dtype per binding: the common scalar ones cost no
// allocation (their spelling is checked by TestParseDataTypeRoundTrips).
func TestDataTypeStringCommonNoAlloc(t *testing.T) {
	for _, d := range []DataType{Float16, Float32, Float64, Int32, Int64, Bool} {
		assert.Zero(t, testing.AllocsPerRun(100, func() { dtypeSink = d.String() }), "%v.String() allocates", d)
	}
}
