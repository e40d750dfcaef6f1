package tensor

import (
	"encoding/binary"
	"fmt"
	"math"
	"slices"
	"strings"
	"unsafe"
)

// Tensor is an n-dimensional array: DType elements laid out C-contiguously
// (row-major, no strides) starting Offset bytes into Storage. Several
// tensors may view one Storage at different offsets, which is what the VM's
// alloc_tensor(storage, offset, shape, dtype) needs.
type Tensor struct {
	DType   DType
	Shape   []int64
	Storage *Storage
	Offset  int64 // byte offset into Storage; a multiple of DType.Size()
}

// New returns a zeroed tensor with fresh storage that the garbage collector
// frees. It panics on a negative dimension or an invalid dtype (a caller
// bug; shapes from input go through View or NewChecked).
func New(dt DType, shape ...int64) *Tensor {
	t, err := NewChecked(dt, shape)
	if err != nil {
		panic(err)
	}
	return t
}

// NewChecked is New that returns an error for an invalid dtype, a negative
// dimension or a size that overflows.
func NewChecked(dt DType, shape []int64) (*Tensor, error) {
	n, err := byteSize(dt, shape)
	if err != nil {
		return nil, err
	}
	return &Tensor{DType: dt, Shape: slices.Clone(shape), Storage: NewStorage(n)}, nil
}

// Alloc returns an uninitialized tensor whose storage comes from a (the
// caller frees t.Storage with a.Free).
func Alloc(a Allocator, dt DType, shape []int64) (*Tensor, error) {
	n, err := byteSize(dt, shape)
	if err != nil {
		return nil, err
	}
	s, err := a.Alloc(n)
	if err != nil {
		return nil, err
	}
	return &Tensor{DType: dt, Shape: slices.Clone(shape), Storage: s}, nil
}

// View returns a tensor over s starting offset bytes in. It checks that the
// dtype is valid, the shape non-negative, the offset aligned to the element
// size, and that the whole tensor lies inside the storage.
func View(s *Storage, offset int64, dt DType, shape []int64) (*Tensor, error) {
	if err := checkView(s, offset, dt, shape); err != nil {
		return nil, err
	}
	return &Tensor{DType: dt, Shape: slices.Clone(shape), Storage: s, Offset: offset}, nil
}

// ViewInto is View that fills t in place, reusing t.Shape's capacity, so a
// caller that keeps one Tensor per slot (the VM's registers) makes views
// without allocating. On error t is unchanged.
func ViewInto(t *Tensor, s *Storage, offset int64, dt DType, shape []int64) error {
	if err := checkView(s, offset, dt, shape); err != nil {
		return err
	}
	*t = Tensor{DType: dt, Shape: append(t.Shape[:0], shape...), Storage: s, Offset: offset}
	return nil
}

func checkView(s *Storage, offset int64, dt DType, shape []int64) error {
	if s == nil {
		return fmt.Errorf("tensor view: nil storage")
	}
	n, err := byteSize(dt, shape)
	if err != nil {
		return err
	}
	if offset < 0 || offset%int64(dt.Size()) != 0 {
		return fmt.Errorf("tensor view: offset %d is not a non-negative multiple of the %s element size %d", offset, dt, dt.Size())
	}
	if offset > s.Len() || n > s.Len()-offset {
		return fmt.Errorf("tensor view: %s%s needs %d bytes at offset %d but the storage has %d", dt, FormatShape(shape), n, offset, s.Len())
	}
	return nil
}

// byteSize is the number of bytes a dense dt tensor of this shape occupies.
func byteSize(dt DType, shape []int64) (int64, error) {
	if !dt.Valid() {
		return 0, fmt.Errorf("tensor: invalid dtype %v", dt)
	}
	n, err := numElements(shape)
	if err != nil {
		return 0, err
	}
	if n > MaxAlloc/int64(dt.Size()) {
		return 0, fmt.Errorf("tensor: %s%s is larger than %d bytes", dt, FormatShape(shape), int64(MaxAlloc))
	}
	return n * int64(dt.Size()), nil
}

func numElements(shape []int64) (int64, error) {
	n := int64(1)
	for _, d := range shape {
		if d < 0 {
			return 0, fmt.Errorf("tensor: negative dimension in shape %s", FormatShape(shape))
		}
		if d != 0 && n > MaxAlloc/d {
			// Keep going: a later 0 makes the product 0 without overflow.
			n = MaxAlloc + 1
			continue
		}
		n *= d
	}
	if n > MaxAlloc {
		for _, d := range shape {
			if d == 0 {
				return 0, nil
			}
		}
		return 0, fmt.Errorf("tensor: shape %s has more than %d elements", FormatShape(shape), int64(MaxAlloc))
	}
	return n, nil
}

