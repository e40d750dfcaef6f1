package codegen

import (
	"context"
	"flag"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/phasec/phasec/barrier"
	"github.com/phasec/phasec/ir"
	"github.com/phasec/phasec/tensor"
	"github.com/phasec/phasec/vm"
	"github.com/phasec/phasec/vm/loader"
)

var update = flag.Bool("update", false, "regenerate the MLP demo inputs and expected outputs")

const modelsDir = "../testdata/models"

// buildModel takes a model through canonicalize, lower and build, code
// generation and the binary format, and links it with compiled kernels.
func buildModel(t testing.TB, path string) *vm.VM {
	mod := parseFile(t, path)
	var err error
	for _, b := range []func(*ir.Module) (*ir.Module, error){barrier.Canonicalize, barrier.Lower, barrier.Build} {
		mod, err = b(mod)
		require.NoError(t, err)
	}
	exe, diags := Build(mod)
	require.Empty(t, diags)
	machine, err := loader.Load(exe.Marshal(), vm.Options{})
	require.NoError(t, err)
	return machine
}

// uniform fills a float32 tensor with values in [lo, hi).
func uniform(rng *rand.Rand, lo, hi float64, shape ...int64) *tensor.Tensor {
	t := tensor.New(tensor.Float32, shape...)
	for i := range tensor.Data[float32](t) {
		tensor.Data[float32](t)[i] = float32(lo + (hi-lo)*rng.Float64())
	}
	return t
}

// matrix views a 2-d float32 tensor as float64 rows (the reference works
// in float64 so that it is independent of the kernels' float32 order).
func matrix(t *tensor.Tensor) [][]float64 {
	d := tensor.Data[float32](t)
	rows, cols := int(t.Shape[0]), 1
	if len(t.Shape) == 2 {
		cols = int(t.Shape[1])
	} else {
		rows, cols = 1, int(t.Shape[0])
	}
	m := make([][]float64, rows)
	for i := range m {
		m[i] = make([]float64, cols)
		for j := range m[i] {
			m[i][j] = float64(d[i*cols+j])
		}
	}
	return m
}

func matmul(a, b [][]float64) [][]float64 {
	out := make([][]float64, len(a))
	for i := range a {
		out[i] = make([]float64, len(b[0]))
		for k := range b {
			for j := range b[0] {
				out[i][j] += a[i][k] * b[k][j]
			}
		}
	}
	return out
}

func addRow(a [][]float64, row []float64) [][]float64 {
	for i := range a {
		for j := range a[i] {
			a[i][j] += row[j]
		}
	}
	return a
}

func softmaxRows(a [][]float64) [][]float64 {
	for _, r := range a {
		m := math.Inf(-1)
		for _, v := range r {
			m = math.Max(m, v)
		}
		s := 0.0
		for j, v := range r {
			r[j] = math.Exp(v - m)
			s += r[j]
		}
		for j := range r {
			r[j] /= s
		}
	}
	return a
}

// mlpReference is the MLP of mlp.tvms in plain Go: softmax(relu(x w0 + b0) w1 + b1).
func mlpReference(x, w0, b0, w1, b1 *tensor.Tensor) [][]float64 {
	h := addRow(matmul(matrix(x), matrix(w0)), matrix(b0)[0])
	for _, r := range h {
		for j := range r {
			r[j] = math.Max(r[j], 0)
		}
	}
	return softmaxRows(addRow(matmul(h, matrix(w1)), matrix(b1)[0]))
}

func toTensor(m [][]float64) *tensor.Tensor {
	t := tensor.New(tensor.Float32, int64(len(m)), int64(len(m[0])))
	d := tensor.Data[float32](t)
	for i, r := range m {
		for j, v := range r {
			d[i*len(r)+j] = float32(v)
		}
	}
	return t
}

// requireClose compares a float32 result with a reference: |got - want| <=
// tol * max(1, |want|).
func requireClose(t *testing.T, want [][]float64, got *tensor.Tensor, tol float64) {
	t.Helper()
	require.Equal(t, []int64{int64(len(want)), int64(len(want[0]))}, got.Shape)
	d := tensor.Data[float32](got)
	for i, r := range want {
		for j, w := range r {
			g := float64(d[i*len(r)+j])
			require.LessOrEqual(t, math.Abs(g-w), tol*math.Max(1, math.Abs(w)), "element [%d, %d]: got %g, want %g", i, j, g, w)
		}
	}
}

var mlpInputs = []string{"x", "w0", "b0", "w1", "b1"}

