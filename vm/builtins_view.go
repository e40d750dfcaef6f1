package vm

import (
	"fmt"

	"github.com/phasec/phasec/tensor"
	"github.com/phasec/phasec/vm/abi"
)

// runtime.TVMArrayCreateView(data, shape, dtype, relative_byte_offset): the
// packed function LowerRuntimeBuiltin lowers R.memory.view to (TVM's
// src/runtime/ndarray.cc). The view shares data's storage.
func init() {
	mustRegister(&Builtin{Name: abi.BuiltinCreateView, MinArgs: 4, MaxArgs: 4, Fn: createView})
}

func createView(m *Machine, a []Value) (Value, error) {
	t, err := argTensor(a, 0, "view input")
	if err != nil {
		return Value{}, err
	}
	s, err := argShape(a, 1, "view shape")
	if err != nil {
		return Value{}, err
	}
	dt, ok := a[2].DType()
	if !ok || dt == tensor.Invalid {
		return Value{}, fmt.Errorf("view expects a dtype, got %s", a[2])
	}
	off, err := argInt(a, 3, "relative_byte_offset")
	if err != nil {
		return Value{}, err
	}
	if m == nil {
		v, err := tensor.CreateView(t, s.Dims, dt, off)
		if err != nil {
			return Value{}, err
		}
		return TensorValue(v), nil
	}
	// A recycled header, as reshape's: no allocation in the steady state.
	v := m.newTensorHeader()
	if err := tensor.CreateViewInto(v, t, s.Dims, dt, off); err != nil {
		return Value{}, err
	}
	m.own(v)
	return TensorValue(v), nil
}
