package syntax

import (
	"io"
	"strings"
	"unicode/utf8"

	"github.com/alecthomas/participle/v2/lexer"
)

// The lexer is a hand-written scanner for the Python subset TVMScript uses,
// implementing participle's lexer.Definition. It replaced a regexp lexer
// (lexer.MustSimple) that ran at ~1.5 MB/s; this one makes one pass over the
// bytes and allocates only its token queue.
//
// It emits the token types below; the indentation logic (indent.go) is fused
// into it, so blanks, comments and line breaks never reach the parser:
// NEWLINE ends a logical line, INDENT/DEDENT bracket an indented block.
//
// Token rules (as in Python; the first that applies wins):
//
//	Comment  #[^\n]*                                  skipped
//	String   """…""" | '''…''' | "…" | '…'           (\x escapes, no newline in the short forms)
//	Float    \d+\.\d*([eE][-+]?\d+)? | \.\d+([eE][-+]?\d+)? | \d+[eE][-+]?\d+
//	Int      0[xX][0-9a-fA-F]+ | \d+
//	Keyword  one of keywords, as a whole identifier
//	Name     [A-Za-z_]\w*
//	Op       ** // -> == != <= >= << >> and single characters -+*/%@<>=()[]{},:.;~&|^
//	blanks   [ \t\f]+ and a backslash-newline continuation, skipped
//
// Positions are exact: Line and Column are 1-based, Column counts runes.
const (
	typeName lexer.TokenType = -2 - iota
	typeInt
	typeFloat
	typeString
	typeKeyword
	typeOp
	typeNewline
	typeIndent
	typeDedent
)

// Token type names the grammar refers to. NEWLINE, INDENT and DEDENT are
// synthesized from the layout.
const (
	tokNewline = "NEWLINE"
	tokIndent  = "INDENT"
	tokDedent  = "DEDENT"
)

// isKeyword reports whether an identifier is a keyword (its own token type,
// so that a <name> in the grammar never swallows "in" or "else").
func isKeyword(s string) bool {
	switch s {
	case "def", "class", "if", "elif", "else", "for", "while", "in", "with", "as", "return", "and", "or", "not",
		"pass", "True", "False", "None", "lambda", "is":
		return true
	}
	return false
}

// pyLexer is the lexer.Definition of the scanner.
type pyLexer struct {
	symbols map[string]lexer.TokenType
}

// pythonLexer is the lexer definition the parser uses.
var pythonLexer = &pyLexer{symbols: map[string]lexer.TokenType{
	"EOF": lexer.EOF, "Name": typeName, "Int": typeInt, "Float": typeFloat, "String": typeString,
	"Keyword": typeKeyword, "Op": typeOp, tokNewline: typeNewline, tokIndent: typeIndent, tokDedent: typeDedent,
}}

// Symbols implements lexer.Definition.
func (d *pyLexer) Symbols() map[string]lexer.TokenType { return d.symbols }

// Lex implements lexer.Definition.
func (d *pyLexer) Lex(filename string, r io.Reader) (lexer.Lexer, error) {
	b, err := io.ReadAll(r)
	if err != nil {
		return nil, err
	}
	return d.LexString(filename, string(b))
}

// LexBytes implements lexer.BytesDefinition.
func (d *pyLexer) LexBytes(filename string, src []byte) (lexer.Lexer, error) {
	return d.LexString(filename, string(src))
}

// LexString implements lexer.StringDefinition.
func (d *pyLexer) LexString(filename string, src string) (lexer.Lexer, error) {
	return newScanner(filename, src), nil
}

func newScanner(filename, src string) *scanner {
	s := &scanner{src: src, file: filename, line: 1, layoutState: layoutState{atLineStart: true, stack: []int{0}}}
	// A UTF-8 byte-order mark is not text (Python skips it too); columns
	// on the first line count from after it.
	if strings.HasPrefix(src, byteOrderMark) {
		s.off, s.lineStart = len(byteOrderMark), len(byteOrderMark)
	}
	return s
}