// TestMLPDemo runs the demo model (make demo) on its committed inputs and
// checks the result against the committed expectation, which the plain Go
// reference reproduces from the same inputs. -update regenerates both.
func TestMLPDemo(t *testing.T) {
	dir := filepath.Join(modelsDir, "mlp_inputs")
	if *update {
		rng := rand.New(rand.NewPCG(2026, 11))
		const batch = 4
		inputs := map[string]*tensor.Tensor{
			"x":  uniform(rng, 0, 1, batch, 784),
			"w0": uniform(rng, -1/28.0, 1/28.0, 784, 128),
			"b0": uniform(rng, -0.1, 0.1, 128),
			"w1": uniform(rng, -1/11.3, 1/11.3, 128, 10),
			"b1": uniform(rng, -0.1, 0.1, 10),
		}
		for name, v := range inputs {
			require.NoError(t, writeNpy(filepath.Join(dir, name+".npy"), v))
		}
		want := mlpReference(inputs["x"], inputs["w0"], inputs["b0"], inputs["w1"], inputs["b1"])
		require.NoError(t, writeNpy(filepath.Join(dir, "expected.npy"), toTensor(want)))
	}
	args := make([]any, len(mlpInputs))
	ts := make([]*tensor.Tensor, len(mlpInputs))
	for i, name := range mlpInputs {
		v, err := tensor.ReadNpyFile(filepath.Join(dir, name+".npy"))
		require.NoError(t, err)
		args[i], ts[i] = v, v
	}
	expected, err := tensor.ReadNpyFile(filepath.Join(dir, "expected.npy"))
	require.NoError(t, err)
	ref := mlpReference(ts[0], ts[1], ts[2], ts[3], ts[4])
	requireClose(t, ref, expected, 1e-6) // the committed file is the reference's

	// The demo's model (high-level ops, legalized by the lower barrier) and
	// its hand-legalized golden form.
	for _, model := range []string{"mlp.tvms", "mlp_legalized.tvms"} {
		machine := buildModel(t, filepath.Join(modelsDir, model))
		for run := 0; run < 3; run++ { // pooled storage reused across runs
			out, err := machine.Run(context.Background(), "main", args...)
			require.NoError(t, err, model)
			got, ok := out.Tensor()
			require.True(t, ok, model)
			requireClose(t, ref, got, 1e-5)
		}
	}
}

func layerNorm(a [][]float64, g, b []float64) [][]float64 {
	out := make([][]float64, len(a))
	for i, r := range a {
		mean, sq := 0.0, 0.0
		for _, v := range r {
			mean += v
			sq += v * v
		}
		mean /= float64(len(r))
		variance := sq/float64(len(r)) - mean*mean
		out[i] = make([]float64, len(r))
		for j, v := range r {
			out[i][j] = (v-mean)/math.Sqrt(variance+1e-5)*g[j] + b[j]
		}
	}
	return out
}

func transpose(a [][]float64) [][]float64 {
	out := make([][]float64, len(a[0]))
	for j := range out {
		out[j] = make([]float64, len(a))
		for i := range a {
			out[j][i] = a[i][j]
		}
	}
	return out
}

func addMat(a, b [][]float64) [][]float64 {
	out := make([][]float64, len(a))
	for i := range a {
		out[i] = make([]float64, len(a[i]))
		for j := range a[i] {
			out[i][j] = a[i][j] + b[i][j]
		}
	}
	return out
}

// transformerReference is transformer_block.tvms in plain Go.
func transformerReference(in []*tensor.Tensor) [][]float64 {
	x, g, b := matrix(in[0]), matrix(in[1])[0], matrix(in[2])[0]
	wq, wk, wv, wo, w1, w2 := matrix(in[3]), matrix(in[4]), matrix(in[5]), matrix(in[6]), matrix(in[7]), matrix(in[8])
	h := layerNorm(x, g, b)
	q, k, v := matmul(h, wq), matmul(h, wk), matmul(h, wv)
	s := matmul(q, transpose(k))
	for _, r := range s {
		for j := range r {
			r[j] /= 8
		}
	}
	res := addMat(x, matmul(matmul(softmaxRows(s), v), wo))
	up := matmul(layerNorm(res, g, b), w1)
	for _, r := range up {
		for j, u := range r {
			r[j] = 0.5 * u * (1 + math.Erf(u/math.Sqrt2))
		}
	}
	return addMat(res, matmul(up, w2))
}

// TestTransformerBlock runs the transformer block with a symbolic sequence
// length for several lengths on one executable.
func TestTransformerBlock(t *testing.T) {
	machine := buildModel(t, filepath.Join(modelsDir, "transformer_block.tvms"))
	rng := rand.New(rand.NewPCG(7, 7))
	s := 1 / math.Sqrt(64)
	weights := []*tensor.Tensor{
		uniform(rng, 0.9, 1.1, 64), uniform(rng, -0.1, 0.1, 64),
		uniform(rng, -s, s, 64, 64), uniform(rng, -s, s, 64, 64), uniform(rng, -s, s, 64, 64), uniform(rng, -s, s, 64, 64),
		uniform(rng, -s, s, 64, 256), uniform(rng, -1.0/16, 1.0/16, 256, 64),
	}
	for _, seq := range []int64{1, 3, 8, 17} {
		in := append([]*tensor.Tensor{uniform(rng, -1, 1, seq, 64)}, weights...)
		args := make([]any, len(in))
		for i, v := range in {
			args[i] = v
		}
		out, err := machine.Run(context.Background(), "main", args...)
		require.NoError(t, err, "seq=%d", seq)
		got, ok := out.Tensor()
		require.True(t, ok)
		requireClose(t, transformerReference(in), got, 1e-5)
	}
	// A wrong model dimension is caught by the shape checks VMShapeLower emits.
	args := []any{uniform(rng, -1, 1, 3, 32)}
	for _, w := range weights {
		args = append(args, w)
	}
	_, err := machine.Run(context.Background(), "main", args...)
	require.ErrorContains(t, err, "match_cast error, shape[1] mismatch to specified constant (expected 64, got 32)")
}

