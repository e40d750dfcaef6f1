package onnx_test

import (
	"context"
	"math"
	"os"
	"path/filepath"
	"runtime"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"google.golang.org/protobuf/proto"

	"github.com/phasec/phasec/diag"
	"github.com/phasec/phasec/frontend/onnx"
	"github.com/phasec/phasec/frontend/onnx/onnxpb"
	"github.com/phasec/phasec/frontend/onnx/onnxtest"
	"github.com/phasec/phasec/ir"
	"github.com/phasec/phasec/phase"
	"github.com/phasec/phasec/syntax/printer"
	"github.com/phasec/phasec/tensor"
	"github.com/phasec/phasec/vm"
	"github.com/phasec/phasec/wellformed"
)

func importBytes(t *testing.T, b []byte, opts onnx.Options) (*onnx.Result, error) {
	t.Helper()
	m, err := onnx.Read(b, "model.onnx", "", onnx.DefaultLimits)
	require.NoError(t, err)
	return onnx.Import(m, opts)
}

// mlpReference is the MLP of onnxtest.MLP computed directly in float64.
func mlpReference(x []float64, batch, in, hidden, out int) []float64 {
	y := make([]float64, batch*out)
	for n := range batch {
		r := make([]float64, hidden)
		for j := range hidden {
			s := float64(j) / 8
			for i := range in {
				s += x[n*in+i] * float64(i-j) / 16
			}
			r[j] = max(s, 0)
		}
		logits := make([]float64, out)
		m := math.Inf(-1)
		for k := range out {
			for j := range hidden {
				logits[k] += r[j] * float64((j+k)%3-1)
			}
			m = max(m, logits[k])
		}
		sum := 0.0
		for k := range out {
			logits[k] = math.Exp(logits[k] - m)
			sum += logits[k]
		}
		for k := range out {
			y[n*out+k] = logits[k] / sum
		}
	}
	return y
}

func TestMLPImportsAndComputesTheReference(t *testing.T) {
	const batch, in, hidden, out = 3, 8, 16, 4
	res, err := importBytes(t, onnxtest.MLP(in, hidden, out).Bytes(), onnx.Options{})
	require.NoError(t, err)
	assert.Equal(t, []string{"x"}, res.Inputs)
	assert.Equal(t, []string{"y"}, res.Outputs)
	require.Len(t, res.Params, 4, "the float initializers are parameters")
	assert.Equal(t, "w1", res.Params[0].Name)
	text := printer.Print(res.Module)
	assert.Contains(t, text, `x: R.Tensor(("N", 8), dtype="float32")`, "dim_param N is a symbolic dimension")
	assert.Contains(t, text, `R.func_attr({"num_input": 1})`)
	require.Empty(t, wellformed.Check(res.Module, phase.Ingest))

	x := make([]float64, batch*in)
	xt := tensor.New(tensor.Float32, batch, in)
	for i := range x {
		x[i] = math.Sin(float64(i)) * 2
		xt.SetFloat64(i, x[i])
	}
	args := []vm.Value{vm.TensorValue(xt)}
	for _, p := range res.Params {
		pt, err := tensor.NewChecked(tensor.Float32, p.Data.Shape)
		require.NoError(t, err)
		copy(pt.Bytes(), p.Data.Data)
		args = append(args, vm.TensorValue(pt))
	}
	machine, err := build(res.Module)
	require.NoError(t, err)
	got, _, err := machine.Call(context.Background(), "main", args)
	require.NoError(t, err)
	gt, ok := got.Tensor()
	require.True(t, ok)
	require.Equal(t, []int64{batch, out}, gt.Shape)
	want := mlpReference(x, batch, in, hidden, out)
	for i, w := range want {
		assert.InDelta(t, w, gt.Float64At(i), 1e-5, "element %d", i)
	}

	kept, err := importBytes(t, onnxtest.MLP(in, hidden, out).Bytes(), onnx.Options{KeepParamsInModule: true})
	require.NoError(t, err)
	assert.Empty(t, kept.Params)
	assert.Len(t, kept.Module.Func("main").Params, 1, "weights are constants")
}

