package vm

import (
	"errors"
	"fmt"

	"github.com/phasec/phasec/tensor"
	"github.com/phasec/phasec/vm/abi"
)

// The vm.builtin.* functions the build pipeline emits, after TVM's
// src/runtime/relax_vm/builtin.cc (v0.20), with its error messages.

func init() {
	for _, b := range []*Builtin{
		{Name: abi.BuiltinCopy, MinArgs: 1, MaxArgs: 1, Fn: func(_ *Machine, a []Value) (Value, error) { return a[0], nil }},
		{Name: abi.BuiltinNullValue, MinArgs: 0, MaxArgs: 0, Fn: func(*Machine, []Value) (Value, error) { return Value{}, nil }},
		{Name: abi.BuiltinReadIfCond, MinArgs: 1, MaxArgs: 1, Fn: readIfCond},
		{Name: abi.BuiltinMakeTuple, MinArgs: 0, MaxArgs: -1, Fn: makeTuple},
		{Name: abi.BuiltinTupleGetItem, MinArgs: 2, MaxArgs: 2, Fn: tupleGetItem},
		{Name: abi.BuiltinTupleResetItem, MinArgs: 2, MaxArgs: 2, Fn: tupleResetItem},
		{Name: abi.BuiltinMakeClosure, MinArgs: 1, MaxArgs: -1, Fn: makeClosure},
		{Name: abi.BuiltinInvokeClosure, WithCtx: true, MinArgs: 1, MaxArgs: -1, Fn: invokeClosureCallback},
		{Name: abi.BuiltinCallTIRDyn, MinArgs: 2, MaxArgs: -1, Fn: notDirect},
		{Name: abi.BuiltinAllocStorage, WithCtx: true, MinArgs: 2, MaxArgs: 4, Fn: allocStorage},
		{Name: abi.BuiltinAllocTensor, MinArgs: 4, MaxArgs: 4, Fn: allocTensor},
		{Name: abi.BuiltinAllocShapeHeap, WithCtx: true, MinArgs: 1, MaxArgs: 1, Fn: allocShapeHeap},
		{Name: abi.BuiltinShapeOf, MinArgs: 1, MaxArgs: 1, Fn: shapeOf},
		{Name: abi.BuiltinReshape, MinArgs: 2, MaxArgs: 2, Fn: reshape},
		{Name: abi.BuiltinTensorToShape, MinArgs: 1, MaxArgs: 1, Fn: tensorToShape},
		{Name: abi.BuiltinEnsureZeroOffset, MinArgs: 1, MaxArgs: 1, Fn: ensureZeroOffset},
		{Name: abi.BuiltinToDevice, MinArgs: 1, MaxArgs: 3, Fn: func(_ *Machine, a []Value) (Value, error) { return a[0], nil }},
		{Name: abi.BuiltinMatchShape, MinArgs: 3, MaxArgs: -1, Fn: matchShape},
		{Name: abi.BuiltinMatchPrimValue, MinArgs: 4, MaxArgs: 5, Fn: matchPrimValue},
		{Name: abi.BuiltinMakeShape, MinArgs: 2, MaxArgs: -1, Fn: makeShape},
		{Name: abi.BuiltinMakePrimValue, MinArgs: 3, MaxArgs: 3, Fn: makePrimValue},
		{Name: abi.BuiltinCheckTensorInfo, MinArgs: 2, MaxArgs: 4, Fn: checkTensorInfo},
		{Name: abi.BuiltinCheckShapeInfo, MinArgs: 2, MaxArgs: 3, Fn: checkShapeInfo},
		{Name: abi.BuiltinCheckPrimValueInfo, MinArgs: 2, MaxArgs: 3, Fn: checkPrimValueInfo},
		{Name: abi.BuiltinCheckTupleInfo, MinArgs: 2, MaxArgs: 3, Fn: checkTupleInfo},
		{Name: abi.BuiltinCheckFuncInfo, MinArgs: 1, MaxArgs: 2, Fn: checkFuncInfo},
		{Name: abi.BuiltinAssert, MinArgs: 1, MaxArgs: -1, Fn: assertBuiltin},
	} {
		mustRegister(b)
	}
}

// Argument helpers: each names the argument in its error.

func argInt(a []Value, i int, what string) (int64, error) {
	if v, ok := a[i].Int(); ok {
		return v, nil
	}
	return 0, fmt.Errorf("%s must be an integer, got %s", what, a[i].kind)
}

func argTensor(a []Value, i int, what string) (*tensor.Tensor, error) {
	if t, ok := a[i].Tensor(); ok {
		return t, nil
	}
	return nil, fmt.Errorf("%s must be a Tensor, got %s", what, a[i].kind)
}

func argShape(a []Value, i int, what string) (*Shape, error) {
	if s, ok := a[i].Shape(); ok {
		return s, nil
	}
	return nil, fmt.Errorf("%s must be a Shape, got %s", what, a[i].kind)
}

