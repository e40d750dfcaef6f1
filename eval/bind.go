package eval

import (
	"fmt"

	"github.com/phasec/phasec/ir"
	"github.com/phasec/phasec/op"
	"github.com/phasec/phasec/tensor"
	"github.com/phasec/phasec/vm/abi"
)

// Matching values against struct info: a bare symbolic variable not yet
// bound is bound to the value's dimension; every other dimension (an
// expression, or a variable bound earlier) is checked once all variables
// of the parameter list or match_cast are bound, as TVM's
// MatchStructInfo does.

// deferredCheck is a dimension to verify after binding.
type deferredCheck struct {
	what string
	expr ir.PrimExpr
	got  int64
}

func (f *frame) check(ds []deferredCheck) error {
	for _, d := range ds {
		want, err := f.prim(d.expr)
		if err != nil {
			return fmt.Errorf("%s: %v", d.what, err)
		}
		if want.i != d.got {
			return fmt.Errorf("%s is %d, expected %s = %d", d.what, d.got, ir.FormatPrim(d.expr, nil), want.i)
		}
	}
	return nil
}

// bindDim binds or defers one dimension.
func (f *frame) bindDim(e ir.PrimExpr, got int64, what string) []deferredCheck {
	if v, ok := e.(*ir.PrimVar); ok {
		if _, bound := f.symbols()[v]; !bound {
			f.sym[v] = scalar{i: got}
			return nil
		}
	}
	return []deferredCheck{{what: what, expr: e, got: got}}
}

// bind matches v against s, binding symbolic variables in f.
func (m *Machine) bind(f *frame, v op.Value, s ir.StructInfo, what string) ([]deferredCheck, error) {
	switch s := s.(type) {
	case nil, *ir.ObjectInfo:
		return nil, nil
	case *ir.TensorInfo:
		t, ok := v.(*tensor.Tensor)
		if !ok {
			return nil, fmt.Errorf("%s must be a tensor, got %s", what, op.KindOf(v))
		}
		if got := op.IRDType(t.DType); !s.DType.IsVoid() && got != s.DType {
			return nil, fmt.Errorf("%s has dtype %s, expected %s", what, got, s.DType)
		}
		if s.NDim >= 0 && len(t.Shape) != s.NDim {
			return nil, fmt.Errorf("%s has rank %d, expected %d", what, len(t.Shape), s.NDim)
		}
		if sv, ok := s.Shape.(*ir.Var); ok {
			if known, bound := f.lookup(sv); bound {
				if ks, ok := known.(op.Shape); ok && !sameShape(ks, t.Shape) {
					return nil, fmt.Errorf("%s has shape %v, expected %s = %v", what, t.Shape, sv.Name, []int64(ks))
				}
			}
		}
		dims, ok := s.Dims()
		if !ok {
			return nil, nil
		}
		var ds []deferredCheck
		for i, d := range dims {
			ds = append(ds, f.bindDim(d, t.Shape[i], fmt.Sprintf("%s dimension %d", what, i))...)
		}
		return ds, nil
	case *ir.ShapeInfo:
		sh, ok := v.(op.Shape)
		if !ok {
			return nil, fmt.Errorf("%s must be a shape, got %s", what, op.KindOf(v))
		}
		if s.NDim >= 0 && len(sh) != s.NDim {
			return nil, fmt.Errorf("%s has %d dimensions, expected %d", what, len(sh), s.NDim)
		}
		var ds []deferredCheck
		for i, d := range s.Values {
			ds = append(ds, f.bindDim(d, sh[i], fmt.Sprintf("%s value %d", what, i))...)
		}
		return ds, nil
	case *ir.PrimInfo:
		p, ok := v.(op.Prim)
		if !ok {
			return nil, fmt.Errorf("%s must be a %s scalar, got %s", what, s.DType, op.KindOf(v))
		}
		if !s.DType.IsVoid() && p.DType != s.DType {
			return nil, fmt.Errorf("%s has dtype %s, expected %s", what, p.DType, s.DType)
		}
		if s.Value != nil && !p.DType.IsFloat() {
			return f.bindDim(s.Value, p.I, what), nil
		}
		return nil, nil
	case *ir.TupleInfo:
		t, ok := v.(op.Tuple)
		if !ok {
			return nil, fmt.Errorf("%s must be a tuple, got %s", what, op.KindOf(v))
		}
		if len(t) != len(s.Fields) {
			return nil, fmt.Errorf("%s has %d fields, expected %d", what, len(t), len(s.Fields))
		}
		var ds []deferredCheck
		for i, fs := range s.Fields {
			d, err := m.bind(f, t[i], fs, fmt.Sprintf("%s field %d", what, i))
			if err != nil {
				return nil, err
			}
			ds = append(ds, d...)
		}
		return ds, nil
	case *ir.FuncInfo:
		switch v.(type) {
		case *Closure, *PrimFuncRef, PackedRef:
			return nil, nil
		}
		return nil, fmt.Errorf("%s must be a function, got %s", what, op.KindOf(v))
	}
	return nil, nil
}

func sameShape(a, b []int64) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}

// registerBuiltins installs the VM builtins a module may call by name
// before the build phase lowers ops to them.
func registerBuiltins(m *Machine) {
	m.Register(abi.BuiltinReshape, func(args []op.Value) (op.Value, error) {
		if len(args) != 2 {
			return nil, fmt.Errorf("%s takes 2 arguments", abi.BuiltinReshape)
		}
		return op.EvalReshape(args[0], args[1])
	})
	m.Register(abi.BuiltinShapeOf, func(args []op.Value) (op.Value, error) {
		t, ok := args[0].(*tensor.Tensor)
		if !ok {
			return nil, fmt.Errorf("%s: %s is not a tensor", abi.BuiltinShapeOf, op.KindOf(args[0]))
		}
		return op.Shape(append([]int64{}, t.Shape...)), nil
	})
	// DecomposeOps turns R.tensor_to_shape into a call_pure_packed of it.
	m.Register(abi.BuiltinTensorToShape, func(args []op.Value) (op.Value, error) {
		if len(args) != 1 {
			return nil, fmt.Errorf("%s takes 1 argument", abi.BuiltinTensorToShape)
		}
		t, ok := args[0].(*tensor.Tensor)
		if !ok || len(t.Shape) != 1 || !op.IRDType(t.DType).IsInteger() {
			return nil, fmt.Errorf("%s expects a 1-d integer tensor, got %s", abi.BuiltinTensorToShape, op.KindOf(args[0]))
		}
		shape := make(op.Shape, t.Shape[0])
		for i := range shape {
			shape[i] = int64(t.Float64At(i))
		}
		return shape, nil
	})
}
