package transform_test

import (
	"fmt"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/phasec/phasec/ir"
	"github.com/phasec/phasec/syntax"
	"github.com/phasec/phasec/transform"
)

// linearChainSource is a dataflow block of n matmul+add+relu layers.
func linearChainSource(n int) string {
	var b strings.Builder
	b.WriteString("@I.ir_module\nclass Module:\n    @R.function\n")
	b.WriteString(`    def main(x: R.Tensor((4, 8), dtype="float32"), w: R.Tensor((8, 8), dtype="float32"), c: R.Tensor((8,), dtype="float32")) -> R.Tensor((4, 8), dtype="float32"):` + "\n")
	b.WriteString("        with R.dataflow():\n")
	prev := "x"
	for i := range n {
		fmt.Fprintf(&b, "            m%d = R.matmul(%s, w)\n            a%d = R.add(m%d, c)\n            r%d = R.nn.relu(a%d)\n", i, prev, i, i, i, i)
		prev = fmt.Sprintf("r%d", i)
	}
	fmt.Fprintf(&b, "            R.output(%s)\n        return %s\n", prev, prev)
	return b.String()
}

// BenchmarkFuseOpsByPattern: the pass is linear in the number of bindings
// (layers of three; see measureLinear).
func BenchmarkFuseOpsByPattern(b *testing.B) {
	table, ok := transform.PatternTable("phasec_blas")
	require.True(b, ok)
	benchLinear(b, func(n int) *ir.Module {
		mod, diags := syntax.Parse("chain.tvms", []byte(linearChainSource(n/3)))
		require.False(b, diags.HasErrors())
		return mod
	}, func(b *testing.B, mod *ir.Module) {
		_, groups, err := transform.FuseByPattern(mod, table, transform.FuseByPatternOptions{BindConstants: true})
		require.NoError(b, err)
		require.NotZero(b, groups)
	})
}