// errCtx returns the optional trailing error-context string (VMShapeLower's
// "ErrorContext(fn=..., loc=..., ...)").
func errCtx(a []Value, i int) string {
	if i < len(a) {
		if s, ok := a[i].Str(); ok {
			return s
		}
	}
	return ""
}

func notDirect(*Machine, []Value) (Value, error) {
	return Value{}, errors.New("vm.builtin.call_tir_dyn cannot be called through a closure")
}

func invokeClosureCallback(*Machine, []Value) (Value, error) {
	return Value{}, errors.New("vm.builtin.invoke_closure cannot be called through a closure")
}

func readIfCond(_ *Machine, a []Value) (Value, error) {
	switch a[0].kind {
	case KindBool, KindInt:
		return Bool(a[0].i != 0), nil
	case KindTensor:
		t, _ := a[0].Tensor()
		if len(t.Shape) != 0 {
			return Value{}, fmt.Errorf("If condition must be a 0-d tensor, got shape %s", dimsString(t.Shape))
		}
		switch t.DType {
		case tensor.Float16, tensor.BFloat16, tensor.Float32, tensor.Float64:
			return Value{}, fmt.Errorf("If condition must be a bool or integer tensor, got %s", t.DType)
		}
		return Bool(t.Float64At(0) != 0), nil
	}
	return Value{}, fmt.Errorf("If condition must be a bool, an integer or a 0-d tensor, got %s", a[0].kind)
}

func makeTuple(_ *Machine, a []Value) (Value, error) {
	return TupleValue(append([]Value(nil), a...)...), nil
}

func tupleIndex(a []Value) (*Tuple, int, error) {
	t, ok := a[0].Tuple()
	if !ok {
		return nil, 0, fmt.Errorf("expected a Tuple, got %s", a[0].kind)
	}
	i, err := argInt(a, 1, "tuple index")
	if err != nil {
		return nil, 0, err
	}
	if i < 0 || i >= int64(len(t.Fields)) {
		return nil, 0, fmt.Errorf("tuple index %d out of range for a tuple of %d fields", i, len(t.Fields))
	}
	return t, int(i), nil
}

func tupleGetItem(_ *Machine, a []Value) (Value, error) {
	t, i, err := tupleIndex(a)
	if err != nil {
		return Value{}, err
	}
	return t.Fields[i], nil
}

func tupleResetItem(_ *Machine, a []Value) (Value, error) {
	t, i, err := tupleIndex(a)
	if err != nil {
		return Value{}, err
	}
	t.Fields[i] = Value{}
	return Value{}, nil
}

func makeClosure(_ *Machine, a []Value) (Value, error) {
	c, ok := a[0].closure()
	if !ok {
		return Value{}, fmt.Errorf("make_closure expects a function, got %s", a[0].kind)
	}
	bound := append(append([]Value(nil), c.Bound...), a[1:]...)
	return closureValue(&Closure{Func: c.Func, Bound: bound}), nil
}

// alloc_storage(%vm, size: Shape (bytes), device index, dtype hint, scope).
func allocStorage(m *Machine, a []Value) (Value, error) {
	s, err := argShape(a, 0, "storage size")
	if err != nil {
		return Value{}, err
	}
	if len(s.Dims) != 1 {
		return Value{}, fmt.Errorf("storage size must be a 1-d shape, got %s", dimsString(s.Dims))
	}
	n := s.Dims[0]
	if n < 0 || n > m.vm.opts.MaxAllocBytes {
		return Value{}, fmt.Errorf("cannot allocate %d bytes (limit %d)", n, m.vm.opts.MaxAllocBytes)
	}
	if dev, err := argInt(a, 1, "device index"); err != nil {
		return Value{}, err
	} else if dev != 0 && dev != -1 {
		return Value{}, fmt.Errorf("device index %d: this VM has one device (the CPU, index 0)", dev)
	}
	st, err := m.alloc.Alloc(n)
	if err != nil {
		return Value{}, err
	}
	if m.stats != nil {
		m.stats.storageBytes += n
		m.stats.storages++
	}
	if len(m.frames) > 0 {
		fr := &m.frames[len(m.frames)-1]
		fr.storages = append(fr.storages, st)
	}
	return StorageValue(st), nil
}

// alloc_tensor(storage, offset, shape, dtype): a view into the storage.
func allocTensor(m *Machine, a []Value) (Value, error) {
	st, ok := a[0].Storage()
	if !ok {
		return Value{}, fmt.Errorf("alloc_tensor expects a Storage, got %s", a[0].kind)
	}
	off, err := argInt(a, 1, "offset")
	if err != nil {
		return Value{}, err
	}
	s, err := argShape(a, 2, "shape")
	if err != nil {
		return Value{}, err
	}
	dt, ok := a[3].DType()
	if !ok || dt == tensor.Invalid {
		return Value{}, fmt.Errorf("alloc_tensor expects a dtype, got %s", a[3])
	}
	t := m.newTensorHeader()
	if err := tensor.ViewInto(t, st, off, dt, s.Dims); err != nil {
		return Value{}, fmt.Errorf("alloc_tensor: %w", err)
	}
	m.own(t)
	return TensorValue(t), nil
}

