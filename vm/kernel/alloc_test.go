package kernel_test

import (
	"fmt"
	"math/rand/v2"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/phasec/phasec/vm/kernel"
)

// TestCallDoesNotAllocate: after a warm-up call, Kernel.Call allocates
// nothing on the scalar, vector, parallel and dispatched paths.
func TestCallDoesNotAllocate(t *testing.T) {
	if raceEnabled {
		t.Skip("the race detector allocates")
	}
	kernels := []struct {
		name, src, fn string
		vars          map[string]int64
		opts          kernel.Options
	}{
		{"matmul dispatch", "tir_matmul_reduction.tvms", "matmul", nil, kernel.Options{}},
		{"matmul vector", "tir_matmul_reduction.tvms", "matmul", nil, kernel.Options{General: true}},
		{"softmax", "tir_softmax.tvms", "softmax", nil, kernel.Options{}},
		{"control flow scalar", "tir_control_flow_exprs.tvms", "mix", nil, kernel.Options{}},
		{"loop kinds parallel", "tir_loop_kinds.tvms", "scale", nil, kernel.Options{}},
		{"layer norm", "tir_layer_norm.tvms", "layer_norm", nil, kernel.Options{}},
		{"permute", "tir_bert_fused.tvms", "fused_reshape_permute_dims_permute_dims1", nil, kernel.Options{}},
		{"concat", "tir_data_movement.tvms", "concat1", nil, kernel.Options{}},
		{"flat chain", "tir_resnet_fused.tvms", "fused_add_relu1", nil, kernel.Options{}},
		{"log softmax", "tir_row_bench.tvms", "log_softmax", nil, kernel.Options{}},
		{"rms norm", "tir_row_bench.tvms", "rms_norm", nil, kernel.Options{}},
	}
	for _, kc := range kernels {
		t.Run(kc.name, func(t *testing.T) {
			f := loadFunc(t, kc.src, kc.fn)
			k, err := kernel.CompileWith(f, kc.fn, kc.opts)
			require.NoError(t, err)
			args := makeArgs(t, f, withVars(f, nil, kc.vars), rand.New(rand.NewPCG(1, 1)))
			require.NoError(t, k.Call(args))
			allocs := testing.AllocsPerRun(20, func() { _ = k.Call(args) })
			require.Zero(t, allocs)
		})
	}
	// A large broadcast add splits across the worker pool.
	f := parseFunc(t, fmt.Sprintf(broadcastAddSrc, 1024), "add")
	k, err := kernel.Compile(f, "add")
	require.NoError(t, err)
	args := makeArgs(t, f, withVars(f, nil, map[string]int64{"n": 1024}), rand.New(rand.NewPCG(1, 1)))
	require.NoError(t, k.Call(args))
	require.Zero(t, testing.AllocsPerRun(20, func() { _ = k.Call(args) }))
}
