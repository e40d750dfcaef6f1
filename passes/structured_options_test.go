package passes

import (
	"encoding/json"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/phasec/phasec/ir"
)

// tStructured takes the structured option kinds TVM's passes take as
// Python lists and dicts; it records what it was given.
var tStructured = Define(Info{Name: "TStructured", Doc: "a pass with list and JSON options", Options: []Option{
	{Name: "entry_functions", Type: Strings, Default: []string{"main"}, Doc: "functions kept"},
	{Name: "binding_map", Type: JSON, Default: map[string]any{}, Doc: "a map"},
}}, Module(func(env *Env, mod *ir.Module) (*ir.Module, error) { return mod, nil }))

func TestStructuredOptionValues(t *testing.T) {
	reg := testRegistry.With(tStructured)
	text := `TStructured{entry_functions=["main", "f,}"],binding_map={"batch":1,"m":[2,"]"],"n":{"k":true}}}`
	steps, errs := ParsePipeline("p", text)
	require.Empty(t, errs)
	assert.Equal(t, text, steps.String(), "printing a pipeline reproduces it")
	p, errs := reg.Build("p", steps)
	require.Empty(t, errs)
	opts := p.Children()[0].Options()
	assert.Equal(t, []string{"main", "f,}"}, opts.Strings("entry_functions"))
	assert.Equal(t, map[string]any{
		"batch": json.Number("1"),
		"m":     []any{json.Number("2"), "]"},
		"n":     map[string]any{"k": true},
	}, opts.JSON("binding_map"))

	p, errs = reg.ParseAndBuild("p", "TStructured")
	require.Empty(t, errs)
	assert.Equal(t, []string{"main"}, p.Children()[0].Options().Strings("entry_functions"), "default")
}

func TestStructuredOptionErrors(t *testing.T) {
	reg := testRegistry.With(tStructured)
	for text, want := range map[string]string{
		`TStructured{entry_functions=["main"`:       `p:1:29: error PIPE.*unterminated '\['`,
		`TStructured{entry_functions=["main}`:       `unterminated string`,
		`TStructured{entry_functions=["a"}]}`:       `mismatched '}'`,
		`TStructured{entry_functions=[1,2]}`:        `p:1:29: .*entry_functions: want a JSON array of strings, got \[1,2\]`,
		`TStructured{entry_functions=main}`:         `want a JSON array of strings, got main`,
		`TStructured{binding_map={"a":}}`:           `binding_map: want a JSON value, got \{"a":\}`,
		`TStructured{binding_map=null}`:             `want a JSON value other than null`,
		`TStructured{binding_map={"a":1},bogus=[]}`: `unknown option "bogus"`,
	} {
		_, errs := reg.ParseAndBuild("p", text)
		require.NotEmpty(t, errs, text)
		assert.Regexp(t, want, errs.Error(), text)
	}
}
