package main

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/phasec/phasec/tensor"
)

// liftedModel is TVM's test_basic lifted with the weights bundled (the
// default): main_transform_params(params: R.Tuple(w1, w2)) returns (w2,
// w1 transformed IOHW -> OIHW), and main takes (x, w2, w1_transformed).
const liftModel = "../../testdata/passes/LiftTransformParams/basic.tvms"

// writeSeeded writes a deterministic tensor of the shape and dtype as
// dir/name.npy and returns the path.
func writeSeeded(t *testing.T, dir, name string, dt tensor.DType, shape ...int64) string {
	t.Helper()
	x := tensor.New(dt, shape...)
	for i := range int(x.NumElements()) {
		x.SetFloat64(i, float64((i*7+len(name)*3)%11)/5-1)
	}
	path := filepath.Join(dir, name+".npy")
	require.NoError(t, tensor.WriteNpyFile(path, x))
	return path
}

// TestRunTupleParams: the bundled transform_params function runs on its
// tuple of weights given element by element (params.0, params.1) as .npy
// files, as .npz keys, or in order, on the VM and in the evaluator; main
// on its outputs computes what the unlifted model computes.
func TestRunTupleParams(t *testing.T) {
	dir := t.TempDir()
	lifted := filepath.Join(dir, "lifted.pvm")
	liftedSrc := filepath.Join(dir, "lifted.tvms")
	plain := filepath.Join(dir, "plain.pvm")
	code, _, errs := runCLI(t, "", "build", "--passes", "canonicalize,LiftTransformParams,optimize,lower,build", "-o", lifted, liftModel)
	require.Equal(t, 0, code, errs)
	code, _, errs = runCLI(t, "", "opt", "--passes", "canonicalize,LiftTransformParams", "-o", liftedSrc, liftModel)
	require.Equal(t, 0, code, errs)
	code, _, errs = runCLI(t, "", "build", "-o", plain, liftModel)
	require.Equal(t, 0, code, errs)

	x := writeSeeded(t, dir, "x", tensor.Float32, 1, 3, 6, 6)
	w1 := writeSeeded(t, dir, "w1", tensor.Float32, 3, 4, 3, 3)
	w2 := writeSeeded(t, dir, "w2", tensor.Float32, 4, 4, 3, 3)
	w1t, err := tensor.ReadNpyFile(w1)
	require.NoError(t, err)
	w2t, err := tensor.ReadNpyFile(w2)
	require.NoError(t, err)
	npz := filepath.Join(dir, "weights.npz")
	require.NoError(t, tensor.WriteNpz(npz, []tensor.Named{{Name: "params.0", Tensor: w1t}, {Name: "params.1", Tensor: w2t}}))

	transformed := filepath.Join(dir, "transformed.npz")
	code, out, errs := runCLI(t, "", "run", "--func", "main_transform_params", "--input", "params.0="+w1, "--input", "params.1="+w2, "-o", transformed, lifted)
	require.Equal(t, 0, code, errs)
	assert.Contains(t, out, "main_transform_params: 2 output(s)")
	outs, err := tensor.ReadNpz(transformed)
	require.NoError(t, err)
	require.Len(t, outs, 2)
	assert.Equal(t, w2t.Shape, outs[0].Tensor.Shape, "w2 passes through")
	assert.Equal(t, []int64{4, 3, 3, 3}, outs[1].Tensor.Shape)
	for o := range 4 {
		for i := range 3 {
			for k := range 9 {
				require.Equal(t, w1t.Float64At((i*4+o)*9+k), outs[1].Tensor.Float64At((o*3+i)*9+k), "w1_transformed[%d, %d, %d]", o, i, k)
			}
		}
	}

	// The same transform from the .npz keys, from --input in order, and in
	// the evaluator on the lifted TVMScript.
	for _, args := range [][]string{
		{"run", "--func", "main_transform_params", "--inputs", npz, lifted},
		{"run", "--func", "main_transform_params", "--input", w1, "--input", w2, lifted},
		{"eval", "--func", "main_transform_params", "--inputs", npz, liftedSrc},
		{"eval", "--func", "main_transform_params", "--input", "params.1=" + w2, "--input", "params.0=" + w1, liftedSrc},
	} {
		again := filepath.Join(dir, "again.npz")
		code, _, errs := runCLI(t, "", append(args[:len(args)-1:len(args)-1], "-o", again, args[len(args)-1])...)
		require.Equal(t, 0, code, "%v: %s", args, errs)
		got, err := tensor.ReadNpz(again)
		require.NoError(t, err)
		require.Len(t, got, 2, "%v", args)
		for i := range got {
			require.Equal(t, outs[i].Tensor.Shape, got[i].Tensor.Shape, "%v", args)
			for j := range int(got[i].Tensor.NumElements()) {
				require.Equal(t, outs[i].Tensor.Float64At(j), got[i].Tensor.Float64At(j), "%v: output %d element %d", args, i, j)
			}
		}
	}

	// main on the transformed weights agrees with the unlifted model.
	w2out, w1tr := filepath.Join(dir, "w2_out.npy"), filepath.Join(dir, "w1_transformed.npy")
	require.NoError(t, tensor.WriteNpyFile(w2out, outs[0].Tensor))
	require.NoError(t, tensor.WriteNpyFile(w1tr, outs[1].Tensor))
	got, want := filepath.Join(dir, "got.npz"), filepath.Join(dir, "want.npz")
	code, _, errs = runCLI(t, "", "run", "--input", "x="+x, "--input", "w2="+w2out, "--input", "w1_transformed="+w1tr, "-o", got, lifted)
	require.Equal(t, 0, code, errs)
	code, _, errs = runCLI(t, "", "run", "--input", "x="+x, "--input", "w1="+w1, "--input", "w2="+w2, "-o", want, plain)
	require.Equal(t, 0, code, errs)
	g, err := tensor.ReadNpz(got)
	require.NoError(t, err)
	w, err := tensor.ReadNpz(want)
	require.NoError(t, err)
	require.Len(t, g, 1)
	require.Len(t, w, 1)
	require.Equal(t, w[0].Tensor.Shape, g[0].Tensor.Shape)
	for i := range int(w[0].Tensor.NumElements()) {
		// Both builds run the same convolutions in float32; the
		// transposed weight only changes where they are read from.
		assert.InDelta(t, w[0].Tensor.Float64At(i), g[0].Tensor.Float64At(i), 1e-5, "output element %d", i)
	}

	// Semantic checking and bisection take the tuple the same way.
	code, out, errs = runCLI(t, "", "opt", "--verify-semantics", "--func", "main_transform_params", "--inputs", npz, "--passes", "optimize,lower", "-o", filepath.Join(dir, "o.tvms"), liftedSrc)
	require.Equal(t, 0, code, errs)
	assert.Contains(t, out+errs, "main_transform_params keeps its result after every pass")
	code, out, errs = runCLI(t, "", "bisect", "--func", "main_transform_params", "--input", "params.0="+w1, "--input", "params.1="+w2, "--passes", "optimize,lower", "-o", filepath.Join(dir, "r.tvms"), liftedSrc)
	require.Equal(t, 0, code, errs)
	assert.Contains(t, out, "no pass of optimize,lower changes the result of main_transform_params")
}

