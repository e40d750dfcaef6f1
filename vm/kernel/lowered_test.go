package kernel_test

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/phasec/phasec/tensor"
	"github.com/phasec/phasec/vm/abi"
	"github.com/phasec/phasec/vm/kernel"
)

// TestWhileLoop runs testdata/tvm_forms/tir_while.tvms (Euclid's algorithm
// in a TIR while loop) on hand-picked pairs whose gcds are known.
func TestWhileLoop(t *testing.T) {
	f := loadFunc(t, "tvm_forms/tir_while.tvms", "gcd")
	k, err := kernel.Compile(f, "gcd")
	require.NoError(t, err)
	a, err := tensor.FromSlice([]int32{12, 17, 0, 100, 81, 7, 36, 1}, 8)
	require.NoError(t, err)
	b, err := tensor.FromSlice([]int32{18, 5, 9, 75, 27, 0, 48, 1}, 8)
	require.NoError(t, err)
	c := tensor.New(tensor.Int32, 8)
	require.NoError(t, k.Call([]abi.Arg{{T: a}, {T: b}, {T: c}}))
	want := []int32{6, 1, 9, 25, 27, 7, 12, 1}
	require.Equal(t, want, tensor.Data[int32](c))
	require.Equal(t, want, tensor.Data[int32](a), "A holds the gcd when the loop ends")
	require.Equal(t, make([]int32, 8), tensor.Data[int32](b), "the loop ends when B is 0")
}

// TestDeclBufferLocal runs testdata/tvm_forms/tir_decl_buffer_local.tvms
// (a T.decl_buffer accumulator per row) on A = 0..31: row i sums
// 8i..8i+7, that is 64i + 28.
func TestDeclBufferLocal(t *testing.T) {
	f := loadFunc(t, "tvm_forms/tir_decl_buffer_local.tvms", "row_sums")
	k, err := kernel.Compile(f, "row_sums")
	require.NoError(t, err)
	vals := make([]float32, 32)
	for i := range vals {
		vals[i] = float32(i)
	}
	a, err := tensor.FromSlice(vals, 4, 8)
	require.NoError(t, err)
	b := tensor.New(tensor.Float32, 4)
	require.NoError(t, k.Call([]abi.Arg{{T: a}, {T: b}}))
	require.InDeltaSlice(t, []float32{28, 92, 156, 220}, tensor.Data[float32](b), 1e-5)
}

// TestAllocateReported: lowered memory forms the kernel compiler does not
// run are reported at the statement, not run or panicked on.
func TestAllocateReported(t *testing.T) {
	f := loadFunc(t, "tvm_forms/tir_allocate.tvms", "f")
	_, err := kernel.Compile(f, "f")
	require.ErrorContains(t, err, "tir_allocate.tvms:15:9: PrimFunc f: T.allocate(...) whose memory is viewed otherwise")
}
