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
			require.NoError(t, Write(&buf, f, l, tool))
			golden := filepath.Join("testdata", f.String()+".golden")
			if *update {
				require.NoError(t, os.WriteFile(golden, buf.Bytes(), 0o644))
			}
			want, err := os.ReadFile(golden)
			require.NoError(t, err)
			assert.Equal(t, string(want), buf.String(), "output differs from %s (rerun with -update if intended)", golden)
		})
	}
}

func TestTextLine(t *testing.T) {
	l, _ := sample()
	assert.Equal(t, "models/mlp.tvms:4:9: error WF030: dataflow block at main:4 is not allowed in phase lower: run ToNonDataflow, or the lower barrier", TextLine(l[0]))
	assert.Equal(t, `bad.tvms:3:7: error: unexpected token "<"`, TextLine(l[2]))
}

func TestGitHubEscapes(t *testing.T) {
	l, _ := sample()
	got := GitHubLine(l[1])
	want := "::error file=a%2Cb%3Ac.tvms,line=2,col=1,title=WF001::variable x is used before it is defined%0Asecond line 100%25"
	assert.Equal(t, want, got)
	assert.NotContains(t, got, "\n", "a workflow command must be one line")
}

func TestJSONLinesDecode(t *testing.T) {
	l, tool := sample()
	var buf bytes.Buffer
	require.NoError(t, Write(&buf, JSON, l, tool))
	sc := bufio.NewScanner(&buf)
	n := 0
	for sc.Scan() {
		var d jsonDiag
		require.NoError(t, json.Unmarshal(sc.Bytes(), &d), "line %d", n+1)
		assert.Equal(t, l[n].Msg, d.Message, "line %d decodes to %+v", n+1, d)
		assert.Equal(t, string(l[n].Code), d.Code, "line %d decodes to %+v", n+1, d)
		assert.Equal(t, l[n].Span.File, d.File, "line %d decodes to %+v", n+1, d)
		n++
	}
	assert.Equal(t, len(l), n, "lines, want one per diagnostic")
}

func TestSARIFStructure(t *testing.T) {
	l, tool := sample()
	var buf bytes.Buffer
	require.NoError(t, Write(&buf, SARIF, l, tool))
	var doc sarifLog
	require.NoError(t, json.Unmarshal(buf.Bytes(), &doc))
	require.Equal(t, "2.1.0", doc.Version, "bad envelope: %+v", doc)
	require.Len(t, doc.Runs, 1, "bad envelope: %+v", doc)
	require.Equal(t, "phasec", doc.Runs[0].Tool.Driver.Name, "bad envelope: %+v", doc)
	run := doc.Runs[0]
	require.Len(t, run.Results, len(l), "results")
	for i, r := range run.Results {
		if r.RuleID != "" {
			if assert.NotNil(t, r.RuleIndex, "result %d: ruleIndex does not point at %s", i, r.RuleID) {
				assert.Equal(t, r.RuleID, run.Tool.Driver.Rules[*r.RuleIndex].ID, "result %d: ruleIndex does not point at %s", i, r.RuleID)
			}
		}
		if assert.Len(t, r.Locations, 1, "result %d: location %+v", i, r.Locations) {
			assert.Equal(t, l[i].Span.File, r.Locations[0].PhysicalLocation.ArtifactLocation.URI, "result %d: location %+v", i, r.Locations)
		}
	}
	reg := run.Results[0].Locations[0].PhysicalLocation.Region
	if assert.NotNil(t, reg, "region") {
		assert.Equal(t, 4, reg.StartLine, "region %+v", reg)
		assert.Equal(t, 9, reg.StartColumn, "region %+v", reg)
	}
	assert.Nil(t, run.Results[3].Locations[0].PhysicalLocation.Region, "a span without a line must have no region")
	assert.Equal(t, "warning", run.Results[3].Level, "level")
}

func TestParse(t *testing.T) {
	for _, f := range []Format{Text, JSON, GitHub, SARIF} {
		g, err := Parse(f.String())
		assert.NoError(t, err, "Parse(%q)", f.String())
		assert.Equal(t, f, g, "Parse(%q)", f.String())
	}
	_, err := Parse("xml")
	assert.Error(t, err, "Parse(xml) succeeded")
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
		require.NoError(t, Write(&buf, f, l, tool))
		return strings.Split(strings.TrimSpace(buf.String()), "\n")
	}
	for _, f := range []Format{Text, GitHub} {
		got := lines(f)
		if assert.Len(t, got, 21, "%s: last line %q", f, got[len(got)-1]) {
			assert.Contains(t, got[20], "80 more WF001 diagnostics not shown (100 in all", "%s: last line", f)
		}
	}
	assert.Len(t, lines(JSON), 100, "json lines")
	var doc struct {
		Runs []struct {
			Results []json.RawMessage `json:"results"`
		} `json:"runs"`
	}
	var buf bytes.Buffer
	require.NoError(t, Write(&buf, SARIF, l, tool))
	if assert.NoError(t, json.Unmarshal(buf.Bytes(), &doc), "sarif") && assert.Len(t, doc.Runs, 1, "sarif runs") {
		assert.Len(t, doc.Runs[0].Results, 100, "sarif results")
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
			assert.Empty(t, cmp.Diff(string(want), buf.String()), "output differs from %s (rerun with -update if intended), -want +got", golden)
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
