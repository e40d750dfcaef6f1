package syntax

import (
	"fmt"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// spans renders logical lines as "start-end" (with "!" when unclosed).
func spans(ls []logicalLine) string {
	var parts []string
	for _, l := range ls {
		s := fmt.Sprintf("%d-%d", l.start, l.end)
		if l.unclosed {
			s += "!"
		}
		parts = append(parts, s)
	}
	return strings.Join(parts, " ")
}

func TestLogicalLines(t *testing.T) {
	tests := []struct {
		name, src, want string
	}{
		{"simple", "a = 1\nb = 2\n", "1-1 2-2"},
		{"blank and comment lines belong to none", "a = 1\n\n   # c\nb = 2", "1-1 4-4"},
		{"brackets span lines", "a = f(1,\n      2)\nb = 2\n", "1-2 3-3"},
		{"closing bracket at the statement's indent", "a = f(\n    1,\n)\nb = 2\n", "1-3 4-4"},
		{"brackets in strings and comments do not count", "a = \"(\" # (\nb = '['\n", "1-1 2-2"},
		{"triple-quoted string spans lines", "a = \"\"\"x\n(\ny\"\"\"\nb = 1\n", "1-3 4-4"},
		{"backslash continuation", "a = 1 + \\\n    2\nb = 3\n", "1-2 3-3"},
		{"unclosed bracket before a statement at the same indent", "    a = f(x,\n    b = 2\n", "1-1! 2-2"},
		{"unclosed bracket before a dedent", "        a = f(x\n    return a\n", "1-1! 2-2"},
		{"unclosed to the end of the file", "a = f(x,\n     y", "1-2!"},
		{"unterminated short string ends at the line", "a = \"abc\nb = 1\n", "1-1 2-2"},
		{"unterminated triple-quoted string runs to the end", "a = '''abc\nb = 1\n", "1-3"},
		{"escaped quote", `a = "x\"(" ` + "\nb = 1", "1-1 2-2"},
		{"CRLF", "a = f(1,\r\n  2)\r\nb = 1\r\n", "1-2 3-3"},
		{"empty", "", ""},
	}
	for _, tc := range tests {
		assert.Equal(t, tc.want, spans(logicalLines(tc.src)), tc.name)
	}
}

func TestLogicalLineFields(t *testing.T) {
	ls := logicalLines("@R.function\ndef f(x):\n    return x\n\tpass\n")
	require.Len(t, ls, 4)
	var firsts []string
	for _, l := range ls {
		firsts = append(firsts, l.first)
	}
	assert.Equal(t, []string{"@", "def", "return", "pass"}, firsts, "first words")
	assert.Equal(t, 4, ls[2].indent, "indent of line 3")
	assert.False(t, ls[2].tabIndent, "tab in the indentation of line 3")
	assert.True(t, ls[3].tabIndent, "tab in the indentation of line 4")
}

func TestLineIndex(t *testing.T) {
	ls := logicalLines("a = f(1,\n  2)\n\nb = 1\n")
	for _, tc := range []struct{ line, want int }{{1, 0}, {2, 0}, {3, 0}, {4, 1}, {9, 1}, {0, -1}} {
		assert.Equal(t, tc.want, lineIndex(ls, tc.line), "lineIndex(%d)", tc.line)
	}
}

// TestRecoveryBlock: an error on a block header takes the whole block
// (decorators, body, the other clauses of an if chain); elsewhere just the
// statement.
func TestRecoveryBlock(t *testing.T) {
	src := `class M:
    @R.function
    @other
    def f(x):
        if x:
            a = 1
        elif y:
            a = 2
        else:
            a = 3
        return a
    def g(y):
        return y
`
	r := &recovery{lines: logicalLines(src), dead: map[int]bool{}}
	at := func(line int) string {
		first, last := r.block(lineIndex(r.lines, line))
		return fmt.Sprintf("%d-%d", r.lines[first].start, r.lines[last].end)
	}
	for _, tc := range []struct {
		line int
		want string
	}{
		{2, "2-11"},   // decorator: decorators, def and body
		{3, "2-11"},   // second decorator
		{4, "2-11"},   // def: back to its decorators
		{5, "5-10"},   // if: all clauses
		{7, "5-10"},   // elif: back to the if, on to else
		{9, "5-10"},   // else
		{6, "6-6"},    // a body line alone
		{11, "11-11"}, // return
		{12, "12-13"}, // undecorated def
		{1, "1-13"},   // class
	} {
		assert.Equal(t, tc.want, at(tc.line), "block at line %d", tc.line)
	}
}

func TestBoundNames(t *testing.T) {
	tests := []struct {
		src  string
		want []string
	}{
		{"lv0 = R.add(x, y)", []string{"lv0"}},
		{"a, b = t", []string{"a", "b"}},
		{"lv: R.Tensor((n,), \"float32\") = R.add(x", []string{"lv"}},
		{"B[i, j] = A[i, j]", nil},
		{"x.y = 1", nil},
		{"vi, vj = T.axis.remap(\"SS\", [i, j]]", []string{"vi", "vj"}},
		{"def f(x: R.Tensor) -> R.Tensor", []string{"f"}},
		{"class Module", []string{"Module"}},
		{"for i, j in T.grid(4, 4)", []string{"i", "j"}},
		{"with T.block(\"b\") as blk", []string{"blk"}},
		{"R.output(gv, lv1)", []string{"gv", "lv1"}},
		{"lv0 R.add(x, y)", []string{"lv0"}},
		{"R.add(x, y)", nil},
		{"return x +", nil},
		{"y = f(k=1)", []string{"y"}},
		{"", nil},
	}
	for _, tc := range tests {
		// nil and empty are the same answer (slices.Equal's view).
		assert.Empty(t, cmp.Diff(tc.want, boundNames(lineTokens(tc.src)), cmpopts.EquateEmpty()), "boundNames(%q) (-want +got)", tc.src)
	}
}

func TestLineTokens(t *testing.T) {
	got := lineTokens("a1 = R.f(\"x(\", 'y', 1.5e3) ** 2 # c\n  -> \"\"\"doc\n\"\"\" \\\n b")
	want := []string{"a1", "=", "R", ".", "f", "(", `"`, ",", `"`, ",", "0", ")", "**", "0", "->", `"`, "b"}
	assert.Equal(t, want, got)
	// Unterminated strings and stray bytes are accepted.
	for _, s := range []string{`"abc`, `'''abc`, "\x00é\\", `"\`} {
		_ = lineTokens(s)
	}
}

const recoveryPre = header + "@I.ir_module\nclass Module:\n    @R.function\n    def main(x: R.Tensor((4,), \"float32\")) -> R.Tensor((4,), \"float32\"):\n"

// TestRecoveryKeepsPositions: diagnostics after a neutralized multi-line
// statement keep their lines and columns, and names bound by broken
// statements do not cascade.
func TestRecoveryKeepsPositions(t *testing.T) {
	src := recoveryPre +
		"        a = R.add(x,\n" +
		"                  x x)\n" + // line 10: syntax error at col 21
		"        b = R.add(a, a)\n" + // a is poisoned: silent
		"        c = R.add(b, nope)\n" + // b poisoned: silent
		"        d = R.add(x, nope2)\n" + // line 13: semantic error at col 22
		"        e = R.add(x x)\n" + // line 14: syntax error at col 21
		"        return d\n"
	_, diags := Parse("p.tvms", []byte(src))
	var got []string
	for _, d := range diags {
		got = append(got, fmt.Sprintf("%d:%d %s", d.Span.Line, d.Span.Col, d.Msg))
	}
	want := []string{
		`10:21 syntax error: expected "," or ")", found "x"`,
		`13:22 undefined variable nope2`,
		`14:21 syntax error: expected "," or ")", found "x"`,
	}
	assert.Equal(t, want, got)
}

// TestRecoveryHidesItsOwnText: the pass that replaces a broken top-level
// def is recovery's text, so the builder's complaint about a pass at top
// level is dropped; the syntax error is the only diagnostic.
func TestRecoveryHidesItsOwnText(t *testing.T) {
	src := header + `@R.function
def f(x: R.Tensor((2,), "float32") -> R.Tensor((2,), "float32"):
    return x

@R.function
def g(x: R.Tensor((2,), "float32")) -> R.Tensor((2,), "float32"):
    return x
`
	_, diags := Parse("p.tvms", []byte(src))
	require.Len(t, diags, 1, "want only the syntax error on line 6")
	assert.Equal(t, 6, diags[0].Span.Line, "got %v, want the syntax error on line 6", diags)
	assert.True(t, strings.HasPrefix(diags[0].Msg, "syntax error"), "got %v, want a syntax error", diags)
}

// TestRecoveryBounded: many syntax errors stop at maxErrors plus a note,
// sorted.
func TestRecoveryBounded(t *testing.T) {
	var b strings.Builder
	b.WriteString(recoveryPre)
	const n = 30
	for i := range n {
		fmt.Fprintf(&b, "        y%d = R.add(x x)\n", i)
	}
	b.WriteString("        return x\n")
	_, diags := Parse("many.tvms", []byte(b.String()))
	require.Len(t, diags, maxErrors+1)
	for i := 0; i < maxErrors; i++ {
		assert.Equal(t, 9+i, diags[i].Span.Line, "diagnostic %d: %s", i, diags[i])
		assert.Contains(t, diags[i].Msg, "syntax error", "diagnostic %d", i)
	}
	assert.Contains(t, diags[maxErrors].Msg, "too many errors", "last diagnostic")
}

// TestRecoveryGivesUp: when no new line can be neutralized recovery stops
// with what it has, without looping.
func TestRecoveryGivesUp(t *testing.T) {
	for _, src := range []string{
		")",
		"(((",
		"\"\"\"never closed",
		"@I.ir_module\nclass Module:\n  def f(:\n",
		"  x = 1\n",
		"\tx\n",
		"x = (\n\n\n",
	} {
		_, diags := Parse("g.tvms", []byte(src))
		if assert.NotEmpty(t, diags, "%q", src) {
			assert.False(t, diags[0].Code == CodeInternal, "%q: diagnostics %v", src, diags)
		}
	}
}

// TestRecoveryLayout: a line with broken indentation is replaced at a
// valid indentation, so the statements after it are still checked.
func TestRecoveryLayout(t *testing.T) {
	src := recoveryPre +
		"        a = R.add(x, x)\n" +
		"            b = R.add(a, a)\n" + // line 10: unexpected indent
		"        c = R.add(x, nope)\n" + // line 11
		"        return c\n"
	_, diags := Parse("l.tvms", []byte(src))
	got := FormatDiagnostics(diags, []byte(src))
	require.Len(t, diags, 2, "got:\n%s", got)
	assert.Equal(t, 10, diags[0].Span.Line, "got:\n%s", got)
	assert.Contains(t, diags[0].Msg, "unexpected indent")
	assert.Equal(t, 11, diags[1].Span.Line, "got:\n%s", got)
	assert.Contains(t, diags[1].Msg, "undefined variable nope")
}
