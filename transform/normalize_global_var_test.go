package transform_test

import (
	"fmt"
	"runtime"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/phasec/phasec/diag"
	"github.com/phasec/phasec/eval/evaltest"
	"github.com/phasec/phasec/ir"
	"github.com/phasec/phasec/ir/irgen"
	"github.com/phasec/phasec/transform"
)

const header = "# from tvm.script import ir as I\n# from tvm.script import tir as T\n# from tvm.script import relax as R\n\n"

// TVM's test_transform_normalize_global_var.py: the public f1 has
// global_symbol "f", so it becomes f and the private f becomes f1.
func TestNormalizeGlobalVarTVMCases(t *testing.T) {
	for name, c := range map[string]struct{ before, want string }{
		"test_normalize_relax_function": {
			before: `@I.ir_module(check_well_formed=False)
class Module:
    @R.function(private=True)
    def f() -> R.Tensor((), dtype="int32"):
        return R.const(1, "int32")

    @R.function
    def f1() -> R.Tensor((), dtype="int32"):
        R.func_attr({"global_symbol": "f"})
        cls = Module
        gv: R.Tensor((), dtype="int32") = cls.f()
        return gv
`,
			want: `@I.ir_module
class Module:
    @R.function
    def f() -> R.Tensor((), dtype="int32"):
        cls = Module
        gv: R.Tensor((), dtype="int32") = cls.f1()
        return gv

    @R.function(private=True)
    def f1() -> R.Tensor((), dtype="int32"):
        return R.const(1, "int32")
`,
		},
		"test_normalize_tir_function": {
			before: `@I.ir_module(check_well_formed=False)
class Module:
    @T.prim_func(private=True)
    def f(x: T.Buffer((1,), "int32")):
        x[0] = T.int32(0)

    @R.function
    def f1() -> R.Tensor((1,), dtype="int32"):
        R.func_attr({"global_symbol": "f"})
        cls = Module
        gv = R.call_tir(cls.f, R.tuple(), out_sinfo=R.Tensor((1,), dtype="int32"))
        return gv
`,
			want: `@I.ir_module
class Module:
    @T.prim_func(private=True)
    def f1(x: T.Buffer((1,), "int32")):
        x[0] = T.int32(0)

    @R.function
    def f() -> R.Tensor((1,), dtype="int32"):
        cls = Module
        gv = R.call_tir(cls.f1, R.tuple(), out_sinfo=R.Tensor((1,), dtype="int32"))
        return gv
`,
		},
	} {
		t.Run(name, func(t *testing.T) {
			before := normalized(t, evaltest.Parse(t, name+".tvms", header+c.before))
			want := normalized(t, evaltest.Parse(t, name+".out.tvms", header+c.want))
			got, err := transform.NormalizeGlobalVars(before)
			require.NoError(t, err)
			got.Unchecked, want.Unchecked = nil, nil
			assert.Nil(t, ir.Diff(got, want, ir.EqualOptions{}))
			assert.NotNil(t, before.Func("f1"), "the input is not edited")
		})
	}
}

func TestNormalizeGlobalVarFreshNames(t *testing.T) {
	// Public a (symbol "p") and b (symbol "p1") take p and p1; the private
	// p must then skip p1 as TVM's NameSupply does: p2.
	src := header + `@I.ir_module
class Module:
    @R.function
    def a() -> R.Tensor((), dtype="int32"):
        R.func_attr({"global_symbol": "p"})
        cls = Module
        gv = cls.p()
        return gv

    @R.function
    def b() -> R.Tensor((), dtype="int32"):
        R.func_attr({"global_symbol": "p1"})
        cls = Module
        gv = cls.p()
        return gv

    @R.function(private=True)
    def p() -> R.Tensor((), dtype="int32"):
        return R.const(1, "int32")
`
	got, err := transform.NormalizeGlobalVars(normalized(t, evaltest.Parse(t, "fresh.tvms", src)))
	require.NoError(t, err)
	assert.Equal(t, []string{"p", "p1", "p2"}, got.Names())
	assert.NotNil(t, got.Func("p2"))
}

func TestNormalizeGlobalVarDuplicateSymbol(t *testing.T) {
	src := header + `@I.ir_module
class Module:
    @R.function
    def a() -> R.Tensor((), dtype="int32"):
        R.func_attr({"global_symbol": "p"})
        return R.const(1, "int32")

    @R.function
    def b() -> R.Tensor((), dtype="int32"):
        R.func_attr({"global_symbol": "p"})
        return R.const(2, "int32")
`
	_, err := transform.NormalizeGlobalVars(normalized(t, evaltest.Parse(t, "dup.tvms", src)))
	var list diag.List
	require.ErrorAs(t, err, &list)
	require.Len(t, list, 1)
	assert.Equal(t, transform.DiagDuplicateGlobalSymbol, list[0].Code)
	assert.Positive(t, list[0].Span.Line, "positioned at the second function")
}

func TestNormalizeGlobalVarWellFormedIsSameModule(t *testing.T) {
	mod := irgen.MustNormalize(irgen.MultiFunc(3, 4))
	assert.Same(t, mod, run(t, transform.NormalizeGlobalVar, mod))
}

func normalized(t *testing.T, mod *ir.Module) *ir.Module {
	t.Helper()
	out, diags := ir.NormalizeModule(mod)
	require.Empty(t, diags)
	return out
}

// BenchmarkNormalizeGlobalVar times the renaming on 10k and 100k bindings
// (1k and 10k private functions of 10): main's global_symbol is "f0", so
// main becomes f0, the private f0 becomes f01, and every call is renamed.
func BenchmarkNormalizeGlobalVar(b *testing.B) {
	for _, funcs := range []int{1000, 10000} {
		mod := irgen.MultiFunc(funcs, 10)
		main := *mod.Func("main")
		main.Attrs = ir.Attrs{ir.AttrGlobalSymbol: "f0"}
		mod.Set("main", &main)
		mod = irgen.MustNormalize(mod)
		b.Run(fmt.Sprintf("bindings=%d", funcs*10), func(b *testing.B) {
			runtime.GC()
			b.ReportAllocs()
			for b.Loop() {
				if _, err := transform.NormalizeGlobalVars(mod); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