// TestTupleParamErrorsInUserTerms: a tuple given in part, an element of
// the wrong dtype or shape, the tuple given as one file and an element
// that does not exist are reported the same way by every command that
// binds inputs, naming the element.
func TestTupleParamErrorsInUserTerms(t *testing.T) {
	dir := t.TempDir()
	lifted := filepath.Join(dir, "lifted.tvms")
	code, _, errs := runCLI(t, "", "opt", "--passes", "canonicalize,LiftTransformParams", "-o", lifted, liftModel)
	require.Equal(t, 0, code, errs)
	w1 := writeSeeded(t, dir, "w1", tensor.Float32, 3, 4, 3, 3)
	w2 := writeSeeded(t, dir, "w2", tensor.Float32, 4, 4, 3, 3)
	w2f64 := writeSeeded(t, dir, "w2f64", tensor.Float64, 4, 4, 3, 3)

	cases := []struct {
		name   string
		inputs []string
		want   string
	}{
		{"missing element", []string{"params.0=" + w1},
			"parameter params of main_transform_params is a tuple given in part (params.0): give params.1 too"},
		{"wrong dtype", []string{"params.0=" + w1, "params.1=" + w2f64},
			"--input params.1=" + w2f64 + `: element params.1 of parameter params has dtype float64, expected float32 (R.Tensor((4, 4, 3, 3), dtype="float32"))`},
		{"wrong shape", []string{"params.0=" + w2, "params.1=" + w2},
			"element params.0 of parameter params has shape (4, 4, 3, 3), expected 3 in dimension 0"},
		{"whole tuple", []string{"params=" + w1},
			"parameter params of main_transform_params is R.Tuple(" + `R.Tensor((3, 4, 3, 3), dtype="float32"), R.Tensor((4, 4, 3, 3), dtype="float32")): give its elements as params.0, params.1`},
		{"no such element", []string{"params.2=" + w1},
			"main_transform_params has no parameter params.2 (parameters: params.0, params.1)"},
	}
	for _, c := range cases {
		for _, cmd := range [][]string{
			{"run"}, {"eval"},
			{"opt", "--verify-semantics", "--passes", "optimize", "-o", filepath.Join(dir, "o.tvms")},
			{"bisect", "--passes", "optimize", "-o", filepath.Join(dir, "r.tvms")},
		} {
			t.Run(c.name+"/"+cmd[0], func(t *testing.T) {
				args := append(append([]string{}, cmd...), "--func", "main_transform_params")
				for _, in := range c.inputs {
					args = append(args, "--input", in)
				}
				code, _, errs := runCLI(t, "", append(args, lifted)...)
				assert.NotEqual(t, 0, code)
				assert.Contains(t, errs, c.want)
				assert.NotContains(t, errs, "goroutine", "no Go stack")
			})
		}
	}
}

