package vm

import (
	"fmt"
	"strings"

	"github.com/phasec/phasec/tensor"
	"github.com/phasec/phasec/vm/abi"
)

// Shape-heap builtins (VMShapeLower, src/relax/backend/vm/vm_shape_lower.cc)
// and the check_*_info family, with TVM's messages.

// heapOf returns the heap's int64 slots, or nil for a null heap.
func heapOf(v Value) ([]int64, error) {
	if v.kind == KindNull {
		return nil, nil
	}
	t, ok := v.Tensor()
	if !ok || t.DType != tensor.Int64 || len(t.Shape) != 1 {
		return nil, fmt.Errorf("the shape heap must be a 1-d int64 tensor, got %s", v)
	}
	return tensor.Data[int64](t), nil
}

func heapSlot(heap []int64, slot int64) (*int64, error) {
	if slot < 0 || slot >= int64(len(heap)) {
		return nil, fmt.Errorf("shape heap slot %d out of range (heap of %d slots)", slot, len(heap))
	}
	return &heap[slot], nil
}

func prefix(ctx string) string {
	if ctx == "" {
		return ""
	}
	return strings.TrimRight(ctx, " ") + " "
}

// matchOne applies one match code to value x, dimension dim of a shape
// (-1: a prim value); messages are formatted only on failure.
func matchOne(heap []int64, code abi.MatchCode, v, x int64, dim int, ctx string) error {
	what := func() string {
		if dim < 0 {
			return "PrimValue"
		}
		return fmt.Sprintf("shape[%d]", dim)
	}
	switch code {
	case abi.MatchAssertEqualToImm:
		if x != v {
			return fmt.Errorf("%smatch_cast error, %s mismatch to specified constant (expected %d, got %d).", prefix(ctx), what(), v, x)
		}
	case abi.MatchStoreToHeap:
		p, err := heapSlot(heap, v)
		if err != nil {
			return err
		}
		*p = x
	case abi.MatchNoOp:
	case abi.MatchAssertEqualToLoad:
		p, err := heapSlot(heap, v)
		if err != nil {
			return err
		}
		if x != *p {
			return fmt.Errorf("%smatch_cast error, %s mismatch to a previous populated value (expected %d, got %d).", prefix(ctx), what(), *p, x)
		}
	default:
		return fmt.Errorf("unknown match code %d", code)
	}
	return nil
}

// match_shape(value, heap, n, code_0, v_0, ..., code_{n-1}, v_{n-1}[, err_ctx]).
func matchShape(_ *Machine, a []Value) (Value, error) {
	var dims []int64
	switch a[0].kind {
	case KindTensor:
		t, _ := a[0].Tensor()
		dims = t.Shape
	case KindShape:
		s, _ := a[0].Shape()
		dims = s.Dims
	default:
		return Value{}, fmt.Errorf("match_shape expects a Tensor or a Shape, got %s", a[0].kind)
	}
	heap, err := heapOf(a[1])
	if err != nil {
		return Value{}, err
	}
	n, err := argInt(a, 2, "dimension count")
	if err != nil {
		return Value{}, err
	}
	if n < 0 || int(n) > (len(a)-3)/2 {
		return Value{}, fmt.Errorf("match_shape: %d dimensions but %d code arguments", n, len(a)-3)
	}
	ctx := errCtx(a, 3+2*int(n))
	if int64(len(dims)) != n {
		return Value{}, fmt.Errorf("%smatch_cast shape size mismatch (expected ndim %d, got %d).", prefix(ctx), n, len(dims))
	}
	for i := 0; i < int(n); i++ {
		code, err1 := argInt(a, 3+2*i, "match code")
		v, err2 := argInt(a, 4+2*i, "match operand")
		if err1 != nil || err2 != nil {
			return Value{}, fmt.Errorf("match_shape dimension %d: bad code or operand", i)
		}
		if err := matchOne(heap, abi.MatchCode(code), v, dims[i], i, ctx); err != nil {
			return Value{}, err
		}
	}
	return Value{}, nil
}

// match_prim_value(value, heap, code, operand[, err_ctx]).
func matchPrimValue(_ *Machine, a []Value) (Value, error) {
	x, ok := a[0].Int()
	if !ok {
		return Value{}, fmt.Errorf("match_prim_value expects an integer, got %s", a[0].kind)
	}
	heap, err := heapOf(a[1])
	if err != nil {
		return Value{}, err
	}
	code, err := argInt(a, 2, "match code")
	if err != nil {
		return Value{}, err
	}
	v, err := argInt(a, 3, "match operand")
	if err != nil {
		return Value{}, err
	}
	return Value{}, matchOne(heap, abi.MatchCode(code), v, x, -1, errCtx(a, 4))
}

// make_shape(heap, n, code_0, v_0, ...): immediates or heap loads.
func makeShape(m *Machine, a []Value) (Value, error) {
	heap, err := heapOf(a[0])
	if err != nil {
		return Value{}, err
	}
	n, err := argInt(a, 1, "dimension count")
	if err != nil {
		return Value{}, err
	}
	if n < 0 || int(n) != (len(a)-2)/2 || len(a)%2 != 0 {
		return Value{}, fmt.Errorf("make_shape: %d dimensions but %d code arguments", n, len(a)-2)
	}
	var dims []int64
	if m != nil {
		dims = m.dimsBuf[:0]
	}
	for i := 0; i < int(n); i++ {
		d, err := makeOne(heap, a[2+2*i], a[3+2*i])
		if err != nil {
			return Value{}, fmt.Errorf("make_shape dimension %d: %w", i, err)
		}
		dims = append(dims, d)
	}
	if m == nil {
		return ShapeValue(dims...), nil
	}
	m.dimsBuf = dims
	return m.shapeValue(dims), nil
}

