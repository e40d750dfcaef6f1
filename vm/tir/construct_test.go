package tir_test

import (
	"math/rand/v2"
	"os"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/phasec/phasec/syntax"
)

// TestTestdataKernels runs every PrimFunc of the repository's TIR examples.
func TestTestdataKernels(t *testing.T) {
	files := map[string]spec{
		"tir_axis_spatial_reduce.tvms":   nil,
		"tir_broadcast_add.tvms":         nil,
		"tir_control_flow_exprs.tvms":    nil,
		"tir_elementwise_add.tvms":       nil,
		"tir_layer_norm.tvms":            nil,
		"tir_loop_kinds.tvms":            nil,
		"tir_matmul_reduction.tvms":      nil,
		"tir_regions_inferred.tvms":      nil,
		"tir_scalar_params_ret.tvms":     {"n": 7, "m": -3},
		"tir_softmax.tvms":               nil,
		"tir_symbolic_match_buffer.tvms": {"A": []int64{3, 5}, "B": []int64{3}},
	}
	for file, s := range files {
		t.Run(file, func(t *testing.T) {
			src, err := os.ReadFile("../../testdata/" + file)
			require.NoError(t, err)
			mod, diags := syntax.Parse(file, src)
			require.False(t, diags.HasErrors(), "%v", diags)
			for _, name := range mod.Names() {
				f := mod.PrimFunc(name)
				if f == nil {
					continue
				}
				checkAll(t, f, makeArgs(t, f, s, rand.New(rand.NewPCG(1, 2))))
			}
		})
	}
}

// TestMLPKernelsSymbolicBatch runs the legalized MLP's kernels on batch
// sizes 0, 1 and odd ones.
func TestMLPKernelsSymbolicBatch(t *testing.T) {
	src, err := os.ReadFile("../../testdata/models/mlp_legalized.tvms")
	require.NoError(t, err)
	mod, diags := syntax.Parse("mlp", src)
	require.False(t, diags.HasErrors(), "%v", diags)
	for _, batch := range []int64{0, 1, 3} {
		for _, name := range mod.Names() {
			f := mod.PrimFunc(name)
			if f == nil {
				continue
			}
			s := withVars(f, nil, map[string]int64{"batch": batch})
			checkAll(t, f, makeArgs(t, f, s, rand.New(rand.NewPCG(3, uint64(batch)))))
		}
	}
}
