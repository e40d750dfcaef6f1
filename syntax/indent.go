package syntax

import (
	"io"
	"strings"

	"github.com/alecthomas/participle/v2/lexer"
)

// indentLexer wraps a base lexer and makes Python's layout explicit, the way
// starlark-go's scanner does:
//
//   - NEWLINE ends every logical line; blank and comment-only lines produce
//     nothing;
//   - inside (), [] and {} newlines and indentation are ignored, so a call
//     may span lines;
//   - the first token of a line is compared with a stack of open
//     indentation columns: a deeper column pushes and emits INDENT, a
//     shallower one pops (one DEDENT per level) and must land exactly on an
//     outer level ("unindent does not match any outer indentation level");
//   - tabs in indentation are rejected (TVM prints spaces; a tab's width is
//     ambiguous);
//   - EOF closes the last line and emits the pending DEDENTs, so the grammar
//     never needs "DEDENT | EOF".
type indentLexer struct {
	base    lexer.Definition
	symbols map[string]lexer.TokenType
	// Types of the base tokens the wrapper interprets.
	nl, ws, comment lexer.TokenType
	// Types of the synthesized tokens.
	newline, indent, dedent lexer.TokenType
}

func newIndentLexer(base lexer.Definition) *indentLexer {
	bs := base.Symbols()
	syms := make(map[string]lexer.TokenType, len(bs)+3)
	lowest := lexer.TokenType(0)
	for k, v := range bs {
		syms[k] = v
		lowest = min(lowest, v)
	}
	d := &indentLexer{base: base, symbols: syms, nl: bs["NL"], ws: bs["WS"], comment: bs["Comment"]}
	d.newline, d.indent, d.dedent = lowest-1, lowest-2, lowest-3
	syms[tokNewline], syms[tokIndent], syms[tokDedent] = d.newline, d.indent, d.dedent
	return d
}

// Symbols implements lexer.Definition.
func (d *indentLexer) Symbols() map[string]lexer.TokenType { return d.symbols }

// Lex implements lexer.Definition.
func (d *indentLexer) Lex(filename string, r io.Reader) (lexer.Lexer, error) {
	b, err := io.ReadAll(r)
	if err != nil {
		return nil, err
	}
	return d.LexString(filename, string(b))
}

// LexBytes implements lexer.BytesDefinition.
func (d *indentLexer) LexBytes(filename string, src []byte) (lexer.Lexer, error) {
	return d.LexString(filename, string(src))
}

// LexString implements lexer.StringDefinition.
func (d *indentLexer) LexString(filename string, src string) (lexer.Lexer, error) {
	var inner lexer.Lexer
	var err error
	if sd, ok := d.base.(lexer.StringDefinition); ok {
		inner, err = sd.LexString(filename, src)
	} else {
		inner, err = d.base.Lex(filename, strings.NewReader(src))
	}
	if err != nil {
		return nil, err
	}
	return &indentState{def: d, inner: inner, atLineStart: true, stack: []int{0}}, nil
}

type indentState struct {
	def         *indentLexer
	inner       lexer.Lexer
	pending     []lexer.Token // synthesized tokens not yet returned, in order
	atLineStart bool          // no significant token seen on this line yet
	lineIndent  string        // leading blanks of the current line
	depth       int           // bracket nesting
	stack       []int         // open indentation columns (0-based); stack[0] == 0
	done        bool          // EOF reached and flushed
	eof         lexer.Token
}

// Next implements lexer.Lexer.
func (s *indentState) Next() (lexer.Token, error) {
	for {
		if len(s.pending) > 0 {
			t := s.pending[0]
			s.pending = s.pending[1:]
			return t, nil
		}
		if s.done {
			return s.eof, nil
		}
		tok, err := s.inner.Next()
		if err != nil {
			return tok, err
		}
		d := s.def
		switch tok.Type {
		case d.ws:
			if s.atLineStart {
				s.lineIndent += tok.Value
			}
			continue
		case d.comment:
			continue
		case d.nl:
			if s.depth > 0 || s.atLineStart {
				s.lineIndent = ""
				continue
			}
			s.atLineStart, s.lineIndent = true, ""
			return lexer.Token{Type: d.newline, Value: "\n", Pos: tok.Pos}, nil
		case lexer.EOF:
			s.done, s.eof = true, tok
			if !s.atLineStart {
				s.pending = append(s.pending, lexer.Token{Type: d.newline, Value: "\n", Pos: tok.Pos})
			}
			for len(s.stack) > 1 {
				s.stack = s.stack[:len(s.stack)-1]
				s.pending = append(s.pending, lexer.Token{Type: d.dedent, Value: "<dedent>", Pos: tok.Pos})
			}
			continue
		}
		if s.atLineStart && s.depth == 0 {
			if err := s.layout(tok); err != nil {
				return tok, err
			}
		}
		s.atLineStart = false
		switch tok.Value {
		case "(", "[", "{":
			s.depth++
		case ")", "]", "}":
			if s.depth > 0 {
				s.depth--
			}
		}
		if len(s.pending) > 0 {
			s.pending = append(s.pending, tok)
			continue
		}
		return tok, nil
	}
}

// layout compares the indentation of the line starting with tok against the
// stack and queues INDENT/DEDENT tokens.
func (s *indentState) layout(tok lexer.Token) error {
	if strings.ContainsAny(s.lineIndent, "\t\f") {
		return &lexer.Error{Msg: "tab in indentation (indent with spaces)", Pos: tok.Pos}
	}
	col := len(s.lineIndent)
	top := s.stack[len(s.stack)-1]
	switch {
	case col > top:
		s.stack = append(s.stack, col)
		s.pending = append(s.pending, lexer.Token{Type: s.def.indent, Value: "<indent>", Pos: tok.Pos})
	case col < top:
		for col < s.stack[len(s.stack)-1] {
			s.stack = s.stack[:len(s.stack)-1]
			s.pending = append(s.pending, lexer.Token{Type: s.def.dedent, Value: "<dedent>", Pos: tok.Pos})
		}
		if col != s.stack[len(s.stack)-1] {
			return &lexer.Error{Msg: "unindent does not match any outer indentation level", Pos: tok.Pos}
		}
	}
	return nil
}
