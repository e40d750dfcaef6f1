package extern

import (
	"encoding/json"
	"math"
	"math/rand/v2"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/phasec/phasec/tensor"
	"github.com/phasec/phasec/vm"
)

func randTensor(r *rand.Rand, shape ...int64) *tensor.Tensor {
	t := tensor.New(tensor.Float32, shape...)
	for i := range tensor.Data[float32](t) {
		tensor.Data[float32](t)[i] = float32(r.NormFloat64())
	}
	return t
}

// reference computes act(x @ op(w) + b) in float64, x as rows of k.
func reference(x, w, b []float32, m, n, k int, transB bool, act string) []float64 {
	out := make([]float64, m*n)
	for i := range m {
		for j := range n {
			s := 0.0
			for p := range k {
				wv := w[p*n+j]
				if transB {
					wv = w[j*k+p]
				}
				s += float64(x[i*k+p]) * float64(wv)
			}
			if b != nil {
				s += float64(b[j])
			}
			switch act {
			case "relu":
				s = math.Max(s, 0)
			case "gelu":
				s = 0.5 * s * (1 + math.Erf(s/math.Sqrt2))
			case "gelu_tanh":
				s = 0.5 * s * (1 + math.Tanh(math.Sqrt(2/math.Pi)*(s+0.044715*s*s*s)))
			}
			out[i*n+j] = s
		}
	}
	return out
}

func module(t *testing.T, fns ...BLASFunction) vm.ExternalModule {
	payload, err := json.Marshal(BLASModule{Functions: fns})
	require.NoError(t, err)
	m := vm.ExternalModule{Kind: BLASKind, Payload: payload}
	for _, f := range fns {
		m.Symbols = append(m.Symbols, f.Symbol)
	}
	return m
}

func TestBLASStepsAgreeWithReference(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	for _, transB := range []bool{false, true} {
		for _, act := range []string{"", "relu", "gelu", "gelu_tanh"} {
			for _, withBias := range []bool{false, true} {
				step := BLASStep{LHS: "p0", RHS: "p1", TransB: transB, Act: act}
				if withBias {
					step.Bias = "p2"
				}
				params := 3
				fns, err := Link(module(t, BLASFunction{Symbol: "f", Params: params, Steps: []BLASStep{step}, Outputs: []int{0}}))
				require.NoError(t, err)
				x := randTensor(r, 2, 5, 7) // rows: 2*5
				w := randTensor(r, 7, 9)
				if transB {
					w = randTensor(r, 9, 7)
				}
				b := randTensor(r, 9)
				out := tensor.New(tensor.Float32, 2, 5, 9)
				_, err = fns["f"](nil, []vm.Value{vm.TensorValue(x), vm.TensorValue(w), vm.TensorValue(b), vm.TensorValue(out)})
				require.NoError(t, err)
				var bv []float32
				if withBias {
					bv = tensor.Data[float32](b)
				}
				want := reference(tensor.Data[float32](x), tensor.Data[float32](w), bv, 10, 9, 7, transB, act)
				for i, g := range tensor.Data[float32](out) {
					require.InDelta(t, want[i], g, 1e-4, "trans_b=%v act=%q bias=%v element %d", transB, act, withBias, i)
				}
			}
		}
	}
}

func TestBLASProgramChainsStepsAndConstants(t *testing.T) {
	r := rand.New(rand.NewPCG(3, 4))
	bias := []float32{0.5, -0.25, 1}
	f := BLASFunction{Symbol: "mlp", Params: 2,
		Constants: []BLASConstant{{Shape: []int64{3}, Data: bias}},
		Steps: []BLASStep{
			{LHS: "p0", RHS: "p1", Act: "relu"},
			{LHS: "s0", RHS: "p1", TransB: true, Bias: "c0"},
		},
		Outputs: []int{1, 0}}
	fns, err := Link(module(t, f))
	require.NoError(t, err)
	x, w := randTensor(r, 4, 3), randTensor(r, 3, 3)
	out0, out1 := tensor.New(tensor.Float32, 4, 3), tensor.New(tensor.Float32, 4, 3)
	_, err = fns["mlp"](nil, []vm.Value{vm.TensorValue(x), vm.TensorValue(w), vm.TensorValue(out0), vm.TensorValue(out1)})
	require.NoError(t, err)
	h := reference(tensor.Data[float32](x), tensor.Data[float32](w), nil, 4, 3, 3, false, "relu")
	h32 := make([]float32, len(h))
	for i, v := range h {
		h32[i] = float32(v)
	}
	want := reference(h32, tensor.Data[float32](w), bias, 4, 3, 3, true, "")
	for i := range want {
		assert.InDelta(t, want[i], tensor.Data[float32](out0)[i], 1e-4)
		assert.InDelta(t, h[i], tensor.Data[float32](out1)[i], 1e-4)
	}
}

