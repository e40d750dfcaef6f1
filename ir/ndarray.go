package ir

import (
	"encoding/binary"
	"fmt"
	"math"
)

// NDArray is dense tensor data: row-major, little-endian element bytes.
type NDArray struct {
	DType DataType
	Shape []int64
	Data  []byte
}

// NumElements is the product of the shape.
func (a *NDArray) NumElements() int64 {
	n := int64(1)
	for _, d := range a.Shape {
		n *= d
	}
	return n
}

// NewScalarArray returns a rank-0 array holding v converted to dtype.
func NewScalarArray(dtype DataType, v float64) *NDArray {
	a := &NDArray{DType: dtype, Shape: []int64{}, Data: make([]byte, dtype.Bytes())}
	a.SetFloat(0, v)
	return a
}

// maxElements bounds the size of an array NewNDArray makes.
const maxElements = 1 << 31

// NewNDArray returns a zero-filled array. A negative dimension, or more than
// 2^31 elements, is an error.
func NewNDArray(dtype DataType, shape []int64) (*NDArray, error) {
	n := int64(1)
	for _, d := range shape {
		// Checked per dimension so the product cannot wrap around.
		if d < 0 || (d > 0 && n > maxElements/d) {
			return nil, fmt.Errorf("bad constant shape %v", shape)
		}
		n *= d
	}
	return &NDArray{DType: dtype, Shape: shape, Data: make([]byte, n*int64(dtype.Bytes()))}, nil
}

// Float returns element i converted to float64.
func (a *NDArray) Float(i int) float64 {
	w := a.DType.Bytes()
	b := a.Data[i*w : (i+1)*w]
	switch a.DType.Code {
	case CodeFloat:
		switch a.DType.Bits {
		case 32:
			return float64(math.Float32frombits(binary.LittleEndian.Uint32(b)))
		case 64:
			return math.Float64frombits(binary.LittleEndian.Uint64(b))
		case 16:
			return float64(halfToFloat(binary.LittleEndian.Uint16(b)))
		}
	case CodeBFloat:
		return float64(math.Float32frombits(uint32(binary.LittleEndian.Uint16(b)) << 16))
	case CodeInt:
		return float64(a.Int(i))
	case CodeUInt, CodeBool:
		return float64(uint64(a.Int(i)))
	}
	return math.NaN()
}

// Int returns element i as int64 (integers and bool; floats truncate).
func (a *NDArray) Int(i int) int64 {
	w := a.DType.Bytes()
	b := a.Data[i*w : (i+1)*w]
	switch a.DType.Code {
	case CodeInt:
		switch w {
		case 1:
			return int64(int8(b[0]))
		case 2:
			return int64(int16(binary.LittleEndian.Uint16(b)))
		case 4:
			return int64(int32(binary.LittleEndian.Uint32(b)))
		case 8:
			return int64(binary.LittleEndian.Uint64(b))
		}
	case CodeUInt, CodeBool:
		switch w {
		case 1:
			return int64(b[0])
		case 2:
			return int64(binary.LittleEndian.Uint16(b))
		case 4:
			return int64(binary.LittleEndian.Uint32(b))
		case 8:
			return int64(binary.LittleEndian.Uint64(b))
		}
	default:
		return int64(a.Float(i))
	}
	return 0
}

// SetFloat stores v, converted to the array's dtype, at element i.
func (a *NDArray) SetFloat(i int, v float64) {
	w := a.DType.Bytes()
	b := a.Data[i*w : (i+1)*w]
	switch a.DType.Code {
	case CodeFloat:
		switch a.DType.Bits {
		case 32:
			binary.LittleEndian.PutUint32(b, math.Float32bits(float32(v)))
		case 64:
			binary.LittleEndian.PutUint64(b, math.Float64bits(v))
		case 16:
			binary.LittleEndian.PutUint16(b, floatToHalf(float32(v)))
		}
	case CodeBFloat:
		binary.LittleEndian.PutUint16(b, uint16(math.Float32bits(float32(v))>>16))
	case CodeBool:
		if v != 0 {
			b[0] = 1
		} else {
			b[0] = 0
		}
	default:
		a.SetInt(i, int64(v))
	}
}

// SetInt stores v at element i (integers and bool).
func (a *NDArray) SetInt(i int, v int64) {
	w := a.DType.Bytes()
	b := a.Data[i*w : (i+1)*w]
	if a.DType.IsFloat() {
		a.SetFloat(i, float64(v))
		return
	}
	switch w {
	case 1:
		b[0] = byte(v)
	case 2:
		binary.LittleEndian.PutUint16(b, uint16(v))
	case 4:
		binary.LittleEndian.PutUint32(b, uint32(v))
	case 8:
		binary.LittleEndian.PutUint64(b, uint64(v))
	}
}

func halfToFloat(h uint16) float32 {
	sign := uint32(h>>15) << 31
	exp := uint32(h>>10) & 0x1f
	mant := uint32(h) & 0x3ff
	switch {
	case exp == 0 && mant == 0:
		return math.Float32frombits(sign)
	case exp == 0:
		f := float32(mant) / 1024 * float32(math.Pow(2, -14))
		if sign != 0 {
			return -f
		}
		return f
	case exp == 0x1f:
		return math.Float32frombits(sign | 0x7f800000 | mant<<13)
	}
	return math.Float32frombits(sign | (exp+112)<<23 | mant<<13)
}

func floatToHalf(f float32) uint16 {
	bits := math.Float32bits(f)
	sign := uint16(bits>>16) & 0x8000
	exp := int32(bits>>23&0xff) - 127 + 15
	mant := bits & 0x7fffff
	switch {
	case bits&0x7fffffff > 0x7f800000:
		return sign | 0x7e00
	case exp >= 0x1f:
		return sign | 0x7c00
	case exp <= 0:
		if exp < -10 {
			return sign
		}
		mant |= 0x800000
		return sign | uint16(mant>>uint32(14-exp))
	}
	return sign | uint16(exp)<<10 | uint16(mant>>13)
}
