package vm

import (
	"fmt"
	"math"
	"strings"
	"unsafe"

	"github.com/phasec/phasec/tensor"
)

// Kind is the dynamic type of a register value.
type Kind uint8

const (
	KindNull    Kind = iota // no value (%void, killed registers)
	KindInt                 // int64 prim value
	KindFloat               // float64 prim value
	KindBool                // bool prim value
	KindDType               // a data type (R.dtype)
	KindString              // a string (R.str, error contexts)
	KindTensor              // *tensor.Tensor
	KindStorage             // *tensor.Storage from vm.builtin.alloc_storage
	KindShape               // *Shape
	KindTuple               // *Tuple
	KindFunc                // *Closure: a function of the table, possibly with bound trailing arguments
)

var kindNames = [...]string{"null", "int", "float", "bool", "dtype", "string", "Tensor", "Storage", "Shape", "Tuple", "Function"}

func (k Kind) String() string {
	if int(k) < len(kindNames) {
		return kindNames[k]
	}
	return fmt.Sprintf("Kind(%d)", k)
}

// Value is one register: 24 bytes, copied by value. Scalars live in i
// (floats as their bits), objects in p as a pointer whose type kind
// determines (*tensor.Tensor, *tensor.Storage, *Shape, *Tuple, *Closure,
// *string), so that moving a value never allocates or boxes, and the
// register file stays small.
type Value struct {
	p    unsafe.Pointer
	i    int64
	kind Kind
}

// Shape is a runtime shape tuple (TVM's ShapeTuple).
type Shape struct{ Dims []int64 }

// Tuple is a runtime tuple (TVM's runtime Array).
type Tuple struct{ Fields []Value }

// Closure is a callable: an entry of the function table with bound trailing
// arguments (vm.builtin.make_closure), or none for a plain function reference.
type Closure struct {
	Func  int // index in the function table
	Bound []Value
}

// Constructors: Null is the null object (%void, killed registers), Int,
// Float and Bool are prim values, DTypeValue a dtype, String a string
// (error contexts), TensorValue and StorageValue wrap runtime objects (nil
// gives Null), ShapeValue and TupleValue make new shapes and tuples.

func Null() Value                          { return Value{} }
func Int(v int64) Value                    { return Value{kind: KindInt, i: v} }
func Float(v float64) Value                { return Value{kind: KindFloat, i: int64(math.Float64bits(v))} }
func Bool(b bool) Value                    { return Value{kind: KindBool, i: b2i(b)} }
func DTypeValue(d tensor.DType) Value      { return Value{kind: KindDType, i: int64(d)} }
func String(s string) Value                { return Value{kind: KindString, p: unsafe.Pointer(&s)} }
func TensorValue(t *tensor.Tensor) Value   { return objValue(KindTensor, unsafe.Pointer(t)) }
func StorageValue(s *tensor.Storage) Value { return objValue(KindStorage, unsafe.Pointer(s)) }
func ShapeValue(dims ...int64) Value {
	return Value{kind: KindShape, p: unsafe.Pointer(&Shape{Dims: dims})}
}
func TupleValue(fields ...Value) Value {
	return Value{kind: KindTuple, p: unsafe.Pointer(&Tuple{Fields: fields})}
}
func closureValue(c *Closure) Value { return objValue(KindFunc, unsafe.Pointer(c)) }

// objValue makes an object value; a nil object is the null value.
func objValue(k Kind, p unsafe.Pointer) Value {
	if p == nil {
		return Value{}
	}
	return Value{kind: k, p: p}
}

func b2i(b bool) int64 {
	if b {
		return 1
	}
	return 0
}

// Kind is the value's dynamic type.
func (v Value) Kind() Kind { return v.kind }

// IsNull reports whether v holds nothing.
func (v Value) IsNull() bool { return v.kind == KindNull }

// Accessors: each returns the zero value and false when v is of another
// kind. Int accepts ints and bools; Float also converts ints and bools.

