package syntax

import "github.com/alecthomas/participle/v2/lexer"

// tokenSource is what the hand-written productions read tokens from: the
// streaming tokStream when Parse runs them directly, or, in tests,
// participle's PeekingLexer (through peekingSource) when participle drives
// them.
type tokenSource interface {
	// Peek returns the next token without consuming it.
	Peek() *lexer.Token
	// Peek2 returns the token after the next one.
	Peek2() *lexer.Token
	// Next consumes and returns the next token.
	Next() *lexer.Token
}

// typeError is the token type of a lexical error: the stream turns the
// scanner's error into this token, whose Value is the message, and keeps
// returning it, so the parser reports it wherever it looks next.
const typeError lexer.TokenType = -100

// streamWindow is the number of tokens a tokStream keeps (a power of two).
// A token pointer handed out stays valid until streamWindow more tokens are
// read; the productions hold one for a token or two.
const streamWindow = 256

// tokStream pulls tokens from the scanner on demand into a fixed ring, so
// parsing a file never materializes its token list (participle's
// lexer.Upgrade grew a 64-byte-per-token slice over the whole file, the
// largest cost of parsing).
type tokStream struct {
	sc        *scanner
	ring      [streamWindow]lexer.Token
	next, end int // tokens [next, end) are buffered; absolute counts
	failed    bool
	// The expression reader's allocators (exprReader.node, argSlices).
	slab     []ast
	itemSlab []*ast
	kwSlab   []string
	// arena, when set, replaces the allocators above with memory reused
	// statement after statement (deferred.go).
	arena *stmtArena
}

func newTokStream(filename, src string) *tokStream {
	return &tokStream{sc: newScanner(filename, src)}
}

func (s *tokStream) fill() {
	t := &s.ring[s.end&(streamWindow-1)]
	s.end++
	if s.failed {
		*t = s.ring[(s.end-2)&(streamWindow-1)]
		return
	}
	if err := s.sc.scan(t); err != nil {
		s.failed = true
		le, _ := err.(*lexer.Error)
		*t = lexer.Token{Type: typeError, Value: le.Msg, Pos: le.Pos}
	}
}

// Peek implements tokenSource.
func (s *tokStream) Peek() *lexer.Token {
	if s.next == s.end {
		s.fill()
	}
	return &s.ring[s.next&(streamWindow-1)]
}

// Peek2 implements tokenSource.
func (s *tokStream) Peek2() *lexer.Token { return s.peekAt(1) }

// peekAt returns the token k places after the next one (k < streamWindow).
func (s *tokStream) peekAt(k int) *lexer.Token {
	for s.end < s.next+k+1 {
		s.fill()
	}
	return &s.ring[(s.next+k)&(streamWindow-1)]
}

// Next implements tokenSource.
func (s *tokStream) Next() *lexer.Token {
	t := s.Peek()
	if t.Type != lexer.EOF && t.Type != typeError {
		s.next++
	}
	return t
}

// restart drops the buffered tokens and resumes scanning at byte offset
// off, the start of physical line line, with the indentation stack cut to
// stackLen levels and no open brackets: recovery skips the text of a broken
// statement this way.
func (s *tokStream) restart(off, line, stackLen int) {
	s.end, s.failed = s.next, false
	sc := s.sc
	sc.off, sc.line, sc.lineStart, sc.lineWide = off, line, off, false
	sc.pending, sc.head, sc.done = sc.pending[:0], 0, false
	sc.atLineStart, sc.indentWidth, sc.indentTab, sc.depth = true, 0, false, 0
	sc.stack = sc.stack[:stackLen]
}

// restartLine resumes scanning at byte offset off, the start of physical
// line line, inside blocks with the indentation columns levels: the
// deferred statements are re-read this way.
func (s *tokStream) restartLine(off, line int, levels []int) {
	s.restart(off, line, 0)
	s.sc.stack = append(s.sc.stack, levels...)
}