// alloc_shape_heap(%vm, size): the per-invocation int64 heap of VMShapeLower.
// The frame keeps its heap across calls, so steady state allocates nothing.
func allocShapeHeap(m *Machine, a []Value) (Value, error) {
	n, err := argInt(a, 0, "heap size")
	if err != nil {
		return Value{}, err
	}
	if n < 0 || n > 1<<20 {
		return Value{}, fmt.Errorf("shape heap of %d slots", n)
	}
	if len(m.frames) == 0 {
		return TensorValue(tensor.New(tensor.Int64, n)), nil
	}
	fr := &m.frames[len(m.frames)-1]
	if fr.heapInUse { // a second heap in one call: never share the first
		return TensorValue(tensor.New(tensor.Int64, n)), nil
	}
	if fr.heap == nil || fr.heap.Shape[0] != n {
		fr.heap = tensor.New(tensor.Int64, n)
	}
	fr.heapInUse = true
	clear(fr.heap.Bytes())
	return TensorValue(fr.heap), nil
}

func shapeOf(m *Machine, a []Value) (Value, error) {
	t, err := argTensor(a, 0, "shape_of argument")
	if err != nil {
		return Value{}, err
	}
	if m == nil {
		return ShapeValue(append([]int64(nil), t.Shape...)...), nil
	}
	return m.shapeValue(t.Shape), nil
}

func numElements(dims []int64) (int64, bool) {
	n := int64(1)
	for _, d := range dims {
		if d < 0 || (d > 0 && n > (1<<62)/d) {
			return 0, false
		}
		n *= d
	}
	return n, true
}

// reshape(tensor, shape): a view with the same elements, no copy.
func reshape(m *Machine, a []Value) (Value, error) {
	t, err := argTensor(a, 0, "reshape input")
	if err != nil {
		return Value{}, err
	}
	s, err := argShape(a, 1, "new shape")
	if err != nil {
		return Value{}, err
	}
	n, ok := numElements(s.Dims)
	if !ok || n != t.NumElements() {
		return Value{}, fmt.Errorf("cannot reshape a tensor of shape %s (%d elements) to %s", dimsString(t.Shape), t.NumElements(), dimsString(s.Dims))
	}
	if m == nil {
		v, err := tensor.View(t.Storage, t.Offset, t.DType, s.Dims)
		if err != nil {
			return Value{}, err
		}
		return TensorValue(v), nil
	}
	v := m.newTensorHeader()
	if err := tensor.ViewInto(v, t.Storage, t.Offset, t.DType, s.Dims); err != nil {
		return Value{}, err
	}
	m.own(v)
	return TensorValue(v), nil
}

func tensorToShape(_ *Machine, a []Value) (Value, error) {
	t, err := argTensor(a, 0, "tensor_to_shape input")
	if err != nil {
		return Value{}, err
	}
	if len(t.Shape) != 1 {
		return Value{}, fmt.Errorf("tensor_to_shape expects a 1-d tensor, got shape %s", dimsString(t.Shape))
	}
	switch t.DType {
	case tensor.Int8, tensor.Int16, tensor.Int32, tensor.Int64, tensor.Uint8, tensor.Uint16, tensor.Uint32, tensor.Uint64:
	default:
		return Value{}, fmt.Errorf("tensor_to_shape expects an integer tensor, got %s", t.DType)
	}
	dims := make([]int64, t.Shape[0])
	for i := range dims {
		dims[i] = int64(t.Float64At(i))
	}
	return ShapeValue(dims...), nil
}

func ensureZeroOffset(_ *Machine, a []Value) (Value, error) {
	t, err := argTensor(a, 0, "ensure_zero_offset input")
	if err != nil {
		return Value{}, err
	}
	if t.Offset == 0 {
		return a[0], nil
	}
	c := tensor.New(t.DType, append([]int64(nil), t.Shape...)...)
	copy(c.Bytes(), t.Bytes())
	return TensorValue(c), nil
}

// assert(cond, message...): R.assert_op lowered to a packed call.
func assertBuiltin(_ *Machine, a []Value) (Value, error) {
	cond, err := readIfCond(nil, a[:1])
	if err != nil {
		return Value{}, err
	}
	if cond.i != 0 {
		return Value{}, nil
	}
	msg := "Assertion Failed"
	if len(a) > 1 {
		if s, ok := a[1].Str(); ok {
			msg = s
		}
		var rest []any
		for _, v := range a[2:] {
			rest = append(rest, v)
		}
		if len(rest) > 0 {
			msg = fmt.Sprintf("%s %v", msg, rest)
		}
	}
	return Value{}, errors.New(msg)
}
