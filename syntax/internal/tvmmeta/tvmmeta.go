// Package tvmmeta holds the facts of TVM's show_meta=True metadata
// section that the parser (syntax) reads and the printer (syntax/printer)
// writes: the type key constants are listed under and SaveDLTensor's
// binary layout of a tensor. Keeping both directions here is what keeps
// them inverse: DecodeTensor(EncodeTensor(a)) is a for every tensor phasec
// prints, and a test checks it.
package tvmmeta

import (
	"encoding/binary"
	"fmt"

	"github.com/phasec/phasec/ir"
)

// ConstantKey is the type key of a Relax constant, the key of the metadata
// map: constants print as metadata["relax.expr.Constant"][i].
const ConstantKey = "relax.expr.Constant"

// tensorMagic starts a tensor saved by TVM's SaveDLTensor
// (include/tvm/runtime/ndarray.h, kTVMNDArrayMagic).
const tensorMagic = 0xDD5E40F096B4A13F

// DecodeTensor reads SaveDLTensor's layout, little-endian: magic,
// reserved u64, device (i32 type, i32 id), i32 ndim, dtype (u8 code, u8
// bits, u16 lanes), ndim i64 extents, i64 byte count, the bytes.
func DecodeTensor(b []byte) (*ir.NDArray, error) {
	le := binary.LittleEndian
	if len(b) < 36 || le.Uint64(b) != tensorMagic {
		return nil, fmt.Errorf("not a serialized tensor (bad magic)")
	}
	ndim := int(int32(le.Uint32(b[24:])))
	code, bits, lanes := b[28], b[29], le.Uint16(b[30:])
	if ndim < 0 || ndim > 32 || len(b) < 32+8*ndim+8 {
		return nil, fmt.Errorf("bad rank %d", ndim)
	}
	dt, err := dlpackDType(code, bits, lanes)
	if err != nil {
		return nil, err
	}
	shape := make([]int64, ndim)
	off := 32
	for i := range shape {
		shape[i] = int64(le.Uint64(b[off:]))
		off += 8
	}
	n := int64(le.Uint64(b[off:]))
	off += 8
	arr, err := ir.NewNDArray(dt, shape)
	if err != nil {
		return nil, err
	}
	if n != int64(len(arr.Data)) || int64(len(b)-off) < n {
		return nil, fmt.Errorf("%d data bytes for a %s tensor of shape %v", n, dt, shape)
	}
	copy(arr.Data, b[off:off+int(n)])
	return arr, nil
}

// EncodeTensor returns SaveDLTensor's layout (see DecodeTensor) of a
// tensor on the CPU.
func EncodeTensor(a *ir.NDArray) []byte {
	le := binary.LittleEndian
	b := make([]byte, 0, 40+8*len(a.Shape)+len(a.Data))
	b = le.AppendUint64(b, tensorMagic)
	b = le.AppendUint64(b, 0)
	b = le.AppendUint32(b, 1) // kDLCPU
	b = le.AppendUint32(b, 0)
	b = le.AppendUint32(b, uint32(len(a.Shape)))
	code, bits := dlpackCode(a.DType)
	b = append(b, code, bits)
	b = le.AppendUint16(b, max(a.DType.Lanes, 1))
	for _, d := range a.Shape {
		b = le.AppendUint64(b, uint64(d))
	}
	b = le.AppendUint64(b, uint64(len(a.Data)))
	return append(b, a.Data...)
}

// DLPack type codes (dlpack.h).
const (
	dlInt    = 0
	dlUInt   = 1
	dlFloat  = 2
	dlBfloat = 4
	dlBool   = 6
)

func dlpackDType(code, bits uint8, lanes uint16) (ir.DataType, error) {
	dt := ir.DataType{Bits: bits, Lanes: lanes}
	switch {
	case code == dlBool || code == dlUInt && bits == 1:
		return ir.Bool, nil
	case code == dlInt:
		dt.Code = ir.CodeInt
	case code == dlUInt:
		dt.Code = ir.CodeUInt
	case code == dlFloat:
		dt.Code = ir.CodeFloat
	case code == dlBfloat:
		dt.Code = ir.CodeBFloat
	default:
		return ir.DataType{}, fmt.Errorf("unsupported tensor type code %d", code)
	}
	valid := bits == 8 || bits == 16 || bits == 32 || bits == 64
	if dt.Code == ir.CodeBFloat {
		valid = bits == 16
	}
	if !valid || lanes != 1 {
		return ir.DataType{}, fmt.Errorf("unsupported tensor dtype (code %d, %d bits, %d lanes)", code, bits, lanes)
	}
	return dt, nil
}

// dlpackCode is the inverse of dlpackDType.
func dlpackCode(dt ir.DataType) (code, bits uint8) {
	switch dt.Code {
	case ir.CodeInt:
		return dlInt, dt.Bits
	case ir.CodeUInt:
		return dlUInt, dt.Bits
	case ir.CodeBFloat:
		return dlBfloat, dt.Bits
	case ir.CodeBool:
		return dlUInt, 1 // TVM's bool is uint1, stored one byte per element
	}
	return dlFloat, dt.Bits
}
