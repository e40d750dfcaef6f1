package syntax

import (
	"strings"
	"testing"

	"github.com/alecthomas/participle/v2/lexer"
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
		if len(out) > 1000 {
			t.Fatal("lexer does not terminate")
		}
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
			if err != nil {
				t.Fatalf("lex error: %v", err)
			}
			if got != tc.want {
				t.Errorf("tokens of %q:\n got  %s\n want %s", tc.src, got, tc.want)
			}
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
			if err == nil {
				t.Fatalf("no error for %q", tc.src)
			}
			lerr, ok := err.(interface {
				Message() string
				Position() lexer.Position
			})
			if !ok {
				t.Fatalf("error %v has no position", err)
			}
			if !strings.Contains(lerr.Message(), tc.msg) {
				t.Errorf("message %q does not contain %q", lerr.Message(), tc.msg)
			}
			if p := lerr.Position(); p.Line != tc.line || p.Column != tc.col {
				t.Errorf("position %d:%d, want %d:%d", p.Line, p.Column, tc.line, tc.col)
			}
		})
	}
}