func TestWriteParamsRoundTrips(t *testing.T) {
	res, err := importBytes(t, onnxtest.MLP(2, 3, 2).Bytes(), onnx.Options{})
	require.NoError(t, err)
	path := filepath.Join(t.TempDir(), "p.npz")
	require.NoError(t, onnx.WriteParamsFile(path, res.Params))
	back, err := tensor.ReadNpz(path)
	require.NoError(t, err)
	require.Len(t, back, len(res.Params))
	for i, p := range res.Params {
		assert.Equal(t, p.Name, back[i].Name)
		assert.Equal(t, p.Data.Shape, back[i].Tensor.Shape)
		assert.Equal(t, p.Data.Data, back[i].Tensor.Bytes())
	}
}

// diagOf imports a bad graph and returns its one error diagnostic.
func diagOf(t *testing.T, g *onnxtest.Graph) *diag.Diagnostic {
	t.Helper()
	res, err := importBytes(t, g.Bytes(), onnx.Options{})
	require.Error(t, err)
	assert.Nil(t, res, "nothing half-imported")
	l, ok := err.(diag.List)
	require.True(t, ok, "%v", err)
	require.NotEmpty(t, l)
	return l[0]
}

func TestBadGraphsNameTheNodeAndTensor(t *testing.T) {
	base := func() *onnxtest.Graph {
		return onnxtest.New(13).Input("x", onnxtest.Float, 2).Output("y", onnxtest.Float, 2)
	}
	t.Run("unsorted", func(t *testing.T) {
		g := base().Node("second", "Relu", []string{"a"}, []string{"y"}).Node("first", "Relu", []string{"x"}, []string{"a"})
		d := diagOf(t, g)
		assert.Equal(t, onnx.DiagGraph, d.Code)
		assert.Contains(t, d.Msg, `node 0 "second" (Relu)`)
		assert.Contains(t, d.Msg, `tensor "a"`)
		assert.Equal(t, "graph.node[0]", d.Path)
	})
	t.Run("cycle", func(t *testing.T) {
		g := base().Node("p", "Add", []string{"x", "q_out"}, []string{"p_out"}).Node("q", "Relu", []string{"p_out"}, []string{"q_out"}).
			Node("r", "Identity", []string{"q_out"}, []string{"y"})
		d := diagOf(t, g)
		assert.Equal(t, onnx.DiagGraph, d.Code)
		assert.Contains(t, d.Msg, `node 0 "p" (Add)`)
		assert.Contains(t, d.Msg, `"q_out"`)
	})
	t.Run("undefined", func(t *testing.T) {
		d := diagOf(t, base().Node("n", "Add", []string{"x", "nowhere"}, []string{"y"}))
		assert.Equal(t, onnx.DiagGraph, d.Code)
		assert.Contains(t, d.Msg, `input 1, tensor "nowhere"`)
	})
	t.Run("initializer contradicts its declaration", func(t *testing.T) {
		g := base().Input("w", onnxtest.Float, 3).Init(onnxtest.FloatTensor("w", []int64{2}, []float32{1, 2})).
			Node("n", "Add", []string{"x", "w"}, []string{"y"})
		d := diagOf(t, g)
		assert.Equal(t, onnx.DiagInitializer, d.Code)
		assert.Contains(t, d.Msg, `initializer "w": declared dimension 0 is 3`)
	})
	t.Run("initializer data does not match its shape", func(t *testing.T) {
		g := base().Init(onnxtest.FloatTensor("w", []int64{3}, []float32{1, 2})).Node("n", "Add", []string{"x", "w"}, []string{"y"})
		d := diagOf(t, g)
		assert.Equal(t, onnx.DiagInitializer, d.Code)
		assert.Contains(t, d.Msg, "raw_data has 8 bytes")
	})
	t.Run("unsupported op", func(t *testing.T) {
		d := diagOf(t, base().Node("u", "TfIdfVectorizer", []string{"x"}, []string{"y"}))
		assert.Equal(t, onnx.DiagUnsupported, d.Code)
		assert.Contains(t, d.Msg, `node 0 "u" (TfIdfVectorizer): op TfIdfVectorizer (opset 13) is not supported`)
	})
	t.Run("invalid node", func(t *testing.T) {
		d := diagOf(t, base().Node("mm", "MatMul", []string{"x", "x"}, []string{"m"}).Node("r", "Reshape", []string{"m"}, []string{"y"}))
		assert.Contains(t, d.Msg, `node 1 "r" (Reshape)`)
	})
}

