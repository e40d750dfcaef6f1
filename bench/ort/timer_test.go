package main

import (
	"math"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/phasec/phasec/syntax"
	"github.com/phasec/phasec/tensor"
	"github.com/phasec/phasec/vm/abi"
)

const kernels = `# from tvm.script import ir as I
# from tvm.script import tir as T

@I.ir_module
class Module:
    @T.prim_func(private=True)
    def add(A: T.Buffer((T.int64(4),), "float32"), B: T.Buffer((T.int64(4),), "float32"), C: T.Buffer((T.int64(4),), "float32")):
        for i in range(T.int64(4)):
            with T.block("add"):
                vi = T.axis.remap("S", [i])
                C[vi] = A[vi] + B[vi]

    @T.prim_func(private=True)
    def relu_inplace(A: T.Buffer((T.int64(4),), "float32")):
        for i in range(T.int64(4)):
            with T.block("relu"):
                vi = T.axis.remap("S", [i])
                A[vi] = T.max(A[vi], T.float32(0))

    @T.prim_func(private=True)
    def two_outputs(A: T.Buffer((T.int64(4),), "float32"), n: T.int64, B: T.Buffer((T.int64(4),), "float32"), C: T.Buffer((T.int64(4),), "float32")):
        for i in range(T.int64(4)):
            with T.block("both"):
                vi = T.axis.remap("S", [i])
                B[vi] = A[vi]
                C[vi] = A[vi] * T.float32(2)
`

func TestWrittenParams(t *testing.T) {
	mod, diags := syntax.Parse("kernels.tvms", []byte(kernels))
	require.Empty(t, diags)
	for name, want := range map[string][]int{"add": {2}, "relu_inplace": {0}, "two_outputs": {2, 3}} {
		f := mod.PrimFunc(name)
		require.NotNil(t, f, name)
		assert.Equal(t, want, writtenParams(f), name)
	}
}

type nopKernel struct{ calls int }

func (k *nopKernel) Call([]abi.Arg) error { k.calls++; return nil }

func TestCountingKernel(t *testing.T) {
	var c counter
	inner := &nopKernel{}
	k := &countingKernel{inner: inner, outs: []int{1, 3}, c: &c}
	args := []abi.Arg{{T: tensor.New(tensor.Float32, 100)}, {T: tensor.New(tensor.Float32, 3, 5)}, {I: 7}, {T: tensor.New(tensor.Float32, 2)}}
	require.NoError(t, k.Call(args))
	require.NoError(t, k.Call(args))
	assert.Equal(t, 2, inner.calls)
	assert.Equal(t, int64(2), c.launches.Load())
	assert.Equal(t, int64(2*(15+2)*4), c.written.Load(), "the written buffers' bytes, not the input's")
}

func vec(xs ...float64) *tensor.Tensor {
	t := tensor.New(tensor.Float32, int64(len(xs)))
	for i, x := range xs {
		t.SetFloat64(i, x)
	}
	return t
}

func TestMaxRelErr(t *testing.T) {
	e, err := maxRelErr(vec(1, 2.5, -3), vec(1, 2, -4))
	require.NoError(t, err)
	assert.InDelta(t, 1.0/4, e, 1e-7, "max|d| = 1 over max|want| = 4")

	e, err = maxRelErr(vec(0, 0), vec(0, 0))
	require.NoError(t, err)
	assert.Zero(t, e)

	e, err = maxRelErr(vec(math.NaN(), 1), vec(1, 1))
	require.NoError(t, err)
	assert.True(t, math.IsInf(e, 1), "a NaN where the reference has a number is a mismatch")

	_, err = maxRelErr(vec(1, 2), vec(1, 2, 3))
	assert.ErrorContains(t, err, "shape")
}

func TestMedian(t *testing.T) {
	assert.Equal(t, 2.0, median([]time.Duration{3 * time.Millisecond, time.Millisecond, 2 * time.Millisecond}))
	assert.Equal(t, 2.5, median([]time.Duration{4 * time.Millisecond, time.Millisecond, 2 * time.Millisecond, 3 * time.Millisecond}))
}
