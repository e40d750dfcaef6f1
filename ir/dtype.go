package ir

import (
	"fmt"
	"strconv"
	"strings"
)

// TypeCode is the kind of scalar a DataType describes.
type TypeCode uint8

const (
	CodeVoid   TypeCode = iota // unknown (Relax) or no value (TIR)
	CodeInt                    // signed integer
	CodeUInt                   // unsigned integer
	CodeFloat                  // IEEE float
	CodeBFloat                 // bfloat16
	CodeBool                   // boolean; stored as one byte
	CodeHandle                 // opaque pointer
)

// DataType is a scalar or vector element type such as float32 or int64x4.
// The zero value is Void, which Relax uses for "dtype unknown".
type DataType struct {
	Code  TypeCode
	Bits  uint8
	Lanes uint16
}

// Common data types.
var (
	Void     = DataType{}
	Bool     = DataType{CodeBool, 1, 1}
	Int8     = DataType{CodeInt, 8, 1}
	Int16    = DataType{CodeInt, 16, 1}
	Int32    = DataType{CodeInt, 32, 1}
	Int64    = DataType{CodeInt, 64, 1}
	UInt8    = DataType{CodeUInt, 8, 1}
	UInt16   = DataType{CodeUInt, 16, 1}
	UInt32   = DataType{CodeUInt, 32, 1}
	UInt64   = DataType{CodeUInt, 64, 1}
	Float16  = DataType{CodeFloat, 16, 1}
	Float32  = DataType{CodeFloat, 32, 1}
	Float64  = DataType{CodeFloat, 64, 1}
	BFloat16 = DataType{CodeBFloat, 16, 1}
	Handle   = DataType{CodeHandle, 64, 1}
)

func (t DataType) IsVoid() bool   { return t.Code == CodeVoid }
func (t DataType) IsInt() bool    { return t.Code == CodeInt }
func (t DataType) IsUInt() bool   { return t.Code == CodeUInt }
func (t DataType) IsFloat() bool  { return t.Code == CodeFloat || t.Code == CodeBFloat }
func (t DataType) IsBool() bool   { return t.Code == CodeBool }
func (t DataType) IsHandle() bool { return t.Code == CodeHandle }

// IsInteger reports whether t is a signed or unsigned integer type.
func (t DataType) IsInteger() bool { return t.Code == CodeInt || t.Code == CodeUInt }

// IsScalar reports whether t has one lane.
func (t DataType) IsScalar() bool { return t.Lanes == 1 }

// Bytes is the storage size of one element (all lanes); bool takes one byte.
func (t DataType) Bytes() int {
	bits := int(t.Bits)
	if t.Code == CodeBool {
		bits = 8
	}
	return (bits + 7) / 8 * int(max(t.Lanes, 1))
}

// WithLanes returns t with the given lane count.
func (t DataType) WithLanes(n int) DataType { t.Lanes = uint16(n); return t }

// Element returns the scalar type of one lane.
func (t DataType) Element() DataType { return t.WithLanes(1) }

// String spells the type as TVMScript does: "float32", "int64x4", "bool",
// "handle"; Void is the empty string.
func (t DataType) String() string {
	if t.Lanes <= 1 {
		// The common scalar types without building the string: the
		// printer spells one per binding.
		switch t.Code {
		case CodeFloat:
			switch t.Bits {
			case 16:
				return "float16"
			case 32:
				return "float32"
			case 64:
				return "float64"
			}
		case CodeInt:
			switch t.Bits {
			case 8:
				return "int8"
			case 16:
				return "int16"
			case 32:
				return "int32"
			case 64:
				return "int64"
			}
		case CodeUInt:
			switch t.Bits {
			case 8:
				return "uint8"
			case 32:
				return "uint32"
			}
		}
	}
	var base string
	switch t.Code {
	case CodeVoid:
		return ""
	case CodeBool:
		base = "bool"
	case CodeHandle:
		return "handle"
	case CodeInt:
		base = "int" + strconv.Itoa(int(t.Bits))
	case CodeUInt:
		base = "uint" + strconv.Itoa(int(t.Bits))
	case CodeFloat:
		base = "float" + strconv.Itoa(int(t.Bits))
	case CodeBFloat:
		base = "bfloat" + strconv.Itoa(int(t.Bits))
	default:
		return fmt.Sprintf("<bad dtype %d>", t.Code)
	}
	if t.Lanes > 1 {
		base += "x" + strconv.Itoa(int(t.Lanes))
	}
	return base
}

// ParseDataType parses a TVMScript dtype string. "" and "void" give Void.
func ParseDataType(s string) (DataType, error) {
	switch s {
	case "", "void":
		return Void, nil
	case "bool":
		return Bool, nil
	case "handle":
		return Handle, nil
	}
	name, lanesStr, hasLanes := strings.Cut(s, "x")
	lanes := 1
	if hasLanes {
		n, err := strconv.Atoi(lanesStr)
		if err != nil || n < 2 || n > 65535 {
			return Void, fmt.Errorf("unknown dtype %q", s)
		}
		lanes = n
	}
	if name == "bool" {
		return Bool.WithLanes(lanes), nil
	}
	var code TypeCode
	var rest string
	switch {
	case strings.HasPrefix(name, "uint"):
		code, rest = CodeUInt, name[4:]
	case strings.HasPrefix(name, "int"):
		code, rest = CodeInt, name[3:]
	case strings.HasPrefix(name, "bfloat"):
		code, rest = CodeBFloat, name[6:]
	case strings.HasPrefix(name, "float"):
		code, rest = CodeFloat, name[5:]
	default:
		return Void, fmt.Errorf("unknown dtype %q", s)
	}
	bits, err := strconv.Atoi(rest)
	if err != nil {
		return Void, fmt.Errorf("unknown dtype %q", s)
	}
	ok := false
	switch code {
	case CodeInt, CodeUInt:
		ok = bits == 1 || bits == 8 || bits == 16 || bits == 32 || bits == 64
	case CodeFloat:
		ok = bits == 16 || bits == 32 || bits == 64
	case CodeBFloat:
		ok = bits == 16
	}
	if !ok {
		return Void, fmt.Errorf("unknown dtype %q", s)
	}
	return DataType{code, uint8(bits), uint16(lanes)}, nil
}

// MustDataType is ParseDataType for literals known to be valid.
func MustDataType(s string) DataType {
	t, err := ParseDataType(s)
	if err != nil {
		panic(err)
	}
	return t
}
