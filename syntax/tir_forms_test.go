package syntax

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/phasec/phasec/ir"
)

const tirFormsHeader = `# from tvm.script import ir as I
# from tvm.script import tir as T
# from tvm.script import relax as R

@I.ir_module
class Module:
`

// TestWhileWithForm: `with T.While(cond):` builds the same While as
// `while cond:`, the form TVM prints.
func TestWhileWithForm(t *testing.T) {
	const body = `    @T.prim_func
    def f(A: T.Buffer((1,), "int32")):
        HEAD
            A[0] = A[0] + 1
`
	loop := parseOrFail(t, "while.tvms", []byte(tirFormsHeader+strings.Replace(body, "HEAD", "while A[0] < 10:", 1)))
	with := parseOrFail(t, "with.tvms", []byte(tirFormsHeader+strings.Replace(body, "HEAD", "with T.While(A[0] < 10):", 1)))
	require.Nil(t, ir.Diff(loop, with, ir.EqualOptions{}))
	w, ok := with.PrimFunc("f").Body.(*ir.While)
	require.True(t, ok, "body is %T", with.PrimFunc("f").Body)
	require.Equal(t, ir.Bool, w.Cond.DType())
	require.Contains(t, Print(with), "        while A[0] < 10:\n            A[0] = A[0] + 1\n")
	other := parseOrFail(t, "other.tvms", []byte(tirFormsHeader+strings.Replace(body, "HEAD", "while A[0] < 11:", 1)))
	require.NotNil(t, ir.Diff(loop, other, ir.EqualOptions{}))
	require.NotEqual(t, ir.StructuralHash(loop), ir.StructuralHash(other))
}

// TestVectorLoadDType: a load at a vector index has the index's lanes (TVM's
// BufferLoadNode::LegalizeDType), and a scalar meeting it is broadcast.
func TestVectorLoadDType(t *testing.T) {
	src := tirFormsHeader + `    @T.prim_func
    def f(A: T.Buffer((8,), "float32"), B: T.Buffer((8,), "float32")):
        B[T.Ramp(0, 1, 4)] = A[T.Ramp(0, 1, 4)] * T.float32(2.0)
`
	mod := parseOrFail(t, "vec.tvms", []byte(src))
	st := mod.PrimFunc("f").Body.(*ir.BufferStore)
	mul := st.Value.(*ir.Binary)
	require.Equal(t, "float32x4", mul.A.DType().String())
	require.Equal(t, "float32x4", mul.DType().String())
	bc, ok := mul.B.(*ir.PrimCall)
	require.True(t, ok && bc.Op == "Broadcast", "the scalar operand is %s", ir.FormatTIR(mul.B, nil))
	require.Contains(t, Print(mod), "B[T.Ramp(0, 1, 4)] = A[T.Ramp(0, 1, 4)] * T.Broadcast(T.float32(2.0), 4)\n")
}
