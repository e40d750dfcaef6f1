package eval

import (
	"os"
	"testing"

	"github.com/phasec/phasec/ir"
	"github.com/phasec/phasec/op"
	"github.com/phasec/phasec/syntax"
	"github.com/phasec/phasec/tensor"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func parseFile(t *testing.T, path string) *ir.Module {
	t.Helper()
	src, err := os.ReadFile(path)
	require.NoError(t, err)
	mod, diags := syntax.Parse(path, src)
	require.Empty(t, diags)
	return mod
}

func TestMLPHighLevelMatchesHandLegalized(t *testing.T) {
	hi := parseFile(t, "../testdata/models/mlp.tvms")
	lo := parseFile(t, "../testdata/models/mlp_legalized.tvms")
	args, err := RandomArgs(hi.Func("main"), 1, map[string]int64{"batch": 3}, 2)
	require.NoError(t, err)
	want, err := New(hi).Call("main", args...)
	require.NoError(t, err)
	got, err := New(lo).Call("main", args...)
	require.NoError(t, err)
	require.NoError(t, Compare(got, want, Float32Tol))
}

const symbolicModule = `
@I.ir_module
class Module:
    @R.function
    def main(x: R.Tensor(("n", 4), dtype="float32"), y: R.Tensor(("n",), dtype="float32"), s: R.Tensor(("n * 2",), dtype="float32")):
        n = T.int64()
        z = R.match_cast(y, R.Tensor((3,), dtype="float32"))
        return z
`

func TestEvalReportsMismatchedInputs(t *testing.T) {
	mod, diags := syntax.Parse("m", []byte(symbolicModule))
	require.Empty(t, diags)
	f32 := func(shape ...int64) *tensor.Tensor { return tensor.New(tensor.Float32, shape...) }
	cases := []struct {
		args []op.Value
		want string
	}{
		{[]op.Value{f32(3, 4), f32(2), f32(6)}, "parameter y dimension 0 is 2, expected n = 3"},
		{[]op.Value{f32(3, 5), f32(3), f32(6)}, "parameter x dimension 1 is 5, expected 4 = 4"},
		{[]op.Value{f32(3, 4), f32(3), f32(7)}, "parameter s dimension 0 is 7, expected n * 2 = 6"},
		{[]op.Value{f32(3), f32(3), f32(6)}, "parameter x has rank 1, expected 2"},
		{[]op.Value{tensor.New(tensor.Int32, 3, 4), f32(3), f32(6)}, "parameter x has dtype int32, expected float32"},
		{[]op.Value{f32(2, 4), f32(2), f32(4)}, "match_cast of z dimension 0 is 2, expected 3 = 3"},
		{[]op.Value{f32(3, 4)}, "takes 3 arguments, got 1"},
	}
	for _, c := range cases {
		_, err := New(mod).Call("main", c.args...)
		require.Error(t, err)
		assert.Contains(t, err.Error(), c.want)
	}
	_, err := New(mod).Call("main", f32(3, 4), f32(3), f32(6))
	require.NoError(t, err)
}

func TestEvalAssertAndTIRBounds(t *testing.T) {
	mod, diags := syntax.Parse("m", []byte(`
@I.ir_module
class Module:
    @T.prim_func(private=True)
    def oob(A: T.Buffer((T.int64(2),), "float32"), B: T.Buffer((T.int64(2),), "float32")):
        for i in range(T.int64(2)):
            with T.block("B"):
                v = T.axis.spatial(T.int64(2), i)
                B[v] = A[v + T.int64(1)]

    @R.function
    def main(x: R.Tensor((2,), dtype="float32"), c: R.Tensor((), dtype="bool")):
        cls = Module
        R.assert_op(c, format="c must hold")
        y = R.call_tir(cls.oob, (x,), out_sinfo=R.Tensor((2,), dtype="float32"))
        return y
`))
	require.Empty(t, diags)
	x := tensor.New(tensor.Float32, 2)
	no := tensor.New(tensor.Bool)
	_, err := New(mod).Call("main", x, no)
	require.ErrorContains(t, err, "R.assert_op: c must hold")
	yes := tensor.New(tensor.Bool)
	yes.SetFloat64(0, 1)
	_, err = New(mod).Call("main", x, yes)
	require.ErrorContains(t, err, "PrimFunc oob: buffer A index 0 is 2, out of range [0, 2)")
}
