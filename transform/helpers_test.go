package transform_test

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/phasec/phasec/barrier"
	"github.com/phasec/phasec/eval"
	"github.com/phasec/phasec/eval/evaltest"
	"github.com/phasec/phasec/ir"
	"github.com/phasec/phasec/ir/irgen"
	"github.com/phasec/phasec/passes"
	"github.com/phasec/phasec/passes/passtest"
)

// goldens maps each golden directory under testdata/passes to the pipeline
// its inputs run.
var goldens = map[string]string{
	"DeadCodeElimination":                        "DeadCodeElimination",
	"DeadCodeElimination/entry_foo":              `DeadCodeElimination{entry_functions=["foo"]}`,
	"DeadCodeElimination/entry_main":             `DeadCodeElimination{entry_functions=["main"]}`,
	"DeadCodeElimination/bad_entry":              `DeadCodeElimination{entry_functions=["mian"]}`,
	"DeadCodeElimination/canonicalized":          "canonicalize,DeadCodeElimination",
	"EliminateCommonSubexpr":                     "EliminateCommonSubexpr",
	"ConvertToDataflow":                          "ConvertToDataflow",
	"TopologicalSort":                            "TopologicalSort",
	"TopologicalSort/depth_first_from_inputs":    `TopologicalSort{order=depth-first,direction=from-inputs}`,
	"TopologicalSort/depth_first_from_outputs":   `TopologicalSort{order=depth-first,direction=from-outputs}`,
	"TopologicalSort/breadth_first_from_inputs":  `TopologicalSort{order=breadth-first,direction=from-inputs}`,
	"TopologicalSort/breadth_first_from_outputs": `TopologicalSort{order=breadth-first,direction=from-outputs}`,
	"ConvertToDataflow/min_size_3":               "ConvertToDataflow{min_size=3}",
	"EliminateCommonSubexpr/call_only":           "EliminateCommonSubexpr{call_only=true}",
	"EliminateCommonSubexpr/with_dce":            "EliminateCommonSubexpr,DeadCodeElimination",
	"RemoveUnusedParameters":                     "RemoveUnusedParameters",
	"RemoveUnusedOutputsInner":                   "RemoveUnusedOutputsInner",
	"ExpandTupleArgumentsInner":                  "ExpandTupleArgumentsInner",
	"NormalizeGlobalVar":                         "NormalizeGlobalVar",
	"InlinePrivateFunctions":                     "InlinePrivateFunctions",
	"AnnotateTIROpPattern":                       "AnnotateTIROpPattern",
	"FuseTIR":                                    "FuseTIR",
	"FuseOps":                                    "LegalizeOps,AnnotateTIROpPattern,FuseOps",
	"FuseOpsByPattern":                           `FuseOpsByPattern{patterns=["phasec_blas"]}`,
	"FuseOpsByPattern/annotate":                  `FuseOpsByPattern{patterns=["phasec_blas","dnnl"],annotate_codegen=true}`,
	"FuseOpsByPattern/unbound_constants":         `FuseOpsByPattern{patterns=["phasec_blas"],bind_constants=false}`,
	"FuseOpsByPattern/bad_table":                 `FuseOpsByPattern{patterns=["phasec_blsa"]}`,
	"FuseOpsByPattern/bad_entry":                 `FuseOpsByPattern{patterns=["phasec_blas"],entry_functions=["mian"]}`,
	"FuseOpsByPattern/dnnl":                      `FuseOpsByPattern{patterns=["dnnl"]}`,
	"MergeCompositeFunctions":                    "MergeCompositeFunctions",
	"MergeCompositeFunctions/from_patterns":      `FuseOpsByPattern{patterns=["phasec_blas"]},MergeCompositeFunctions`,
	"RunCodegen":                                 `FuseOpsByPattern{patterns=["phasec_blas"]},MergeCompositeFunctions,RunCodegen`,
	"RunCodegen/annotate":                        `FuseOpsByPattern{patterns=["phasec_blas"],annotate_codegen=true},RunCodegen`,
	"RunCodegen/bad":                             "RunCodegen",
	"RunCodegen/not_offloaded":                   `FuseOpsByPattern{patterns=["phasec_blas"]},RunCodegen`,
	"ConvertLayout":                              `ConvertLayout{desired_layouts={"relax.nn.conv2d":["NHWC","OHWI"]}}`,
	"ConvertLayout/resize2d":                     `ConvertLayout{desired_layouts={"relax.nn.conv2d":["NHWC","OHWI"],"relax.image.resize2d":["NHWC"]}}`,
	"ConvertLayout/nchw4c":                       `ConvertLayout{desired_layouts={"relax.nn.conv2d":["NCHW4c","OIHW4o"]}}`,
	"ConvertLayout/nhwc4c":                       `ConvertLayout{desired_layouts={"relax.nn.conv2d":["NHWC4c","OHWI4o"]}}`,
	"ConvertLayout/n2nhwc4c":                     `ConvertLayout{desired_layouts={"relax.nn.conv2d":["N2nHWC4c","OHWI2i4o"]}}`,
	"ConvertLayout/nchw16c":                      `ConvertLayout{desired_layouts={"relax.nn.conv2d":["NCHW16c","OIHW16i16o"]}}`,
	"AlterOpImpl":                                `AlterOpImpl{file="../testdata/passes/AlterOpImpl/impls/add.tvms",op_impl_map={"relax.add":"add_2d"},op_buffer_transforms={"relax.add":["lambda i: (i // 4, i % 4)","lambda i: (i // 4, i % 4)","lambda i: (i // 4, i % 4)"]}},DeadCodeElimination`,
	"SplitCallTIRByPattern":                      "SplitCallTIRByPattern",
	"AlterOpImpl/empty_layout_changes":           `AlterOpImpl{file="../testdata/passes/AlterOpImpl/impls/add.tvms",op_impl_map={"relax.mul_by_2":"add_x_x"},op_buffer_transforms={"relax.mul_by_2":[]}},DeadCodeElimination`,
	"AlterOpImpl/multiple_outputs":               `AlterOpImpl{file="../testdata/passes/AlterOpImpl/impls/add.tvms",op_impl_map={"relax.some_op":"some_op_2d"},op_buffer_transforms={"relax.some_op":["lambda i: (i // 4, i % 4)","lambda i: (i // 4, i % 4)","lambda i: (i // 4, i % 4)","lambda i: (i // 4, i % 4)"]}},DeadCodeElimination`,
	"AlterOpImpl/axis_separators":                `AlterOpImpl{file="../testdata/passes/AlterOpImpl/impls/add.tvms",op_impl_map={"relax.some_op":"some_op_2d"},op_buffer_transforms={"relax.some_op":["lambda i: (i // 4, i % 4)","lambda i: (i // 4, i % 4)","lambda i: (i // 4, i % 4)","lambda i: (i // 4, i % 4)"]},op_buffer_axis_separators={"relax.some_op":[[1],[1],[1],[1]]}},DeadCodeElimination`,
	"AlterOpImpl/input_axis_separators":          `AlterOpImpl{file="../testdata/passes/AlterOpImpl/impls/add.tvms",op_impl_map={"relax.some_op":"some_op_2d"},op_buffer_transforms={"relax.some_op":["lambda i: (i // 4, i % 4)","lambda i: (i // 4, i % 4)","lambda i: (i // 4, i % 4)","lambda i: (i // 4, i % 4)"]},op_buffer_axis_separators={"relax.some_op":[[1],[1],[],[]]},op_buffer_input_axis_separators={"relax.some_op":[[],[],[1],[1]]}},DeadCodeElimination`,
	"AlterOpImpl/implicit_padding":               `AlterOpImpl{file="../testdata/passes/AlterOpImpl/impls/add.tvms",op_impl_map={"relax.relu":"relu_pad"},op_buffer_transforms={"relax.relu":["lambda i: (i // 4, i % 4)","lambda i: (i // 4, i % 4)"]}},DeadCodeElimination`,
	"AlterOpImpl/reshape":                        `AlterOpImpl{file="../testdata/passes/AlterOpImpl/impls/add.tvms",op_impl_map={"relax.reshape":"reshape_new"},op_buffer_transforms={"relax.reshape":["T.index_map(lambda i, j: (i, j // 16, j % 16))",null]}},DeadCodeElimination`,
	"AlterOpImpl/bad_operator":                   `AlterOpImpl{file="../testdata/passes/AlterOpImpl/impls/add.tvms",op_impl_map={"relax.ad":"add_2d"}}`,
	"AlterOpImpl/bad_arity":                      `AlterOpImpl{file="../testdata/passes/AlterOpImpl/impls/add.tvms",op_impl_map={"relax.add":"add_2d"},op_buffer_transforms={"relax.add":["lambda i, j: (i, j // 4, j % 4)","lambda i: (i // 4, i % 4)","lambda i: (i // 4, i % 4)"]}}`,
	"AlterOpImpl/bad_impl":                       `AlterOpImpl{file="../testdata/passes/AlterOpImpl/impls/add.tvms",op_impl_map={"relax.add":"add2d"}}`,
	"ExpandMatmulOfSum":                          "ExpandMatmulOfSum",
	"ReorderTakeAfterMatmul":                     "ReorderTakeAfterMatmul",
	"ReorderPermuteDimsAfterConcat":              "ReorderPermuteDimsAfterConcat",
	"AdjustMatmulOrder":                          "AdjustMatmulOrder",
	"FoldBatchnormToConv2D":                      "FoldBatchnormToConv2D",
	"FoldBatchnormToConv2D/fold_constant":        "FoldBatchnormToConv2D,FoldConstant",
	"CombineParallelMatmul":                      "CombineParallelMatmul",
	"CombineParallelMatmul/min_branches_3":       "CombineParallelMatmul{min_branches=3}",
	"FuseTransposeMatmul":                        "FuseTransposeMatmul",
	"Gradient":                                   "Gradient",
	"Gradient/require_grads":                     `Gradient{require_grads=["x"]}`,
	"Gradient/checkpoint":                        "Gradient",
	"PatternMatchingRewriter":                    `PatternMatchingRewriter{file="../testdata/passes/PatternMatchingRewriter/rules/double.tvms"}`,
	"PatternMatchingRewriter/subroutine":         `PatternMatchingRewriter{file="../testdata/passes/PatternMatchingRewriter/rules/subroutine.tvms"}`,
	"PatternMatchingRewriter/symbolic":           `PatternMatchingRewriter{file="../testdata/passes/PatternMatchingRewriter/rules/sum_of_squares.tvms"}`,
	"PatternMatchingRewriter/split":              `PatternMatchingRewriter{file="../testdata/passes/PatternMatchingRewriter/rules/split_add.tvms"}`,
	"Gradient/checkpoint_require":                `Gradient{require_grads=["z"]}`,
	"Gradient/checkpoint_intermediate":           `Gradient{require_grads=["lv1"]}`,
	"Gradient/target_index":                      `Gradient{target_index=2}`,
	"Gradient/bad_target_index":                  `Gradient{target_index=1}`,
	"Gradient/bad_require":                       `Gradient{require_grads=["x0","y","x0"]}`,
	"Gradient/bad_func":                          `Gradient{func_name=mian}`,
	"ToMixedPrecision":                           "ToMixedPrecision",
	"ToMixedPrecision/out_float16":               "ToMixedPrecision{out_dtype=float16}",
	"ToMixedPrecision/convert_sig":               `ToMixedPrecision{out_dtype=float16,fp16_input_names=["w","bias"]}`,
	"ToMixedPrecision/bfloat16":                  "ToMixedPrecision{storage_dtype=bfloat16}",
	"ToMixedPrecision/bad_input_name":            `ToMixedPrecision{fp16_input_names=["wx"]}`,
	"LiftTransformParams":                        "LiftTransformParams",
	"LiftTransformParams/unbundled":              "LiftTransformParams{bundle_params=false}",
	"LiftTransformParams/shared":                 "LiftTransformParams{shared_transform=true}",
	"LiftTransformParams/shared_list":            `LiftTransformParams{shared_transform=["func1","func2"]}`,
	"LiftTransformParams/shared_bad_name":        `LiftTransformParams{shared_transform=["func1","func9"]}`,
	"LazyTransformParams":                        "LazyTransformParams",
	"LazyTransformParams/get_item_only":          `LazyTransformParams{fset_item=""}`,
	"LazyGetInput":                               "LazyGetInput",
	"LazyGetInput/after_dataflow":                "ConvertToDataflow,LazyGetInput",
	"LazySetOutput":                              "LazySetOutput",
	"SpecializePrimFuncBasedOnCallSite":          "SpecializePrimFuncBasedOnCallSite",
	"UpdateParamStructInfo":                      `UpdateParamStructInfo{sinfo={"A": "R.Tensor(('n',), 'float32')", "B": "R.Tensor(('n',), 'float32')"}}`,
	"UpdateParamStructInfo/batch":                `UpdateParamStructInfo{sinfo={"x": "R.Tensor(('n', 'k'), 'float32')"}}`,
	"UpdateParamStructInfo/bad_name":             `UpdateParamStructInfo{sinfo={"y": "R.Tensor((4,), 'float32')"}}`,
}