// FormatShape spells a shape as NumPy does: (2, 3), (5,), ().
func FormatShape(shape []int64) string {
	var b strings.Builder
	b.WriteByte('(')
	for i, d := range shape {
		if i > 0 {
			b.WriteString(", ")
		}
		fmt.Fprint(&b, d)
	}
	if len(shape) == 1 {
		b.WriteByte(',')
	}
	b.WriteByte(')')
	return b.String()
}

// NumElements is the product of the shape (1 for a scalar, shape ()).
func (t *Tensor) NumElements() int64 {
	n := int64(1)
	for _, d := range t.Shape {
		n *= d
	}
	return n
}

// NBytes is the number of bytes the tensor's elements occupy.
func (t *Tensor) NBytes() int64 { return t.NumElements() * int64(t.DType.Size()) }

// Bytes returns the tensor's elements as bytes in native byte order.
func (t *Tensor) Bytes() []byte {
	return t.Storage.data[t.Offset : t.Offset+t.NBytes() : t.Offset+t.NBytes()]
}

// String is a short description: float32(2, 3).
func (t *Tensor) String() string { return t.DType.String() + FormatShape(t.Shape) }

// Elem is the set of Go types that tensor elements are stored as. F16 and
// BF16 (and uint16) read Float16/BFloat16 tensors.
type Elem interface {
	~bool | ~int8 | ~int16 | ~int32 | ~int64 | ~uint8 | ~uint16 | ~uint32 | ~uint64 | ~float32 | ~float64
}

// Data returns the tensor's elements as a []T sharing its storage, so
// kernels index a plain slice. T must have the dtype's size and kind
// (float32 for Float32, F16 or uint16 for Float16, ...); a mismatch is a
// caller bug and panics.
func Data[T Elem](t *Tensor) []T {
	if !elemMatches[T](t.DType) {
		panic(fmt.Sprintf("tensor.Data[%T] on a %s tensor", *new(T), t.DType))
	}
	n := t.NumElements()
	if n == 0 {
		return []T{}
	}
	b := t.Storage.data[t.Offset:]
	if int64(len(b)) < n*int64(unsafe.Sizeof(*new(T))) {
		panic(fmt.Sprintf("tensor.Data: %s at offset %d overruns its %d-byte storage", t, t.Offset, len(t.Storage.data)))
	}
	return unsafe.Slice((*T)(unsafe.Pointer(unsafe.SliceData(b))), n)
}

// elemMatches reports whether the Go type T stores dtype dt. The switch is
// on a nil *T, so nothing is converted to an interface value.
func elemMatches[T Elem](dt DType) bool {
	switch any((*T)(nil)).(type) {
	case *float32:
		return dt == Float32
	case *int64:
		return dt == Int64
	case *int32:
		return dt == Int32
	case *float64:
		return dt == Float64
	case *bool:
		return dt == Bool
	case *int8:
		return dt == Int8
	case *int16:
		return dt == Int16
	case *uint8:
		return dt == Uint8
	case *uint16:
		return dt == Uint16 || dt == Float16 || dt == BFloat16
	case *F16:
		return dt == Float16
	case *BF16:
		return dt == BFloat16
	case *uint32:
		return dt == Uint32
	case *uint64:
		return dt == Uint64
	}
	return false
}

var ne = binary.NativeEndian

// Float64At returns element i (in C order) converted to float64; bools are
// 0 or 1. It is the slow generic accessor for tests and the reference
// evaluator; kernels use Data.
func (t *Tensor) Float64At(i int) float64 {
	sz := t.DType.Size()
	b := t.Bytes()[i*sz : (i+1)*sz]
	switch t.DType {
	case Bool:
		if b[0] != 0 {
			return 1
		}
		return 0
	case Int8:
		return float64(int8(b[0]))
	case Int16:
		return float64(int16(ne.Uint16(b)))
	case Int32:
		return float64(int32(ne.Uint32(b)))
	case Int64:
		return float64(int64(ne.Uint64(b)))
	case Uint8:
		return float64(b[0])
	case Uint16:
		return float64(ne.Uint16(b))
	case Uint32:
		return float64(ne.Uint32(b))
	case Uint64:
		return float64(ne.Uint64(b))
	case Float16:
		return float64(F16(ne.Uint16(b)).Float32())
	case BFloat16:
		return float64(BF16(ne.Uint16(b)).Float32())
	case Float32:
		return float64(math.Float32frombits(ne.Uint32(b)))
	case Float64:
		return math.Float64frombits(ne.Uint64(b))
	}
	panic(fmt.Sprintf("tensor: Float64At on invalid dtype %v", t.DType))
}