func TestReaderRefusesCorruptAndUnsupportedFiles(t *testing.T) {
	good := onnxtest.MLP(2, 3, 2).Bytes()
	read := func(b []byte) error {
		_, err := onnx.Read(b, "m.onnx", "", onnx.DefaultLimits)
		return err
	}
	require.NoError(t, read(good))
	assert.ErrorContains(t, read(good[:len(good)/2]), "corrupt or truncated")
	assert.ErrorContains(t, read([]byte("\xff\xff\xff\xff not a model")), "corrupt or truncated")

	mp := onnxtest.MLP(2, 3, 2).Model()
	mp.IrVersion = proto.Int64(11)
	b, _ := proto.Marshal(mp)
	assert.ErrorContains(t, read(b), "IR version 11 is not supported")
	mp.IrVersion = proto.Int64(8)
	mp.OpsetImport[0].Version = proto.Int64(22)
	b, _ = proto.Marshal(mp)
	assert.ErrorContains(t, read(b), "opset 22 of the default domain is not supported")

	lim := onnx.DefaultLimits
	lim.MaxFileBytes = 10
	_, err := onnx.Read(good, "m.onnx", "", lim)
	assert.ErrorContains(t, err, "more than the limit")
}

func TestTensorSizesAreCheckedBeforeAllocating(t *testing.T) {
	huge := &onnxpb.TensorProto{Name: proto.String("w"), Dims: []int64{1 << 40, 1 << 40}, DataType: proto.Int32(onnxtest.Float)}
	_, err := onnx.TensorData(huge, "", onnx.DefaultLimits)
	assert.ErrorContains(t, err, "larger than the limit")
	neg := &onnxpb.TensorProto{Name: proto.String("w"), Dims: []int64{-1}, DataType: proto.Int32(onnxtest.Float)}
	_, err = onnx.TensorData(neg, "", onnx.DefaultLimits)
	assert.ErrorContains(t, err, "negative")
	str := &onnxpb.TensorProto{Name: proto.String("s"), DataType: proto.Int32(int32(onnxpb.TensorProto_STRING))}
	_, err = onnx.TensorData(str, "", onnx.DefaultLimits)
	assert.ErrorContains(t, err, "element type STRING is not supported")
}

func TestExternalData(t *testing.T) {
	dir := t.TempDir()
	w := onnxtest.FloatTensor("w", []int64{2}, []float32{3, -4})
	data := append([]byte("headerXX"), w.RawData...)
	require.NoError(t, os.WriteFile(filepath.Join(dir, "weights.bin"), data, 0o644))
	ext := func(loc, offset, length string) *onnxpb.TensorProto {
		return &onnxpb.TensorProto{Name: proto.String("w"), Dims: []int64{2}, DataType: proto.Int32(onnxtest.Float),
			DataLocation: onnxpb.TensorProto_EXTERNAL.Enum(), ExternalData: []*onnxpb.StringStringEntryProto{
				{Key: proto.String("location"), Value: proto.String(loc)}, {Key: proto.String("offset"), Value: proto.String(offset)},
				{Key: proto.String("length"), Value: proto.String(length)}}}
	}
	a, err := onnx.TensorData(ext("weights.bin", "8", "8"), dir, onnx.DefaultLimits)
	require.NoError(t, err)
	assert.Equal(t, []float64{3, -4}, []float64{a.Float(0), a.Float(1)})

	_, err = onnx.TensorData(ext("../weights.bin", "8", "8"), dir, onnx.DefaultLimits)
	assert.ErrorContains(t, err, "must be a relative path inside the model's directory")
	_, err = onnx.TensorData(ext("weights.bin", "12", "8"), dir, onnx.DefaultLimits)
	assert.ErrorContains(t, err, "has 16 bytes, the tensor needs 8 at offset 12")
	_, err = onnx.TensorData(ext("weights.bin", "8", "4"), dir, onnx.DefaultLimits)
	assert.ErrorContains(t, err, "length 4")

	// A whole model with its weight beside it.
	g := onnxtest.New(13).Input("x", onnxtest.Float, 2).Init(ext("weights.bin", "8", "8")).
		Node("m", "Mul", []string{"x", "w"}, []string{"y"}).Output("y", onnxtest.Float, 2)
	path := filepath.Join(dir, "m.onnx")
	require.NoError(t, os.WriteFile(path, g.Bytes(), 0o644))
	m, err := onnx.ReadFile(path, onnx.DefaultLimits)
	require.NoError(t, err)
	res, err := onnx.Import(m, onnx.Options{})
	require.NoError(t, err)
	require.Len(t, res.Params, 1)
	assert.Equal(t, -4.0, res.Params[0].Data.Float(1))
}