func (v Value) Int() (int64, bool) { return v.i, v.kind == KindInt || v.kind == KindBool }
func (v Value) Float() (float64, bool) {
	switch v.kind {
	case KindFloat:
		return math.Float64frombits(uint64(v.i)), true
	case KindInt, KindBool:
		return float64(v.i), true
	}
	return 0, false
}
func (v Value) DType() (tensor.DType, bool) { return tensor.DType(v.i), v.kind == KindDType }
func (v Value) Str() (string, bool) {
	if v.kind != KindString {
		return "", false
	}
	return *(*string)(v.p), true
}
func (v Value) Tensor() (*tensor.Tensor, bool) {
	if v.kind != KindTensor {
		return nil, false
	}
	return (*tensor.Tensor)(v.p), true
}
func (v Value) Storage() (*tensor.Storage, bool) {
	if v.kind != KindStorage {
		return nil, false
	}
	return (*tensor.Storage)(v.p), true
}
func (v Value) Shape() (*Shape, bool) {
	if v.kind != KindShape {
		return nil, false
	}
	return (*Shape)(v.p), true
}
func (v Value) Tuple() (*Tuple, bool) {
	if v.kind != KindTuple {
		return nil, false
	}
	return (*Tuple)(v.p), true
}
func (v Value) closure() (*Closure, bool) {
	if v.kind != KindFunc {
		return nil, false
	}
	return (*Closure)(v.p), true
}

// String renders the value briefly (tensors by dtype and shape), for errors
// and the disassembler.
func (v Value) String() string {
	switch v.kind {
	case KindNull:
		return "null"
	case KindInt:
		return fmt.Sprint(v.i)
	case KindBool:
		return fmt.Sprint(v.i != 0)
	case KindFloat:
		f, _ := v.Float()
		return fmt.Sprint(f)
	case KindDType:
		return tensor.DType(v.i).String()
	case KindString:
		s, _ := v.Str()
		return fmt.Sprintf("%q", s)
	case KindTensor:
		t, _ := v.Tensor()
		return fmt.Sprintf("Tensor(%s, %s)", dimsString(t.Shape), t.DType)
	case KindStorage:
		s, _ := v.Storage()
		return fmt.Sprintf("Storage(%d bytes)", len(s.Bytes()))
	case KindShape:
		s, _ := v.Shape()
		return "shape" + dimsString(s.Dims)
	case KindTuple:
		t, _ := v.Tuple()
		parts := make([]string, len(t.Fields))
		for i, f := range t.Fields {
			parts[i] = f.String()
		}
		return "(" + strings.Join(parts, ", ") + ")"
	case KindFunc:
		c, _ := v.closure()
		return fmt.Sprintf("closure(f%d, %d bound)", c.Func, len(c.Bound))
	}
	return v.kind.String()
}

func dimsString(d []int64) string {
	parts := make([]string, len(d))
	for i, x := range d {
		parts[i] = fmt.Sprint(x)
	}
	return "[" + strings.Join(parts, ", ") + "]"
}

// FromGo converts a Go value for Run: a Value, *tensor.Tensor, int, int64,
// float64, bool, string, []int64 (a shape) or []any (a tuple).
func FromGo(x any) (Value, error) {
	switch x := x.(type) {
	case Value:
		return x, nil
	case *tensor.Tensor:
		if x == nil {
			return Value{}, fmt.Errorf("nil tensor")
		}
		return TensorValue(x), nil
	case int:
		return Int(int64(x)), nil
	case int64:
		return Int(x), nil
	case float64:
		return Float(x), nil
	case bool:
		return Bool(x), nil
	case string:
		return String(x), nil
	case []int64:
		return ShapeValue(x...), nil
	case []any:
		fields := make([]Value, len(x))
		for i, f := range x {
			v, err := FromGo(f)
			if err != nil {
				return Value{}, fmt.Errorf("tuple field %d: %w", i, err)
			}
			fields[i] = v
		}
		return TupleValue(fields...), nil
	}
	return Value{}, fmt.Errorf("cannot pass a %T to the VM", x)
}

// parseDType accepts every tensor dtype and "void" (an unknown dtype, as in
// check_tensor_info's dtype argument), which maps to tensor.Invalid.
func parseDType(s string) (tensor.DType, error) {
	if s == "void" {
		return tensor.Invalid, nil
	}
	return tensor.ParseDType(s)
}
