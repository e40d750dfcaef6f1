package syntax

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/phasec/phasec/ir"
	"github.com/phasec/phasec/syntax/printer"
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
	require.Contains(t, printer.Print(with), "        while A[0] < 10:\n            A[0] = A[0] + 1\n")
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
	require.Contains(t, printer.Print(mod), "B[T.Ramp(0, 1, 4)] = A[T.Ramp(0, 1, 4)] * T.Broadcast(T.float32(2.0), 4)\n")
}

// TestOpaqueIntrinsicForms: the older keyword spelling dtype= of the
// dtype-first intrinsics and T.address_of(buffer) build what TVM's builders
// build (python/tvm/kernel/op.py), and print in TVM's form.
func TestOpaqueIntrinsicForms(t *testing.T) {
	src := tirFormsHeader + `    @T.prim_func
    def f(A: T.Buffer((4, 4), "float16"), B: T.Buffer((8,), "float16")):
        T.ptx_ldmatrix(False, 4, ".b16", B.data, 0, A.data, 0, dtype="float16")
        T.address_of(A)
`
	mod := parseOrFail(t, "kw.tvms", []byte(src))
	seq := mod.PrimFunc("f").Body.(*ir.SeqStmt)
	ld := seq.Stmts[0].(*ir.Evaluate).Value.(*ir.PrimCall)
	require.Equal(t, ir.MustDataType("float16"), ld.Type)
	require.Len(t, ld.Args, 7, "the dtype is the call's type, not an argument")
	addr := seq.Stmts[1].(*ir.Evaluate).Value.(*ir.PrimCall)
	require.Equal(t, ir.Handle, addr.Type)
	load, ok := addr.Args[0].(*ir.BufferLoad)
	require.True(t, ok && len(load.Indices) == 2, "T.address_of(A) takes A[0, 0]")
	out := printer.Print(mod)
	require.Contains(t, out, `        T.ptx_ldmatrix("float16", False, 4, ".b16", B.data, 0, A.data, 0)`+"\n")
	require.Contains(t, out, "        T.address_of(A[0, 0])\n")
}

// TestBufferLayoutEquality: strides, element offsets, alignment, offset
// factor, buffer type and axis separators take part in equality and
// hashing; stride variables a buffer defines match by position, not name.
func TestBufferLayoutEquality(t *testing.T) {
	const tmpl = `    @T.prim_func
    def f(a: T.handle):
        A = T.match_buffer(a, (4, 4), LAYOUT)
        A[0, 0] = T.float32(0.0)
`
	parse := func(layout string) *ir.Module {
		return parseOrFail(t, "layout.tvms", []byte(tirFormsHeader+strings.Replace(tmpl, "LAYOUT", layout, 1)))
	}
	base := parse(`strides=("s0", 1), offset_factor=1`)
	requireSame(t, base, parse(`strides=("t0", 1), offset_factor=1`))
	for _, other := range []string{`strides=(4, 1), offset_factor=1`, `strides=("s0", 1)`, `strides=("s0", 1), offset_factor=2`,
		`strides=("s0", 1), offset_factor=1, align=16`, `strides=("s0", 1), offset_factor=1, axis_separators=[1]`,
		`strides=("s0", 1), elem_offset=2`, `strides=("s0", 1), offset_factor=1, scope="shared"`} {
		requireDistinct(t, base, parse(other), other)
	}
	buf := base.PrimFunc("f").BufferMap[base.PrimFunc("f").Params[0]]
	require.Len(t, buf.Strides, 2)
	require.IsType(t, &ir.PrimVar{}, buf.ElemOffset, "offset_factor without elem_offset creates the offset variable")
	require.Equal(t, 1, buf.OffsetFactorOrDefault())
	require.Contains(t, printer.Print(base), `A = T.match_buffer(a, (4, 4), strides=("s0", 1), offset_factor=1)`)
}

// TestLiteralIndexStaysInt32: a literal index is an int32 constant whatever
// the buffer's shape type, as TVM's Buffer.__getitem__ and buffer_store
// leave it, so `A[0]` of an int64-shaped buffer reprints as `A[0]` and
// `A[T.int64(0)]` stays distinct.
func TestLiteralIndexStaysInt32(t *testing.T) {
	src := tirFormsHeader + `    @T.prim_func
    def f(A: T.Buffer((T.int64(4),), "float32")):
        A[0] = A[T.int64(1)]
`
	mod := parseOrFail(t, "idx.tvms", []byte(src))
	st := mod.PrimFunc("f").Body.(*ir.BufferStore)
	require.Equal(t, ir.Int32, st.Indices[0].DType())
	require.Equal(t, ir.Int64, st.Value.(*ir.BufferLoad).Indices[0].DType())
	require.Contains(t, printer.Print(mod), "        A[0] = A[T.int64(1)]\n")
}

// TestBufferViewEquality: buffer views no statement declares compare by
// layout and handle where first met.
func TestBufferViewEquality(t *testing.T) {
	const tmpl = `    @T.prim_func
    def f(X: T.Buffer((4, 4), "float32"), Y: T.Buffer((4, 4), "float32")):
        A = T.Buffer(VIEW)
        A[0] = T.float32(1.0)
`
	parse := func(view string) *ir.Module {
		return parseOrFail(t, "view.tvms", []byte(tirFormsHeader+strings.Replace(tmpl, "VIEW", view, 1)))
	}
	base := parse(`(16,), data=X.data`)
	require.Nil(t, ir.Diff(base, parse(`(16,), data=X.data`), ir.EqualOptions{}))
	for _, other := range []string{`(16,), data=Y.data`, `(8,), data=X.data`, `(16,), data=X.data, align=16`} {
		require.NotNil(t, ir.Diff(base, parse(other), ir.EqualOptions{}), other)
	}
	require.Contains(t, printer.Print(base), "        A = T.Buffer((16,), data=X.data)\n        A[0] = T.float32(1.0)\n")
}

// TestBlockMatchBufferEquality: a block's match_buffer compares by source
// region and matched layout; its buffer is defined by the block.
func TestBlockMatchBufferEquality(t *testing.T) {
	const tmpl = `    @T.prim_func
    def f(A: T.Buffer((16,), "float32")):
        for i in range(4):
            with T.block("m"):
                vi = T.axis.spatial(4, i)
                T.reads()
                T.writes(A[vi * 4:vi * 4 + 4])
                A_1 = T.match_buffer(A[SRC], (4,), offset_factor=1)
                A_1[0] = T.float32(1.0)
`
	parse := func(src string) *ir.Module {
		return parseOrFail(t, "mb.tvms", []byte(tirFormsHeader+strings.Replace(tmpl, "SRC", src, 1)))
	}
	base := parse("vi * 4:vi * 4 + 4")
	require.Nil(t, ir.Diff(base, parse("vi * 4:vi * 4 + 4"), ir.EqualOptions{}))
	requireDistinct(t, base, parse("vi * 4 + 1:vi * 4 + 5"))
}
