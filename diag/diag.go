// Package diag holds source positions and user-facing diagnostics.
//
// Every layer of phasec reports problems in the input (text, IR, pipelines,
// flags) as Diagnostics: a span, a severity, an optional stable rule code, a
// message, an optional fix hint and optional related positions (the other
// side of a conflict). Diagnostics are values collected in a List, sorted
// and de-duplicated before they are shown.
//
// Every code is registered (codes.go): a Family declares a prefix once, in
// the package that owns it, and Family.Define gives each code its one-line
// title, panicking on a duplicate. Internal invariant
// failures (bugs in phasec itself) are not Diagnostics: they are Go errors or
// panics and never reach a user as if the input were at fault.
package diag

import (
	"cmp"
	"fmt"
	"slices"
	"strings"
)

// Span is a range of source text. Lines and columns are 1-based; a zero Line
// means the position is unknown (the node was built by a pass, not parsed).
type Span struct {
	File    string
	Line    int
	Col     int
	EndLine int
	EndCol  int
}

// IsValid reports whether the span points at real source text.
func (s Span) IsValid() bool { return s.Line > 0 }

// String formats the start of the span as file:line:col, omitting the parts
// that are unknown.
func (s Span) String() string {
	file := s.File
	if file == "" {
		file = "<input>"
	}
	if !s.IsValid() {
		return file
	}
	return fmt.Sprintf("%s:%d:%d", file, s.Line, s.Col)
}

// Compare orders spans by file, line, then column.
func (s Span) Compare(t Span) int {
	return cmp.Or(cmp.Compare(s.File, t.File), cmp.Compare(s.Line, t.Line), cmp.Compare(s.Col, t.Col))
}

// Severity grades a diagnostic.
type Severity int

const (
	Error Severity = iota
	Warning
	Note
)

func (s Severity) String() string {
	switch s {
	case Error:
		return "error"
	case Warning:
		return "warning"
	default:
		return "note"
	}
}

// Diagnostic is one problem found in user input.
type Diagnostic struct {
	Span     Span
	Severity Severity
	Code     Code // stable rule code such as "WF017"; empty for parse errors
	Msg      string
	Hint     string // how to fix it; may be empty
	Path     string // path to the offending IR node, e.g. "main.body.blocks[0]"; may be empty
	// Related are other positions the problem involves, such as the first
	// definition of a name defined twice; formats show them after the
	// diagnostic as notes.
	Related []Related
}

// Related is a position that explains a diagnostic, with what happens there
// ("function f is first defined here").
type Related struct {
	Span Span
	Msg  string
}

// String formats the related position as "file:line:col: note: msg", the
// line text formats print after their diagnostic.
func (r Related) String() string { return r.Span.String() + ": note: " + r.Msg }

// Head formats what precedes the message, "file:line:col: error CODE", so
// that every one-line rendering of a diagnostic starts the same way.
func (d *Diagnostic) Head() string {
	head := d.Span.String() + ": " + d.Severity.String()
	if d.Code != "" {
		head += " " + string(d.Code)
	}
	return head
}

// String formats the diagnostic as "file:line:col: error CODE: msg", one
// line (without its related notes; Error adds them).
func (d *Diagnostic) String() string {
	var b strings.Builder
	b.WriteString(d.Head())
	b.WriteString(": ")
	b.WriteString(d.Msg)
	if d.Hint != "" {
		b.WriteString(" (hint: ")
		b.WriteString(d.Hint)
		b.WriteString(")")
	}
	return b.String()
}

// Error implements error so a single diagnostic can travel as one: String,
// then a line per related note.
func (d *Diagnostic) Error() string {
	if len(d.Related) == 0 {
		return d.String()
	}
	var b strings.Builder
	d.writeText(&b)
	return b.String()
}

// writeText writes the diagnostic's line and its related notes' lines,
// without a final newline.
func (d *Diagnostic) writeText(b *strings.Builder) {
	b.WriteString(d.String())
	for _, r := range d.Related {
		b.WriteByte('\n')
		b.WriteString(r.String())
	}
}

// List is an ordered collection of diagnostics.
type List []*Diagnostic

// Add appends a diagnostic built from the arguments.
func (l *List) Add(span Span, code Code, format string, args ...any) *Diagnostic {
	d := &Diagnostic{Span: span, Severity: Error, Code: code, Msg: fmt.Sprintf(format, args...)}
	*l = append(*l, d)
	return d
}

// Compare orders diagnostics by position, then code, then message.
func Compare(a, b *Diagnostic) int {
	return cmp.Or(a.Span.Compare(b.Span), cmp.Compare(a.Code, b.Code), cmp.Compare(a.Msg, b.Msg))
}

// Sort orders the list by position, code and message.
func (l List) Sort() { slices.SortStableFunc(l, Compare) }

// Dedup sorts the list and removes exact duplicates (same position, code and
// message), returning the shortened list.
func (l List) Dedup() List {
	l.Sort()
	return slices.CompactFunc(l, func(a, b *Diagnostic) bool { return Compare(a, b) == 0 })
}

// HasErrors reports whether any diagnostic is an error.
func (l List) HasErrors() bool {
	for _, d := range l {
		if d.Severity == Error {
			return true
		}
	}
	return false
}

// Err returns nil when the list holds no errors, and the list as an error otherwise.
func (l List) Err() error {
	if !l.HasErrors() {
		return nil
	}
	return l
}

// Error joins the diagnostics one per line, each followed by its related
// notes.
func (l List) Error() string {
	var b strings.Builder
	for i, d := range l {
		if i > 0 {
			b.WriteByte('\n')
		}
		d.writeText(&b)
	}
	return b.String()
}

// GroupLimit is how many diagnostics of one rule a reader sees in full
// before the rest are counted (Grouped).
const GroupLimit = 20

// Grouped returns the list for a reader: of the diagnostics sharing a rule
// code (a rule violated at every one of 100k bindings), the first limit
// keep their place and the rest are replaced by one note per code, after
// the list, counting them. Diagnostics without a code are all kept.
// Machine formats (JSON, SARIF) show the full list instead.
func (l List) Grouped(limit int) List {
	seen := map[Code]int{}
	var order []Code
	last := map[Code]*Diagnostic{}
	out := make(List, 0, len(l))
	for _, d := range l {
		if d.Code == "" {
			out = append(out, d)
			continue
		}
		n := seen[d.Code]
		seen[d.Code] = n + 1
		if n < limit {
			out = append(out, d)
			last[d.Code] = d
		} else if n == limit {
			order = append(order, d.Code)
		}
	}
	for _, code := range order {
		rest := seen[code] - limit
		out = append(out, &Diagnostic{Span: Span{File: last[code].Span.File}, Severity: Note, Code: code,
			Msg: fmt.Sprintf("%d more %s diagnostic%s not shown (%d in all; --format json or sarif lists every one)",
				rest, code, plural(rest), seen[code])})
	}
	return out
}

func plural(n int) string {
	if n == 1 {
		return ""
	}
	return "s"
}