// SetFloat64 stores v into element i, converting as a C cast would for
// in-range values: integers truncate toward zero (out-of-range values
// saturate, NaN gives 0), bool stores v != 0, float16/bfloat16 round to
// nearest even.
func (t *Tensor) SetFloat64(i int, v float64) {
	sz := t.DType.Size()
	b := t.Bytes()[i*sz : (i+1)*sz]
	switch t.DType {
	case Bool:
		b[0] = 0
		if v != 0 {
			b[0] = 1
		}
	case Int8:
		b[0] = uint8(int8(satInt(v, math.MinInt8, math.MaxInt8)))
	case Int16:
		ne.PutUint16(b, uint16(int16(satInt(v, math.MinInt16, math.MaxInt16))))
	case Int32:
		ne.PutUint32(b, uint32(int32(satInt(v, math.MinInt32, math.MaxInt32))))
	case Int64:
		ne.PutUint64(b, uint64(satInt(v, math.MinInt64, math.MaxInt64)))
	case Uint8:
		b[0] = uint8(satUint(v, math.MaxUint8))
	case Uint16:
		ne.PutUint16(b, uint16(satUint(v, math.MaxUint16)))
	case Uint32:
		ne.PutUint32(b, uint32(satUint(v, math.MaxUint32)))
	case Uint64:
		ne.PutUint64(b, satUint(v, math.MaxUint64))
	case Float16:
		ne.PutUint16(b, uint16(F16FromFloat64(v)))
	case BFloat16:
		ne.PutUint16(b, uint16(BF16FromFloat64(v)))
	case Float32:
		ne.PutUint32(b, math.Float32bits(float32(v)))
	case Float64:
		ne.PutUint64(b, math.Float64bits(v))
	default:
		panic(fmt.Sprintf("tensor: SetFloat64 on invalid dtype %v", t.DType))
	}
}

// satInt truncates v toward zero and clamps it to [lo, hi]; NaN gives 0.
// (Go's own float->int conversion of an out-of-range value is
// implementation-defined, so we never rely on it.)
func satInt(v float64, lo, hi int64) int64 {
	switch {
	case v != v:
		return 0
	case v <= float64(lo):
		return lo
	case v >= float64(hi):
		return hi // float64(MaxInt64) rounds up to 2^63, so >= catches it
	}
	return int64(v)
}

func satUint(v float64, hi uint64) uint64 {
	switch {
	case v != v || v <= 0:
		return 0
	case v >= float64(hi):
		return hi
	}
	return uint64(v)
}

// Clone returns a copy of t with fresh, garbage-collected storage.
func (t *Tensor) Clone() *Tensor {
	c := &Tensor{DType: t.DType, Shape: slices.Clone(t.Shape), Storage: NewStorage(t.NBytes())}
	copy(c.Storage.data, t.Bytes())
	return c
}

// FromSlice returns a tensor of the given shape holding a copy of data;
// the dtype follows T (float32 -> Float32, F16 -> Float16, BF16 ->
// BFloat16, uint16 -> Uint16, ...). The shape must have len(data) elements.
func FromSlice[T Elem](data []T, shape ...int64) (*Tensor, error) {
	dt := Invalid
	for _, d := range DTypes {
		if elemMatches[T](d) {
			dt = d
			break // uint16 matches Uint16 first
		}
	}
	if dt == Invalid {
		return nil, fmt.Errorf("tensor.FromSlice: %T is not a tensor element type", *new(T))
	}
	if shape == nil {
		shape = []int64{int64(len(data))}
	}
	t, err := NewChecked(dt, shape)
	if err != nil {
		return nil, err
	}
	if t.NumElements() != int64(len(data)) {
		return nil, fmt.Errorf("tensor.FromSlice: shape %s needs %d elements, got %d", FormatShape(shape), t.NumElements(), len(data))
	}
	copy(Data[T](t), data)
	return t, nil
}