func writeNpy(path string, t *tensor.Tensor) error {
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return err
	}
	f, err := os.Create(path)
	if err != nil {
		return err
	}
	if err := tensor.WriteNpy(f, t); err != nil {
		f.Close()
		return err
	}
	return f.Close()
}

// TestControlFlowPipeline: a closure (LambdaLift's make_closure and
// invoke_closure), an If on a 0-d bool tensor, a call between Relax
// functions and a tuple result, through the whole pipeline to the VM.
func TestControlFlowPipeline(t *testing.T) {
	machine := buildModel(t, "testdata/control_flow.tvms")
	rng := rand.New(rand.NewPCG(5, 5))
	for _, n := range []int64{1, 6} {
		x, y := uniform(rng, -1, 1, n), uniform(rng, -1, 1, n)
		for _, c := range []bool{true, false} {
			cond := tensor.New(tensor.Bool)
			if c {
				cond.SetFloat64(0, 1)
			}
			out, err := machine.Run(context.Background(), "main", cond, x, y)
			require.NoError(t, err)
			tup, ok := out.Tuple()
			require.True(t, ok)
			require.Len(t, tup.Fields, 2)
			r, _ := tup.Fields[0].Tensor()
			second, _ := tup.Fields[1].Tensor()
			require.Same(t, x, second, "the tuple returns x itself")
			xd, yd, rd := tensor.Data[float32](x), tensor.Data[float32](y), tensor.Data[float32](r)
			require.Len(t, rd, int(n))
			for i := range rd {
				want := 2 * yd[i] // double(y)
				if c {
					want = yd[i] + xd[i] // add_x(y) = y + x
				}
				require.Equal(t, want, rd[i], "cond=%v element %d", c, i)
			}
		}
	}
	_, err := machine.Run(context.Background(), "main", tensor.New(tensor.Bool), uniform(rng, 0, 1, 3), uniform(rng, 0, 1, 4))
	require.ErrorContains(t, err, "control_flow.tvms:46:5: in main, instruction 5")
	require.ErrorContains(t, err, "match_cast error, shape[0] mismatch to a previous populated value (expected 3, got 4).")
}

// TestCallTIRDynPipeline: call_tir with tir_vars becomes
// vm.builtin.call_tir_dyn, whose trailing shape supplies the kernel's
// scalar parameter (fill writes 2n ones).
func TestCallTIRDynPipeline(t *testing.T) {
	machine := buildModel(t, "../testdata/lowered_call_tir_tir_vars.tvms")
	require.Contains(t, machine.Executable().Text(), "call  vm.builtin.call_tir_dyn in: f[fill]")
	for _, n := range []int64{0, 1, 5} {
		out, err := machine.Run(context.Background(), "main", tensor.New(tensor.Float32, n))
		require.NoError(t, err)
		y, ok := out.Tensor()
		require.True(t, ok)
		require.Equal(t, []int64{2 * n}, y.Shape)
		for i, v := range tensor.Data[float32](y) {
			require.Equal(t, float32(1), v, "element %d", i)
		}
	}
}

// TestClosureReturnedPipeline: a local function returning a closure keeps
// its R.Callable return annotation through LambdaLift, and LowerRuntimeBuiltin
// turning the closure into an R.Object must not reject it (TVM's Function
// keeps such an annotation). main(x1, y1) = twice(inner(y1)) with inner
// capturing x1: 2 * (y1 + x1).
func TestClosureReturnedPipeline(t *testing.T) {
	machine := buildModel(t, "../testdata/passes/LambdaLift/nested.tvms")
	rng := rand.New(rand.NewPCG(7, 7))
	x, y := uniform(rng, -1, 1, 2), uniform(rng, -1, 1, 2)
	out, err := machine.Run(context.Background(), "main", x, y)
	require.NoError(t, err)
	r, ok := out.Tensor()
	require.True(t, ok)
	xd, yd, rd := tensor.Data[float32](x), tensor.Data[float32](y), tensor.Data[float32](r)
	require.Len(t, rd, 2)
	for i := range rd {
		require.Equal(t, 2*(yd[i]+xd[i]), rd[i], "element %d", i)
	}
}
