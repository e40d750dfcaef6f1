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
	requireDistinctWellFormed(t, 200, 190, func(i int) *randmod.Module { return randmod.Generate(uint64(i)) })
}

// TestGenerateFrom: the same bytes give the same module, every module is
// well-formed, and changing the bytes changes the module (the fuzzer steers
// the generator).
func TestGenerateFrom(t *testing.T) {
	requireDistinctWellFormed(t, 100, 80, func(i int) *randmod.Module {
		data := make([]byte, i)
		for j := range data {
			data[j] = byte(i*31 + j*7)
		}
		return randmod.GenerateFrom(data)
	})
}

// requireDistinctWellFormed generates n modules with gen, twice each: the
// same text both times, parsing and well-formed, and more than distinct
// different texts.
func requireDistinctWellFormed(t *testing.T, n, distinct int, gen func(int) *randmod.Module) {
	t.Helper()
	seen := map[string]bool{}
	for i := range n {
		m := gen(i)
		require.Equal(t, m.Text, gen(i).Text)
		seen[m.Text] = true
		mod, diags := syntax.Parse("randmod.tvms", []byte(m.Text))
		require.Empty(t, diags, m.Text)
		_, errs := wellformed.CheckRecorded(mod)
		require.False(t, errs.HasErrors(), "%v\n%s", errs, m.Text)
	}
	require.Greater(t, len(seen), distinct, "inputs give distinct modules")
}