const byteOrderMark = "\ufeff"

// scanner is the state of one lexing run.
type scanner struct {
	src  string
	file string
	off  int // next byte to read
	line int // 1-based line of off
	// lineStart is the offset of the current line; lineWide is set once a
	// non-ASCII byte was consumed on it (columns then count runes).
	lineStart int
	lineWide  bool

	pending []lexer.Token // synthesized tokens (and the token they precede), in order
	head    int           // next pending token
	layoutState
	done bool // EOF reached and flushed
	eof  lexer.Token
}

// pos returns the position of byte offset off on the current line.
func (s *scanner) pos(off int) lexer.Position {
	col := off - s.lineStart + 1
	if s.lineWide {
		col = utf8.RuneCountInString(s.src[s.lineStart:off]) + 1
	}
	return lexer.Position{Filename: s.file, Offset: off, Line: s.line, Column: col}
}

// newline records that the byte before off ended a line.
func (s *scanner) newline(off int) {
	s.line++
	s.lineStart, s.lineWide = off, false
}

func (s *scanner) errorf(off int, msg string) error {
	return &lexer.Error{Msg: msg, Pos: s.pos(off)}
}

// Next implements lexer.Lexer.
func (s *scanner) Next() (lexer.Token, error) {
	var t lexer.Token
	err := s.scan(&t)
	return t, err
}

// scan stores the next token in *t. Tokens are 64 bytes; filling them in
// place instead of
// returning them by value made the scanner ~1.5x faster.
func (s *scanner) scan(t *lexer.Token) error {
	for {
		if s.head < len(s.pending) {
			*t = s.pending[s.head]
			s.head++
			if s.head == len(s.pending) {
				s.pending, s.head = s.pending[:0], 0
			}
			return nil
		}
		if s.done {
			*t = s.eof
			return nil
		}
		src, i := s.src, s.off
		if i >= len(src) {
			s.endOfInput()
			continue
		}
		switch c := src[i]; c {
		case ' ', '\t', '\f':
			j := i
			for j < len(src) && (src[j] == ' ' || src[j] == '\t' || src[j] == '\f') {
				if src[j] != ' ' {
					s.indentTab = true
				}
				j++
			}
			s.indentWidth += j - i
			s.off = j
			continue
		case '#':
			j := i
			for j < len(src) && src[j] != '\n' {
				if src[j] >= utf8.RuneSelf {
					s.lineWide = true
				}
				j++
			}
			s.off = j
			continue
		case '\r', '\n':
			j := i + 1
			if c == '\r' {
				if j >= len(src) || src[j] != '\n' {
					return s.errorf(i, `invalid input text "\r"`)
				}
				j++
			}
			p := s.pos(i)
			s.off = j
			s.newline(j)
			if s.lineBreak(t, p) {
				return nil
			}
			continue
		case '\\':
			j := i + 1
			if j < len(src) && src[j] == '\r' {
				j++
			}
			if j < len(src) && src[j] == '\n' {
				// Continuation: the line goes on.
				s.indentWidth += j + 1 - i
				s.off = j + 1
				s.newline(j + 1)
				continue
			}
		}
		if err := s.token(t); err != nil {
			return err
		}
		if err := s.significant(t); err != nil {
			return err
		}
		if s.head < len(s.pending) {
			s.pending = append(s.pending, *t)
			continue
		}
		return nil
	}
}

// token scans the significant token at s.off into *t.
func (s *scanner) token(t *lexer.Token) error {
	src, i := s.src, s.off
	c := src[i]
	typ := typeOp
	j := i + 1
	pos := s.pos(i)
	switch {
	case isLetter(c):
		for j < len(src) && (isLetter(src[j]) || isDigit(src[j])) {
			j++
		}
		typ = typeName
		if isKeyword(src[i:j]) {
			typ = typeKeyword
		}
	case isDigit(c) || (c == '.' && j < len(src) && isDigit(src[j])):
		j, typ = scanNumber(src, i)
	case c == '"' || c == '\'':
		var err error
		if j, err = s.scanString(i); err != nil {
			return err
		}
		typ = typeString
	default:
		if j < len(src) {
			switch src[i : i+2] {
			case "**", "//", "->", "==", "!=", "<=", ">=", "<<", ">>":
				j = i + 2
			}
		}
		if j == i+1 && !isOpChar(c) {
			r, _ := utf8.DecodeRuneInString(src[i:])
			return s.errorf(i, "invalid input text "+quoteRune(r))
		}
	}
	t.Type, t.Value, t.Pos = typ, src[i:j], pos
	s.off = j
	return nil
}

