package loader_test

import (
	"context"
	"os"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/phasec/phasec/codegen"
	"github.com/phasec/phasec/syntax"
	"github.com/phasec/phasec/tensor"
	"github.com/phasec/phasec/vm"
	"github.com/phasec/phasec/vm/loader"
)

// build compiles codegen's static test module (phase build, one exp
// kernel) into an executable.
func build(t *testing.T) *vm.Executable {
	t.Helper()
	path := "../../codegen/testdata/static_build.tvms"
	src, err := os.ReadFile(path)
	require.NoError(t, err)
	mod, diags := syntax.Parse(path, src)
	require.False(t, diags.HasErrors(), "%v", diags)
	exe, diags := codegen.Build(mod)
	require.Empty(t, diags)
	require.NotEmpty(t, exe.Kernels)
	return exe
}

func TestLoadRunsTheEncodedKernels(t *testing.T) {
	machine, err := loader.Load(build(t).Marshal(), vm.Options{})
	require.NoError(t, err)
	x := tensor.New(tensor.Float32, 2, 4)
	out, err := machine.Run(context.Background(), "main", x)
	require.NoError(t, err)
	tup, ok := out.Tuple()
	require.True(t, ok, "main returns a tuple, got %s", out)
	y, ok := tup.Fields[0].Tensor()
	require.True(t, ok)
	for i, v := range tensor.Data[float32](y) {
		assert.InDelta(t, 1.0, float64(v), 1e-6, "exp(0) at %d", i)
	}
}

// TestLinkChecksKernels: what the executable records about a kernel must
// be what its TIR compiles to; corrupt TIR is an error naming the kernel.
func TestLinkChecksKernels(t *testing.T) {
	for _, c := range []struct {
		name   string
		change func(k *vm.Kernel)
		want   string
	}{
		{"corrupt TIR", func(k *vm.Kernel) { k.TIR = append([]byte{99}, k.TIR[1:]...) },
			"kernel exp: bad encoded TIR at byte 0: encoding version 99, this build reads version 1"},
		{"truncated TIR", func(k *vm.Kernel) { k.TIR = k.TIR[:len(k.TIR)/2] },
			"kernel exp: bad encoded TIR"},
		{"signature", func(k *vm.Kernel) { k.Params[1].DType = "float16" },
			"kernel exp: parameter 1: compiled as buffer float32 rank 2, the executable records buffer float16 rank 2"},
		{"return type", func(k *vm.Kernel) { k.Ret = "int64" },
			`kernel exp returns "", the executable records "int64"`},
	} {
		t.Run(c.name, func(t *testing.T) {
			exe := build(t)
			ki := exe.KernelIndex("exp")
			require.GreaterOrEqual(t, ki, 0)
			c.change(&exe.Kernels[ki])
			back, err := vm.Unmarshal(exe.Marshal())
			require.NoError(t, err, "the change keeps the executable valid")
			_, err = loader.Link(back, vm.Options{})
			require.Error(t, err)
			assert.Contains(t, err.Error(), c.want)
		})
	}
}
