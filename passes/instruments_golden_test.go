package passes

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/phasec/phasec/diag"
	"github.com/phasec/phasec/ir"
	"github.com/phasec/phasec/phase"
)

// goldenPipeline exercises skipped, unchanged, changed and nested passes.
const goldenPipeline = "TNoop,TMark,seq(TO1,TToNonDataflow),TO3,TOpts{max_depth=2}"

func runGolden(t *testing.T, pipeline string, ins ...Instrument) error {
	t.Helper()
	p, errs := parseAndBuild("--passes", pipeline)
	require.Nil(t, errs)
	pc := NewPassContext()
	pc.Clock = fakeClock()
	pc.Instruments = ins
	_, err := pc.Run(context.Background(), p, phase.Record(genModule(2, 3), phase.Optimize))
	return err
}

func TestTimingGolden(t *testing.T) {
	tm := &Timing{}
	require.NoError(t, runGolden(t, goldenPipeline+",TLowerBarrier,TAcceptsLower", tm))
	golden(t, "timing", tm.Report())
}

func TestPrintIRGolden(t *testing.T) {
	var all, named bytes.Buffer
	require.NoError(t, runGolden(t, goldenPipeline,
		&PrintIR{W: &all, Before: true, After: true, Print: testPrint},
		&PrintIR{W: &named, After: true, Passes: []string{"TToNonDataflow"}, Print: testPrint}))
	golden(t, "print_all", all.String())
	golden(t, "print_named", named.String())
}

func TestPrintChangedGolden(t *testing.T) {
	for _, diff := range []bool{false, true} {
		var out bytes.Buffer
		require.NoError(t, runGolden(t, goldenPipeline, &PrintChanged{W: &out, Diff: diff, Print: testPrint}))
		golden(t, fmt.Sprintf("print_changed_diff_%v", diff), out.String())
	}
}

// Unchanged detection prints nothing for an unchanged pass: the printer is
// called only for the input and changed outputs.
func TestPrintChangedDoesNotPrintUnchanged(t *testing.T) {
	prints := 0
	counting := func(m *ir.Module) string { prints++; return testPrint(m) }
	var out bytes.Buffer
	require.NoError(t, runGolden(t, "TNoop,TNoop,TNoop,TMark,TNoop", &PrintChanged{W: &out, Print: counting}))
	assert.Equal(t, 2, prints, "printer calls") // input + after TMark
	assert.Equal(t, 4, strings.Count(out.String(), ": unchanged"), "unchanged notes:\n%s", out.String())
}

func TestDumpDirGolden(t *testing.T) {
	dir := t.TempDir()
	require.NoError(t, runGolden(t, goldenPipeline+",TLowerBarrier", &DumpDir{Dir: dir, Print: testPrint}))
	entries, err := os.ReadDir(dir)
	require.NoError(t, err)
	var b strings.Builder
	for _, e := range entries {
		data, err := os.ReadFile(filepath.Join(dir, e.Name()))
		require.NoError(t, err)
		fmt.Fprintf(&b, "== %s\n%s", e.Name(), data)
	}
	golden(t, "dump_dir", b.String())
}

func TestRunRecordGolden(t *testing.T) {
	var out bytes.Buffer
	err := runGolden(t, goldenPipeline+",TFail", &RunRecord{W: &out})
	require.Error(t, err, "TFail did not fail")
	golden(t, "record", maskHashes(out.String()))
	// Hashes are stable across runs: the record is diffable.
	var again bytes.Buffer
	_ = runGolden(t, goldenPipeline+",TFail", &RunRecord{W: &again})
	assert.Equal(t, out.String(), again.String(), "run record differs between identical runs")
}

func TestSummaryGolden(t *testing.T) {
	s := &Summary{}
	require.NoError(t, runGolden(t, goldenPipeline, s))
	golden(t, "summary", s.Table())
}

// TestSummaryStats: statistics a pass reports with Env.Stat reach the
// event and are listed under the summary table, per pass, in order.
func TestSummaryStats(t *testing.T) {
	s := &Summary{}
	require.NoError(t, runGolden(t, "TNoop,TStats", s))
	table := s.Table()
	assert.True(t, strings.HasSuffix(table, "\nTStats: planned=3 bytes=4096\n"), "summary does not end with TStats' statistics:\n%s", table)
	assert.NotContains(t, table, "TNoop:", "a pass without statistics got a statistics line")
}

func TestBisectGolden(t *testing.T) {
	var out bytes.Buffer
	var ran []string
	p, _ := parseAndBuild("--passes", "TNoop,TMark,TLowerBarrier,TO1,seq(TNoop,TOpts)")
	pc := NewPassContext()
	pc.Required = []string{"TMark"}
	pc.Instruments = []Instrument{&Bisect{Limit: 2, W: &out}}
	pc.Trace = func(_ *ir.Module, info *Info, before bool) {
		if before {
			ran = append(ran, info.Name)
		}
	}
	_, err := pc.Run(context.Background(), p, phase.Record(genModule(1, 1), phase.Optimize))
	require.NoError(t, err)
	golden(t, "bisect", out.String())
	// Required (TMark) and AlwaysRun (TLowerBarrier) passes run regardless.
	assert.Equal(t, []string{"TNoop", "TMark", "TLowerBarrier", "TO1", "seq"}, ran)
}

func TestVerifyEach(t *testing.T) {
	var calls []string
	v := &VerifyEach{Check: func(m *ir.Module, ph phase.Phase, props phase.Set) diag.List {
		calls = append(calls, fmt.Sprintf("%v %v", ph, props.Has(phase.NoDataflow)))
		return nil
	}}
	require.NoError(t, runGolden(t, goldenPipeline, v))
	// Checked after the changing passes only: TMark, TToNonDataflow, TOpts.
	// TOpts names no property of phase lower in its contract, so it does
	// not vouch for NoDataflow (Info.Apply).
	want := []string{"optimize false", "optimize true", "optimize false"}
	assert.Equal(t, want, calls, "checks")
	assert.Equal(t, 3, v.Checked, "checks")
	bad := &VerifyEach{Check: func(m *ir.Module, ph phase.Phase, props phase.Set) diag.List {
		var l diag.List
		l.Add(diag.Span{}, "WF999", "broken")
		return l
	}}
	err := runGolden(t, "TNoop,TMark,TNoop", bad)
	assert.ErrorContains(t, err, "instrument verify-each: AfterPass(TMark): module broken after pass TMark", "verify failure")
}

func TestImmutableInput(t *testing.T) {
	err := runGolden(t, "TNoop,TMark,TMutate", &ImmutableInput{})
	assert.ErrorContains(t, err, "pass TMutate mutated its input module", "mutation not caught")
	assert.NoError(t, runGolden(t, goldenPipeline, &ImmutableInput{}), "well-behaved pipeline flagged")
}

var hashField = regexp.MustCompile(`"hash_(before|after)":"([0-9a-f]+)"`)

// maskHashes replaces each distinct hash value by a label (#1, #2, ...) in
// order of first appearance: the golden file then pins which passes
// changed the module (equal or different hashes) without depending on the
// hash function's exact output.
func maskHashes(s string) string {
	labels := map[string]string{}
	return hashField.ReplaceAllStringFunc(s, func(m string) string {
		sub := hashField.FindStringSubmatch(m)
		l, ok := labels[sub[2]]
		if !ok {
			l = fmt.Sprintf("#%d", len(labels)+1)
			labels[sub[2]] = l
		}
		return `"hash_` + sub[1] + `":"` + l + `"`
	})
}