// TestGoldens runs each golden directory's pipeline on its inputs (TVM's
// test cases written as phasec modules, and phasec's own) and compares
// with the expected outputs and diagnostics.
func TestGoldens(t *testing.T) {
	for dir, pipeline := range goldens {
		t.Run(dir, func(t *testing.T) {
			passtest.Run(t, barrier.Registry, "../testdata/passes/"+dir, pipeline)
		})
	}
}

// checkedOnTheVM are passes whose outputs the evaluator cannot run, and
// where their semantic oracle is instead.
var checkedOnTheVM = map[string]string{
	"RunCodegen":            "its outputs call external modules only the VM links; codegen's TestOffloadAgreesWithEvaluator runs them on the VM against the evaluator",
	"SplitCallTIRByPattern": "its outputs call phasec_blas GEMMs only the VM links; TestSplitCallTIRByPatternRunsOnTheVM runs them on the VM against the evaluator",
	"LazyTransformParams":   "its outputs call get_item/set_item: TestLazyPassesCompute runs them with Go callbacks on the evaluator and the VM",
	"LazyGetInput":          "its outputs take a callback: TestLazyPassesCompute passes a Go one",
	"LazySetOutput":         "its outputs take a callback: TestLazyPassesCompute passes a Go one",
	"LiftTransformParams":   "it changes the signatures: TestLiftTransformParamsComputes checks name(inputs, *name_transform_params(weights)) against the original",
}

