package diag

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestDefineRegistersCodesByFamily(t *testing.T) {
	var r registry
	low := r.newFamily("LOW", "example/lower", "lowering passes")
	bar := r.newFamily("BAR", "example/barrier", "barriers")
	require.Equal(t, Code("LOW002"), r.define(low, "LOW002", "second"))
	r.define(low, "LOW001", "first")
	r.define(bar, "BAR001", "a barrier failed")

	var got []string
	for _, c := range r.all() {
		got = append(got, string(c.Code)+" "+c.Family.Owner+" "+c.Title)
	}
	assert.Equal(t, []string{"BAR001 example/barrier a barrier failed", "LOW001 example/lower first", "LOW002 example/lower second"}, got)
	fams := r.allFamilies()
	require.Len(t, fams, 2)
	assert.Equal(t, "BAR", fams[0].Prefix)
	assert.Equal(t, "LOW", fams[1].Prefix)
}

func TestDefinePanicsOnDuplicatesAndMalformedCodes(t *testing.T) {
	var r registry
	low := r.newFamily("LOW", "example/lower", "lowering passes")
	r.define(low, "LOW001", "first")
	assert.PanicsWithValue(t, `diag: code LOW001 defined twice ("first" and "again")`, func() { r.define(low, "LOW001", "again") })
	for _, bad := range []Code{"LOW01", "LOW0001", "LOWx01", "BAR001", "low001", "LOW"} {
		assert.Panics(t, func() { r.define(low, bad, "title") }, "code %q", bad)
	}
	assert.Panics(t, func() { r.define(low, "LOW002", "") }, "empty title")
	assert.Panics(t, func() { r.define(low, "LOW002", "two\nlines") }, "two-line title")
	assert.NotContains(t, r.codes, Code("LOW002"), "a rejected code stays unregistered")
}

func TestNewFamilyPanicsOnClashingPrefixes(t *testing.T) {
	var r registry
	r.newFamily("LOW", "example/lower", "lowering passes")
	for _, p := range []string{"LOW", "LO", "LOWX", "Low", "", "L1"} {
		assert.Panics(t, func() { r.newFamily(p, "example/other", "doc") }, "prefix %q", p)
	}
	assert.Panics(t, func() { r.newFamily("NEW", "example/other", "") }, "a family needs a doc")
}

// TestInternalIsTheOneCodeWithoutNumber: syntax's "internal" predates the
// registry; its family is the only one whose code is the bare prefix.
func TestInternalIsTheOneCodeWithoutNumber(t *testing.T) {
	var r registry
	in := r.newFamily("internal", "example/syntax", "parser panics")
	assert.Equal(t, Code("internal"), r.define(in, "internal", "a bug in phasec"))
	wf := r.newFamily("WF", "example/wellformed", "rules")
	assert.Panics(t, func() { r.define(wf, "WF", "no number") })
}

func TestNewFamilyRecordsTheCallingPackage(t *testing.T) {
	assert.Equal(t, "github.com/phasec/phasec/diag", callerPackage(1))
}
