package op

import (
	"fmt"
	"math"

	"github.com/phasec/phasec/ir"
	"github.com/phasec/phasec/tensor"
)

// Values of the reference evaluator. An op's Eval hook receives its
// arguments as Values and returns one; package eval interprets whole
// modules with them.
//
// Value is one of:
//
//	*tensor.Tensor  a tensor
//	Tuple           a tuple (also the empty tuple, Relax's void)
//	Shape           a shape value (R.shape)
//	Prim            a scalar (R.prim_value)
//	Str             a string (R.str)
//	DTypeValue      a dtype (R.dtype)
//	nil             the null object (R.null_value)
//
// and evaluator-specific values (closures, storages) that ops pass through.
type Value any

// Tuple is a Relax tuple value.
type Tuple []Value

// Shape is a Relax shape value.
type Shape []int64

// Prim is a scalar: integers and bools in I, floats in F.
type Prim struct {
	DType ir.DataType
	I     int64
	F     float64
}

// Str is a Relax string value.
type Str string

// DTypeValue is a Relax dtype value.
type DTypeValue ir.DataType

// Float returns p as a float64.
func (p Prim) Float() float64 {
	if p.DType.IsFloat() {
		return p.F
	}
	if p.DType.IsUInt() {
		return float64(uint64(p.I))
	}
	return float64(p.I)
}

// PrimFloat and PrimInt build scalars of dtype dt, rounded or wrapped to it.
func PrimFloat(dt ir.DataType, v float64) Prim { return Prim{DType: dt, F: roundFloat(dt, v)} }
func PrimInt(dt ir.DataType, v int64) Prim     { return Prim{DType: dt, I: wrapInt(dt, v)} }

// TensorDType converts an ir scalar dtype to the runtime's.
func TensorDType(dt ir.DataType) (tensor.DType, error) {
	if dt.Lanes != 1 {
		return tensor.Invalid, fmt.Errorf("vector dtype %s is not a tensor element type", dt)
	}
	return tensor.ParseDType(dt.String())
}

// IRDType converts a runtime dtype to ir's.
func IRDType(dt tensor.DType) ir.DataType {
	t, err := ir.ParseDataType(dt.String())
	if err != nil {
		return ir.Void
	}
	return t
}

// roundFloat rounds v to the precision of float dtype dt.
func roundFloat(dt ir.DataType, v float64) float64 {
	switch {
	case dt.Code == ir.CodeBFloat:
		return float64(tensor.BF16FromFloat64(v).Float32())
	case dt.Bits == 16:
		return float64(tensor.F16FromFloat64(v).Float32())
	case dt.Bits == 32:
		return float64(float32(v))
	}
	return v
}

// wrapInt reduces v to the range of integer dtype dt as two's complement
// hardware does (bool: nonzero is 1).
func wrapInt(dt ir.DataType, v int64) int64 {
	switch {
	case dt.IsBool():
		if v != 0 {
			return 1
		}
		return 0
	case dt.Bits >= 64:
		return v
	case dt.IsUInt():
		return int64(uint64(v) & (1<<dt.Bits - 1))
	}
	shift := 64 - dt.Bits
	return v << shift >> shift
}

// castFloatToInt converts a float to integer dtype dt the way a C cast on
// the target does for in-range values (truncation toward zero); NaN and
// out-of-range values saturate, which is what Go's conversion of a NaN
// leaves unspecified.
func castFloatToInt(dt ir.DataType, v float64) int64 {
	if dt.IsBool() {
		if v != 0 {
			return 1
		}
		return 0
	}
	switch {
	case math.IsNaN(v):
		return 0
	case v >= 9.223372036854775807e18:
		if dt.IsUInt() && dt.Bits == 64 && v < 1.8446744073709552e19 {
			return int64(uint64(v))
		}
		return wrapInt(dt, math.MaxInt64)
	case v <= -9.223372036854775808e18:
		return wrapInt(dt, math.MinInt64)
	}
	return wrapInt(dt, int64(v))
}

// array is the evaluator's working form of a tensor: the elements in C
// order, exactly, as float64 (float dtypes) or int64 (integer and bool
// dtypes; uint64 as its bit pattern). Each op computes on arrays and
// rounds or wraps each result element to the output dtype once, which is
// what a kernel storing into an output buffer of that dtype does.
type array struct {
	dt    ir.DataType
	shape []int64
	f     []float64 // when dt.IsFloat()
	i     []int64   // otherwise
}

func newArray(dt ir.DataType, shape []int64) *array {
	a := &array{dt: dt, shape: append([]int64{}, shape...)}
	n := numElems(shape)
	if dt.IsFloat() {
		a.f = make([]float64, n)
	} else {
		a.i = make([]int64, n)
	}
	return a
}

func numElems(shape []int64) int64 {
	n := int64(1)
	for _, d := range shape {
		n *= d
	}
	return n
}

func (a *array) size() int64 { return numElems(a.shape) }

// float returns element k as a float64.
func (a *array) float(k int64) float64 {
	if a.f != nil {
		return a.f[k]
	}
	if a.dt.IsUInt() {
		return float64(uint64(a.i[k]))
	}
	return float64(a.i[k])
}

// int returns element k as an int64 (floats truncate).
func (a *array) int(k int64) int64 {
	if a.f != nil {
		return castFloatToInt(ir.Int64, a.f[k])
	}
	return a.i[k]
}

