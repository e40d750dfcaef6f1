package diag

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
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
		if got := tt.s.String(); got != tt.want {
			t.Errorf("%#v.String() = %q, want %q", tt.s, got, tt.want)
		}
	}
}

func TestDiagnosticString(t *testing.T) {
	d := &Diagnostic{Span: Span{File: "m.tvms", Line: 2, Col: 5}, Code: "WF030", Msg: "dataflow block", Hint: "run ToNonDataflow"}
	if got, want := d.String(), "m.tvms:2:5: error WF030: dataflow block (hint: run ToNonDataflow)"; got != want {
		t.Errorf("got %q, want %q", got, want)
	}
	w := &Diagnostic{Span: Span{File: "m.tvms", Line: 1, Col: 1}, Severity: Warning, Msg: "w"}
	if got, want := w.String(), "m.tvms:1:1: warning: w"; got != want {
		t.Errorf("got %q, want %q", got, want)
	}
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
	if len(got) != len(want) {
		t.Fatalf("Dedup kept %d diagnostics, want %d:\n%v", len(got), len(want), got)
	}
	for i := range want {
		if got[i].String() != want[i] {
			t.Errorf("[%d] = %q, want %q", i, got[i].String(), want[i])
		}
	}
}

func TestErrOnlyForErrors(t *testing.T) {
	var l List
	if l.Err() != nil {
		t.Error("an empty list is an error")
	}
	l = append(l, &Diagnostic{Severity: Warning, Msg: "w"})
	if l.Err() != nil || l.HasErrors() {
		t.Error("a warning-only list is an error")
	}
	l.Add(Span{}, "", "e")
	if l.Err() == nil || !l.HasErrors() {
		t.Error("a list with an error is not an error")
	}
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
	if len(got) != 20+5+3+1 {
		t.Fatalf("%d diagnostics, want 29:\n%v", len(got), got)
	}
	count := map[Code]int{}
	for _, d := range got[:len(got)-1] {
		count[d.Code]++
		if d.Code == "WF001" && d.Span.Line >= 30 {
			t.Errorf("kept a WF001 past the first 20: line %d", d.Span.Line)
		}
	}
	if count["WF001"] != 20 || count["WF002"] != 5 || count[""] != 3 {
		t.Errorf("counts %v", count)
	}
	note := got[len(got)-1]
	if note.Severity != Note || note.Code != "WF001" || !strings.HasPrefix(note.Msg, "5 more WF001 diagnostics not shown (25 in all") {
		t.Errorf("note %v", note)
	}
	if small := l[:10].Grouped(20); len(small) != 10 {
		t.Errorf("a list under the limit changed: %d", len(small))
	}
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
