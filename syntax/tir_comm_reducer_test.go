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
	base := parseOrFail(t, "base.tvms", []byte(src))
	renamed := parseOrFail(t, "renamed.tvms", []byte(strings.Replace(src, "lambda x, y: x + y", "lambda a, b: a + b", 1)))
	assert.Nil(t, ir.Diff(base, renamed, ir.EqualOptions{}))
	assert.Equal(t, ir.StructuralHash(base), ir.StructuralHash(renamed))
	for _, change := range [][2]string{
		{"[T.float32(0.0)]", "[T.float32(1.0)]"},
		{"lambda x, y: x + y", "lambda x, y: x * y"},
		{"lambda x, y: x + y", "lambda x, y: y + x"},
	} {
		other := parseOrFail(t, "other.tvms", []byte(strings.Replace(src, change[0], change[1], 1)))
		d := ir.Diff(base, other, ir.EqualOptions{})
		require.NotNil(t, d, "%s -> %s", change[0], change[1])
		assert.Contains(t, d.String(), "reducer", "the difference is located at the reducer")
	}
	// The hash sees the identity (operand order may collide, as hashes may).
	other := parseOrFail(t, "other.tvms", []byte(strings.Replace(src, "[T.float32(0.0)]", "[T.float32(1.0)]", 1)))
	assert.NotEqual(t, ir.StructuralHash(base), ir.StructuralHash(other))
}
