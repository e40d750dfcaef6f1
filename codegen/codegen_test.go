package codegen

import (
	"context"
	"fmt"
	"math"
	"os"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/phasec/phasec/ir"
	"github.com/phasec/phasec/syntax"
	"github.com/phasec/phasec/tensor"
	"github.com/phasec/phasec/vm"
	"github.com/phasec/phasec/vm/abi"
	"github.com/phasec/phasec/vm/loader"
)

func parseFile(t testing.TB, path string) *ir.Module {
	src, err := os.ReadFile(path)
	if err != nil || t == nil {
		if err != nil {
			panic(err)
		}
	}
	mod, diags := syntax.Parse(path, src)
	if diags.HasErrors() {
		panic(fmt.Sprint(diags))
	}
	return mod
}

func parseSrc(t *testing.T, src string) *ir.Module {
	mod, diags := syntax.Parse("m.tvms", []byte(src))
	require.False(t, diags.HasErrors(), "%v", diags)
	return mod
}

type goKernel func([]abi.Arg) error

func (g goKernel) Call(a []abi.Arg) error { return g(a) }

// goExp stands in for the compiled exp kernel: B = exp(A) elementwise.
func goKernels(k vm.Kernel) (abi.Kernel, error) {
	if _, err := loader.DecodeKernel(&k); err != nil {
		return nil, err
	}
	if k.Name != "exp" {
		return nil, fmt.Errorf("no Go kernel %s", k.Name)
	}
	return goKernel(func(a []abi.Arg) error {
		x, y := tensor.Data[float32](a[0].T), tensor.Data[float32](a[1].T)
		for i := range x {
			y[i] = float32(math.Exp(float64(x[i])))
		}
		return nil
	}), nil
}

func TestBuildAndRunStatic(t *testing.T) {
	mod := parseFile(t, "testdata/static_build.tvms")
	exe, diags := Build(mod)
	require.Empty(t, diags)
	// Through the binary form, as phasec run does.
	machine, err := loader.Load(exe.Marshal(), vm.Options{CompileKernel: goKernels})
	require.NoError(t, err)
	x := tensor.New(tensor.Float32, 2, 4)
	for i := range 8 {
		x.SetFloat64(i, float64(i)/4-1)
	}
	out, err := machine.Run(context.Background(), "main", x)
	require.NoError(t, err)
	tup, ok := out.Tuple()
	require.True(t, ok)
	require.Len(t, tup.Fields, 2)
	y, ok := tup.Fields[0].Tensor()
	require.True(t, ok)
	assert.Equal(t, []int64{8}, y.Shape)
	for i, v := range tensor.Data[float32](y) {
		assert.InDelta(t, math.Exp(float64(i)/4-1), float64(v), 1e-5, "element %d", i)
	}
	s, _ := tup.Fields[1].Shape()
	assert.Equal(t, []int64{8}, s.Dims)

	// A wrong input shape is reported against the binding's position.
	_, err = machine.Run(context.Background(), "main", tensor.New(tensor.Float32, 2, 5))
	require.Error(t, err)
	assert.Contains(t, err.Error(), "testdata/static_build.tvms:38:9: in main, instruction 1")
	assert.Contains(t, err.Error(), `match_cast error, shape[1] mismatch to specified constant (expected 4, got 5).`)
}

func TestDisassembleStatic(t *testing.T) {
	exe, diags := Build(parseFile(t, "testdata/static_build.tvms"))
	require.Empty(t, diags)
	text := exe.Text()
	for _, want := range []string{
		"call  vm.builtin.alloc_storage in: %vm, c[3], i0, c[4], c[5] dst: %1",
		"call  vm.builtin.null_value in:              dst: %1",
		"call  exp              in: %0, %2       dst: %void",
		"call  vm.builtin.read_if_cond in: %1",
		"@exp num_inputs=2 kernel;",
	} {
		assert.Contains(t, text, want)
	}
}

func TestBuildNeedsBuildPhase(t *testing.T) {
	src, err := os.ReadFile("testdata/static_build.tvms")
	require.NoError(t, err)
	mod := parseSrc(t, strings.Replace(string(src), `I.module_attrs({"phase": "build"})`, "", 1))
	_, diags := Build(mod)
	require.Len(t, diags, 1)
	assert.Contains(t, diags[0].String(), "error VMC001: VM code generation needs a module in phase build, this one is in phase none")
}

