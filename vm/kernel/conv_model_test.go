package kernel_test

import (
	"context"
	"math/rand/v2"
	"os"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/phasec/phasec/barrier"
	"github.com/phasec/phasec/codegen"
	"github.com/phasec/phasec/eval"
	"github.com/phasec/phasec/ir"
	"github.com/phasec/phasec/op"
	"github.com/phasec/phasec/syntax"
	"github.com/phasec/phasec/tensor"
	"github.com/phasec/phasec/vm"
	"github.com/phasec/phasec/vm/kernel"
	"github.com/phasec/phasec/vm/loader"
)

// cnnInputs are random inputs of testdata/models/cnn/cnn_small.tvms: the
// image batch and the weights (scaled so activations stay near 1).
func cnnInputs(batch int64, seed uint64) []*tensor.Tensor {
	rng := rand.New(rand.NewPCG(seed, 11))
	scaled := func(scale float64, shape ...int64) *tensor.Tensor {
		t := randomTensor(shape, rng)
		for i, v := range tensor.Data[float32](t) {
			tensor.Data[float32](t)[i] = v * float32(scale)
		}
		return t
	}
	return []*tensor.Tensor{
		scaled(1, batch, 3, 32, 32),
		scaled(0.2, 32, 3, 3, 3), scaled(0.1, 1, 32, 1, 1),
		scaled(0.06, 32, 32, 3, 3), scaled(0.1, 1, 32, 1, 1),
		scaled(0.06, 64, 32, 3, 3), scaled(0.1, 1, 64, 1, 1),
		scaled(0.1, 64, 10), scaled(0.1, 10),
	}
}

func loadCNN(t testing.TB) *ir.Module {
	t.Helper()
	src, err := os.ReadFile("../../testdata/models/cnn/cnn_small.tvms")
	require.NoError(t, err)
	mod, diags := syntax.Parse("cnn_small.tvms", src)
	require.False(t, diags.HasErrors(), "%v", diags)
	return mod
}

// buildCNN takes the CNN through the barriers, code generation and the
// binary format, as `phasec run` does.
func buildCNN(t testing.TB) *vm.VM {
	t.Helper()
	mod := loadCNN(t)
	var err error
	for _, b := range []func(*ir.Module) (*ir.Module, error){barrier.Canonicalize, barrier.Lower, barrier.Build} {
		mod, err = b(mod)
		require.NoError(t, err)
	}
	exe, diags := codegen.Build(mod)
	require.Empty(t, diags)
	machine, err := loader.Load(exe.Marshal(), vm.Options{})
	require.NoError(t, err)
	return machine
}

// TestCNNModel runs the small CNN through the VM and checks it against
// the reference evaluator, and that every kernel of it dispatches to a
// fast path (no convolution, pool or bias left on the general path).
func TestCNNModel(t *testing.T) {
	mod := loadCNN(t)
	inputs := cnnInputs(3, 1)
	args := make([]op.Value, len(inputs))
	vmArgs := make([]any, len(inputs))
	for i, x := range inputs {
		args[i], vmArgs[i] = x, x
	}
	canon, err := barrier.Canonicalize(mod)
	require.NoError(t, err)
	want, err := eval.New(canon).Call("main", args...)
	require.NoError(t, err)
	out, err := buildCNN(t).Run(context.Background(), "main", vmArgs...)
	require.NoError(t, err)
	wt := want.(*tensor.Tensor)
	got, ok := out.Tensor()
	require.True(t, ok)
	compareTensors(t, wt, got, max(maxAbs(wt), 1), "cnn_small")

	low, err := barrier.Lower(canon)
	require.NoError(t, err)
	for name, bf := range low.Functions() {
		f, ok := bf.(*ir.PrimFunc)
		if !ok {
			continue
		}
		k, err := kernel.Compile(f, name)
		require.NoError(t, err)
		switch {
		case strings.HasPrefix(name, "conv2d"):
			require.Equal(t, "conv2d_padded", k.Pattern(), name)
		case strings.HasPrefix(name, "max_pool2d"):
			require.Equal(t, "max_pool", k.Pattern(), name)
		case strings.HasPrefix(name, "adaptive_avg_pool2d"):
			require.Equal(t, "adaptive_pool+avg_divide", k.Pattern(), name)
		case strings.HasPrefix(name, "add") && len(f.Params) == 3 && len(f.BufferMap[f.Params[0]].Shape) == 4:
			require.Equal(t, "channel_broadcast", k.Pattern(), name)
		}
	}
}
