package format

import (
	"bufio"
	"bytes"
	"encoding/json"
	"flag"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/phasec/phasec/diag"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

var update = flag.Bool("update", false, "rewrite golden files")

func sample() (diag.List, Tool) {
	l := diag.List{
		{Span: diag.Span{File: "models/mlp.tvms", Line: 4, Col: 9, EndLine: 6, EndCol: 22}, Code: "WF030",
			Msg: "dataflow block at main:4 is not allowed in phase lower", Hint: "run ToNonDataflow, or the lower barrier",
			Path: "main.body.blocks[0]"},
		{Span: diag.Span{File: "a,b:c.tvms", Line: 2, Col: 1}, Code: "WF001",
			Msg: "variable x is used before it is defined\nsecond line 100%", Path: "f.body.blocks[0].bindings[1].value"},
		{Span: diag.Span{File: "bad.tvms", Line: 3, Col: 7}, Msg: `unexpected token "<"`},
		{Span: diag.Span{File: "mod.tvms"}, Severity: diag.Warning, Code: "WF020", Msg: "module phase attribute: unknown phase"},
	}
	tool := Tool{Name: "phasec", Version: "0.1.0-test", Rules: []Rule{
		{ID: "WF001", Title: "every variable is defined before use", Hint: "define it", Property: "WellFormed"},
		{ID: "WF020", Title: "the phase attribute names a phase", Property: "WellFormed"},
		{ID: "WF030", Title: "no dataflow blocks remain", Hint: "run ToNonDataflow, or the lower barrier", Property: "NoDataflow"},
	}}
	return l, tool
}

func TestGolden(t *testing.T) {
	l, tool := sample()
	for _, f := range []Format{Text, JSON, GitHub, SARIF} {
		t.Run(f.String(), func(t *testing.T) {
			var buf bytes.Buffer
			if err := Write(&buf, f, l, tool); err != nil {
				t.Fatal(err)
			}
			golden := filepath.Join("testdata", f.String()+".golden")
			if *update {
				if err := os.WriteFile(golden, buf.Bytes(), 0o644); err != nil {
					t.Fatal(err)
				}
			}
			want, err := os.ReadFile(golden)
			if err != nil {
				t.Fatal(err)
			}
			if buf.String() != string(want) {
				t.Errorf("output differs from %s (rerun with -update if intended):\n%s", golden, buf.String())
			}
		})
	}
}

func TestTextLine(t *testing.T) {
	l, _ := sample()
	if got, want := TextLine(l[0]), "models/mlp.tvms:4:9: error WF030: dataflow block at main:4 is not allowed in phase lower: run ToNonDataflow, or the lower barrier"; got != want {
		t.Errorf("got  %q\nwant %q", got, want)
	}
	if got, want := TextLine(l[2]), `bad.tvms:3:7: error: unexpected token "<"`; got != want {
		t.Errorf("got  %q\nwant %q", got, want)
	}
}

func TestGitHubEscapes(t *testing.T) {
	l, _ := sample()
	got := GitHubLine(l[1])
	want := "::error file=a%2Cb%3Ac.tvms,line=2,col=1,title=WF001::variable x is used before it is defined%0Asecond line 100%25"
	if got != want {
		t.Errorf("got  %q\nwant %q", got, want)
	}
	if strings.Count(got, "\n") != 0 {
		t.Error("a workflow command must be one line")
	}
}

func TestJSONLinesDecode(t *testing.T) {
	l, tool := sample()
	var buf bytes.Buffer
	if err := Write(&buf, JSON, l, tool); err != nil {
		t.Fatal(err)
	}
	sc := bufio.NewScanner(&buf)
	n := 0
	for sc.Scan() {
		var d jsonDiag
		if err := json.Unmarshal(sc.Bytes(), &d); err != nil {
			t.Fatalf("line %d: %v", n+1, err)
		}
		if d.Message != l[n].Msg || d.Code != string(l[n].Code) || d.File != l[n].Span.File {
			t.Errorf("line %d decodes to %+v", n+1, d)
		}
		n++
	}
	if n != len(l) {
		t.Errorf("%d lines, want one per diagnostic (%d)", n, len(l))
	}
}

func TestSARIFStructure(t *testing.T) {
	l, tool := sample()
	var buf bytes.Buffer
	if err := Write(&buf, SARIF, l, tool); err != nil {
		t.Fatal(err)
	}
	var doc sarifLog
	if err := json.Unmarshal(buf.Bytes(), &doc); err != nil {
		t.Fatal(err)
	}
	if doc.Version != "2.1.0" || len(doc.Runs) != 1 || doc.Runs[0].Tool.Driver.Name != "phasec" {
		t.Fatalf("bad envelope: %+v", doc)
	}
	run := doc.Runs[0]
	if len(run.Results) != len(l) {
		t.Fatalf("%d results, want %d", len(run.Results), len(l))
	}
	for i, r := range run.Results {
		if r.RuleID != "" {
			if r.RuleIndex == nil || run.Tool.Driver.Rules[*r.RuleIndex].ID != r.RuleID {
				t.Errorf("result %d: ruleIndex does not point at %s", i, r.RuleID)
			}
		}
		if len(r.Locations) != 1 || r.Locations[0].PhysicalLocation.ArtifactLocation.URI != l[i].Span.File {
			t.Errorf("result %d: location %+v", i, r.Locations)
		}
	}
	if reg := run.Results[0].Locations[0].PhysicalLocation.Region; reg == nil || reg.StartLine != 4 || reg.StartColumn != 9 {
		t.Errorf("region %+v", reg)
	}
	if run.Results[3].Locations[0].PhysicalLocation.Region != nil {
		t.Error("a span without a line must have no region")
	}
	if run.Results[3].Level != "warning" {
		t.Errorf("level %q", run.Results[3].Level)
	}
}

func TestParse(t *testing.T) {
	for _, f := range []Format{Text, JSON, GitHub, SARIF} {
		if g, err := Parse(f.String()); err != nil || g != f {
			t.Errorf("Parse(%q) = %v, %v", f.String(), g, err)
		}
	}
	if _, err := Parse("xml"); err == nil {
		t.Error("Parse(xml) succeeded")
	}
}

// TestGroupedInTextOnly: 100 violations of one rule print as 20 lines and
// a count in text and GitHub output, and all 100 in JSON and SARIF.
func TestGroupedInTextOnly(t *testing.T) {
	var l diag.List
	for i := range 100 {
		l = append(l, &diag.Diagnostic{Span: diag.Span{File: "m.tvms", Line: i + 1, Col: 1}, Code: "WF001", Msg: "undefined"})
	}
	_, tool := sample()
	lines := func(f Format) []string {
		var buf bytes.Buffer
		if err := Write(&buf, f, l, tool); err != nil {
			t.Fatal(err)
		}
		return strings.Split(strings.TrimSpace(buf.String()), "\n")
	}
	for _, f := range []Format{Text, GitHub} {
		got := lines(f)
		if len(got) != 21 || !strings.Contains(got[20], "80 more WF001 diagnostics not shown (100 in all") {
			t.Errorf("%s: %d lines, last %q", f, len(got), got[len(got)-1])
		}
	}
	if got := lines(JSON); len(got) != 100 {
		t.Errorf("json: %d lines, want 100", len(got))
	}
	var doc struct {
		Runs []struct {
			Results []json.RawMessage `json:"results"`
		} `json:"runs"`
	}
	var buf bytes.Buffer
	if err := Write(&buf, SARIF, l, tool); err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(buf.Bytes(), &doc); err != nil || len(doc.Runs) != 1 || len(doc.Runs[0].Results) != 100 {
		t.Errorf("sarif: %v, %d runs", err, len(doc.Runs))
	}
}

// relatedSample is a conflict with two positions (a function defined twice)
// next to a diagnostic without notes.
func relatedSample() diag.List {
	return diag.List{
		{Span: diag.Span{File: "m.tvms", Line: 9, Col: 5, EndLine: 9, EndCol: 6}, Msg: "duplicate function f in the module",
			Related: []diag.Related{{Span: diag.Span{File: "m.tvms", Line: 3, Col: 5, EndLine: 3, EndCol: 6}, Msg: "function f is first defined here"}}},
		{Span: diag.Span{File: "m.tvms", Line: 12, Col: 1}, Code: "WF002", Msg: "variable x is defined more than once",
			Related: []diag.Related{{Span: diag.Span{File: "m.tvms", Line: 11, Col: 1}, Msg: "x is first defined here"}, {Span: diag.Span{File: "m.tvms"}, Msg: "in module m"}}},
		{Span: diag.Span{File: "m.tvms", Line: 14, Col: 2}, Code: "WF001", Msg: "undefined"},
	}
}

// TestRelatedGolden: every format shows each related note, after (or
// inside) its diagnostic; the goldens show how.
func TestRelatedGolden(t *testing.T) {
	_, tool := sample()
	for _, f := range []Format{Text, JSON, GitHub, SARIF} {
		t.Run(f.String(), func(t *testing.T) {
			var buf bytes.Buffer
			require.NoError(t, Write(&buf, f, relatedSample(), tool))
			golden := filepath.Join("testdata", "related."+f.String()+".golden")
			if *update {
				require.NoError(t, os.WriteFile(golden, buf.Bytes(), 0o644))
			}
			want, err := os.ReadFile(golden)
			require.NoError(t, err)
			if diff := cmp.Diff(string(want), buf.String()); diff != "" {
				t.Errorf("output differs from %s (rerun with -update if intended), -want +got:\n%s", golden, diff)
			}
		})
	}
}

func TestRelatedText(t *testing.T) {
	var buf bytes.Buffer
	require.NoError(t, Write(&buf, Text, relatedSample(), Tool{}))
	assert.Equal(t, `m.tvms:9:5: error: duplicate function f in the module
m.tvms:3:5: note: function f is first defined here
m.tvms:12:1: error WF002: variable x is defined more than once
m.tvms:11:1: note: x is first defined here
m.tvms: note: in module m
m.tvms:14:2: error WF001: undefined
`, buf.String())
}

func TestRelatedJSON(t *testing.T) {
	var buf bytes.Buffer
	require.NoError(t, Write(&buf, JSON, relatedSample(), Tool{}))
	lines := strings.Split(strings.TrimSpace(buf.String()), "\n")
	require.Len(t, lines, 3, "notes ride on their diagnostic's line")
	var first, last jsonDiag
	require.NoError(t, json.Unmarshal([]byte(lines[0]), &first))
	require.NoError(t, json.Unmarshal([]byte(lines[2]), &last))
	assert.Equal(t, []jsonRelated{{File: "m.tvms", Line: 3, Col: 5, EndLine: 3, EndCol: 6, Message: "function f is first defined here"}}, first.Related)
	assert.NotContains(t, lines[2], "related", "a diagnostic without notes has no related field")
}

func TestRelatedGitHub(t *testing.T) {
	var buf bytes.Buffer
	require.NoError(t, Write(&buf, GitHub, relatedSample(), Tool{}))
	lines := strings.Split(strings.TrimSpace(buf.String()), "\n")
	require.Len(t, lines, 6)
	assert.Equal(t, "::notice file=m.tvms,line=3,col=5,title=phasec::function f is first defined here", lines[1])
	assert.Equal(t, "::notice file=m.tvms,line=11,col=1,title=WF002::x is first defined here", lines[3])
	assert.Equal(t, "::notice file=m.tvms,title=WF002::in module m", lines[4])
}

func TestRelatedSARIF(t *testing.T) {
	var buf bytes.Buffer
	require.NoError(t, Write(&buf, SARIF, relatedSample(), Tool{Name: "phasec"}))
	var log sarifLog
	require.NoError(t, json.Unmarshal(buf.Bytes(), &log))
	results := log.Runs[0].Results
	require.Len(t, results, 3)
	rel := results[1].RelatedLocations
	require.Len(t, rel, 2)
	for i, r := range rel {
		require.NotNil(t, r.ID)
		assert.Equal(t, i, *r.ID, "ids number the related locations of one result")
	}
	assert.Equal(t, &sarifText{"x is first defined here"}, rel[0].Message)
	assert.Equal(t, &sarifRegion{StartLine: 11, StartColumn: 1}, rel[0].PhysicalLocation.Region)
	assert.Nil(t, rel[1].PhysicalLocation.Region, "an unknown position has no region")
	assert.Empty(t, results[2].RelatedLocations)
	assert.NotContains(t, buf.String()[strings.LastIndex(buf.String(), `"ruleId": "WF001"`):], "relatedLocations")
}
