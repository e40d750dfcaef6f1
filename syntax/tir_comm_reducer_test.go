package syntax

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/phasec/phasec/ir"
)

// TestCommReducerEquality: a reducer's operands are bound in its combiner,
// so renaming them keeps the module equal (and its hash), while another
// identity element or combiner makes it differ, at the reducer.
func TestCommReducerEquality(t *testing.T) {
	const src = `# from tvm.script import ir as I
# from tvm.script import tir as T

@I.ir_module
class Module:
    @T.prim_func
    def f(A: T.Buffer((8,), "float32")):
        with T.attr(T.comm_reducer(lambda x, y: x + y, [T.float32(0.0)]), "reduce_scope", 0):
            A[0] = T.float32(1.0)
`
	parse := func(old, new string) *ir.Module {
		return parseOrFail(t, "reducer.tvms", []byte(strings.Replace(src, old, new, 1)))
	}
	base := parseOrFail(t, "reducer.tvms", []byte(src))
	requireSame(t, base, parse("lambda x, y: x + y", "lambda a, b: a + b"))
	for _, change := range [][2]string{
		{"[T.float32(0.0)]", "[T.float32(1.0)]"},
		{"lambda x, y: x + y", "lambda x, y: x * y"},
		{"lambda x, y: x + y", "lambda x, y: y + x"},
	} {
		d := ir.Diff(base, parse(change[0], change[1]), ir.EqualOptions{})
		require.NotNil(t, d, "%s -> %s", change[0], change[1])
		assert.Contains(t, d.String(), "reducer", "the difference is located at the reducer")
	}
	// The hash sees the identity (operand order may collide, as hashes may).
	requireDistinct(t, base, parse("[T.float32(0.0)]", "[T.float32(1.0)]"))
}