func TestShapeComputationsFoldAtImport(t *testing.T) {
	// Reshape's target computed from Shape, Gather and Concat of a
	// static input: all constants, the reshape static.
	g := onnxtest.New(13).Input("x", onnxtest.Float, 2, 3, 4).
		Init(onnxtest.Int64Tensor("i0", []int64{}, []int64{0})).
		Init(onnxtest.Int64Tensor("m1", []int64{1}, []int64{-1})).
		Node("s", "Shape", []string{"x"}, []string{"shape"}).
		Node("g", "Gather", []string{"shape", "i0"}, []string{"n"}).
		Node("u", "Unsqueeze", []string{"n", "i0"}, []string{"n1"}).
		Node("c", "Concat", []string{"n1", "m1"}, []string{"target"}, onnxtest.Int("axis", 0)).
		Node("r", "Reshape", []string{"x", "target"}, []string{"y"}).
		Output("y", onnxtest.Float, 2, 12)
	res, err := importBytes(t, g.Bytes(), onnx.Options{})
	require.NoError(t, err)
	text := printer.Print(res.Module)
	assert.Contains(t, text, `R.reshape(x, R.shape([2, 12]))`)
	assert.NotContains(t, text, "R.shape_of")
}

// TestImportScalesLinearly imports 10k- and 100k-node chains: bytes
// allocated (deterministic) must grow at most 11-fold; CPU time (user and
// system, GC included; wall time on a shared machine measures the
// neighbours) is logged with its ratio.
func TestImportScalesLinearly(t *testing.T) {
	if testing.Short() {
		t.Skip("imports a 100k-node graph")
	}
	measure := func(n int) (cpu, wall time.Duration, alloc uint64) {
		b := onnxtest.Chain(n).Bytes()
		runtime.GC()
		var before, after runtime.MemStats
		runtime.ReadMemStats(&before)
		c0, start := cpuTime(), time.Now()
		m, err := onnx.Read(b, "chain.onnx", "", onnx.DefaultLimits)
		require.NoError(t, err)
		res, err := onnx.Import(m, onnx.Options{})
		require.NoError(t, err)
		runtime.GC() // the collection this import's garbage costs
		cpu, wall = cpuTime()-c0, time.Since(start)
		runtime.ReadMemStats(&after)
		require.NotNil(t, res.Module.Func("main"))
		return cpu, wall, after.TotalAlloc - before.TotalAlloc
	}
	measure(1000) // warm up
	c10, w10, m10 := measure(10_000)
	c100, w100, m100 := measure(100_000)
	memRatio := float64(m100) / float64(m10)
	t.Logf("10k nodes: cpu %s wall %s, %d MB allocated; 100k nodes: cpu %s wall %s, %d MB; ratios: cpu %.2f, wall %.2f, memory %.2f",
		c10.Round(time.Millisecond), w10.Round(time.Millisecond), m10>>20, c100.Round(time.Millisecond), w100.Round(time.Millisecond), m100>>20,
		float64(c100)/float64(c10), float64(w100)/float64(w10), memRatio)
	assert.LessOrEqual(t, memRatio, 11.0, "allocation grows faster than the graph")
}