// setFloat stores v, rounded (or cast) to the array's dtype.
func (a *array) setFloat(k int64, v float64) {
	if a.f != nil {
		a.f[k] = roundFloat(a.dt, v)
		return
	}
	a.i[k] = castFloatToInt(a.dt, v)
}

// setInt stores v, wrapped (or converted) to the array's dtype.
func (a *array) setInt(k int64, v int64) {
	if a.f != nil {
		a.f[k] = roundFloat(a.dt, float64(v))
		return
	}
	a.i[k] = wrapInt(a.dt, v)
}

// copyElem copies element k of src to element j of a, converting dtypes.
func (a *array) copyElem(j int64, src *array, k int64) {
	switch {
	case src.f != nil:
		a.setFloat(j, src.f[k])
	case a.f != nil && src.dt.IsUInt():
		a.setFloat(j, float64(uint64(src.i[k])))
	default:
		a.setInt(j, src.i[k])
	}
}

// toArray reads a tensor or scalar argument (scalars are rank 0).
func toArray(v Value) (*array, error) {
	switch x := v.(type) {
	case *tensor.Tensor:
		dt := IRDType(x.DType)
		if dt.IsVoid() {
			return nil, fmt.Errorf("tensor of unsupported dtype %s", x.DType)
		}
		a := newArray(dt, x.Shape)
		n := a.size()
		switch x.DType {
		case tensor.Float32:
			for k, e := range tensor.Data[float32](x) {
				a.f[k] = float64(e)
			}
		case tensor.Float64:
			copy(a.f, tensor.Data[float64](x))
		case tensor.Int64:
			copy(a.i, tensor.Data[int64](x))
		case tensor.Int32:
			for k, e := range tensor.Data[int32](x) {
				a.i[k] = int64(e)
			}
		case tensor.Uint64:
			for k, e := range tensor.Data[uint64](x) {
				a.i[k] = int64(e)
			}
		default:
			for k := int64(0); k < n; k++ {
				if a.f != nil {
					a.f[k] = x.Float64At(int(k))
				} else {
					a.i[k] = int64(x.Float64At(int(k)))
				}
			}
		}
		return a, nil
	case Prim:
		a := newArray(x.DType, nil)
		if a.f != nil {
			a.f[0] = x.F
		} else {
			a.i[0] = x.I
		}
		return a, nil
	}
	return nil, fmt.Errorf("expected a tensor, got %s", KindOf(v))
}

// tensor writes the array out as a fresh tensor.
func (a *array) tensor() (*tensor.Tensor, error) {
	dt, err := TensorDType(a.dt)
	if err != nil {
		return nil, err
	}
	t, err := tensor.NewChecked(dt, a.shape)
	if err != nil {
		return nil, err
	}
	switch dt {
	case tensor.Float32:
		d := tensor.Data[float32](t)
		for k, e := range a.f {
			d[k] = float32(e)
		}
	case tensor.Float64:
		copy(tensor.Data[float64](t), a.f)
	case tensor.Int64:
		copy(tensor.Data[int64](t), a.i)
	case tensor.Uint64:
		d := tensor.Data[uint64](t)
		for k, e := range a.i {
			d[k] = uint64(e)
		}
	default:
		n := int(a.size())
		for k := 0; k < n; k++ {
			if a.f != nil {
				t.SetFloat64(k, a.f[k])
			} else {
				t.SetFloat64(k, float64(a.i[k]))
			}
		}
	}
	return t, nil
}

// prim returns element 0 of a rank-0 array as a scalar.
func (a *array) prim() Prim {
	if a.f != nil {
		return Prim{DType: a.dt, F: a.f[0]}
	}
	return Prim{DType: a.dt, I: a.i[0]}
}

// KindOf names a value's kind for messages.
func KindOf(v Value) string {
	switch x := v.(type) {
	case *tensor.Tensor:
		return "a tensor " + x.String()
	case Tuple:
		return fmt.Sprintf("a tuple of %d", len(x))
	case Shape:
		return "a shape"
	case Prim:
		return "a " + x.DType.String() + " scalar"
	case Str:
		return "a string"
	case DTypeValue:
		return "a dtype"
	case nil:
		return "null"
	}
	return fmt.Sprintf("a %T", v)
}

// strides returns the C-order element strides of shape.
func strides(shape []int64) []int64 {
	s := make([]int64, len(shape))
	acc := int64(1)
	for i := len(shape) - 1; i >= 0; i-- {
		s[i] = acc
		acc *= shape[i]
	}
	return s
}

// unravel writes the multi-index of flat index k into idx.
func unravel(k int64, shape, idx []int64) {
	for i := len(shape) - 1; i >= 0; i-- {
		if shape[i] == 0 {
			idx[i] = 0
			continue
		}
		idx[i] = k % shape[i]
		k /= shape[i]
	}
}

// MaxElements bounds the tensors the reference evaluator creates (and,
// times 64, the multiply-adds of one matmul): it is for tests and small
// inputs, and a shape read from a module or input should not be able to
// exhaust memory or time. Fuzz tests lower it.
var MaxElements int64 = 1 << 24

// CheckSize rejects negative dimensions and tensors above MaxElements.
func CheckSize(shape []int64) error {
	n := int64(1)
	for i, d := range shape {
		if d < 0 {
			return fmt.Errorf("dimension %d is negative (%d)", i, d)
		}
		if d > 0 && n > MaxElements/d {
			return fmt.Errorf("shape %v exceeds the evaluator's limit of %d elements", shape, MaxElements)
		}
		n *= d
	}
	return nil
}
