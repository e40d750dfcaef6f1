package passes

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/phasec/phasec/diag"
	"github.com/phasec/phasec/ir"
	"github.com/phasec/phasec/phase"
)

// goldenPipeline exercises skipped, unchanged, changed and nested passes.
const goldenPipeline = "TNoop,TMark,seq(TO1,TToNonDataflow),TO3,TOpts{max_depth=2}"

func runGolden(t *testing.T, pipeline string, ins ...Instrument) error {
	t.Helper()
	p, errs := parseAndBuild("--passes", pipeline)
	if errs != nil {
		t.Fatal(errs)
	}
	pc := NewPassContext()
	pc.Clock = fakeClock()
	pc.Instruments = ins
	_, err := pc.Run(context.Background(), p, phase.Record(genModule(2, 3), phase.Optimize))
	return err
}

func TestTimingGolden(t *testing.T) {
	tm := &Timing{}
	if err := runGolden(t, goldenPipeline+",TLowerBarrier,TAcceptsLower", tm); err != nil {
		t.Fatal(err)
	}
	golden(t, "timing", tm.Report())
}

func TestPrintIRGolden(t *testing.T) {
	var all, named bytes.Buffer
	if err := runGolden(t, goldenPipeline,
		&PrintIR{W: &all, Before: true, After: true, Print: testPrint},
		&PrintIR{W: &named, After: true, Passes: []string{"TToNonDataflow"}, Print: testPrint}); err != nil {
		t.Fatal(err)
	}
	golden(t, "print_all", all.String())
	golden(t, "print_named", named.String())
}

func TestPrintChangedGolden(t *testing.T) {
	for _, diff := range []bool{false, true} {
		var out bytes.Buffer
		if err := runGolden(t, goldenPipeline, &PrintChanged{W: &out, Diff: diff, Print: testPrint}); err != nil {
			t.Fatal(err)
		}
		golden(t, fmt.Sprintf("print_changed_diff_%v", diff), out.String())
	}
}

// Unchanged detection prints nothing for an unchanged pass: the printer is
// called only for the input and changed outputs.
func TestPrintChangedDoesNotPrintUnchanged(t *testing.T) {
	prints := 0
	counting := func(m *ir.Module) string { prints++; return testPrint(m) }
	var out bytes.Buffer
	if err := runGolden(t, "TNoop,TNoop,TNoop,TMark,TNoop", &PrintChanged{W: &out, Print: counting}); err != nil {
		t.Fatal(err)
	}
	if prints != 2 { // input + after TMark
		t.Errorf("printer called %d times, want 2", prints)
	}
	if got := strings.Count(out.String(), ": unchanged"); got != 4 {
		t.Errorf("%d unchanged notes, want 4:\n%s", got, out.String())
	}
}

func TestDumpDirGolden(t *testing.T) {
	dir := t.TempDir()
	if err := runGolden(t, goldenPipeline+",TLowerBarrier", &DumpDir{Dir: dir, Print: testPrint}); err != nil {
		t.Fatal(err)
	}
	entries, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	var b strings.Builder
	for _, e := range entries {
		data, err := os.ReadFile(filepath.Join(dir, e.Name()))
		if err != nil {
			t.Fatal(err)
		}
		fmt.Fprintf(&b, "== %s\n%s", e.Name(), data)
	}
	golden(t, "dump_dir", b.String())
}

func TestRunRecordGolden(t *testing.T) {
	var out bytes.Buffer
	err := runGolden(t, goldenPipeline+",TFail", &RunRecord{W: &out})
	if err == nil {
		t.Fatal("TFail did not fail")
	}
	golden(t, "record", maskHashes(out.String()))
	// Hashes are stable across runs: the record is diffable.
	var again bytes.Buffer
	_ = runGolden(t, goldenPipeline+",TFail", &RunRecord{W: &again})
	if again.String() != out.String() {
		t.Error("run record differs between identical runs")
	}
}

func TestSummaryGolden(t *testing.T) {
	s := &Summary{}
	if err := runGolden(t, goldenPipeline, s); err != nil {
		t.Fatal(err)
	}
	golden(t, "summary", s.Table())
}

// TestSummaryStats: statistics a pass reports with Env.Stat reach the
// event and are listed under the summary table, per pass, in order.
func TestSummaryStats(t *testing.T) {
	s := &Summary{}
	if err := runGolden(t, "TNoop,TStats", s); err != nil {
		t.Fatal(err)
	}
	table := s.Table()
	if !strings.HasSuffix(table, "\nTStats: planned=3 bytes=4096\n") {
		t.Errorf("summary does not end with TStats' statistics:\n%s", table)
	}
	if strings.Contains(table, "TNoop:") {
		t.Errorf("a pass without statistics got a statistics line:\n%s", table)
	}
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
	if _, err := pc.Run(context.Background(), p, phase.Record(genModule(1, 1), phase.Optimize)); err != nil {
		t.Fatal(err)
	}
	golden(t, "bisect", out.String())
	// Required (TMark) and AlwaysRun (TLowerBarrier) passes run regardless.
	if want := []string{"TNoop", "TMark", "TLowerBarrier", "TO1", "seq"}; !slices.Equal(ran, want) {
		t.Errorf("ran %v, want %v", ran, want)
	}
}

func TestVerifyEach(t *testing.T) {
	var calls []string
	v := &VerifyEach{Check: func(m *ir.Module, ph phase.Phase, props phase.Set) diag.List {
		calls = append(calls, fmt.Sprintf("%v %v", ph, props.Has(phase.NoDataflow)))
		return nil
	}}
	if err := runGolden(t, goldenPipeline, v); err != nil {
		t.Fatal(err)
	}
	// Checked after the changing passes only: TMark, TToNonDataflow, TOpts.
	// TOpts names no property of phase lower in its contract, so it does
	// not vouch for NoDataflow (Info.Apply).
	want := []string{"optimize false", "optimize true", "optimize false"}
	if !slices.Equal(calls, want) || v.Checked != 3 {
		t.Errorf("checks %v, want %v", calls, want)
	}
	bad := &VerifyEach{Check: func(m *ir.Module, ph phase.Phase, props phase.Set) diag.List {
		var l diag.List
		l.Add(diag.Span{}, "WF999", "broken")
		return l
	}}
	err := runGolden(t, "TNoop,TMark,TNoop", bad)
	if err == nil || !strings.Contains(err.Error(), "instrument verify-each: AfterPass(TMark): module broken after pass TMark") {
		t.Errorf("verify failure: %v", err)
	}
}

func TestImmutableInput(t *testing.T) {
	err := runGolden(t, "TNoop,TMark,TMutate", &ImmutableInput{})
	if err == nil || !strings.Contains(err.Error(), "pass TMutate mutated its input module") {
		t.Errorf("mutation not caught: %v", err)
	}
	if err := runGolden(t, goldenPipeline, &ImmutableInput{}); err != nil {
		t.Errorf("well-behaved pipeline flagged: %v", err)
	}
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
