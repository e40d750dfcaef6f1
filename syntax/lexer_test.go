package syntax

import (
	"fmt"
	"os"
	"strconv"
	"strings"
	"testing"

	"github.com/alecthomas/participle/v2/lexer"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// tokenStream lexes src and renders the tokens compactly: synthesized
// tokens as NL, IN, DE; others as their text.
func tokenStream(t *testing.T, src string) (string, error) {
	t.Helper()
	lx, err := pythonLexer.LexString("t", src)
	if err != nil {
		return "", err
	}
	names := lexer.SymbolsByRune(pythonLexer)
	var out []string
	for {
		tok, err := lx.Next()
		if err != nil {
			return strings.Join(out, " "), err
		}
		if tok.EOF() {
			break
		}
		switch names[tok.Type] {
		case tokNewline:
			out = append(out, "NL")
		case tokIndent:
			out = append(out, "IN")
		case tokDedent:
			out = append(out, "DE")
		default:
			out = append(out, tok.Value)
		}
		require.LessOrEqual(t, len(out), 1000, "lexer does not terminate")
	}
	return strings.Join(out, " "), nil
}

func TestLexerTokenStreams(t *testing.T) {
	tests := []struct {
		name, src, want string
	}{
		{"simple", "x = 1\n", "x = 1 NL"},
		{"no trailing newline", "x = 1", "x = 1 NL"},
		{"indent and dedent", "def f():\n    x = 1\ny = 2\n", "def f ( ) : NL IN x = 1 NL DE y = 2 NL"},
		{"eof flushes dedents", "if a:\n  if b:\n    c\n", "if a : NL IN if b : NL IN c NL DE DE"},
		{"blank and comment lines skipped", "a\n\n   # comment\n\t\nb # trailing\n", "a NL b NL"},
		{"brackets suppress layout", "f(a,\n      b,\n  c)\nd\n", "f ( a , b , c ) NL d NL"},
		{"nested brackets", "x = [(1,\n 2), {3:\n4}]\n", "x = [ ( 1 , 2 ) , { 3 : 4 } ] NL"},
		{"multi-level dedent", "a:\n  b:\n    c\nd\n", "a : NL IN b : NL IN c NL DE DE d NL"},
		{"floats and ints", "1e-5 2.5 .5 3. 10 0x1F 1E3\n", "1e-5 2.5 .5 3. 10 0x1F 1E3 NL"},
		{"strings", `"a\"b" 'c' """d"""` + "\n", `"a\"b" 'c' """d""" NL`},
		{"operators", "a ** b // c -> d == e != f <= g >= h << i >> j\n", "a ** b // c -> d == e != f <= g >= h << i >> j NL"},
		{"keywords vs names", "for x in y: pass\nin_ x_in\n", "for x in y : pass NL in_ x_in NL"},
		{"line continuation", "a = 1 + \\\n    2\n", "a = 1 + 2 NL"},
		{"decorator", "@R.function\ndef f():\n  return x\n", "@ R . function NL def f ( ) : NL IN return x NL DE"},
		{"crlf", "a\r\n  b\r\n", "a NL IN b NL DE"},
		{"empty", "", ""},
		{"only comments", "# a\n# b\n", ""},
		{"first line indented", "  a\n", "IN a NL DE"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got, err := tokenStream(t, tc.src)
			require.NoError(t, err, "lex error")
			assert.Equal(t, tc.want, got, "tokens of %q", tc.src)
		})
	}
}

func TestLexerErrors(t *testing.T) {
	tests := []struct {
		name, src, msg string
		line, col      int
	}{
		{"inconsistent dedent", "a:\n    b\n  c\n", "unindent does not match any outer indentation level", 3, 3},
		{"tab indentation", "a:\n\tb\n", "tab in indentation", 2, 2},
		{"bad character", "a = $\n", "", 1, 5},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			_, err := tokenStream(t, tc.src)
			require.Error(t, err, "no error for %q", tc.src)
			lerr, ok := err.(interface {
				Message() string
				Position() lexer.Position
			})
			require.True(t, ok, "error %v has no position", err)
			assert.Contains(t, lerr.Message(), tc.msg)
			p := lerr.Position()
			assert.Equal(t, tc.line, p.Line, "position line")
			assert.Equal(t, tc.col, p.Column, "position column")
		})
	}
}

