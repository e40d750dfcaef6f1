package syntax

import (
	"errors"
	"fmt"
	"strings"
	"unicode/utf8"

	"github.com/alecthomas/participle/v2"
	"github.com/alecthomas/participle/v2/lexer"
	"github.com/phasec/phasec/diag"
)

// maxErrors bounds the diagnostics of one Parse; further ones are replaced
// by a single "too many errors" note.
const maxErrors = 20

// internalCodes is the family of the parser's one code, "internal". Errors
// in the input (syntax, unknown names, ill-formed constructs) carry no code:
// the message says what is wrong where.
var internalCodes = diag.NewFamily("internal", "the parser (syntax): a panic recovered at its API boundary; errors in the input itself carry no code")

// CodeInternal marks a diagnostic that reports a bug in phasec itself (a
// recovered panic), never a problem in the input.
var CodeInternal = internalCodes.Define("internal", "a bug in phasec's parser (a recovered panic), not in the input")

// FormatDiagnostics renders each diagnostic as "file:line:col: error: msg"
// followed by the offending source line and a caret under the column (a run
// of carets when the span's end is on the same line), then each related
// note the same way ("file:line:col: note: msg"). src is the text the
// diagnostics refer to; diagnostics without a valid position render alone.
func FormatDiagnostics(list diag.List, src []byte) string {
	lines := strings.Split(string(src), "\n")
	var b strings.Builder
	for _, d := range list {
		b.WriteString(d.String())
		b.WriteByte('\n')
		writeSourceLine(&b, d.Span, lines)
		for _, r := range d.Related {
			b.WriteString(r.String())
			b.WriteByte('\n')
			writeSourceLine(&b, r.Span, lines)
		}
	}
	return b.String()
}

// writeSourceLine writes the line sp starts on, indented, and carets under
// the span, when sp points into lines.
func writeSourceLine(b *strings.Builder, sp diag.Span, lines []string) {
	if !sp.IsValid() || sp.Line > len(lines) {
		return
	}
	line := strings.ReplaceAll(strings.TrimRight(lines[sp.Line-1], "\r"), "\t", " ")
	b.WriteString("    ")
	b.WriteString(Visible(line))
	b.WriteByte('\n')
	col := max(sp.Col, 1)
	width := 1
	if sp.EndLine == sp.Line && sp.EndCol > col {
		width = sp.EndCol - col
	}
	if col-1 > len(line) {
		col = len(line) + 1
	}
	width = max(1, min(width, len(line)-(col-1)))
	// Carets under the escaped text: a control byte printed as \xNN
	// takes four columns.
	pad := len(Visible(line[:col-1]))
	width = max(1, len(Visible(line[col-1:min(len(line), col-1+width)])))
	b.WriteString("    ")
	b.WriteString(strings.Repeat(" ", pad))
	b.WriteString(strings.Repeat("^", width))
	b.WriteByte('\n')
}

// finish sorts and de-duplicates diagnostics and bounds their number.
func finish(list diag.List) diag.List {
	list = list.Dedup()
	if len(list) > maxErrors {
		extra := len(list) - maxErrors
		last := list[maxErrors-1]
		list = list[:maxErrors]
		list = append(list, &diag.Diagnostic{Span: last.Span, Severity: diag.Note,
			Msg: fmt.Sprintf("too many errors (%d more not shown)", extra)})
	}
	return list
}

// syntaxDiagnostic converts participle's single furthest-failure error into
// a positioned diagnostic saying what was expected and what was found.
func syntaxDiagnostic(filename string, err error) *diag.Diagnostic {
	d := &diag.Diagnostic{Severity: diag.Error, Span: diag.Span{File: filename, Line: 1, Col: 1}}
	var ute *participle.UnexpectedTokenError
	var perr participle.Error
	switch {
	case errors.As(err, &ute):
		d.Span = posSpan(filename, ute.Unexpected.Pos, len(ute.Unexpected.Value))
		found := describeToken(ute.Unexpected)
		if ute.Expect != "" {
			d.Msg = fmt.Sprintf("syntax error: expected %s, found %s", ute.Expect, found)
		} else if m := ute.Message(); strings.Contains(m, "(expected ") {
			exp := m[strings.Index(m, "(expected ")+len("(expected ") : len(m)-1]
			d.Msg = fmt.Sprintf("syntax error: expected %s, found %s", exp, found)
		} else {
			d.Msg = fmt.Sprintf("syntax error: unexpected %s", found)
		}
	case errors.As(err, &perr):
		d.Span = posSpan(filename, perr.Position(), 1)
		msg := perr.Message()
		if strings.HasPrefix(msg, "invalid input text") {
			msg = "unexpected character: " + strings.TrimPrefix(msg, "invalid input text ")
		}
		d.Msg = "syntax error: " + msg
	default:
		d.Msg = "syntax error: " + err.Error()
	}
	d.Msg = Visible(productionNames.Replace(d.Msg))
	return d
}

// Visible escapes what a terminal would not show as written: control
// bytes (other than tab) and bytes that are not UTF-8 become \xNN, so a
// message about binary input never carries raw control sequences.
func Visible(s string) string {
	clean := true
	for i := 0; i < len(s); {
		r, size := utf8.DecodeRuneInString(s[i:])
		if r == utf8.RuneError && size == 1 || r < 0x20 && r != '\t' || r == 0x7f {
			clean = false
			break
		}
		i += size
	}
	if clean {
		return s
	}
	var b strings.Builder
	for i := 0; i < len(s); {
		r, size := utf8.DecodeRuneInString(s[i:])
		if r == utf8.RuneError && size == 1 || r < 0x20 && r != '\t' || r == 0x7f {
			fmt.Fprintf(&b, `\x%02x`, s[i])
			i++
			continue
		}
		b.WriteString(s[i : i+size])
		i += size
	}
	return b.String()
}

// productionNames spells participle's grammar production names, which its
// "expected" lists mention, the way a user reads them. (The wording avoids
// "indent": recovery treats messages about indentation as layout errors.)
var productionNames = strings.NewReplacer(
	`":" SuiteNode`, `":" and a block`,
	"StmtNode+ <dedent>", "a statement",
	"StmtNode+", "a statement",
	"SuiteNode", "a block",
	"StmtNode", "a statement",
	"DecoratedNode", "a decorated def or class",
	"ClassNode", "a class",
	"DefNode", "a def",
	"ParamNode", "a parameter",
	"ElifNode", "elif",
	"ForNode", "a for loop",
	"WithNode", "a with block",
	"IfNode", "an if statement",
	"AssignNode", "an assignment",
	"ListNode", "a list",
	"FileNode", "a module",
	"<dedent>", "the end of the block",
)

func posSpan(filename string, p lexer.Position, width int) diag.Span {
	line, col := p.Line, p.Column
	if line == 0 {
		line, col = 1, 1
	}
	return diag.Span{File: filename, Line: line, Col: col, EndLine: line, EndCol: col + max(width, 1)}
}

func describeToken(t lexer.Token) string {
	switch {
	case t.EOF():
		return "end of file"
	case t.Value == "\n":
		return "end of line"
	case t.Value == "<indent>":
		return "an indented block (unexpected indent)"
	case t.Value == "<dedent>":
		return "the end of the indented block"
	}
	return fmt.Sprintf("%q", t.Value)
}

// didYouMean formats a suggestion as a message suffix.
func didYouMean(name string, candidates []string, prefix string) string {
	if s := diag.Closest(name, candidates); s != "" {
		return fmt.Sprintf(" (did you mean %s%s?)", prefix, s)
	}
	return ""
}
