package syntax

import (
	"strings"

	"github.com/phasec/phasec/diag"
)

// Syntax error recovery.
//
// The statement reader (parser.go) reports a syntax error to the block
// that holds the failing statement. Recovery then decides which text the
// error damaged, by the logical lines of the source: the logical line
// containing the error, or for a block header (def, class, decorator,
// if/elif/else, for, with) the whole block, since its body alone would not
// parse. The reader records the diagnostic, skips that text (the scanner
// resumes at the next line with the indentation levels of the statement),
// and puts a `pass` in the statement's place. Every other line keeps its
// position, so later diagnostics are exact, and the cost of an error is the
// text it damaged: there is no re-parse.
//
// The names the dropped text would have bound are handed to the builder,
// which poisons them where the `pass` stands (see neutralizedPass), so
// their later uses stay silent; diagnostics the builder reports on dropped
// lines are discarded.
//
// Termination: every recovered error resumes scanning past the line the
// failing statement started on, and parsing stops after maxErrors errors.
// Valid input never gets here.

// recovery is the state of syntax error recovery over one source.
type recovery struct {
	filename string
	lines    []logicalLine
	orig     []string         // the physical lines
	starts   []int            // byte offset of each physical line
	dead     map[int]bool     // dropped physical lines
	poison   map[int][]string // pass line -> names the dropped text bound
	diags    diag.List
}

func newRecovery(filename, src string) *recovery {
	r := &recovery{
		filename: filename,
		lines:    logicalLines(src),
		orig:     strings.Split(src, "\n"),
		dead:     map[int]bool{},
		poison:   map[int][]string{},
	}
	r.starts = make([]int, 0, len(r.orig))
	off := 0
	for _, l := range r.orig {
		r.starts = append(r.starts, off)
		off += len(l) + 1
	}
	return r
}

// lineOffset returns the byte offset where physical line n starts (the end
// of the source past the last line) and the line number there.
func (r *recovery) lineOffset(n int) (off, line int) {
	if n-1 < len(r.starts) {
		return r.starts[n-1], n
	}
	last := len(r.starts) - 1
	return r.starts[last] + len(r.orig[last]), last + 1
}

// damage returns the physical lines an error damaged (the statement or
// block it points into) and the names that text binds; ok is false when
// there is no line to drop.
func (r *recovery) damage(d *diag.Diagnostic) (first, last int, names []string, ok bool) {
	// Past the statement's last line means at the end of the file: the
	// statement before is unfinished.
	i := lineIndex(r.lines, d.Span.Line)
	// An error at the very start of a statement right after one whose
	// brackets never closed is that statement's fault.
	if i > 0 && r.lines[i-1].unclosed && d.Span.Line == r.lines[i].start && d.Span.Col == r.lines[i].indent+1 {
		i--
	}
	if i < 0 {
		return 0, 0, nil, false
	}
	lo, hi := r.block(i)
	if r.lines[i].isHeader() && (r.lines[lo].first == "@" || r.lines[i].first == "def" || r.lines[i].first == "class") {
		names = r.definedName(lo, hi)
	} else {
		for k := lo; k <= hi; k++ {
			names = append(names, boundNames(lineTokens(r.source(k)))...)
		}
	}
	return r.lines[lo].start, r.lines[hi].end, names, true
}

// drop records that physical lines first..last are skipped and that the
// pass standing on line first poisons names.
func (r *recovery) drop(first, last int, names []string) {
	for n := first; n <= last; n++ {
		r.dead[n] = true
	}
	r.poison[first] = append(r.poison[first], names...)
}

// block returns the logical lines to neutralize for an error on line i:
// the line itself, or for a block header the whole block (decorators, the
// header, its body, and the other clauses of an if chain).
func (r *recovery) block(i int) (first, last int) {
	ls := r.lines
	if !ls[i].isHeader() {
		return i, i
	}
	ind := ls[i].indent
	first = i
	// Back over the decorators of a def/class and the earlier clauses of an
	// if chain.
	for k := i - 1; k >= 0; k-- {
		if ls[k].indent > ind {
			continue
		}
		f := ls[k].first
		if ls[k].indent < ind || r.dead[ls[k].start] {
			break
		}
		if f == "@" && (ls[first].first == "@" || ls[first].first == "def" || ls[first].first == "class") {
			first = k
			continue
		}
		if (f == "if" || f == "elif") && (ls[first].first == "elif" || ls[first].first == "else") {
			first = k
			if f == "if" {
				break
			}
			continue
		}
		break
	}
	// Forward over the decorated definition, the bodies and later clauses.
	last = i
	for k := i + 1; k < len(ls); k++ {
		f := ls[k].first
		switch {
		case ls[k].indent > ind:
		case ls[k].indent == ind && ls[last].first == "@" && ls[k-1].indent == ind && (f == "@" || f == "def" || f == "class"):
		case ls[k].indent == ind && (f == "elif" || f == "else"):
		default:
			return first, last
		}
		last = k
	}
	return first, last
}

// source returns the original text of logical line k.
func (r *recovery) source(k int) string {
	return strings.Join(r.orig[r.lines[k].start-1:r.lines[k].end], "\n")
}

// definedName returns the name of the def or class a neutralized
// decorated definition (lines first..last) would have bound.
func (r *recovery) definedName(first, last int) []string {
	for k := first; k <= last; k++ {
		if f := r.lines[k].first; f == "def" || f == "class" {
			return boundNames(lineTokens(r.source(k)))
		}
	}
	return nil
}

// keep is the subset of builder diagnostics recovery did not make up.
func (r *recovery) keep(list diag.List) diag.List {
	out := list[:0]
	for _, d := range list {
		if !r.dead[d.Span.Line] {
			out = append(out, d)
		}
	}
	return out
}
