package op

import (
	"fmt"

	"github.com/phasec/phasec/ir"
	"github.com/phasec/phasec/tensor"
)

// Evaluation: what each op computes, for the reference evaluator (package
// eval). Every op's semantics are written once, next to its inference, for
// obvious correctness rather than speed: elements are read into exact
// float64 / int64 arrays, computed in double precision (integers in 64
// bits) and rounded or wrapped once to the output dtype.

// EvalFunc computes the value of call from its evaluated arguments (in
// Call.Args order); attributes are read from call.Attrs. Errors name the op
// (R.<op>: ...) and, for bad arguments, the parameter and dimension.
type EvalFunc func(call *ir.Call, args []Value) (Value, error)

// argArray reads argument i as an array (a tensor, or a scalar as rank 0).
func argArray(op *ir.Op, args []Value, i int) (*array, error) {
	if i >= len(args) {
		return nil, opErrorf(op, "missing argument %s", paramName(op, i))
	}
	a, err := toArray(args[i])
	if err != nil {
		return nil, opErrorf(op, "%s: %v", paramName(op, i), err)
	}
	return a, nil
}

// argArrays reads the first n arguments as arrays (argArray each).
func argArrays(op *ir.Op, args []Value, n int) ([]*array, error) {
	out := make([]*array, n)
	for i := range out {
		a, err := argArray(op, args, i)
		if err != nil {
			return nil, err
		}
		out[i] = a
	}
	return out, nil
}

// paramName names argument position i by the schema.
func paramName(op *ir.Op, i int) string {
	if p, ok := op.ArgParam(i); ok {
		return p.Name
	}
	return fmt.Sprintf("argument %d", i)
}

// argShape reads argument i as a shape value.
func argShape(op *ir.Op, args []Value, i int) ([]int64, error) {
	if i < len(args) {
		if s, ok := args[i].(Shape); ok {
			known := make([]int64, 0, len(s))
			for _, d := range s {
				if d >= 0 { // -1 (reshape's inferred dimension) and errors are the op's to judge
					known = append(known, d)
				}
			}
			if err := CheckSize(known); err != nil {
				return nil, opErrorf(op, "%s: %v", paramName(op, i), err)
			}
			return s, nil
		}
		return nil, opErrorf(op, "%s must be a shape, got %s", paramName(op, i), KindOf(args[i]))
	}
	return nil, opErrorf(op, "missing argument %s", paramName(op, i))
}

// result converts a computed array to the op's result value: a tensor, or
// a scalar when every operand was a scalar (binary ops on R.Prim).
func result(a *array, scalar bool) (Value, error) {
	if scalar {
		return a.prim(), nil
	}
	return a.tensor()
}

// isScalarArg reports whether v is an R.Prim value.
func isScalarArg(v Value) bool { _, ok := v.(Prim); return ok }

// broadcastShape is numpy's broadcast of two shapes.
func broadcastShape(op *ir.Op, a, b []int64) ([]int64, error) {
	n := max(len(a), len(b))
	out := make([]int64, n)
	for i := 0; i < n; i++ {
		da, db := int64(1), int64(1)
		if j := i - (n - len(a)); j >= 0 {
			da = a[j]
		}
		if j := i - (n - len(b)); j >= 0 {
			db = b[j]
		}
		switch {
		case da == db || db == 1:
			out[i] = da
		case da == 1:
			out[i] = db
		default:
			return nil, opErrorf(op, "cannot broadcast dimension %d: %d against %d", i, da, db)
		}
	}
	return out, nil
}

// broadcaster maps an output multi-index to an input's flat index.
type broadcaster struct {
	shape, strides []int64
}

func newBroadcaster(in []int64) broadcaster { return broadcaster{in, strides(in)} }

// index returns the flat index of the element that output index idx reads
// (the trailing len(shape) dimensions; extent-1 dimensions read index 0).
func (b broadcaster) index(idx []int64) int64 {
	off := len(idx) - len(b.shape)
	k := int64(0)
	for i, d := range b.shape {
		if d != 1 {
			k += idx[off+i] * b.strides[i]
		}
	}
	return k
}

// elementwise computes out[idx] = f(inputs at idx) over the broadcast of
// the inputs' shapes; f reads with the given flat indices.
func elementwise(op *ir.Op, outDT ir.DataType, ins []*array, f func(out *array, k int64, ks []int64)) (*array, error) {
	shape := []int64{}
	for _, a := range ins {
		var err error
		if shape, err = broadcastShape(op, shape, a.shape); err != nil {
			return nil, err
		}
	}
	if err := CheckSize(shape); err != nil {
		return nil, opErrorf(op, "%v", err)
	}
	out := newArray(outDT, shape)
	bs := make([]broadcaster, len(ins))
	for i, a := range ins {
		bs[i] = newBroadcaster(a.shape)
	}
	idx := make([]int64, len(shape))
	ks := make([]int64, len(ins))
	n := out.size()
	for k := int64(0); k < n; k++ {
		unravel(k, shape, idx)
		for i := range bs {
			ks[i] = bs[i].index(idx)
		}
		f(out, k, ks)
	}
	return out, nil
}

// normAxisEval resolves a possibly negative axis against rank ndim.
func normAxisEval(op *ir.Op, axis int64, ndim int) (int, error) {
	if axis < -int64(ndim) || axis >= int64(ndim) {
		return 0, opErrorf(op, "axis %d is out of range for a tensor of rank %d", axis, ndim)
	}
	if axis < 0 {
		axis += int64(ndim)
	}
	return int(axis), nil
}

// tensorOf is a helper for ops that produce a tensor directly.
func tensorOf(a *array) (Value, error) { return a.tensor() }

// checkTensorDType errors unless t has dtype dt (for evaluating against
// declared struct info).
func checkTensorDType(t *tensor.Tensor, dt ir.DataType) error {
	if got := IRDType(t.DType); got != dt {
		return fmt.Errorf("dtype %s, expected %s", got, dt)
	}
	return nil
}

// axisAttr reads the "axis" attribute and resolves it against rank ndim
// (a negative axis counts from the end).
func axisAttr(op *ir.Op, call *ir.Call, ndim int) (int, error) {
	v, _, err := opAttrInt(op, call, "axis")
	if err != nil {
		return 0, err
	}
	return normAxisEval(op, v, ndim)
}
