package syntax

import (
	"slices"
	"strings"

	"github.com/phasec/phasec/diag"
)

// Syntax error recovery.
//
// participle reports only its furthest failure, so to report several
// independent syntax errors Parse, after a failure, records the diagnostic,
// replaces the logical line containing it by an indentation-preserving
// `pass` (a "neutralized" line) and parses again, until the text parses or
// the error bound is reached. Neutralizing keeps every other line where it
// was, so the positions of later diagnostics are exact. A broken block
// header (def, class, decorator, if/elif/else, for, with) takes its whole
// block with it, since its body alone would not parse.
//
// A diagnostic positioned on a line neutralized in an earlier round talks
// about text recovery made up, and is dropped. The names a neutralized line
// would have bound are handed to the builder, which poisons them where the
// `pass` stands (see neutralizedPass), so their later uses stay silent.
//
// Termination: every round neutralizes at least one line that was not
// neutralized before, else recovery stops; the rounds are also bounded
// (maxRecoveryRounds), so the worst case is a bounded number of re-parses.
// Valid input never gets here.

// maxRecoveryRounds bounds the re-parses of one Parse, counting rounds whose
// diagnostic was dropped.
const maxRecoveryRounds = 2 * maxErrors

// recovery is the state of syntax error recovery over one source.
type recovery struct {
	filename string
	lines    []logicalLine
	orig     []string         // the physical lines
	text     []string         // the physical lines, neutralized ones rewritten
	dead     map[int]bool     // neutralized physical lines
	poison   map[int][]string // pass line -> names the neutralized text bound
	diags    diag.List
}

// recoverSyntax runs recovery after parseTree failed with err on src. It
// returns the tree of the neutralized text (nil if recovery gave up), the
// syntax diagnostics, and the recovery state for the builder.
func recoverSyntax(filename string, src []byte, err error) (*fileNode, *recovery) {
	r := &recovery{
		filename: filename,
		lines:    logicalLines(string(src)),
		orig:     strings.Split(string(src), "\n"),
		dead:     map[int]bool{},
		poison:   map[int][]string{},
	}
	r.text = slices.Clone(r.orig)
	for range maxRecoveryRounds {
		d := syntaxDiagnostic(filename, err)
		if !r.dead[d.Span.Line] {
			r.diags = append(r.diags, d)
		}
		if len(r.diags) > maxErrors || !r.neutralize(d) {
			return nil, r
		}
		var tree *fileNode
		if tree, err = parseTree(filename, []byte(strings.Join(r.text, "\n"))); err == nil {
			return tree, r
		}
	}
	return nil, r
}

// neutralize rewrites the statement (or block) the diagnostic points into;
// it reports false when there is no new line to neutralize.
func (r *recovery) neutralize(d *diag.Diagnostic) bool {
	// Past the statement's last line means at the end of the file: the
	// statement before is unfinished.
	i := lineIndex(r.lines, d.Span.Line)
	// An error at the very start of a statement right after one whose
	// brackets never closed is that statement's fault.
	if i > 0 && r.lines[i-1].unclosed && d.Span.Line == r.lines[i].start && d.Span.Col == r.lines[i].indent+1 {
		i--
	}
	// Recovery's own text is never to blame: step back to real text.
	for i >= 0 && r.dead[r.lines[i].start] {
		i--
	}
	if i < 0 {
		return false
	}
	first, last := r.block(i)
	indent := r.lines[i].indent
	if first != i {
		indent = r.lines[first].indent
	}
	if isLayoutError(d.Msg) || r.lines[first].tabIndent {
		indent = r.layoutIndent(first)
	}
	var names []string
	if r.lines[i].isHeader() && (r.lines[first].first == "@" || r.lines[i].first == "def" || r.lines[i].first == "class") {
		names = r.definedName(first, last)
	} else {
		for k := first; k <= last; k++ {
			names = append(names, boundNames(lineTokens(r.source(k)))...)
		}
	}
	start, end := r.lines[first].start, r.lines[last].end
	for n := start; n <= end; n++ {
		r.text[n-1] = ""
		r.dead[n] = true
	}
	r.text[start-1] = strings.Repeat(" ", indent) + "pass"
	r.poison[start] = names
	return true
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

// layoutIndent picks an indentation for the pass that replaces a line with
// broken indentation: that of the statement before it, one level deeper
// when that statement opens a block.
func (r *recovery) layoutIndent(i int) int {
	if i == 0 {
		return 0
	}
	prev := r.lines[i-1]
	if strings.HasSuffix(strings.TrimSpace(stripComment(r.orig[prev.end-1])), ":") {
		return prev.indent + 4
	}
	return prev.indent
}

func stripComment(s string) string {
	if k := strings.IndexByte(s, '#'); k >= 0 && !strings.ContainsAny(s[:k], `"'`) {
		return s[:k]
	}
	return s
}

func isLayoutError(msg string) bool { return strings.Contains(msg, "indent") }

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
