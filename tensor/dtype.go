package tensor

import (
	"fmt"
	"strconv"
	"strings"
)

// DType is the element type of a runtime tensor. The runtime holds scalar
// elements only: TVMScript vector types such as "float32x4" describe values
// inside a TIR kernel, never the elements of a tensor, so they do not parse.
// The zero value is Invalid.
type DType uint8

// The runtime element types. Bool occupies one byte holding 0 or 1.
// Float16 and BFloat16 are storage formats: arithmetic converts them to
// float32 (see F16 and BF16).
const (
	Invalid DType = iota
	Bool
	Int8
	Int16
	Int32
	Int64
	Uint8
	Uint16
	Uint32
	Uint64
	Float16
	BFloat16
	Float32
	Float64
	numDTypes
)

// DTypes lists every valid DType in declaration order (for tests and tables).
var DTypes = []DType{Bool, Int8, Int16, Int32, Int64, Uint8, Uint16, Uint32, Uint64, Float16, BFloat16, Float32, Float64}

var dtypeInfo = [numDTypes]struct {
	name string
	size int
}{
	Invalid:  {"invalid", 0},
	Bool:     {"bool", 1},
	Int8:     {"int8", 1},
	Int16:    {"int16", 2},
	Int32:    {"int32", 4},
	Int64:    {"int64", 8},
	Uint8:    {"uint8", 1},
	Uint16:   {"uint16", 2},
	Uint32:   {"uint32", 4},
	Uint64:   {"uint64", 8},
	Float16:  {"float16", 2},
	BFloat16: {"bfloat16", 2},
	Float32:  {"float32", 4},
	Float64:  {"float64", 8},
}

// String is the TVMScript spelling ("float32", "bool", ...).
func (d DType) String() string {
	if d >= numDTypes {
		return fmt.Sprintf("DType(%d)", uint8(d))
	}
	return dtypeInfo[d].name
}

// Size is the number of bytes one element occupies (0 for Invalid).
func (d DType) Size() int {
	if d >= numDTypes {
		return 0
	}
	return dtypeInfo[d].size
}

// Valid reports whether d is one of the runtime element types.
func (d DType) Valid() bool { return d > Invalid && d < numDTypes }

// IsFloat reports whether d is a floating-point type (incl. float16, bfloat16).
func (d DType) IsFloat() bool { return d == Float16 || d == BFloat16 || d == Float32 || d == Float64 }

// IsSigned reports whether d is a signed integer type.
func (d DType) IsSigned() bool { return d >= Int8 && d <= Int64 }

// IsUnsigned reports whether d is an unsigned integer type.
func (d DType) IsUnsigned() bool { return d >= Uint8 && d <= Uint64 }

// ParseDType parses a TVMScript dtype string into a runtime element type.
// It accepts every scalar type the IR accepts (ir.ParseDataType) except the
// ones a tensor cannot hold, which get an error that says why: vector types
// ("float32x4"), "int1", "handle" and "void"/"". "uint1" is TVM's internal
// spelling of bool (DataType::Bool() is kUInt with 1 bit) and maps to Bool.
func ParseDType(s string) (DType, error) {
	for d := Bool; d < numDTypes; d++ {
		if s == dtypeInfo[d].name {
			return d, nil
		}
	}
	switch s {
	case "uint1":
		return Bool, nil
	case "", "void":
		return Invalid, fmt.Errorf("dtype %q: a tensor needs a known element type", s)
	case "handle":
		return Invalid, fmt.Errorf("dtype \"handle\": opaque pointers cannot be tensor elements")
	case "int1":
		return Invalid, fmt.Errorf("dtype \"int1\": 1-bit signed integers are not a runtime element type (use bool)")
	}
	if base, lanes, ok := strings.Cut(s, "x"); ok {
		if n, err := strconv.Atoi(lanes); err == nil && n >= 2 {
			if _, err := ParseDType(base); err == nil {
				return Invalid, fmt.Errorf("dtype %q: vector types (%d lanes of %s) exist only inside TIR kernels; a tensor holds scalar %s elements", s, n, base, base)
			}
		}
	}
	return Invalid, fmt.Errorf("unknown dtype %q (want one of bool, int8/16/32/64, uint8/16/32/64, float16, bfloat16, float32, float64)", s)
}