// regexpRules are the token rules of the regexp lexer the scanner replaced
// (participle's lexer.MustSimple, tried in order). They serve as an
// executable specification: the scanner must produce the same significant
// tokens, with the same types and positions.
var regexpRules = lexer.MustSimple([]lexer.SimpleRule{
	{Name: "Comment", Pattern: `#[^\n]*`},
	{Name: "String", Pattern: `"""(?s:.*?)"""|'''(?s:.*?)'''|"(?:\\.|[^"\\\n])*"|'(?:\\.|[^'\\\n])*'`},
	{Name: "Float", Pattern: `(?:\d+\.\d*|\.\d+)(?:[eE][-+]?\d+)?|\d+[eE][-+]?\d+`},
	{Name: "Int", Pattern: `0[xX][0-9a-fA-F]+|\d+`},
	{Name: "Keyword", Pattern: `(?:def|class|if|elif|else|for|while|in|with|as|return|and|or|not|pass|True|False|None|lambda|is)\b`},
	{Name: "Name", Pattern: `[A-Za-z_]\w*`},
	{Name: "Op", Pattern: `\*\*|//|->|==|!=|<=|>=|<<|>>|[-+*/%@<>=()\[\]{},:.;~&|^]`},
	{Name: "NL", Pattern: `\r?\n`},
	{Name: "WS", Pattern: `[ \t\f]+|\\\r?\n`},
})

// significantTokens renders the tokens of lx other than layout, blanks and
// comments as "Type:value@line:col" lines.
func significantTokens(lx lexer.Lexer, def lexer.Definition) ([]string, error) {
	names := lexer.SymbolsByRune(def)
	var out []string
	for {
		tok, err := lx.Next()
		if err != nil {
			return out, err
		}
		if tok.EOF() {
			return append(out, fmt.Sprintf("EOF@%d:%d", tok.Pos.Line, tok.Pos.Column)), nil
		}
		switch names[tok.Type] {
		case "Comment", "NL", "WS", tokNewline, tokIndent, tokDedent:
			continue
		}
		out = append(out, fmt.Sprintf("%s:%s@%d:%d/%d", names[tok.Type], tok.Value, tok.Pos.Line, tok.Pos.Column, tok.Pos.Offset))
	}
}

// checkAgainstRegexpRules compares the scanner with regexpRules on src: when
// the regexp lexer accepts src, the scanner yields the same tokens (or
// stops with a layout error); when it rejects src, so does the scanner.
func checkAgainstRegexpRules(t *testing.T, name, src string) {
	t.Helper()
	// The reference rules do not know a byte-order mark (TestByteOrderMark
	// covers it).
	src = strings.TrimPrefix(src, byteOrderMark)
	ref, _ := regexpRules.LexString("t", src)
	want, refErr := significantTokens(ref, regexpRules)
	lx, _ := pythonLexer.LexString("t", src)
	got, err := significantTokens(lx, pythonLexer)
	if err != nil && refErr == nil {
		// Deliberate differences: layout errors, and an unclosed triple
		// quote (the regexp lexer read it as adjacent short strings; Python
		// reports it, and so does the scanner).
		msg := err.Error()
		assert.True(t, strings.Contains(msg, "indent") || strings.Contains(msg, "unterminated triple-quoted"),
			"%s: scanner error %v, regexp lexer accepts", name, err)
		return
	}
	if refErr != nil {
		assert.Error(t, err, "%s: regexp lexer error %v, scanner accepts", name, refErr)
		return
	}
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		// Name the first differing token rather than dump both streams.
		for i := range min(len(got), len(want)) {
			if got[i] != want[i] {
				assert.Failf(t, "the scanner and the regexp lexer differ", "%s: token %d: scanner %s, regexp lexer %s", name, i, got[i], want[i])
				return
			}
		}
		assert.Failf(t, "the scanner and the regexp lexer differ", "%s: %d tokens, regexp lexer %d", name, len(got), len(want))
	}
}