func makeOne(heap []int64, codeV, opV Value) (int64, error) {
	code, ok1 := codeV.Int()
	v, ok2 := opV.Int()
	if !ok1 || !ok2 {
		return 0, fmt.Errorf("code and operand must be integers")
	}
	switch abi.MakeCode(code) {
	case abi.MakeUseImm:
		return v, nil
	case abi.MakeLoadShape:
		p, err := heapSlot(heap, v)
		if err != nil {
			return 0, err
		}
		return *p, nil
	}
	return 0, fmt.Errorf("unknown make code %d", code)
}

// make_prim_value(heap, code, operand).
func makePrimValue(_ *Machine, a []Value) (Value, error) {
	heap, err := heapOf(a[0])
	if err != nil {
		return Value{}, err
	}
	v, err := makeOne(heap, a[1], a[2])
	if err != nil {
		return Value{}, fmt.Errorf("make_prim_value: %w", err)
	}
	return Int(v), nil
}

func typeName(v Value) string {
	switch v.kind {
	case KindTensor:
		return "runtime.NDArray"
	case KindShape:
		return "runtime.ShapeTuple"
	case KindTuple:
		return "runtime.Array"
	case KindFunc:
		return "runtime.Closure"
	case KindString:
		return "runtime.String"
	case KindNull:
		return "null"
	}
	return v.kind.String()
}

// check_tensor_info(arg, ndim[, dtype][, err_ctx]).
func checkTensorInfo(_ *Machine, a []Value) (Value, error) {
	dtype := tensor.Invalid
	ctx := ""
	for _, x := range a[2:] {
		if d, ok := x.DType(); ok {
			dtype = d
		} else if s, ok := x.Str(); ok {
			ctx = s
		} else {
			return Value{}, fmt.Errorf("check_tensor_info: unexpected argument %s", x)
		}
	}
	ndim, err := argInt(a, 1, "ndim")
	if err != nil {
		return Value{}, err
	}
	t, ok := a[0].Tensor()
	if !ok {
		return Value{}, fmt.Errorf("TypeError: %sexpect a Tensor but get %s", prefix(ctx), typeName(a[0]))
	}
	if ndim != -1 && int64(len(t.Shape)) != ndim {
		return Value{}, fmt.Errorf("ValueError: %sexpect Tensor with ndim %d but get %d", prefix(ctx), ndim, len(t.Shape))
	}
	if dtype != tensor.Invalid && t.DType != dtype {
		return Value{}, fmt.Errorf("ValueError: %sexpect Tensor with dtype %s but get %s", prefix(ctx), dtype, t.DType)
	}
	return Value{}, nil
}

// check_shape_info(arg, ndim[, err_ctx]).
func checkShapeInfo(_ *Machine, a []Value) (Value, error) {
	ctx := errCtx(a, 2)
	ndim, err := argInt(a, 1, "ndim")
	if err != nil {
		return Value{}, err
	}
	s, ok := a[0].Shape()
	if !ok {
		return Value{}, fmt.Errorf("TypeError: %sexpect a Shape but get %s", prefix(ctx), typeName(a[0]))
	}
	if ndim != -1 && int64(len(s.Dims)) != ndim {
		return Value{}, fmt.Errorf("ValueError: %sexpect Shape with ndim %d but get %d", prefix(ctx), ndim, len(s.Dims))
	}
	return Value{}, nil
}

// check_prim_value_info(arg, dtype[, err_ctx]).
func checkPrimValueInfo(_ *Machine, a []Value) (Value, error) {
	ctx := errCtx(a, 2)
	dt, ok := a[1].DType()
	if !ok {
		return Value{}, fmt.Errorf("check_prim_value_info expects a dtype, got %s", a[1].kind)
	}
	x := a[0]
	bad := func() (Value, error) {
		return Value{}, fmt.Errorf("TypeError: %sexpect prim value of dtype %s but get %s", prefix(ctx), dt, typeName(x))
	}
	switch dt {
	case tensor.Invalid:
		if x.kind != KindInt && x.kind != KindFloat && x.kind != KindBool {
			return bad()
		}
	case tensor.Bool:
		if x.kind != KindBool && x.kind != KindInt {
			return bad()
		}
	case tensor.Float16, tensor.BFloat16, tensor.Float32, tensor.Float64:
		if x.kind != KindFloat && x.kind != KindInt {
			return bad()
		}
	default:
		if x.kind != KindInt && x.kind != KindBool {
			return bad()
		}
	}
	return Value{}, nil
}

// check_tuple_info(arg, size[, err_ctx]).
func checkTupleInfo(_ *Machine, a []Value) (Value, error) {
	ctx := errCtx(a, 2)
	n, err := argInt(a, 1, "tuple size")
	if err != nil {
		return Value{}, err
	}
	t, ok := a[0].Tuple()
	if !ok {
		return Value{}, fmt.Errorf("TypeError: %sexpect a Tuple but get %s", prefix(ctx), typeName(a[0]))
	}
	if int64(len(t.Fields)) != n {
		return Value{}, fmt.Errorf("ValueError: %sexpect a Tuple with %d elements, but get a Tuple with %d elements.", prefix(ctx), n, len(t.Fields))
	}
	return Value{}, nil
}

// check_func_info(arg[, err_ctx]).
func checkFuncInfo(_ *Machine, a []Value) (Value, error) {
	if a[0].kind != KindFunc {
		return Value{}, fmt.Errorf("TypeError: %sexpect a Function but get %s", prefix(errCtx(a, 1)), typeName(a[0]))
	}
	return Value{}, nil
}
