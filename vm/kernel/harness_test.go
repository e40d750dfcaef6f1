package kernel_test

import (
	"math"
	"math/rand/v2"
	"os"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/phasec/phasec/ir"
	"github.com/phasec/phasec/syntax"
	"github.com/phasec/phasec/tensor"
	"github.com/phasec/phasec/vm/abi"
	"github.com/phasec/phasec/vm/kernel"
)

const header = "# from tvm.script import ir as I\n# from tvm.script import tir as T\n@I.ir_module\nclass Module:\n"

// parseFuncs parses TVMScript PrimFuncs (indented as class members).
func parseModule(t testing.TB, body string) *ir.Module {
	t.Helper()
	mod, diags := syntax.Parse("test.tvms", []byte(header+body))
	require.False(t, diags.HasErrors(), "%v", diags)
	return mod
}

func parseFunc(t testing.TB, body, name string) *ir.PrimFunc {
	t.Helper()
	f := parseModule(t, body).PrimFunc(name)
	require.NotNil(t, f, "no PrimFunc %s", name)
	return f
}

// spec gives the runtime shape of buffer parameters whose shape is
// symbolic, and the values of scalar parameters, by name.
type spec map[string]any

// makeArgs builds random arguments for f.
func makeArgs(t testing.TB, f *ir.PrimFunc, s spec, rng *rand.Rand) []abi.Arg {
	t.Helper()
	args := make([]abi.Arg, len(f.Params))
	for i, p := range f.Params {
		b := f.BufferMap[p]
		if b == nil {
			switch v := s[p.Name].(type) {
			case int:
				args[i].I = int64(v)
			case float64:
				args[i].F = v
			default:
				require.Failf(t, "missing scalar", "no value for scalar %s", p.Name)
			}
			continue
		}
		var shape []int64
		if v, ok := s[b.Name].([]int64); ok {
			shape = v
		} else {
			for _, d := range b.Shape {
				c, ok := d.(*ir.IntImm)
				require.True(t, ok, "buffer %s has a symbolic shape: give it in the spec", b.Name)
				shape = append(shape, c.Value)
			}
		}
		dt, err := tensor.ParseDType(b.DType.String())
		require.NoError(t, err)
		tt := tensor.New(dt, shape...)
		fillRandom(tt, rng)
		args[i].T = tt
	}
	return args
}

func fillRandom(t *tensor.Tensor, rng *rand.Rand) {
	n := int(t.NumElements())
	for k := range n {
		switch {
		case t.DType.IsFloat():
			t.SetFloat64(k, math.Round((rng.Float64()*4-2)*64)/64+rng.Float64()/1024)
		case t.DType == tensor.Bool:
			t.SetFloat64(k, float64(rng.IntN(2)))
		case t.DType.IsUnsigned():
			t.SetFloat64(k, float64(rng.IntN(40)))
		default:
			t.SetFloat64(k, float64(rng.IntN(41)-20))
		}
	}
}

func cloneArgs(args []abi.Arg) []abi.Arg {
	out := make([]abi.Arg, len(args))
	for i, a := range args {
		out[i] = a
		if a.T != nil {
			c := tensor.New(a.T.DType, a.T.Shape...)
			copy(c.Bytes(), a.T.Bytes())
			out[i].T = c
		}
	}
	return out
}

// modes are the ways a kernel can run; all must agree with the reference.
var modes = []struct {
	name string
	opts kernel.Options
}{
	{"scalar", kernel.Options{General: true, NoVector: true, Serial: true}},
	{"vector", kernel.Options{General: true}},
	{"dispatch", kernel.Options{}},
}

