package transform_test

import (
	"fmt"
	"os"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/phasec/phasec/eval/evaltest"
	"github.com/phasec/phasec/ir"
	"github.com/phasec/phasec/syntax"
	"github.com/phasec/phasec/transform"
)

// primitiveFuncs returns the names of the module's Primitive functions
// with the kernels each calls, in order.
func primitiveFuncs(mod *ir.Module) map[string][]string {
	out := map[string][]string{}
	for _, name := range mod.Names() {
		f := mod.Func(name)
		if f == nil {
			continue
		}
		if v, ok := f.Attrs[ir.AttrPrimitive]; !ok || v != true {
			continue
		}
		var kernels []string
		for _, b := range f.Body.(*ir.SeqExpr).Blocks[0].Bindings {
			if c, ok := b.(*ir.VarBinding).Value.(*ir.Call); ok && len(c.Args) > 0 {
				if gv, ok := c.Args[0].(*ir.GlobalVar); ok {
					kernels = append(kernels, gv.Name)
				}
			}
		}
		out[name] = kernels
	}
	return out
}

func readTVMS(t testing.TB, path string) *ir.Module {
	t.Helper()
	src, err := os.ReadFile(path)
	require.NoError(t, err)
	return evaltest.Parse(t, path, string(src))
}

// TestFuseOpsGroups checks the groups of TVM's test cases (the golden
// inputs) independently of the printed text: the fused functions and the
// kernels each holds, as TVM's expected modules have them.
func TestFuseOpsGroups(t *testing.T) {
	want := map[string]map[string][]string{
		"fuse_simple":               {"fused_add_exp_squeeze": {"add", "exp", "squeeze"}},
		"conv2d_fuse":               {"fused_conv2d_add1_add2": {"conv2d", "add1", "add2"}, "fused_conv2d1_add2": {"conv2d1", "add2"}},
		"concatenate":               {"fused_resize2d_concat_add": {"resize2d", "concat", "add"}},
		"tuple_root":                {},
		"inception_like":            {"fused_conv2d_relu": {"conv2d", "relu"}, "fused_conv2d1_relu": {"conv2d1", "relu"}},
		"softmax":                   {"fused_softmax_astype": {"softmax", "astype"}},
		"tuple_get_root":            {"fused_split": {"split"}},
		"dead_group":                {"fused_matmul1_add1": {"matmul1", "add1"}},
		"multiple_paths":            {"fused_conv2d_add_add2": {"conv2d", "add", "add2"}, "fused_matmul_add1": {"matmul", "add1"}},
		"packed_params":             {},
		"skipping_primvalue":        {},
		"skipping_match_cast":       {},
		"skip_call_dps_packed":      {},
		"edge_with_call_dps_packed": {},
		"call_tir_inplace":          {"fused_add_exp_inplace_squeeze_inplace": {"add", "exp_inplace", "squeeze_inplace"}},
		"multiple_relax_functions":  {"fused_add_exp_squeeze": {"add", "exp", "squeeze"}, "fused_add1_exp1_squeeze1": {"add1", "exp1", "squeeze1"}},
		"parallel_injective":        {"fused_add_squeeze_permute_dims_permute_dims1_left_shift": {"add", "squeeze", "permute_dims", "permute_dims1", "left_shift"}},
		"tuple_get_elemwise":        {"fused_split_sigmoid_tanh_exp_multiply_add": {"split", "sigmoid", "tanh", "exp", "multiply", "add"}},
	}
	for name, groups := range want {
		t.Run(name, func(t *testing.T) {
			mod := readTVMS(t, "../testdata/passes/FuseOps/"+name+".tvms")
			out, err := runPipeline(t, "LegalizeOps,AnnotateTIROpPattern,FuseOps", mod)
			require.NoError(t, err)
			assert.Equal(t, groups, primitiveFuncs(out))
		})
	}
}

