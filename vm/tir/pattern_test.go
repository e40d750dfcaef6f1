package tir_test

import (
	"math/rand/v2"
	"os"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/phasec/phasec/syntax"
	"github.com/phasec/phasec/vm/tir"
)

// TestPatterns checks which dispatch each kind of kernel takes, that the
// fast path really runs, and (through checkAll) that it agrees with the
// general path and the reference.
func TestPatterns(t *testing.T) {
	cases := []struct {
		name, src, fn string
		vars          map[string]int64
		pattern       string
		fast          bool
	}{
		{"matmul", "tir_matmul_reduction.tvms", "matmul", nil, "matmul", true},
		{"broadcast", "tir_broadcast_add.tvms", "add", nil, "broadcast", true},
		{"elementwise", "tir_elementwise_add.tvms", "add", nil, "elementwise", true},
		{"softmax", "tir_softmax.tvms", "softmax", nil, "reduction+elementwise+reduction+elementwise", false},
		{"layer norm", "tir_layer_norm.tvms", "layer_norm", nil, "reduction+elementwise", false},
		{"row sum", "tir_symbolic_match_buffer.tvms", "row_sum", map[string]int64{"m": 5, "n": 3}, "reduction", false},
		{"mlp matmul", "models/mlp_legalized.tvms", "matmul", map[string]int64{"batch": 3}, "matmul", true},
		{"mlp bias", "models/mlp_legalized.tvms", "add", map[string]int64{"batch": 3}, "broadcast", true},
		{"mlp relu", "models/mlp_legalized.tvms", "relu", map[string]int64{"batch": 3}, "elementwise", true},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			src, err := os.ReadFile("../../testdata/" + tc.src)
			require.NoError(t, err)
			mod, diags := syntax.Parse(tc.src, src)
			require.False(t, diags.HasErrors(), "%v", diags)
			f := mod.PrimFunc(tc.fn)
			require.NotNil(t, f)
			before := tir.FastTaken()
			k := checkAll(t, f, makeArgs(t, f, withVars(f, nil, tc.vars), rand.New(rand.NewPCG(5, 6))))
			require.Equal(t, tc.pattern, k.Pattern())
			require.Equal(t, tc.fast, tir.FastTaken() > before, "fast path taken")
			g, err := tir.CompileWith(f, tc.fn, tir.Options{General: true})
			require.NoError(t, err)
			require.Equal(t, "general", g.Pattern())
		})
	}
}