// TestGoldensCompute is the semantic oracle on the golden inputs: every
// public function the evaluator can run (on random arguments) computes the
// same before and after the pass. Each pass must have evaluated cases.
func TestGoldensCompute(t *testing.T) {
	evaluated := map[string]int{}
	for dir, pipeline := range goldens {
		pass := strings.SplitN(dir, "/", 2)[0]
		if reason, ok := checkedOnTheVM[pass]; ok {
			t.Logf("%s: %s", dir, reason)
			continue
		}
		inputs, err := passtest.Inputs("../testdata/passes/" + dir)
		require.NoError(t, err)
		for _, path := range inputs {
			src, err := os.ReadFile(path)
			require.NoError(t, err)
			if strings.Contains(string(src), "# want") {
				continue
			}
			t.Run(dir+"/"+filepath.Base(path), func(t *testing.T) {
				before := evaltest.Parse(t, path, string(src))
				res := passtest.Execute(barrier.Registry, path, src, pipeline, passtest.Options{})
				require.NoError(t, res.Err)
				for _, name := range before.Names() {
					f := before.Func(name)
					if f == nil || !ir.IsPublic(f) || res.Output.Func(name) == nil {
						continue
					}
					args, err := eval.RandomArgs(f, 1, nil, 3)
					if err != nil {
						continue
					}
					if _, err := eval.New(before).Call(name, args...); err != nil {
						t.Logf("%s: not evaluable: %v", name, err)
						continue
					}
					evaltest.CheckSame(t, before, res.Output, evaltest.Options{Func: name, Args: args})
					evaluated[pass]++
				}
			})
		}
	}
	for dir := range goldens {
		pass := strings.SplitN(dir, "/", 2)[0]
		if _, ok := checkedOnTheVM[pass]; ok {
			continue
		}
		assert.Positive(t, evaluated[pass], "no golden input of %s could be evaluated", pass)
	}
}

