package randmod_test

import (
	"math"
	"regexp"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/phasec/phasec/eval"
	"github.com/phasec/phasec/ir/randmod"
	"github.com/phasec/phasec/op"
	"github.com/phasec/phasec/syntax"
	"github.com/phasec/phasec/tensor"
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

// TestCleanupPatterns: what the optimization passes feed on appears in
// the generated modules (each pattern at some seed, in its textual form),
// and every module is still well-formed and evaluates on random inputs
// to a finite result.
func TestCleanupPatterns(t *testing.T) {
	var total randmod.Cleanup
	constCall := regexp.MustCompile(`= R\.\w+\(R\.const\([^)]*\), R\.const\(`)
	var constText, privateText, calledText bool
	for seed := range uint64(200) {
		gm := randmod.Generate(seed)
		c := gm.Cleanup
		total.ConstExprs += c.ConstExprs
		total.Duplicates += c.Duplicates
		total.DeadBindings += c.DeadBindings
		total.Rebindings += c.Rebindings
		total.TrivialCasts += c.TrivialCasts
		total.PrivateCalls += c.PrivateCalls
		total.UnusedParams += c.UnusedParams
		total.UnusedOutputs += c.UnusedOutputs
		total.DeadFuncs += c.DeadFuncs
		if c.ConstExprs > 0 {
			require.Regexp(t, constCall, gm.Text)
			constText = true
		}
		require.Equal(t, gm.Funcs, strings.Count(gm.Text, "@R.function(private=True)"), gm.Text)
		privateText = privateText || gm.Funcs > 0
		calledText = calledText || strings.Contains(gm.Text, "= Module.helper")
		require.Equal(t, c.PrivateCalls+c.DeadFuncs, gm.Funcs, gm.Text)

		mod, diags := syntax.Parse("randmod.tvms", []byte(gm.Text))
		require.Empty(t, diags, gm.Text)
		args, err := eval.RandomArgs(mod.Func("main"), seed, nil, 3)
		require.NoError(t, err)
		out, err := eval.New(mod).Call("main", args...)
		require.NoError(t, err, "seed %d:\n%s", seed, gm.Text)
		requireFinite(t, out, gm.Text)
	}
	for name, n := range map[string]int{"ConstExprs": total.ConstExprs, "Duplicates": total.Duplicates,
		"DeadBindings": total.DeadBindings, "Rebindings": total.Rebindings, "TrivialCasts": total.TrivialCasts,
		"PrivateCalls": total.PrivateCalls, "UnusedParams": total.UnusedParams, "UnusedOutputs": total.UnusedOutputs,
		"DeadFuncs": total.DeadFuncs} {
		assert.Greater(t, n, 5, "%s appears in the first 200 modules", name)
	}
	assert.True(t, constText && privateText && calledText)
	t.Logf("over 200 modules: %+v", total)
}

// requireFinite fails on a NaN or an infinity in a result.
func requireFinite(t *testing.T, v op.Value, text string) {
	t.Helper()
	switch v := v.(type) {
	case *tensor.Tensor:
		if v.DType.IsFloat() {
			for i := range int(v.NumElements()) {
				f := v.Float64At(i)
				require.False(t, math.IsNaN(f) || math.IsInf(f, 0), "element %d is %v:\n%s", i, f, text)
			}
		}
	case op.Tuple:
		for _, x := range v {
			requireFinite(t, x, text)
		}
	}
}