// TestNestedTupleParams: elements of a nested tuple with a symbolic
// dimension are named p.1.0; run (reading the executable's recorded
// annotation back) and eval compute the same, checked by hand.
func TestNestedTupleParams(t *testing.T) {
	dir := t.TempDir()
	src := filepath.Join(dir, "nested.tvms")
	require.NoError(t, os.WriteFile(src, []byte(`@I.ir_module
class Module:
    @R.function
    def main(p: R.Tuple(R.Tensor((2,), "float32"), R.Tuple(R.Tensor(("n", 2), "float32"), R.Tensor((2,), "float32")))):
        a = p[0]
        q = p[1]
        b = q[0]
        c = q[1]
        d = R.multiply(b, c)
        e = R.add(d, a)
        return e
`), 0o644))
	a := writeSeeded(t, dir, "a", tensor.Float32, 2)
	b := writeSeeded(t, dir, "bb", tensor.Float32, 3, 2)
	c := writeSeeded(t, dir, "ccc", tensor.Float32, 2)
	read := func(p string) *tensor.Tensor {
		x, err := tensor.ReadNpyFile(p)
		require.NoError(t, err)
		return x
	}
	at, bt, ct := read(a), read(b), read(c)
	for _, cmd := range []string{"run", "eval"} {
		out := filepath.Join(dir, cmd+".npz")
		code, _, errs := runCLI(t, "", cmd, "--input", "p.1.1="+c, "--input", "p.0="+a, "--input", "p.1.0="+b, "-o", out, src)
		require.Equal(t, 0, code, "%s: %s", cmd, errs)
		got, err := tensor.ReadNpz(out)
		require.NoError(t, err)
		require.Len(t, got, 1)
		require.Equal(t, []int64{3, 2}, got[0].Tensor.Shape, cmd)
		for i := range 3 {
			for j := range 2 {
				want := float32(bt.Float64At(i*2+j))*float32(ct.Float64At(j)) + float32(at.Float64At(j))
				assert.InDelta(t, want, got[0].Tensor.Float64At(i*2+j), 1e-6, "%s: output[%d, %d]", cmd, i, j)
			}
		}
	}
}

func TestQuoteSymbolicDims(t *testing.T) {
	for in, want := range map[string]string{
		`R.Tensor((n, 2), dtype="float32")`:                  `R.Tensor(("n", 2), dtype="float32")`,
		`R.Tuple(R.Tensor((2 * n, m + 1)), R.Shape([k, 3]))`: `R.Tuple(R.Tensor(("2 * n", "m + 1")), R.Shape(["k", 3]))`,
		`R.Tensor((), dtype="float32")`:                      `R.Tensor((), dtype="float32")`,
		`R.Tensor(("n",), dtype="float32")`:                  `R.Tensor(("n",), dtype="float32")`,
		`R.Tuple(R.Prim("int64"), R.Object)`:                 `R.Tuple(R.Prim("int64"), R.Object)`,
	} {
		assert.Equal(t, want, quoteSymbolicDims(in), in)
	}
}
