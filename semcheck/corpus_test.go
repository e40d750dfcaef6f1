package semcheck

import (
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// mustKeep lists the corpus modules whose result is checked after every
// pass of canonicalize,lower,build today (evaluator up to lower, VM after
// build); the others cannot be evaluated from random inputs (TIR-only
// modules, unregistered packed functions, parameters without a known
// shape) or do not reach build, and are logged with the reason.
var mustKeep = map[string]bool{}

func init() {
	for _, name := range []string{
		"lowered_call_tir_inplace", "lowered_call_tir_rewrite", "lowered_call_tir_tir_vars",
		"lowered_legalized_static", "lowered_legalized_symbolic", "lowered_memory_keyword_args",
		"lowered_memory_planned", "lowered_vm_builtins", "lowered_vm_call_tir_dyn",
		"relax_closure_capture", "relax_dataflow_multi_output", "relax_expression_dims",
		"relax_global_calls", "relax_if_local_function", "relax_leaf_values",
		"relax_make_invoke_closure", "relax_mlp_symbolic_batch", "relax_reductions_attrs",
		"relax_shape_and_prim_values", "relax_symbolic_defined_later", "relax_transformer_block",
		"relax_tuple_as_shape", "relax_tuples", "relax_tvm_script_decorator",
	} {
		mustKeep["../testdata/"+name+".tvms"] = true
	}
}

// TestCorpusKeepsResults checks every pass of canonicalize,lower,build on
// the TVMScript corpus keeps the module's result: unlike the VM-vs-evaluator
// comparison of codegen, which compares the ends, this evaluates the
// module after each pass and would name the pass that broke it.
func TestCorpusKeepsResults(t *testing.T) {
	paths, err := filepath.Glob("../testdata/*.tvms")
	require.NoError(t, err)
	kept := 0
	for _, path := range paths {
		mod := parseFile(t, path)
		c := &Checker{Inputs: Inputs{Seed: 1, Dim: 3}}
		if err := c.Reference(mod); err != nil {
			require.False(t, mustKeep[path], "%s: %v", path, err)
			t.Logf("%s: not evaluable: %v", path, err)
			continue
		}
		_, err := runChecked(t, mod, "canonicalize,lower,build", c)
		if !assert.Nil(t, c.Failure, path) {
			continue
		}
		if err != nil {
			require.False(t, mustKeep[path], "%s: %v", path, err)
			t.Logf("%s: does not reach build: %v", path, err)
			continue
		}
		if mustKeep[path] {
			kept++
		} else {
			t.Logf("%s: keeps its result through build (not pinned yet)", path)
		}
	}
	require.Equal(t, len(mustKeep), kept, "every pinned module keeps its result through build")
}