// runGoldens runs pipeline on every input of dir, or the pipeline
// special names for an input (by file name without .tvms).
func runGoldens(t *testing.T, dir, pipeline string, special map[string]string) {
	t.Helper()
	inputs, err := passtest.Inputs(dir)
	require.NoError(t, err)
	require.NotEmpty(t, inputs)
	for _, path := range inputs {
		name := strings.TrimSuffix(filepath.Base(path), ".tvms")
		p := pipeline
		if s, ok := special[name]; ok {
			p = s
		}
		t.Run(name, func(t *testing.T) {
			passtest.RunFile(t, barrier.Registry, path, p, passtest.Options{})
		})
	}
}

// chainWithExtra returns irgen's n-binding chain (normalized, one
// dataflow block in main) with the binding extra makes after each binding
// i: a benchmark input of 2n bindings.
func chainWithExtra(n int, extra func(i int, b ir.Binding) ir.Binding) *ir.Module {
	mod := irgen.MustNormalize(irgen.Chain(n))
	f := mod.Func("main")
	seq := f.Body.(*ir.SeqExpr)
	var binds []ir.Binding
	for i, b := range seq.Blocks[0].Bindings {
		binds = append(binds, b, extra(i, b))
	}
	nseq := &ir.SeqExpr{Blocks: []*ir.BindingBlock{{Bindings: binds, Dataflow: true}}, Body: seq.Body}
	nseq.SetStructInfo(seq.StructInfo())
	nf := *f
	nf.Body = nseq
	out := mod.Clone()
	out.Set("main", &nf)
	return out
}

