package kernel_test

import (
	"errors"
	"math/rand/v2"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/phasec/phasec/diag"
	"github.com/phasec/phasec/ir"
	"github.com/phasec/phasec/tensor"
	"github.com/phasec/phasec/vm/abi"
	"github.com/phasec/phasec/vm/kernel"
)

// TestCompileErrors: unsupported TIR is a compile error naming the
// PrimFunc and the source position.
func TestCompileErrors(t *testing.T) {
	at := diag.Span{File: "k.tvms", Line: 7, Col: 9}
	buf := ir.NewBuffer("A", []ir.PrimExpr{ir.I64(4)}, ir.Float32)
	h := ir.NewPrimVar("A_h", ir.Handle)
	i := ir.NewPrimVar("i", ir.Int64)
	call := &ir.PrimCall{Op: "call_extern", Args: []ir.PrimExpr{ir.NewFloat(ir.Float32, 1)}, Type: ir.Float32}
	call.SetSpan(at)
	store := &ir.BufferStore{Buffer: buf, Indices: []ir.PrimExpr{i}, Value: call}
	vecBuf := ir.NewBuffer("V", []ir.PrimExpr{ir.I64(4)}, ir.MustDataType("float32x4"))
	vecBuf.SetSpan(at)
	hv := ir.NewPrimVar("V_h", ir.Handle)
	undefined := ir.NewPrimVar("m", ir.Int64)
	undefined.SetSpan(at)
	cases := []struct {
		name string
		f    *ir.PrimFunc
		want string
	}{
		{"unknown intrinsic", &ir.PrimFunc{
			Params: []*ir.PrimVar{h}, BufferMap: map[*ir.PrimVar]*ir.Buffer{h: buf},
			Body: &ir.For{Var: i, Min: ir.I64(0), Extent: ir.I64(4), Body: store},
		}, "k.tvms:7:9: PrimFunc kern: unsupported intrinsic T.call_extern on float32"},
		{"vector dtype", &ir.PrimFunc{
			Params: []*ir.PrimVar{hv}, BufferMap: map[*ir.PrimVar]*ir.Buffer{hv: vecBuf},
			Body: &ir.SeqStmt{},
		}, "k.tvms:7:9: PrimFunc kern: buffer V: unsupported dtype float32x4"},
		{"undefined variable", &ir.PrimFunc{
			Params: []*ir.PrimVar{h}, BufferMap: map[*ir.PrimVar]*ir.Buffer{h: buf},
			Body: &ir.For{Var: i, Min: ir.I64(0), Extent: undefined, Body: &ir.SeqStmt{}},
		}, "k.tvms:7:9: PrimFunc kern: undefined variable m"},
		{"unbindable shape", &ir.PrimFunc{
			Params:    []*ir.PrimVar{h},
			BufferMap: map[*ir.PrimVar]*ir.Buffer{h: ir.NewBuffer("A", []ir.PrimExpr{ir.Mul(undefined, ir.I64(2))}, ir.Float32)},
			Body:      &ir.SeqStmt{},
		}, "k.tvms:7:9: PrimFunc kern: undefined variable m"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			for _, opts := range []kernel.Options{{}, {General: true}, {NoVector: true}} {
				_, err := kernel.CompileWith(tc.f, "kern", opts)
				require.Error(t, err)
				var ce *kernel.CompileError
				require.True(t, errors.As(err, &ce))
				require.Equal(t, tc.want, err.Error())
			}
		})
	}
}

// TestRuntimeErrors: bad arguments and faults are errors, never panics.
func TestRuntimeErrors(t *testing.T) {
	mod := parseModule(t, constructSrc+`
    @T.prim_func(private=True)
    def oob(A: T.Buffer((T.int64(4),), "float32"), B: T.Buffer((T.int64(4),), "float32")):
        for i in range(T.int64(4)):
            B[i] = A[i + T.int64(1)]

    @T.prim_func(private=True)
    def oobrow(A: T.Buffer((T.int64(4), T.int64(4)), "float32"), B: T.Buffer((T.int64(4),), "float32")):
        for i in range(T.int64(4)):
            if i >= T.int64(0):
                B[i] = A[T.int64(1), i + T.int64(2)]

    @T.prim_func(private=True)
    def oobgather(A: T.Buffer((T.int64(4),), "float32"), B: T.Buffer((T.int64(4),), "float32")):
        for i in range(T.int64(4)):
            B[i] = A[T.floormod(i * T.int64(3), T.int64(7))]

    @T.prim_func(private=True)
    def divzero(A: T.Buffer((T.int64(4),), "int32"), B: T.Buffer((T.int64(4),), "int32")):
        for i in range(T.int64(4)):
            B[i] = T.truncdiv(B[i], A[i] - A[i])
`)
	rng := rand.New(rand.NewPCG(1, 2))
	pad := mod.PrimFunc("pad")
	for _, opts := range []kernel.Options{{}, {General: true}, {General: true, NoVector: true}} {
		k, err := kernel.CompileWith(pad, "pad", opts)
		require.NoError(t, err)
		A, B := tensor.New(tensor.Float32, 5), tensor.New(tensor.Float32, 7)
		require.NoError(t, k.Call([]abi.Arg{{T: A}, {T: B}}))
		require.EqualError(t, k.Call([]abi.Arg{{T: A}, {T: tensor.New(tensor.Float32, 6)}}),
			"PrimFunc pad: buffer B dimension 0 is 6, expected n + T.int64(2) = 7")
		require.EqualError(t, k.Call([]abi.Arg{{T: A}}), "PrimFunc pad takes 2 arguments, got 1")
		require.EqualError(t, k.Call([]abi.Arg{{T: tensor.New(tensor.Float64, 5)}, {T: B}}),
			"PrimFunc pad: argument 0 (A) must be a 1-d float32 tensor, got float64(5,)")
		require.EqualError(t, k.Call([]abi.Arg{{T: A}, {I: 3}}), "PrimFunc pad: argument 1 (B) must be a tensor")

		// A frozen tensor may be read but never written.
		frozenA, frozenB := tensor.New(tensor.Float32, 5), tensor.New(tensor.Float32, 7)
		require.True(t, frozenA.Storage.Freeze())
		require.True(t, frozenB.Storage.Freeze())
		require.NoError(t, k.Call([]abi.Arg{{T: frozenA}, {T: B}}))
		require.EqualError(t, k.Call([]abi.Arg{{T: A}, {T: frozenB}}),
			"PrimFunc pad writes argument 1 (B), a frozen tensor (a constant or bound weights)")

		// oobrow's A[1, 4] is inside the buffer but outside dimension 1.
		for _, name := range []string{"oob", "oobrow", "oobgather", "divzero"} {
			f := mod.PrimFunc(name)
			k, err := kernel.CompileWith(f, name, opts)
			require.NoError(t, err)
			args := makeArgs(t, f, nil, rng)
			err = k.Call(args)
			require.Error(t, err, name)
			require.Contains(t, err.Error(), "PrimFunc "+name+": ")
		}
	}
}

// TestCompileErrorFromSource: the position of a parsed construct.
func TestCompileErrorFromSource(t *testing.T) {
	f := parseFunc(t, `
    @T.prim_func(private=True)
    def bits(A: T.Buffer((4,), "int16"), B: T.Buffer((4,), "float16")):
        for i in range(4):
            B[i] = T.reinterpret("float16", A[i])
`, "bits")
	_, err := kernel.Compile(f, "bits")
	require.EqualError(t, err, "test.tvms:9:20: PrimFunc bits: unsupported T.reinterpret from int16 to float16")
}
