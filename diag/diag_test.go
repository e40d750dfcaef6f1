package diag

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestSpanString(t *testing.T) {
	tests := []struct {
		s    Span
		want string
	}{
		{Span{File: "m.tvms", Line: 3, Col: 7}, "m.tvms:3:7"},
		{Span{Line: 3, Col: 7}, "<input>:3:7"},
		{Span{File: "m.tvms"}, "m.tvms"},
	}
	for _, tt := range tests {
		assert.Equal(t, tt.want, tt.s.String(), "%#v.String()", tt.s)
	}
}

func TestDiagnosticString(t *testing.T) {
	d := &Diagnostic{Span: Span{File: "m.tvms", Line: 2, Col: 5}, Code: "WF030", Msg: "dataflow block", Hint: "run ToNonDataflow"}
	assert.Equal(t, "m.tvms:2:5: error WF030: dataflow block (hint: run ToNonDataflow)", d.String())
	w := &Diagnostic{Span: Span{File: "m.tvms", Line: 1, Col: 1}, Severity: Warning, Msg: "w"}
	assert.Equal(t, "m.tvms:1:1: warning: w", w.String())
}

// TestDedupSortsAndRemovesExactDuplicates: order is file, line, column,
// code, message; only diagnostics equal in all of them collapse.
func TestDedupSortsAndRemovesExactDuplicates(t *testing.T) {
	var l List
	l.Add(Span{File: "b", Line: 1, Col: 1}, "WF002", "x")
	l.Add(Span{File: "a", Line: 9, Col: 1}, "WF001", "y")
	l.Add(Span{File: "a", Line: 2, Col: 4}, "WF001", "z")
	l.Add(Span{File: "a", Line: 2, Col: 4}, "WF001", "z")
	l.Add(Span{File: "a", Line: 2, Col: 4}, "WF001", "other message")
	got := l.Dedup()
	want := []string{"a:2:4: error WF001: other message", "a:2:4: error WF001: z", "a:9:1: error WF001: y", "b:1:1: error WF002: x"}
	require.Len(t, got, len(want), "Dedup kept:\n%v", got)
	for i := range want {
		assert.Equal(t, want[i], got[i].String(), "[%d]", i)
	}
}

func TestErrOnlyForErrors(t *testing.T) {
	var l List
	assert.NoError(t, l.Err(), "an empty list is an error")
	l = append(l, &Diagnostic{Severity: Warning, Msg: "w"})
	assert.NoError(t, l.Err(), "a warning-only list is an error")
	assert.False(t, l.HasErrors(), "a warning-only list is an error")
	l.Add(Span{}, "", "e")
	assert.Error(t, l.Err(), "a list with an error is not an error")
	assert.True(t, l.HasErrors(), "a list with an error is not an error")
}

func TestGrouped(t *testing.T) {
	var l List
	for i := range 25 {
		l = append(l, &Diagnostic{Span: Span{File: "m.tvms", Line: 10 + i, Col: 1}, Code: "WF001", Msg: "a"})
		if i < 5 {
			l = append(l, &Diagnostic{Span: Span{File: "m.tvms", Line: 10 + i, Col: 2}, Code: "WF002", Msg: "b"})
		}
		if i < 3 {
			l = append(l, &Diagnostic{Span: Span{File: "m.tvms", Line: 10 + i, Col: 3}, Msg: "syntax"})
		}
	}
	got := l.Grouped(20)
	// 20 of WF001 (lines 10..29), all 5 WF002, all 3 codeless, one note.
	require.Len(t, got, 20+5+3+1, "diagnostics:\n%v", got)
	count := map[Code]int{}
	for _, d := range got[:len(got)-1] {
		count[d.Code]++
		if d.Code == "WF001" {
			assert.Less(t, d.Span.Line, 30, "kept a WF001 past the first 20")
		}
	}
	assert.Equal(t, 20, count["WF001"], "counts %v", count)
	assert.Equal(t, 5, count["WF002"], "counts %v", count)
	assert.Equal(t, 3, count[""], "counts %v", count)
	note := got[len(got)-1]
	assert.Equal(t, Note, note.Severity, "note %v", note)
	assert.Equal(t, Code("WF001"), note.Code, "note %v", note)
	assert.True(t, strings.HasPrefix(note.Msg, "5 more WF001 diagnostics not shown (25 in all"), "note %v", note)
	assert.Len(t, l[:10].Grouped(20), 10, "a list under the limit changed")
}

func TestRelatedNotesFollowTheirDiagnostic(t *testing.T) {
	d := &Diagnostic{Span: Span{File: "m.tvms", Line: 9, Col: 5}, Msg: "duplicate function f in the module",
		Related: []Related{{Span: Span{File: "m.tvms", Line: 3, Col: 5}, Msg: "function f is first defined here"}}}
	want := "m.tvms:9:5: error: duplicate function f in the module\nm.tvms:3:5: note: function f is first defined here"
	assert.Equal(t, "m.tvms:9:5: error: duplicate function f in the module", d.String(), "String is one line")
	assert.Equal(t, want, d.Error())
	other := &Diagnostic{Span: Span{File: "m.tvms", Line: 10, Col: 1}, Msg: "x"}
	assert.Equal(t, want+"\nm.tvms:10:1: error: x", List{d, other}.Error())
}
