package transform_test

import (
	"context"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/phasec/phasec/barrier"
	"github.com/phasec/phasec/eval/evaltest"
	"github.com/phasec/phasec/passes"
)

// TVM's test_transform_bind_symbolic_vars.py, and bad input.
func TestBindSymbolicVars(t *testing.T) {
	runGoldens(t, "../testdata/passes/BindSymbolicVars", "", map[string]string{
		"test_bind_tensors":                          `BindSymbolicVars{binding_map={"batch":1,"k":3},func_name=main}`,
		"test_bind_shape":                            `BindSymbolicVars{binding_map={"batch":1,"k":3},func_name=main}`,
		"test_arith":                                 `BindSymbolicVars{binding_map={"batch":1,"k":2,"m":3},func_name=main}`,
		"test_bind_multiple_variables_by_name":       `BindSymbolicVars{binding_map={"n":16}}`,
		"test_bind_single_variable_by_function_name": `BindSymbolicVars{binding_map={"n":16},func_name=main_1}`,
		"test_error_for_unused_replacement":          `BindSymbolicVars{binding_map={"non_existing_var_name":16}}`,
		"unknown_name_in_function":                   `BindSymbolicVars{binding_map={"n":2,"q":3},func_name=main}`,
		"expression_values":                          `BindSymbolicVars{binding_map={"n":"m*2+1","k":"(m - 1) // 2"}}`,
		"bad_values":                                 `BindSymbolicVars{binding_map={"m":"n*2","n":"3","k":1.5,"j":"z+"}}`,
	})
}

// Option errors and the identity: an empty map, or names bound to
// themselves, return the module itself.
func TestBindSymbolicVarsOptions(t *testing.T) {
	mod := evaltest.Parse(t, "m", `
@I.ir_module
class Module:
    @R.function
    def main(x: R.Tensor(("m", "n"), dtype="float32")):
        return x
`)
	run := func(spec string) (any, error) {
		p, diags := barrier.Registry.ParseAndBuild("p", spec)
		require.Empty(t, diags, spec)
		return passes.NewPassContext().Run(context.Background(), p, mod)
	}
	for spec, want := range map[string]string{
		`BindSymbolicVars{binding_map=[1]}`:                      `OPT220.*binding_map must be a JSON object .*got \[1\]`,
		`BindSymbolicVars{binding_map={"n":1},func_name=nosuch}`: `OPT221.*no Relax function "nosuch" \(functions: main\)`,
		`BindSymbolicVars{binding_map={"n":[1]}}`:                `OPT223.*n: want an integer or an expression string, got \[1\]`,
		`BindSymbolicVars{binding_map={"n":"m)"}}`:               `OPT223.*expression "m\)": at 2: unexpected "\)"`,
	} {
		_, err := run(spec)
		require.Error(t, err, spec)
		assert.Regexp(t, want, err.Error(), spec)
	}
	out, err := run(`BindSymbolicVars`)
	require.NoError(t, err)
	assert.Same(t, mod, out)
	out, err = run(`BindSymbolicVars{binding_map={"n":"n"}}`)
	require.NoError(t, err)
	assert.Same(t, mod, out, "binding n to itself changes nothing")
}
