package main

import (
	"bytes"
	"path/filepath"
	"strings"
	"testing"

	"github.com/phasec/phasec/tensor"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

const evalAddModule = `
@I.ir_module
class Module:
    @R.function
    def main(x: R.Tensor(("n", 2), dtype="float32"), y: R.Tensor((2,), dtype="float32")):
        n = T.int64()
        with R.dataflow():
            z = R.add(x, y)
            w = R.multiply(z, y)
            R.output(z, w)
        return (z, w)
`

func TestEvalCommandNpyInOut(t *testing.T) {
	dir := t.TempDir()
	x := tensor.New(tensor.Float32, 3, 2)
	y := tensor.New(tensor.Float32, 2)
	for i := 0; i < 6; i++ {
		x.SetFloat64(i, float64(i))
	}
	y.SetFloat64(0, 10)
	y.SetFloat64(1, -1)
	require.NoError(t, tensor.WriteNpyFile(filepath.Join(dir, "x.npy"), x))
	require.NoError(t, tensor.WriteNpyFile(filepath.Join(dir, "y.npy"), y))
	out := filepath.Join(dir, "out.npz")
	var stdout, stderr bytes.Buffer
	code := run([]string{"eval", "-", "--input", "x=" + filepath.Join(dir, "x.npy"), "--input", "y=" + filepath.Join(dir, "y.npy"), "-o", out},
		strings.NewReader(evalAddModule), &stdout, &stderr)
	require.Equal(t, 0, code, stderr.String())
	got, err := tensor.ReadNpz(out)
	require.NoError(t, err)
	require.Len(t, got, 2)
	assert.Equal(t, "output_0", got[0].Name)
	assert.Equal(t, "output_1", got[1].Name)
	for i := 0; i < 6; i++ {
		z := float64(i) + []float64{10, -1}[i%2]
		assert.Equal(t, z, got[0].Tensor.Float64At(i))
		assert.Equal(t, z*[]float64{10, -1}[i%2], got[1].Tensor.Float64At(i))
	}
}

func TestEvalCommandErrors(t *testing.T) {
	cases := []struct {
		args []string
		code int
		want string
	}{
		{[]string{"eval", "-"}, 2, "parameter x of main has no value"},
		{[]string{"eval", "-", "--func", "nope", "--random-inputs"}, 1, "no Relax function named nope"},
		{[]string{"eval", "-", "--input", "q=a.npy", "--random-inputs"}, 2, "main has no parameter q"},
		{[]string{"eval", "-", "--input", "x"}, 2, "want name=file.npy"},
		{[]string{"eval", "-", "--random-inputs", "--dim", "n=-1"}, 2, "want name=N"},
	}
	for _, c := range cases {
		var stdout, stderr bytes.Buffer
		code := run(c.args, strings.NewReader(evalAddModule), &stdout, &stderr)
		assert.Equal(t, c.code, code, "%v: %s", c.args, stderr.String())
		assert.Contains(t, stderr.String(), c.want, "%v", c.args)
	}
}

func TestEvalCommandRandomInputsAreSeeded(t *testing.T) {
	runOnce := func(seed string) string {
		var stdout, stderr bytes.Buffer
		code := run([]string{"eval", "-", "--random-inputs", "--seed", seed, "--dim", "n=2"}, strings.NewReader(evalAddModule), &stdout, &stderr)
		require.Equal(t, 0, code, stderr.String())
		return stdout.String()
	}
	a := runOnce("7")
	assert.Equal(t, a, runOnce("7"))
	assert.NotEqual(t, a, runOnce("8"))
	assert.Contains(t, a, "output_0: float32(2, 2)")
}