func TestBuildRejectsUnknownPackedFunc(t *testing.T) {
	mod := parseSrc(t, `# from tvm.script import ir as I
# from tvm.script import relax as R
@I.ir_module
class Module:
    I.module_attrs({"phase": "build"})
    @R.function
    def main(x: R.Tensor((2,), dtype="float32")) -> R.Tensor((2,), dtype="float32"):
        R.func_attr({"global_symbol": "main", "relax.force_pure": True})
        y = R.call_packed("my.missing", x, sinfo_args=(R.Tensor((2,), dtype="float32"),))
        return y
`)
	_, diags := Build(mod)
	require.Len(t, diags, 1)
	assert.Equal(t, `m.tvms:9:27: error VMC003: unknown packed function "my.missing": no VM builtin of that name and no external module exports it`, diags[0].String())
}

// TestCompiledKernels runs the same module with the kernel compiled by
// vm/kernel from the executable's TVMScript text.
func TestCompiledKernels(t *testing.T) {
	exe, diags := Build(parseFile(t, "testdata/static_build.tvms"))
	require.Empty(t, diags)
	machine, err := loader.Load(exe.Marshal(), vm.Options{})
	require.NoError(t, err)
	x := tensor.New(tensor.Float32, 2, 4)
	for i := range 8 {
		x.SetFloat64(i, float64(i)/3-1)
	}
	out, err := machine.Run(context.Background(), "main", x)
	require.NoError(t, err)
	tup, _ := out.Tuple()
	y, _ := tup.Fields[0].Tensor()
	for i, v := range tensor.Data[float32](y) {
		assert.InEpsilon(t, math.Exp(float64(i)/3-1), float64(v), 1e-5, "element %d", i)
	}
}

func TestBuildRejectsUnloadableKernel(t *testing.T) {
	mod := parseSrc(t, `# from tvm.script import ir as I
# from tvm.script import tir as T
# from tvm.script import relax as R
@I.ir_module
class Module:
    I.module_attrs({"phase": "build"})
    @T.prim_func(private=True)
    def k(A: T.Buffer((T.int64(4),), "float32"), h: T.handle):
        T.func_attr({"global_symbol": "k"})
        T.evaluate(0)

    @R.function
    def main(x: R.Tensor((4,), dtype="float32")) -> R.Tensor((4,), dtype="float32"):
        R.func_attr({"global_symbol": "main", "relax.force_pure": True})
        cls = Module
        cls.k(x, x)
        return x
`)
	_, diags := Build(mod)
	require.Len(t, diags, 1)
	assert.Equal(t, "m.tvms:8:5: error VMC004: PrimFunc k: parameter h of type handle is neither a buffer nor a scalar", diags[0].String())
}

// TestBuildRejectsNamedCallTIRDyn: TVM parses R.vm.call_tir_dyn with a
// string callee (test_tvmscript_parser.py's test_vm_ops) and its runtime
// fails to call the string; phasec builds a kernel of the module only and
// says so at the callee.
func TestBuildRejectsNamedCallTIRDyn(t *testing.T) {
	mod := parseSrc(t, `# from tvm.script import ir as I
# from tvm.script import relax as R
@I.ir_module
class Module:
    I.module_attrs({"phase": "build"})
    @R.function(pure=False)
    def main(x: R.Tensor((2,), dtype="float32"), y: R.Tensor((2,), dtype="float32")) -> R.Tensor((2,), dtype="float32"):
        R.func_attr({"global_symbol": "main"})
        _ = R.call_packed("vm.builtin.call_tir_dyn", "te_func", x, y, R.shape([2]), sinfo_args=(R.Tuple,))
        return y
`)
	_, diags := Build(mod)
	require.Len(t, diags, 1)
	assert.Equal(t, `m.tvms:9:13: error VMC002: R.vm.call_tir_dyn calls "te_func": the VM calls a PrimFunc of the module (cls.f), not a function named at run time`, diags[0].String())
}
