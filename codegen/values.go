package codegen

// The conversions between the reference evaluator's values (package op)
// and the VM's, for running a function on both and comparing the results
// (package semcheck, the evaluator comparison tests).

import (
	"fmt"

	"github.com/phasec/phasec/ir"
	"github.com/phasec/phasec/op"
	"github.com/phasec/phasec/tensor"
	"github.com/phasec/phasec/vm"
)

// ToVM converts an evaluator value to a VM argument.
func ToVM(v op.Value) (vm.Value, error) {
	switch v := v.(type) {
	case *tensor.Tensor:
		return vm.TensorValue(v), nil
	case op.Prim:
		switch {
		case v.DType.IsFloat():
			return vm.Float(v.F), nil
		case v.DType.IsBool():
			return vm.Bool(v.I != 0), nil
		}
		return vm.Int(v.I), nil
	case op.Shape:
		return vm.ShapeValue(append([]int64(nil), v...)...), nil
	case op.Str:
		return vm.String(string(v)), nil
	case op.Tuple:
		fields := make([]vm.Value, len(v))
		for i, f := range v {
			x, err := ToVM(f)
			if err != nil {
				return vm.Value{}, err
			}
			fields[i] = x
		}
		return vm.TupleValue(fields...), nil
	case nil:
		return vm.Null(), nil
	}
	return vm.Value{}, fmt.Errorf("no VM form for %s", op.KindOf(v))
}

// FromVM converts a VM result to an evaluator value; want (the reference
// result, may be nil) gives the dtypes of scalars, which the VM does not
// keep.
func FromVM(v vm.Value, want op.Value) (op.Value, error) {
	switch v.Kind() {
	case vm.KindTensor:
		t, _ := v.Tensor()
		return t, nil
	case vm.KindTuple:
		t, _ := v.Tuple()
		w, _ := want.(op.Tuple)
		out := make(op.Tuple, len(t.Fields))
		for i, f := range t.Fields {
			var wi op.Value
			if i < len(w) {
				wi = w[i]
			}
			x, err := FromVM(f, wi)
			if err != nil {
				return nil, err
			}
			out[i] = x
		}
		return out, nil
	case vm.KindShape:
		s, _ := v.Shape()
		return op.Shape(append([]int64(nil), s.Dims...)), nil
	case vm.KindInt, vm.KindBool, vm.KindFloat:
		p, _ := want.(op.Prim)
		i, _ := v.Int()
		f, _ := v.Float()
		return op.Prim{DType: p.DType, I: i, F: f}, nil
	case vm.KindString:
		s, _ := v.Str()
		return op.Str(s), nil
	case vm.KindDType:
		d, _ := v.DType()
		dt, err := ir.ParseDataType(d.String())
		return op.DTypeValue(dt), err
	case vm.KindNull:
		return nil, nil
	}
	return nil, fmt.Errorf("no evaluator form for a VM %s", v.Kind())
}
