package randmod_test

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/phasec/phasec/ir/randmod"
	"github.com/phasec/phasec/syntax"
	"github.com/phasec/phasec/wellformed"
)

// TestGenerateDeterministicAndWellFormed: a seed always gives the same text,
// different seeds differ, and every module parses and is well-formed.
func TestGenerateDeterministicAndWellFormed(t *testing.T) {
	seen := map[string]bool{}
	for seed := range uint64(200) {
		m := randmod.Generate(seed)
		require.Equal(t, m.Text, randmod.Generate(seed).Text)
		seen[m.Text] = true
		mod, diags := syntax.Parse("randmod.tvms", []byte(m.Text))
		require.Empty(t, diags, m.Text)
		_, errs := wellformed.CheckRecorded(mod)
		require.False(t, errs.HasErrors(), "%v\n%s", errs, m.Text)
	}
	require.Greater(t, len(seen), 190, "seeds give distinct modules")
}

// TestGenerateFrom: the same bytes give the same module, every module is
// well-formed, and changing the bytes changes the module (the fuzzer steers
// the generator).
func TestGenerateFrom(t *testing.T) {
	seen := map[string]bool{}
	for i := range 100 {
		data := make([]byte, i)
		for j := range data {
			data[j] = byte(i*31 + j*7)
		}
		m := randmod.GenerateFrom(data)
		require.Equal(t, m.Text, randmod.GenerateFrom(data).Text)
		seen[m.Text] = true
		mod, diags := syntax.Parse("randmod.tvms", []byte(m.Text))
		require.Empty(t, diags, m.Text)
		_, errs := wellformed.CheckRecorded(mod)
		require.False(t, errs.HasErrors(), "%v\n%s", errs, m.Text)
	}
	require.Greater(t, len(seen), 80, "inputs give distinct modules")
}
