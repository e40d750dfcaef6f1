package passes

import (
	"errors"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/phasec/phasec/ir"
)

// tChecked has an option whose values are checked beyond their type.
var tChecked = Define(Info{Name: "TChecked", Doc: "a pass with a checked option", Options: []Option{{
	Name: "order", Type: String, Default: "depth-first", Doc: "an enum",
	Check: func(v any) error {
		if s := v.(string); s != "depth-first" && s != "breadth-first" {
			return errors.New(`want "depth-first" or "breadth-first"`)
		}
		return nil
	},
}}}, Module(func(env *Env, mod *ir.Module) (*ir.Module, error) { return mod, nil }))

func TestOptionCheck(t *testing.T) {
	reg := testRegistry.With(tChecked)
	p, errs := reg.ParseAndBuild("p", "TChecked{order=breadth-first}")
	require.Empty(t, errs)
	assert.Equal(t, "breadth-first", p.Children()[0].Options().String("order"))

	_, errs = reg.ParseAndBuild("p", "seq(TChecked{order=sideways})")
	require.NotEmpty(t, errs)
	assert.Regexp(t, `p:1:5: error PIPE002: pass TChecked: option order: want "depth-first" or "breadth-first"`, errs.Error())

	_, err := tChecked.With(Options{"order": "sideways"})
	assert.EqualError(t, err, `pass TChecked: option order: want "depth-first" or "breadth-first"`)

	bad := Info{Name: "TBadDefault", Doc: "d", Options: []Option{{Name: "n", Type: Int, Default: -1, Doc: "d",
		Check: func(v any) error { return errors.New("negative") }}}}
	assert.EqualError(t, bad.Validate(), "pass TBadDefault: default of option n: negative")
}
