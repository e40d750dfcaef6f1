package op

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/phasec/phasec/ir"
)

// The checkpoint markers infer their argument's struct info and reject an
// argument that is not a variable, as TVM's InferStructInfoStartCheckpoint
// (tests/python/relax/test_op_grad.py: a tuple or a constant is an error).
func TestInferCheckpointMarkers(t *testing.T) {
	x := tensorVar("x", ir.Float32, 3, symN)
	pair := ir.NewVar("p", ir.NewTupleInfo(tinfo(ir.Float32, 2), tinfo(ir.Int64)))
	for _, o := range []*ir.Op{StartCheckpoint, EndCheckpoint} {
		runInferCases(t, nil, []inferCase{
			{o.Name + " tensor", ir.NewCall(o, x), tinfo(ir.Float32, 3, symN), ""},
			{o.Name + " tuple var", ir.NewCall(o, pair), ir.NewTupleInfo(tinfo(ir.Float32, 2), tinfo(ir.Int64)), ""},
			{o.Name + " tuple", ir.NewCall(o, ir.NewTuple(x, x)), nil, "the input must be a variable, got a tuple"},
			{o.Name + " constant", ir.NewCall(o, &ir.Constant{}), nil, "the input must be a variable, got a constant"},
			{o.Name + " arity", ir.NewCall(o, x, x), nil, "argument"},
		})
	}
}

// The markers compute their argument, and legalize into it (no kernel).
func TestCheckpointMarkersAreIdentities(t *testing.T) {
	x := tens(t, ir.Float32, []int64{2}, 1.5, -2)
	for _, o := range []*ir.Op{StartCheckpoint, EndCheckpoint} {
		got, err := evalCall(t, o, nil, x)
		require.NoError(t, err)
		require.Same(t, x, got, o.Name)

		v := tensorVar("x", ir.Float32, 2)
		call := ir.NewCall(o, v)
		k := NewKernel(call)
		d, _ := DefOf(o)
		require.NoError(t, d.Legalize(k, call))
		require.Same(t, v, k.Forward, "%s legalizes into its argument", o.Name)
		require.Equal(t, ir.PatternOpaque, o.Pattern)
	}
}