// checkAll runs f on args in the reference interpreter and in every mode
// and compares the results: floats within 1e-5 (relative above 1),
// integers exactly. It returns the kernel compiled with default options.
func checkAll(t *testing.T, f *ir.PrimFunc, args []abi.Arg) *kernel.Kernel {
	t.Helper()
	want := cloneArgs(args)
	wantRet, refErr := runRef(f, want)
	var def *kernel.Kernel
	for _, m := range modes {
		k, err := kernel.CompileWith(f, "f", m.opts)
		require.NoError(t, err, m.name)
		if m.name == "dispatch" {
			def = k
		}
		if m.name == "vector" && testing.Verbose() {
			v, sc := k.LoopModes()
			t.Logf("vector loops %d, scalar %v", v, sc)
		}
		got := cloneArgs(args)
		var ret abi.Arg
		if f.Ret.IsVoid() {
			err = k.Call(got)
		} else {
			ret, err = k.CallValue(got)
		}
		if refErr != nil {
			require.Error(t, err, "%s: reference failed with %v", m.name, refErr)
			continue
		}
		require.NoError(t, err, m.name)
		if !f.Ret.IsVoid() {
			if f.Ret.IsFloat() {
				requireClose(t, wantRet.f, ret.F, 0, m.name+" ret")
			} else {
				require.Equal(t, wantRet.i, ret.I, m.name+" ret")
			}
		}
		for i := range got {
			if got[i].T == nil {
				continue
			}
			scale := 1.0
			if strings.Contains(k.Pattern(), "matmul") {
				// Sgemm reassociates each fp32 dot product (blocked, FMA),
				// so compare normwise: |got - want| <= 1e-5 * max|want|,
				// the usual GEMM acceptance test.
				scale = maxAbs(want[i].T)
			}
			compareTensors(t, want[i].T, got[i].T, scale, m.name+" "+k.Pattern()+" "+f.BufferMap[f.Params[i]].Name)
		}
	}
	return def
}

func maxAbs(t *tensor.Tensor) float64 {
	m := 0.0
	for k := range int(t.NumElements()) {
		m = max(m, math.Abs(t.Float64At(k)))
	}
	return m
}

// requireClose checks |got - want| <= 1e-5 * max(1, |want|, scale).
func requireClose(t *testing.T, want, got, scale float64, what string) {
	t.Helper()
	if math.IsNaN(want) && math.IsNaN(got) {
		return
	}
	if want == got {
		return
	}
	tol := 1e-5 * max(1, math.Abs(want), scale)
	require.LessOrEqual(t, math.Abs(want-got), tol, "%s: want %v got %v", what, want, got)
}

func compareTensors(t *testing.T, want, got *tensor.Tensor, scale float64, what string) {
	t.Helper()
	n := int(want.NumElements())
	for k := range n {
		if want.DType.IsFloat() {
			requireClose(t, want.Float64At(k), got.Float64At(k), scale, what)
			continue
		}
		w, g := intAt(want, k), intAt(got, k)
		if w != g {
			require.Failf(t, "tensors differ", "%s[%d]: want %d got %d", what, k, w, g)
		}
	}
}

// withVars adds to s the shapes of f's buffer parameters computed from the
// values of their symbolic variables (by name).
func withVars(f *ir.PrimFunc, s spec, vars map[string]int64) spec {
	if s == nil {
		s = spec{}
	}
	for _, p := range f.Params {
		b := f.BufferMap[p]
		if b == nil {
			continue
		}
		var shape []int64
		sym := false
		if _, given := s[b.Name]; given {
			continue
		}
		for _, d := range b.Shape {
			switch d := d.(type) {
			case *ir.IntImm:
				shape = append(shape, d.Value)
			case *ir.PrimVar:
				shape = append(shape, vars[d.Name])
				sym = true
			default:
				panic("withVars: give the shape of " + b.Name + " in the spec")
			}
		}
		if sym {
			s[b.Name] = shape
		}
	}
	return s
}

// loadFunc parses the PrimFunc fn of testdata/file.
func loadFunc(t testing.TB, file, fn string) *ir.PrimFunc {
	t.Helper()
	src, err := os.ReadFile("../../testdata/" + file)
	require.NoError(t, err)
	mod, diags := syntax.Parse(file, src)
	require.False(t, diags.HasErrors(), "%v", diags)
	f := mod.PrimFunc(fn)
	require.NotNil(t, f, "no PrimFunc %s in %s", fn, file)
	return f
}