func FuzzImport(f *testing.F) {
	f.Add(onnxtest.MLP(2, 3, 2).Bytes())
	f.Add(onnxtest.Chain(6).Bytes())
	f.Add(onnxtest.New(13).Input("x", onnxtest.Float, 2).Node("n", "Relu", []string{"a"}, []string{"y"}).Output("y", onnxtest.Float, 2).Bytes())
	if b, err := os.ReadFile("/usr/share/libonnx-testdata/data/node/test_conv_with_strides_padding/model.onnx"); err == nil {
		f.Add(b)
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		lim := onnx.Limits{MaxFileBytes: 1 << 20, MaxTensorBytes: 1 << 20, MaxNodes: 1000}
		m, err := onnx.Read(b, "fuzz.onnx", "", lim)
		if err != nil {
			return
		}
		res, err := onnx.Import(m, onnx.Options{})
		if err != nil {
			require.Nil(t, res)
			return
		}
		// What imports is a well-formed module at Ingest.
		require.Empty(t, wellformed.Check(res.Module, phase.Ingest), printer.Print(res.Module))
	})
}

func FuzzReadTensor(f *testing.F) {
	b, _ := proto.Marshal(onnxtest.FloatTensor("t", []int64{2, 2}, []float32{1, 2, 3, 4}))
	f.Add(b)
	b, _ = proto.Marshal(onnxtest.Int64Tensor("t", []int64{3}, []int64{1, 2, 3}))
	f.Add(b)
	f.Fuzz(func(t *testing.T, b []byte) {
		tp := &onnxpb.TensorProto{}
		if proto.Unmarshal(b, tp) != nil {
			return
		}
		a, err := onnx.TensorData(tp, "", onnx.Limits{MaxFileBytes: 1 << 20, MaxTensorBytes: 1 << 20, MaxNodes: 10})
		if err == nil {
			require.Equal(t, a.NumElements()*int64(a.DType.Bytes()), int64(len(a.Data)))
		}
	})
}

func TestBindFixesAShapeGivingInput(t *testing.T) {
	// A shape input of static length imports as a run-time shape
	// (tensor_to_shape and a match_cast to fresh dimensions, as TVM).
	g := onnxtest.New(13).Input("x", onnxtest.Float, 2, 3).Input("shape", onnxtest.Int64, 1).
		Node("r", "Reshape", []string{"x", "shape"}, []string{"y"}).Output("y", onnxtest.Float, 6)
	m, err := onnx.Read(g.Bytes(), "m.onnx", "", onnx.DefaultLimits)
	require.NoError(t, err)
	res, err := onnx.Import(m, onnx.Options{})
	require.NoError(t, err)
	assert.Equal(t, []string{"x", "shape"}, res.Inputs)
	text := printer.Print(res.Module)
	assert.Contains(t, text, `R.tensor_to_shape(`)
	assert.Contains(t, text, `R.match_cast(`)

	// One of unknown length cannot be a shape: the import needs its value.
	g = onnxtest.New(13).Input("x", onnxtest.Float, 2, 3).Input("shape", onnxtest.Int64, "n").
		Node("r", "Reshape", []string{"x", "shape"}, []string{"y"}).Output("y", onnxtest.Float, 6)
	m, err = onnx.Read(g.Bytes(), "m.onnx", "", onnx.DefaultLimits)
	require.NoError(t, err)
	_, err = onnx.Import(m, onnx.Options{})
	require.Error(t, err)
	name, ok := onnx.NeedsValue(err)
	require.True(t, ok, "%v", err)
	assert.Equal(t, "shape", name)

	a, err := ir.NewNDArray(ir.Int64, []int64{1})
	require.NoError(t, err)
	a.SetInt(0, 6)
	res, err = onnx.Import(m, onnx.Options{Bind: map[string]*ir.NDArray{"shape": a}})
	require.NoError(t, err)
	assert.Equal(t, []string{"x"}, res.Inputs, "a bound input is no parameter")
	assert.Contains(t, printer.Print(res.Module), `R.reshape(x, R.shape([6]))`)
}

