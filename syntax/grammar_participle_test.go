package syntax

import (
	"github.com/alecthomas/participle/v2"
	"github.com/alecthomas/participle/v2/lexer"
)

// The participle parser of the grammar of record, built only in tests.
//
// The grammar structs of grammar.go (their parser tags) and the
// hand-written productions of grammar_simple.go and grammar_expr.go are the
// grammar of record; Parse never runs participle: its hand-written reader
// (parser.go) builds the same structs from the streaming tokens.
// Participle's parser is built here, reflectively from the struct tags,
// for the tests that hold the hand reader to the grammar
// (TestHandParserMatchesParticiple, the golden testdata/grammar.ebnf) and
// for the benchmarks that compare the two, so that binaries importing
// syntax do not pay for building it at init. Everything below exists only
// for participle to drive the productions.

// parserLookahead is how far participle may advance into an alternative
// and still try the next one: one token, for the optional trailing comma
// of "( ',' @@ )* ','?" lists.
const parserLookahead = 1

var parserOptions = []participle.Option{
	participle.Lexer(pythonLexer),
	participle.UseLookahead(parserLookahead),
}

// fileParser parses whole files; exprParser parses string dimensions.
var (
	fileParser = participle.MustBuild[fileNode](parserOptions...)
	exprParser = participle.MustBuild[exprRoot](parserOptions...)
)

// parseTree parses src with participle's parser built from the grammar
// structs, the grammar of record: tests check that readFile builds the same
// tree.
func parseTree(filename string, src []byte) (*fileNode, error) {
	peek, err := lexTokens(filename, src)
	if err != nil {
		return nil, err
	}
	return fileParser.ParseFromLexer(peek)
}

// lexTokens scans src completely into a PeekingLexer.
func lexTokens(filename string, src []byte) (*lexer.PeekingLexer, error) {
	return lexer.Upgrade(newScanner(filename, string(src)))
}

// committed makes the failure of a hand-written production final. Once a
// production has accepted its first token it is the only one that can
// match (the grammar is LL(1) at that point), but participle discards an
// error from a branch that advanced at most parserLookahead tokens and
// reports a vaguer one ("expected StmtNode+") further up. Advancing past
// that distance makes participle take the branch and keep the error,
// which carries its own position.
func committed(lex *lexer.PeekingLexer, start int, err error) error {
	for lex.Cursor() <= start+parserLookahead && !lex.Peek().EOF() {
		lex.Next()
	}
	return err
}

// Parse implements participle.Parseable.
func (n *exprNode) Parse(lex *lexer.PeekingLexer) error {
	if !startsExpr(lex.Peek()) {
		return participle.NextMatch
	}
	start := lex.Cursor()
	if err := n.parse(peekingSource{lex}); err != nil {
		return committed(lex, start, err)
	}
	return nil
}

// Parse implements participle.Parseable.
func (n *exprListNode) Parse(lex *lexer.PeekingLexer) error {
	if !startsExpr(lex.Peek()) {
		return participle.NextMatch
	}
	start := lex.Cursor()
	if err := n.parse(peekingSource{lex}); err != nil {
		return committed(lex, start, err)
	}
	return nil
}

// Parse implements participle.Parseable.
func (n *simpleNode) Parse(lex *lexer.PeekingLexer) error {
	start := lex.Cursor()
	if err := n.parse(peekingSource{lex}); err != nil && err != participle.NextMatch {
		return committed(lex, start, err)
	} else if err != nil {
		return err
	}
	return nil
}

// peekingSource adapts participle's PeekingLexer.
type peekingSource struct{ *lexer.PeekingLexer }

func (s peekingSource) Peek2() *lexer.Token {
	cp := s.MakeCheckpoint()
	s.Next()
	t := s.Peek()
	s.LoadCheckpoint(cp)
	return t
}
