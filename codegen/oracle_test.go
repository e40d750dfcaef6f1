package codegen

import (
	"context"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/phasec/phasec/barrier"
	"github.com/phasec/phasec/eval"
	"github.com/phasec/phasec/ir"
	"github.com/phasec/phasec/phase"
	"github.com/phasec/phasec/vm"
	"github.com/phasec/phasec/vm/loader"
)

// toVM and fromVM are ToVM and FromVM (values.go).
var toVM, fromVM = ToVM, FromVM

// mustReachBuild lists the bundled modules the pipeline takes to phase
// build today; TestVMAgreesWithEvaluator fails if one stops building, and
// checks every other module of the corpus that starts to (as LegalizeOps
// and friends land) without a change here.
var mustReachBuild = map[string]bool{
	"../testdata/lowered_call_tir_inplace.tvms":              true,
	"../testdata/lowered_call_tir_rewrite.tvms":              true,
	"../testdata/lowered_call_tir_tir_vars.tvms":             true,
	"../testdata/lowered_legalized_static.tvms":              true,
	"../testdata/lowered_legalized_symbolic.tvms":            true,
	"../testdata/lowered_memory_keyword_args.tvms":           true,
	"../testdata/lowered_memory_planned.tvms":                true,
	"../testdata/lowered_vm_builtins.tvms":                   true,
	"../testdata/lowered_vm_call_tir_dyn.tvms":               true,
	"../testdata/relax_axis_none.tvms":                       true,
	"../testdata/relax_closure_capture.tvms":                 true,
	"../testdata/relax_dataflow_multi_output.tvms":           true,
	"../testdata/relax_expression_dims.tvms":                 true,
	"../testdata/relax_global_calls.tvms":                    true,
	"../testdata/relax_if_local_function.tvms":               true,
	"../testdata/relax_layout_ops.tvms":                      true,
	"../testdata/relax_leaf_values.tvms":                     true,
	"../testdata/relax_memory_view.tvms":                     true,
	"../testdata/relax_make_invoke_closure.tvms":             true,
	"../testdata/relax_mlp_symbolic_batch.tvms":              true,
	"../testdata/relax_pool_resize.tvms":                     true,
	"../testdata/relax_reductions_attrs.tvms":                true,
	"../testdata/relax_shape_and_prim_values.tvms":           true,
	"../testdata/relax_symbolic_defined_later.tvms":          true,
	"../testdata/relax_transformer_block.tvms":               true,
	"../testdata/relax_tuple_as_shape.tvms":                  true,
	"../testdata/relax_tuples.tvms":                          true,
	"../testdata/relax_vdevice.tvms":                         true,
	"../testdata/relax_tvm_script_decorator.tvms":            true,
	"../testdata/models/mlp.tvms":                            true,
	"../testdata/models/mlp_legalized.tvms":                  true,
	"../testdata/models/transformer_block.tvms":              true,
	"../testdata/models/transformer_block_hl.tvms":           true,
	"../testdata/models/transformer_block_hl_legalized.tvms": true,
	"testdata/control_flow.tvms":                             true,
}

// TestVMAgreesWithEvaluator runs every bundled module the pipeline takes to
// phase build on the VM and, from its source before any pass, on the
// reference evaluator (package eval: op semantics and a plain TIR
// interpreter), on the same random inputs, for several symbolic sizes.
// Modules that do not reach build, or whose main takes inputs RandomArgs
// cannot make, are listed in the log with the reason.
func TestVMAgreesWithEvaluator(t *testing.T) {
	var paths []string
	for _, pattern := range []string{"../testdata/*.tvms", "../testdata/models/*.tvms", "testdata/*.tvms"} {
		files, err := filepath.Glob(pattern)
		require.NoError(t, err)
		paths = append(paths, files...)
	}
	checked := 0
	for _, path := range paths {
		src := parseFile(t, path)
		main := src.Func("main")
		if main == nil {
			t.Logf("%s: no Relax main", path)
			continue
		}
		if p, _ := phase.Recorded(src); p == phase.Build {
			t.Logf("%s: already in phase build (the evaluator runs phases up to lower)", path)
			continue
		}
		mod := src
		var err error
		for _, b := range []func(*ir.Module) (*ir.Module, error){barrier.Canonicalize, barrier.Lower, barrier.Build} {
			if mod, err = b(mod); err != nil {
				break
			}
		}
		if err != nil {
			require.False(t, mustReachBuild[path], "%s no longer reaches phase build: %v", path, err)
			t.Logf("%s: does not reach phase build", path)
			continue
		}
		exe, diags := Build(mod)
		if diags != nil {
			require.False(t, mustReachBuild[path], "%s: %v", path, diags)
			t.Logf("%s: VM code generation refuses it: %v", path, diags[0])
			continue
		}
		machine, err := loader.Link(exe, vm.Options{})
		require.NoError(t, err, path)
		for seed, size := range []int64{1, 3, 8} {
			in, err := eval.RandomArgs(main, uint64(seed), nil, size)
			if err != nil {
				t.Logf("%s: no random inputs: %v", path, err)
				break
			}
			want, err := eval.New(src).Call("main", in...)
			require.NoError(t, err, "%s: evaluator", path)
			args := make([]vm.Value, len(in))
			for i, a := range in {
				args[i], err = toVM(a)
				require.NoError(t, err)
			}
			out, _, err := machine.Call(context.Background(), "main", args)
			require.NoError(t, err, "%s: VM, symbolic size %d", path, size)
			got, err := fromVM(out, want)
			require.NoError(t, err)
			require.NoError(t, eval.Compare(got, want, eval.TranscendentalTol), "%s: symbolic size %d", path, size)
			if seed == 0 {
				checked++
				t.Logf("%s: the VM agrees with the evaluator", path)
			}
		}
	}
	require.GreaterOrEqual(t, checked, len(mustReachBuild), "modules checked against the evaluator")
}
