package syntax

import "github.com/alecthomas/participle/v2/lexer"

// The scanner makes Python's layout explicit, the way starlark-go's scanner
// does:
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
type layoutState struct {
	atLineStart bool  // no significant token seen on this line yet
	indentWidth int   // bytes of leading blanks of the current line
	indentTab   bool  // the leading blanks contain a tab or form feed
	depth       int   // bracket nesting
	stack       []int // open indentation columns (0-based); stack[0] == 0
	// lineLevels is len(stack) before the layout of the last line that
	// started: recovery restores it when it drops that line.
	lineLevels int
}

// Values of the synthesized tokens (describeToken shows them to users).
const (
	newlineValue = "\n"
	indentValue  = "<indent>"
	dedentValue  = "<dedent>"
)

// lineBreak handles a line break at p; when the break ends a logical line
// it stores a NEWLINE token in *t and returns true.
func (s *scanner) lineBreak(t *lexer.Token, p lexer.Position) bool {
	s.indentWidth, s.indentTab = 0, false
	if s.depth > 0 || s.atLineStart {
		return false
	}
	s.atLineStart = true
	*t = lexer.Token{Type: typeNewline, Value: newlineValue, Pos: p}
	return true
}

// endOfInput closes the last line and queues the pending DEDENTs before EOF.
func (s *scanner) endOfInput() {
	p := s.pos(len(s.src))
	s.done, s.eof = true, lexer.Token{Type: lexer.EOF, Pos: p}
	if !s.atLineStart {
		s.pending = append(s.pending, lexer.Token{Type: typeNewline, Value: newlineValue, Pos: p})
	}
	for len(s.stack) > 1 {
		s.stack = s.stack[:len(s.stack)-1]
		s.pending = append(s.pending, lexer.Token{Type: typeDedent, Value: dedentValue, Pos: p})
	}
}

// significant updates the layout for a significant token: the first one of
// a line queues INDENT/DEDENT tokens (the caller then queues tok after them);
// brackets change the nesting depth.
func (s *scanner) significant(tok *lexer.Token) error {
	if s.atLineStart && s.depth == 0 {
		if err := s.layout(tok); err != nil {
			return err
		}
	}
	s.atLineStart = false
	if tok.Type == typeOp && len(tok.Value) == 1 {
		switch tok.Value[0] {
		case '(', '[', '{':
			s.depth++
		case ')', ']', '}':
			if s.depth > 0 {
				s.depth--
			}
		}
	}
	return nil
}

// layout compares the indentation of the line starting with tok against the
// stack and queues INDENT/DEDENT tokens.
func (s *scanner) layout(tok *lexer.Token) error {
	s.lineLevels = len(s.stack)
	if s.indentTab {
		return &lexer.Error{Msg: "tab in indentation (indent with spaces)", Pos: tok.Pos}
	}
	col := s.indentWidth
	top := s.stack[len(s.stack)-1]
	switch {
	case col > top:
		s.stack = append(s.stack, col)
		s.pending = append(s.pending, lexer.Token{Type: typeIndent, Value: indentValue, Pos: tok.Pos})
	case col < top:
		for col < s.stack[len(s.stack)-1] {
			s.stack = s.stack[:len(s.stack)-1]
			s.pending = append(s.pending, lexer.Token{Type: typeDedent, Value: dedentValue, Pos: tok.Pos})
		}
		if col != s.stack[len(s.stack)-1] {
			// Popping only resliced: the levels are still there.
			s.stack = s.stack[:s.lineLevels]
			return &lexer.Error{Msg: "unindent does not match any outer indentation level", Pos: tok.Pos}
		}
	}
	return nil
}
