package syntax

import (
	"github.com/alecthomas/participle/v2"
	"github.com/alecthomas/participle/v2/lexer"
)

// Simple statements, like expressions, are a hand-written
// participle.Parseable production: nearly every line of a module is one
// (a binding), and as grammar structs each cost participle a dozen branch
// contexts, reflective structs and deferred captures. The statement is
// decided by its first token; an expression statement is read once and the
// token after it tells an assignment ("="), an annotated assignment (":")
// and a bare expression apart. The grammar (appended to the golden EBNF):
const simpleGrammar = `simpleNode = (AssignNode | "return" exprListNode? | "pass") <newline> .
AssignNode = exprListNode (":" exprNode)? ("=" exprListNode)? .`

// simpleNode is a one-line statement; exactly one of Expr, Return, Pass is
// set.
type simpleNode struct {
	Pos    lexer.Position
	EndPos lexer.Position
	Expr   *assignNode
	Return *returnNode
	Pass   bool
}

type returnNode struct {
	Pos   lexer.Position
	Value *exprListNode // nil for a bare return
}

// assignNode is an expression statement, "targets = value", or
// "target: annotation = value".
type assignNode struct {
	Pos    lexer.Position
	Target *exprListNode
	Annot  *exprNode
	Value  *exprListNode
}

func (n *simpleNode) parse(lex tokenSource) error {
	tok := lex.Peek()
	n.Pos = tok.Pos
	switch {
	case tok.Type == typeKeyword && tok.Value == "return":
		lex.Next()
		n.Return = &returnNode{Pos: tok.Pos}
		if startsExpr(lex.Peek()) {
			n.Return.Value = &exprListNode{}
			if err := n.Return.Value.parse(lex); err != nil {
				return err
			}
		}
	case tok.Type == typeKeyword && tok.Value == "pass":
		lex.Next()
		n.Pass = true
	case startsExpr(tok):
		// One allocation for the parts of an assignment.
		parts := newAssignParts(lex)
		as := &parts.as
		as.Pos, as.Target = tok.Pos, &parts.target
		n.Expr = as
		if err := as.Target.parse(lex); err != nil {
			return err
		}
		if isOp(lex.Peek(), ":") {
			lex.Next()
			if !startsExpr(lex.Peek()) {
				return unexpected(lex.Peek(), "a type annotation")
			}
			as.Annot = &parts.annot
			if err := as.Annot.parse(lex); err != nil {
				return err
			}
			if !isOp(lex.Peek(), "=") && lex.Peek().Type != typeNewline {
				return unexpected(lex.Peek(), `"=" or end of line`)
			}
		}
		if isOp(lex.Peek(), "=") {
			lex.Next()
			if !startsExpr(lex.Peek()) {
				return unexpected(lex.Peek(), "an expression")
			}
			as.Value = &parts.value
			if err := as.Value.parse(lex); err != nil {
				return err
			}
		}
	default:
		return participle.NextMatch
	}
	if end := lex.Peek(); end.Type != typeNewline {
		if n.Expr != nil && n.Expr.Value == nil && n.Expr.Annot == nil {
			return unexpected(end, `"=", ":" or end of line`)
		}
		return unexpected(end, "end of line")
	}
	lex.Next()
	n.EndPos = lex.Peek().Pos
	return nil
}