var lexerEdgeCases = []string{
	"x = 1\n", "a.5 1..2 3.e5 .5e-3 1e 1e+ 0x 0xg 0X1f 007 1_000\n",
	"define is_ in_ x_in isnot is not None True_\n", `s = "a\"b" + 'c\'d' + "é" + x` + "\n",
	"t = '''a\nb''' + y\nz\n", "# comment é\nx # é\n", "a = 1 + \\\n  2\n", "a\r\nb\r\n",
	"a ** b // c -> d == e != f <= g >= h << i >> j ; k ~ l & m | n ^ o % p @ q\n",
	"f(é)\n", "x = \"unterminated\n", "x = '''never closed\n", "a = $\n", "a = 1 !\n", "\\x\n", "a\rb\n",
	"  \t x\n", "x = \"é\" + y  # after a wide string\n", `"\` + "\n", "1.5.5\n", "..\n",
}

func TestLexerMatchesRegexpRules(t *testing.T) {
	for i, src := range lexerEdgeCases {
		checkAgainstRegexpRules(t, fmt.Sprintf("edge case %d %q", i, src), src)
	}
	for _, path := range append(corpusFiles(t), errorFiles(t)...) {
		src, err := os.ReadFile(path)
		require.NoError(t, err)
		checkAgainstRegexpRules(t, path, string(src))
	}
	checkAgainstRegexpRules(t, "generated module", genModule(200))
}

// FuzzLexer runs the differential check on arbitrary input.
//
//	go test ./syntax -run='^$' -fuzz=FuzzLexer -fuzztime=20s
func FuzzLexer(f *testing.F) {
	for _, src := range lexerEdgeCases {
		f.Add(src)
	}
	f.Fuzz(func(t *testing.T, src string) {
		checkAgainstRegexpRules(t, "fuzz input", src)
	})
}

// TestPeekingLexerHandover: the PeekingLexer over the hand-written scanner
// holds exactly the tokens of the regexp specification lexer.
func TestPeekingLexerHandover(t *testing.T) {
	src := []byte(genModule(30))
	fast, err := lexTokens("h.tvms", src)
	require.NoError(t, err)
	lx, _ := pythonLexer.LexBytes("h.tvms", src)
	slow, err := lexer.Upgrade(lx)
	require.NoError(t, err)
	comparePeekingLexers(t, fast, slow)
	_, err = lexTokens("h.tvms", []byte("a = $\n"))
	assert.Error(t, err, "lexTokens accepted a bad character")
}

func comparePeekingLexers(t *testing.T, fast, slow *lexer.PeekingLexer) {
	t.Helper()
	for i := 0; ; i++ {
		a, b := fast.Peek(), slow.Peek()
		require.Equal(t, *b, *a, "token %d: handover vs Upgrade", i)
		require.Equal(t, slow.Cursor(), fast.Cursor(), "token %d: cursor", i)
		require.Equal(t, slow.RawCursor(), fast.RawCursor(), "token %d: raw cursor", i)
		if a.EOF() {
			break
		}
		fast.Next()
		slow.Next()
	}
}

// TestByteOrderMark: a leading BOM is skipped; tokens keep their columns
// (counted after it) and byte offsets (counted in the file).
func TestByteOrderMark(t *testing.T) {
	const src = "x = f(1)\ny = 2\n"
	plain, _ := pythonLexer.LexString("t", src)
	want, err := significantTokens(plain, pythonLexer)
	require.NoError(t, err)
	bom, _ := pythonLexer.LexString("t", byteOrderMark+src)
	got, err := significantTokens(bom, pythonLexer)
	require.NoError(t, err)
	require.Len(t, got, len(want))
	for i := range want {
		// Offsets are the last field: "Type:value@line:col/offset".
		w, g := want[i], got[i]
		if strings.HasPrefix(w, "EOF") {
			require.Equal(t, w, g)
			continue
		}
		ws, gs := strings.LastIndexByte(w, '/'), strings.LastIndexByte(g, '/')
		require.Equal(t, w[:ws], g[:gs], "token %d", i)
		wo, _ := strconv.Atoi(w[ws+1:])
		gotOff, _ := strconv.Atoi(g[gs+1:])
		require.Equal(t, wo+len(byteOrderMark), gotOff, "token %d", i)
	}
	_, diags := Parse("bom.tvms", []byte(byteOrderMark+"@I.ir_module\nclass M:\n    @R.function\n    def f(x: R.Tensor((2,), \"float32\")):\n        return x\n"))
	require.Empty(t, diags)
}