func TestBLASRejectsBadInput(t *testing.T) {
	for name, c := range map[string]struct {
		m    vm.ExternalModule
		want string
	}{
		"kind":        {vm.ExternalModule{Kind: "nope"}, `no linker for external module kind "nope"`},
		"payload":     {vm.ExternalModule{Kind: BLASKind, Payload: []byte("{")}, "phasec_blas payload"},
		"ref":         {module(t, BLASFunction{Symbol: "f", Params: 1, Steps: []BLASStep{{LHS: "p0", RHS: "p1"}}, Outputs: []int{0}}), `operand "p1" refers to nothing`},
		"future step": {module(t, BLASFunction{Symbol: "f", Params: 2, Steps: []BLASStep{{LHS: "s0", RHS: "p1"}}, Outputs: []int{0}}), `operand "s0" refers to nothing`},
		"act":         {module(t, BLASFunction{Symbol: "f", Params: 2, Steps: []BLASStep{{LHS: "p0", RHS: "p1", Act: "swish"}}, Outputs: []int{0}}), `unknown activation "swish"`},
		"output":      {module(t, BLASFunction{Symbol: "f", Params: 2, Steps: []BLASStep{{LHS: "p0", RHS: "p1"}}, Outputs: []int{3}}), "output 0 names step 3"},
		"constant":    {module(t, BLASFunction{Symbol: "f", Params: 2, Constants: []BLASConstant{{Shape: []int64{2}, Data: []float32{1}}}, Steps: []BLASStep{{LHS: "p0", RHS: "p1"}}, Outputs: []int{0}}), "holds 2 values, got 1"},
	} {
		_, err := Link(c.m)
		assert.ErrorContains(t, err, c.want, name)
	}

	fns, err := Link(module(t, BLASFunction{Symbol: "f", Params: 3, Steps: []BLASStep{{LHS: "p0", RHS: "p1", Bias: "p2"}}, Outputs: []int{0}}))
	require.NoError(t, err)
	f32 := func(s ...int64) vm.Value { return vm.TensorValue(tensor.New(tensor.Float32, s...)) }
	for name, c := range map[string]struct {
		args []vm.Value
		want string
	}{
		"count": {[]vm.Value{f32(2, 3)}, "f takes 3 inputs and 1 outputs, got 1 arguments"},
		"dtype": {[]vm.Value{vm.TensorValue(tensor.New(tensor.Int32, 2, 3)), f32(3, 4), f32(4), f32(2, 4)}, "argument 0 must be a float32 tensor"},
		"inner": {[]vm.Value{f32(2, 3), f32(5, 4), f32(4), f32(2, 4)}, "inner dimensions differ"},
		"bias":  {[]vm.Value{f32(2, 3), f32(3, 4), f32(5), f32(2, 4)}, "bias is float32(5,), want float32(4,)"},
		"out":   {[]vm.Value{f32(2, 3), f32(3, 4), f32(4), f32(2, 5)}, "output is float32(2, 5), want float32(2, 4)"},
	} {
		_, err := fns["f"](nil, c.args)
		assert.ErrorContains(t, err, c.want, name)
	}
}

// FuzzLinkBLAS: any payload links or is refused, never panics, and a
// linked function refuses arguments it cannot take.
func FuzzLinkBLAS(f *testing.F) {
	f.Add([]byte(`{"functions":[{"symbol":"f","params":2,"steps":[{"lhs":"p0","rhs":"p1","act":"relu"}],"outputs":[0]}]}`))
	f.Add([]byte(`{"functions":[{"symbol":"f","params":1,"constants":[{"shape":[2,2],"data":[1,2,3,4]}],"steps":[{"lhs":"p0","rhs":"c0","trans_b":true,"bias":"p0"}],"outputs":[0,0]}]}`))
	f.Fuzz(func(t *testing.T, payload []byte) {
		fns, err := linkBLAS(vm.ExternalModule{Kind: BLASKind, Payload: payload})
		if err != nil {
			return
		}
		x := vm.TensorValue(tensor.New(tensor.Float32, 2, 2))
		for _, fn := range fns {
			for n := range 5 {
				args := make([]vm.Value, n)
				for i := range args {
					args[i] = vm.TensorValue(tensor.New(tensor.Float32, 2, 2))
				}
				_, _ = fn(nil, append(args, x))
			}
		}
	})
}