// run runs p on mod with a default context, failing the test on error.
func run(t testing.TB, p *passes.Pass, mod *ir.Module) *ir.Module {
	t.Helper()
	out, err := passes.NewPassContext().Run(context.Background(), p, mod)
	require.NoError(t, err)
	return out
}

// runErr runs p on mod with a default context and returns its error.
func runErr(p *passes.Pass, mod *ir.Module) (*ir.Module, error) {
	return passes.NewPassContext().Run(context.Background(), p, mod)
}

// runPipeline runs the pipeline text spec, which must be valid, on mod
// with a default context.
func runPipeline(t testing.TB, spec string, mod *ir.Module) (*ir.Module, error) {
	t.Helper()
	p, diags := barrier.Registry.ParseAndBuild("pipeline", spec)
	require.Empty(t, diags, spec)
	return passes.NewPassContext().Run(context.Background(), p, mod)
}

// requireBadPipelines checks that each pipeline text is refused before it
// runs (bad options) with errors matching its regexp.
func requireBadPipelines(t *testing.T, want map[string]string) {
	t.Helper()
	for text, re := range want {
		_, errs := barrier.Registry.ParseAndBuild("pipeline", text)
		require.True(t, errs.HasErrors(), text)
		assert.Regexp(t, re, errs.Error(), text)
	}
}