// TestWeightsAreCopiedOnce reads a model file holding 32 MB of weights:
// the file is mapped, the protobuf decoder copies each weight once, and
// the parameters alias those bytes, so reading and importing allocate
// about the weights' size, not twice it.
func TestWeightsAreCopiedOnce(t *testing.T) {
	if testing.Short() {
		t.Skip("writes a 32 MB model")
	}
	const n = 8 << 20 // float32 elements
	g := onnxtest.New(13).Input("x", onnxtest.Float, n).Init(onnxtest.FloatTensor("w", []int64{n}, make([]float32, n))).
		Node("m", "Mul", []string{"x", "w"}, []string{"y"}).Output("y", onnxtest.Float, n)
	path := filepath.Join(t.TempDir(), "big.onnx")
	require.NoError(t, os.WriteFile(path, g.Bytes(), 0o644))
	runtime.GC()
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	m, err := onnx.ReadFile(path, onnx.DefaultLimits)
	require.NoError(t, err)
	res, err := onnx.Import(m, onnx.Options{})
	require.NoError(t, err)
	runtime.ReadMemStats(&after)
	require.Len(t, res.Params, 1)
	weights := uint64(4 * n)
	allocated := after.TotalAlloc - before.TotalAlloc
	assert.Less(t, allocated, weights*3/2, "allocated %d bytes for %d bytes of weights", allocated, weights)
}

// TestSymbolicShapeComputations: a Reshape target computed from the
// Shape of an input with a dim_param (as PyTorch exports flatten with a
// dynamic batch) is a symbolic shape, and the model runs for any batch.
func TestSymbolicShapeComputations(t *testing.T) {
	g := onnxtest.New(13).Input("x", onnxtest.Float, "batch", 3, 4).
		Init(onnxtest.Int64Tensor("zero", []int64{1}, []int64{0})).
		Init(onnxtest.Int64Tensor("twelve", []int64{1}, []int64{12})).
		Init(onnxtest.Int64Tensor("two", []int64{}, []int64{2})).
		Node("s", "Shape", []string{"x"}, []string{"shape"}).
		Node("g", "Gather", []string{"shape", "zero"}, []string{"n"}).
		Node("c", "Concat", []string{"n", "twelve"}, []string{"target"}, onnxtest.Int("axis", 0)).
		Node("r", "Reshape", []string{"x", "target"}, []string{"y"}).
		Node("m", "Mul", []string{"n", "two"}, []string{"n2"}).
		Node("z", "ConstantOfShape", []string{"n2"}, []string{"zeros"}).
		Output("y", onnxtest.Float, "batch", 12).Output("zeros", onnxtest.Float, "batch2")
	res, err := importBytes(t, g.Bytes(), onnx.Options{})
	require.NoError(t, err)
	text := printer.Print(res.Module)
	assert.Contains(t, text, `R.reshape(x, R.shape([batch, 12]))`)
	assert.Contains(t, text, `R.full(R.shape([batch * 2])`)

	machine, err := build(res.Module)
	require.NoError(t, err)
	for _, batch := range []int64{1, 5} {
		x := tensor.New(tensor.Float32, batch, 3, 4)
		for i := range int(x.NumElements()) {
			x.SetFloat64(i, float64(i))
		}
		out, _, err := machine.Call(context.Background(), "main", []vm.Value{vm.TensorValue(x)})
		require.NoError(t, err)
		tu, ok := out.Tuple()
		require.True(t, ok)
		y, _ := tu.Fields[0].Tensor()
		z, _ := tu.Fields[1].Tensor()
		assert.Equal(t, []int64{batch, 12}, y.Shape)
		assert.Equal(t, x.Bytes(), y.Bytes())
		assert.Equal(t, []int64{2 * batch}, z.Shape)
	}
}
