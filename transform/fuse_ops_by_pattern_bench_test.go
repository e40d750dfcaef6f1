package transform_test

import (
	"fmt"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

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
// (compare layers=1000 and layers=10000 in cpu-ns/op, which a shared
// machine's other processes do not inflate: ratio about 10).
func BenchmarkFuseOpsByPattern(b *testing.B) {
	table, ok := transform.PatternTable("phasec_blas")
	require.True(b, ok)
	for _, n := range []int{1000, 10000} {
		mod, diags := syntax.Parse("chain.tvms", []byte(linearChainSource(n)))
		require.False(b, diags.HasErrors())
		b.Run(fmt.Sprintf("layers=%d", n), func(b *testing.B) {
			cpu0 := cpuTime()
			defer func() { b.ReportMetric(float64(cpuTime()-cpu0)/float64(b.N), "cpu-ns/op") }()
			for b.Loop() {
				_, groups, err := transform.FuseByPattern(mod, table, transform.FuseByPatternOptions{BindConstants: true})
				require.NoError(b, err)
				require.Equal(b, n, groups)
			}
		})
	}
}
