package kernel_test

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/phasec/phasec/syntax"
	"github.com/phasec/phasec/tensor"
	"github.com/phasec/phasec/vm/abi"
	"github.com/phasec/phasec/vm/kernel"
)

// TestParamBufferLayout runs testdata/tvm_forms/tir_buffer_strides_offset.tvms'
// scatter kernel, whose parameters declare offset_factor=1 (an elem_offset
// variable) and a stride variable as TVM's legalized scatter kernels do:
// they bind to the compact tensor's layout (offset 0, stride 1), on both
// the pattern and the general path.
func TestParamBufferLayout(t *testing.T) {
	f := loadFunc(t, "tvm_forms/tir_buffer_strides_offset.tvms", "scatter_add")
	for _, general := range []bool{false, true} {
		k, err := kernel.CompileWith(f, "scatter_add", kernel.Options{General: general})
		require.NoError(t, err)
		data, err := tensor.FromSlice([]float32{0, 1, 2, 3, 4, 5, 6, 7}, 8)
		require.NoError(t, err)
		idx, err := tensor.FromSlice([]int64{6, 1, 6, 0}, 4)
		require.NoError(t, err)
		upd, err := tensor.FromSlice([]float32{10, 20, 30, 40}, 4)
		require.NoError(t, err)
		out := tensor.New(tensor.Float32, 8)
		require.NoError(t, k.Call([]abi.Arg{{T: data}, {T: idx}, {T: upd}, {T: out}}))
		// out = data, then out[idx[j]] += upd[j], accumulated by hand.
		want := []float32{0 + 40, 1 + 20, 2, 3, 4, 5, 6 + 10 + 30, 7}
		assert.Equal(t, want, tensor.Data[float32](out), "general=%v", general)
	}
}

// TestAllocatedBufferLayout: an allocated buffer laid out column-major at
// element offset 3 computes as a compact one would (its layout is private
// to the kernel), and a parameter with constant strides equal to the
// tensor's compact strides is accepted.
func TestAllocatedBufferLayout(t *testing.T) {
	f := loadFunc(t, "tvm_forms/tir_buffer_strides_offset.tvms", "transpose_via")
	k, err := kernel.Compile(f, "transpose_via")
	require.NoError(t, err)
	require.Equal(t, "general", k.Pattern(), "a laid-out allocation runs on the general path")
	a, err := tensor.FromSlice([]float32{1, 2, 3, 4, 5, 6, 7, 8}, 4, 2)
	require.NoError(t, err)
	b := tensor.New(tensor.Float32, 2, 4)
	require.NoError(t, k.Call([]abi.Arg{{T: a}, {T: b}}))
	// B[j, i] = 10 * A[i, j] + 1.
	assert.Equal(t, []float32{11, 31, 51, 71, 21, 41, 61, 81}, tensor.Data[float32](b))
}

// TestParamStridesChecked: constant strides that are not the tensor's
// compact strides fail the call, as TVM's argument binder asserts.
func TestParamStridesChecked(t *testing.T) {
	const src = `# from tvm.script import tir as T
@T.prim_func
def wrong_strides(A: T.Buffer((4, 2), "float32", strides=(4, 1)), B: T.Buffer((4, 2), "float32")):
    for i, j in T.grid(4, 2):
        B[i, j] = A[i, j]
`
	mod, diags := syntax.Parse("wrong_strides.tvms", []byte(src))
	require.False(t, diags.HasErrors(), "%v", diags)
	k, err := kernel.Compile(mod.PrimFunc("wrong_strides"), "wrong_strides")
	require.NoError(t, err)
	a, b := tensor.New(tensor.Float32, 4, 2), tensor.New(tensor.Float32, 4, 2)
	err = k.Call([]abi.Arg{{T: a}, {T: b}})
	require.ErrorContains(t, err, "buffer A stride 0 is 2 (the tensor is a compact row-major array), expected 4 = 4")
}
