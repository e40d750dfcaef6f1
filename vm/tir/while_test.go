package tir_test

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/phasec/phasec/vm/tensor"
	"github.com/phasec/phasec/vm/tir"
)

// TestWhileLoop runs testdata/tvm_forms/tir_while.tvms (Euclid's algorithm
// in a TIR while loop) on hand-picked pairs whose gcds are known.
func TestWhileLoop(t *testing.T) {
	f := loadFunc(t, "tvm_forms/tir_while.tvms", "gcd")
	k, err := tir.Compile(f, "gcd")
	require.NoError(t, err)
	a, err := tensor.FromSlice([]int32{12, 17, 0, 100, 81, 7, 36, 1}, 8)
	require.NoError(t, err)
	b, err := tensor.FromSlice([]int32{18, 5, 9, 75, 27, 0, 48, 1}, 8)
	require.NoError(t, err)
	c := tensor.New(tensor.Int32, 8)
	require.NoError(t, k.Call([]tir.Arg{{T: a}, {T: b}, {T: c}}))
	want := []int32{6, 1, 9, 25, 27, 7, 12, 1}
	require.Equal(t, want, tensor.Data[int32](c))
	require.Equal(t, want, tensor.Data[int32](a), "A holds the gcd when the loop ends")
	require.Equal(t, make([]int32, 8), tensor.Data[int32](b), "the loop ends when B is 0")
}
