package ir

import "testing"

func TestParseDataTypeRoundTrips(t *testing.T) {
	for _, s := range []string{
		"bool", "handle", "int1", "int8", "int16", "int32", "int64", "uint1", "uint8", "uint16",
		"uint32", "uint64", "float16", "float32", "float64", "bfloat16", "float32x4", "int64x2",
		"boolx8",
	} {
		d, err := ParseDataType(s)
		if err != nil {
			t.Errorf("ParseDataType(%q): %v", s, err)
			continue
		}
		if d.String() != s {
			t.Errorf("ParseDataType(%q).String() = %q", s, d.String())
		}
	}
	for s, want := range map[string]DataType{"": Void, "void": Void, "float32": Float32, "int64x4": Int64.WithLanes(4)} {
		if d, err := ParseDataType(s); err != nil || d != want {
			t.Errorf("ParseDataType(%q) = %v, %v; want %v", s, d, err, want)
		}
	}
}

func TestParseDataTypeRejects(t *testing.T) {
	for _, s := range []string{
		"int7", "int128", "float8", "bfloat32", "uint", "float", "int32x1", "int32x", "int32x70000",
		"tensor", "Float32", "x4",
	} {
		if d, err := ParseDataType(s); err == nil {
			t.Errorf("ParseDataType(%q) = %v, want an error", s, d)
		}
	}
}

func TestDataTypeBytes(t *testing.T) {
	for _, c := range []struct {
		t    DataType
		want int
	}{{Bool, 1}, {Int8, 1}, {Float16, 2}, {BFloat16, 2}, {Int64, 8}, {Float32.WithLanes(4), 16}, {Bool.WithLanes(8), 8}} {
		if got := c.t.Bytes(); got != c.want {
			t.Errorf("%v.Bytes() = %d, want %d", c.t, got, c.want)
		}
	}
}

var dtypeSink string

// The printer spells a dtype per binding: the common scalar ones cost no
// allocation (their spelling is checked by TestParseDataTypeRoundTrips).
func TestDataTypeStringCommonNoAlloc(t *testing.T) {
	for _, d := range []DataType{Float16, Float32, Float64, Int32, Int64, Bool} {
		if n := testing.AllocsPerRun(100, func() { dtypeSink = d.String() }); n != 0 {
			t.Errorf("%v.String() allocates %v times", d, n)
		}
	}
}
