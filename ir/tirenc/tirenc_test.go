package tirenc_test

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/phasec/phasec/ir"
	"github.com/phasec/phasec/ir/tirenc"
	"github.com/phasec/phasec/syntax"
	"github.com/phasec/phasec/syntax/printer"
)

// corpusFunc is a PrimFunc of the TVMScript corpus.
type corpusFunc struct {
	where string // file:function
	name  string
	f     *ir.PrimFunc
}

// corpus parses every testdata/**/*.tvms of the repository and returns its
// PrimFuncs (files that do not parse, the negative tests, are skipped).
func corpus(t testing.TB) []corpusFunc {
	t.Helper()
	var out []corpusFunc
	err := filepath.WalkDir("../../testdata", func(path string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() || !strings.HasSuffix(path, ".tvms") {
			return err
		}
		src, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		mod, diags := syntax.Parse(path, src)
		if mod == nil || diags.HasErrors() {
			return nil
		}
		for name, f := range mod.Functions() {
			if pf, ok := f.(*ir.PrimFunc); ok {
				out = append(out, corpusFunc{where: path + ":" + name, name: name, f: pf})
			}
		}
		return nil
	})
	require.NoError(t, err)
	return out
}

// printed is f as TVMScript, alone in a module under name (as the
// disassembler shows a kernel).
func printed(t testing.TB, name string, f *ir.PrimFunc) string {
	t.Helper()
	m := ir.NewModule()
	require.NoError(t, m.Add(name, f))
	return printer.Print(m)
}

// TestRoundTripCorpus: every PrimFunc of the corpus decodes to a function
// structurally equal to it that prints as the same TVMScript, and encoding
// is deterministic.
func TestRoundTripCorpus(t *testing.T) {
	funcs := corpus(t)
	require.Greater(t, len(funcs), 100, "the corpus should hold many PrimFuncs")
	for _, c := range funcs {
		data, err := tirenc.Encode(c.f)
		require.NoError(t, err, c.where)
		got, err := tirenc.Decode(data)
		require.NoError(t, err, c.where)
		// Free variables (in the negative corpus) are decoded as new
		// variables: they pair up, as they do across two parses.
		require.Nil(t, ir.Diff(c.f, got, ir.EqualOptions{MapFreeVars: true}), "%s: decoded PrimFunc differs", c.where)
		require.Equal(t, printed(t, c.name, c.f), printed(t, c.name, got), c.where)
		again, err := tirenc.Encode(got)
		require.NoError(t, err, c.where)
		require.Equal(t, data, again, "%s: re-encoding the decoded PrimFunc gives other bytes", c.where)
	}
}

// TestDecodeRejectsMalformed: every strict prefix of a valid encoding, a
// changed version and trailing bytes are errors, never panics.
func TestDecodeRejectsMalformed(t *testing.T) {
	funcs := corpus(t)
	data, err := tirenc.Encode(funcs[0].f)
	require.NoError(t, err)
	for n := range len(data) {
		_, err := tirenc.Decode(data[:n])
		var te *tirenc.Error
		require.ErrorAs(t, err, &te, "prefix of %d bytes", n)
	}
	bad := append([]byte{tirenc.Version + 1}, data[1:]...)
	_, err = tirenc.Decode(bad)
	assert.ErrorContains(t, err, "encoding version 2, this build reads version 1")

	_, err = tirenc.Decode(append(append([]byte(nil), data...), 0))
	assert.ErrorContains(t, err, "1 trailing bytes")
}

// TestDecodeBoundsCountsAndDepth: a huge count is rejected before anything
// is allocated, and nesting beyond MaxDepth is an error.
func TestDecodeBoundsCountsAndDepth(t *testing.T) {
	// version, then a parameter count of 2^62.
	_, err := tirenc.Decode([]byte{tirenc.Version, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x40})
	assert.ErrorContains(t, err, "parameter count")

	// A body of MaxDepth+1 nested Not expressions inside T.evaluate.
	deep := []byte{tirenc.Version, 0, 0, 0, 1, 0} // no params, void return, no attrs
	deep = append(deep, 6)                        // Evaluate
	for range tirenc.MaxDepth + 1 {
		deep = append(deep, 6) // Not
	}
	_, err = tirenc.Decode(deep)
	assert.ErrorContains(t, err, "nesting deeper than")
}

// TestEncodeRejectsRelaxAttributes: a Relax value in a TIR attribute is
// reported, not dropped.
func TestEncodeRejectsRelaxAttributes(t *testing.T) {
	f := corpus(t)[0].f
	g := *f
	g.Attrs = f.Attrs.With("relax_value", ir.NewTupleInfo())
	_, err := tirenc.Encode(&g)
	require.Error(t, err)
	assert.True(t, errors.Is(err, tirenc.ErrUnsupported), "%v", err)
}

// FuzzDecode: Decode never panics; what it accepts re-encodes to bytes
// that decode and re-encode to themselves.
func FuzzDecode(f *testing.F) {
	for i, c := range corpus(f) {
		if i%8 != 0 { // a spread of the corpus keeps the seed set small
			continue
		}
		data, err := tirenc.Encode(c.f)
		require.NoError(f, err)
		f.Add(data)
	}
	f.Add([]byte{})
	f.Add([]byte{tirenc.Version})
	f.Fuzz(func(t *testing.T, data []byte) {
		fn, err := tirenc.Decode(data)
		if err != nil {
			return
		}
		enc, err := tirenc.Encode(fn)
		require.NoError(t, err)
		fn2, err := tirenc.Decode(enc)
		require.NoError(t, err)
		enc2, err := tirenc.Encode(fn2)
		require.NoError(t, err)
		require.Equal(t, enc, enc2)
	})
}