// TestFuseOpsLevels: fuse_opt_level=0 fuses nothing and returns its input;
// relax.FuseOps.max_depth bounds the bindings of a group.
func TestFuseOpsLevels(t *testing.T) {
	mod := readTVMS(t, "../testdata/passes/FuseOps/fuse_simple.tvms")
	annotated, err := runPipeline(t, "LegalizeOps,AnnotateTIROpPattern", mod)
	require.NoError(t, err)
	out, err := runPipeline(t, "FuseOps{fuse_opt_level=0}", annotated)
	require.NoError(t, err)
	assert.Same(t, annotated, out)

	out, err = transform.FuseOpsModule(annotated, 2, 2)
	require.NoError(t, err)
	assert.Equal(t, map[string][]string{"fused_add_exp": {"add", "exp"}}, primitiveFuncs(out),
		"at most two bindings a group: add takes exp (the first node in post-DFS order fuses first), squeeze stays")

	// A second run fuses nothing more: Primitive functions are left alone.
	// (As a pipeline it is refused: the module is inside the fusion group.)
	full, err := runPipeline(t, "FuseOps", annotated)
	require.NoError(t, err)
	again, err := transform.FuseOpsModule(full, 2, 256)
	require.NoError(t, err)
	assert.Same(t, full, again)
	_, err = runPipeline(t, "FuseOps", full)
	require.ErrorContains(t, err, "NoPrimitiveFunctions")
}

// TestFuseOpsComputesTheSame is the semantic oracle on the bundled models:
// the fused module computes what the legalized one does.
func TestFuseOpsComputesTheSame(t *testing.T) {
	for _, path := range []string{"../testdata/models/mlp.tvms", "../testdata/models/transformer_block_hl.tvms"} {
		t.Run(path, func(t *testing.T) {
			mod := readTVMS(t, path)
			legal, err := runPipeline(t, "canonicalize,LegalizeOps,AnnotateTIROpPattern", mod)
			require.NoError(t, err)
			out := evaltest.CheckPipeline(t, legal, "FuseOps", evaltest.Options{})
			assert.NotEmpty(t, primitiveFuncs(out), "%s: nothing fused", path)
		})
	}
}

// chainModule is a dataflow block of n elementwise call_tir bindings.
func chainModule(t testing.TB, n int) *ir.Module {
	var b strings.Builder
	b.WriteString(`# from tvm.script import ir as I
# from tvm.script import tir as T
# from tvm.script import relax as R

@I.ir_module
class Module:
    @T.prim_func(private=True)
    def exp(A: T.Buffer((4,), "float32"), B: T.Buffer((4,), "float32")):
        T.func_attr({"op_pattern": 0})
        for i in range(4):
            with T.block("B"):
                vi = T.axis.spatial(4, i)
                B[vi] = T.exp(A[vi])

    @R.function
    def main(x: R.Tensor((4,), dtype="float32")) -> R.Tensor((4,), dtype="float32"):
        cls = Module
        with R.dataflow():
            v0 = R.call_tir(cls.exp, (x,), out_sinfo=R.Tensor((4,), dtype="float32"))
`)
	for i := 1; i < n; i++ {
		fmt.Fprintf(&b, "            v%d = R.call_tir(cls.exp, (v%d,), out_sinfo=R.Tensor((4,), dtype=\"float32\"))\n", i, i-1)
	}
	fmt.Fprintf(&b, "            R.output(v%d)\n        return v%d\n", n-1, n-1)
	mod, errs := syntax.Parse("chain.tvms", []byte(b.String()))
	require.False(t, errs.HasErrors(), "%v", errs)
	return mod
}

// TestFuseOpsChain: a chain of elementwise kernels fuses in groups of
// relax.FuseOps.max_depth bindings.
func TestFuseOpsChain(t *testing.T) {
	out, err := transform.FuseOpsModule(chainModule(t, 600), 2, 256)
	require.NoError(t, err)
	groups := primitiveFuncs(out)
	var calls []int
	for _, b := range out.Func("main").Body.(*ir.SeqExpr).Blocks[0].Bindings {
		gv := b.(*ir.VarBinding).Value.(*ir.Call).Op.(*ir.GlobalVar)
		calls = append(calls, len(groups[gv.Name]))
	}
	// Groups of 256, 256 and 88; the two equal groups share one function.
	assert.Equal(t, []int{256, 256, 88}, calls)
	assert.Len(t, groups, 2)
}

// BenchmarkFuseOps: linear in the number of bindings (see
// measureLinear).
func BenchmarkFuseOps(b *testing.B) {
	benchPass(b, transform.FuseOps, func(n int) *ir.Module { return chainModule(b, n) })
}