func quoteRune(r rune) string {
	if r == utf8.RuneError {
		return `"\ufffd"`
	}
	return `"` + string(r) + `"`
}

func isLetter(c byte) bool { return c == '_' || (c|0x20 >= 'a' && c|0x20 <= 'z') }
func isDigit(c byte) bool  { return c >= '0' && c <= '9' }
func isHex(c byte) bool    { return isDigit(c) || (c|0x20 >= 'a' && c|0x20 <= 'f') }

func isOpChar(c byte) bool {
	switch c {
	case '-', '+', '*', '/', '%', '@', '<', '>', '=', '(', ')', '[', ']', '{', '}', ',', ':', '.', ';', '~', '&', '|', '^':
		return true
	}
	return false
}

// scanNumber scans an Int or Float starting at i (a digit, or '.' before a
// digit).
func scanNumber(src string, i int) (int, lexer.TokenType) {
	digits := func(j int) int {
		for j < len(src) && isDigit(src[j]) {
			j++
		}
		return j
	}
	exponent := func(j int) (int, bool) {
		if j < len(src) && (src[j] == 'e' || src[j] == 'E') {
			k := j + 1
			if k < len(src) && (src[k] == '-' || src[k] == '+') {
				k++
			}
			if k < len(src) && isDigit(src[k]) {
				return digits(k), true
			}
		}
		return j, false
	}
	if src[i] == '.' {
		j, _ := exponent(digits(i + 1))
		return j, typeFloat
	}
	if src[i] == '0' && i+2 < len(src) && (src[i+1] == 'x' || src[i+1] == 'X') && isHex(src[i+2]) {
		j := i + 2
		for j < len(src) && isHex(src[j]) {
			j++
		}
		return j, typeInt
	}
	j := digits(i)
	if j < len(src) && src[j] == '.' {
		j, _ = exponent(digits(j + 1))
		return j, typeFloat
	}
	if k, ok := exponent(j); ok {
		return k, typeFloat
	}
	return j, typeInt
}

// scanString scans a string literal whose quote is at i and returns the
// offset after it. Triple-quoted strings may span lines.
func (s *scanner) scanString(i int) (int, error) {
	src := s.src
	q := src[i]
	if i+2 < len(src) && src[i+1] == q && src[i+2] == q {
		for j := i + 3; j+2 < len(src); j++ {
			switch src[j] {
			case q:
				if src[j+1] == q && src[j+2] == q {
					return s.consumed(i, j+3), nil
				}
			}
		}
		return 0, s.errorf(i, "unterminated triple-quoted string")
	}
	for j := i + 1; j < len(src); j++ {
		switch src[j] {
		case q:
			return s.consumed(i, j+1), nil
		case '\n':
			return 0, s.errorf(i, "unterminated string (a newline inside quotes)")
		case '\\':
			if j+1 < len(src) && src[j+1] == '\n' {
				return 0, s.errorf(i, "unterminated string (a newline inside quotes)")
			}
			j++
		}
	}
	return 0, s.errorf(i, "unterminated string")
}

// consumed accounts for the line breaks and non-ASCII bytes of src[i:j]
// (a string literal) and returns j. The token's own position is taken
// before the call.
func (s *scanner) consumed(i, j int) int {
	for k := i; k < j; k++ {
		switch b := s.src[k]; {
		case b == '\n':
			s.newline(k + 1)
		case b >= utf8.RuneSelf:
			s.lineWide = true
		}
	}
	return j
}
