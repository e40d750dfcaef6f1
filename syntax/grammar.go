package syntax

import (
	"github.com/alecthomas/participle/v2/lexer"
)

// The participle grammar of the Python subset TVMScript uses. Each struct is
// one production; the golden testdata/grammar.ebnf is parser.String().
// Participle's parser is built from these structs only in tests
// (grammar_participle_test.go): Parse fills them with the hand-written
// reader of parser.go.
//
// Expressions (exprNode, exprListNode) are hand-written participle.Parseable
// productions, see grammar_expr.go.

// fileNode is a whole source file.
type fileNode struct {
	Pos   lexer.Position
	Stmts []*stmtNode `parser:"@@*"`
}

// stmtNode is one statement; exactly one field is set.
type stmtNode struct {
	Pos       lexer.Position
	EndPos    lexer.Position
	Simple    *simpleNode    `parser:"  @@"`
	Decorated *decoratedNode `parser:"| @@"`
	Class     *classNode     `parser:"| @@"`
	Def       *defNode       `parser:"| @@"`
	If        *ifNode        `parser:"| @@"`
	For       *forNode       `parser:"| @@"`
	With      *withNode      `parser:"| @@"`
	// deferred is set on a simple statement of a Relax function body that
	// Parse skipped and reads again when the builder gets to it
	// (deferred.go); its other fields are then unset but Pos and EndPos.
	// (Whether the builder has read it is marked in deferred, not here: a
	// bool field would make the node 152 bytes instead of 144.)
	deferred *deferredBlock
}

type decoratedNode struct {
	Pos        lexer.Position
	Decorators []*exprNode `parser:"( '@' @@ NEWLINE )+"`
	Class      *classNode  `parser:"( @@"`
	Def        *defNode    `parser:"| @@ )"`
}

type classNode struct {
	Pos   lexer.Position
	Name  string      `parser:"'class' @Name"`
	Bases []*exprNode `parser:"( '(' ( @@ ( ',' @@ )* )? ')' )?"`
	Body  *suiteNode  `parser:"':' @@"`
}

type defNode struct {
	Pos    lexer.Position
	EndPos lexer.Position
	Name   string       `parser:"'def' @Name '('"`
	Params []*paramNode `parser:"( @@ ( ',' @@ )* ','? )? ')'"`
	Ret    *exprNode    `parser:"( '->' @@ )?"`
	Body   *suiteNode   `parser:"':' @@"`
}

type paramNode struct {
	Pos     lexer.Position
	EndPos  lexer.Position
	Name    string    `parser:"@Name"`
	Annot   *exprNode `parser:"( ':' @@ )?"`
	Default *exprNode `parser:"( '=' @@ )?"`
}

// suiteNode is an indented block, or a simple statement on the same line.
type suiteNode struct {
	Pos    lexer.Position
	Stmts  []*stmtNode `parser:"  NEWLINE INDENT @@+ DEDENT"`
	Simple *simpleNode `parser:"| @@"`
}

type ifNode struct {
	Pos   lexer.Position
	Cond  *exprNode   `parser:"'if' @@ ':'"`
	Then  *suiteNode  `parser:"@@"`
	Elifs []*elifNode `parser:"@@*"`
	Else  *suiteNode  `parser:"( 'else' ':' @@ )?"`
}

type elifNode struct {
	Pos  lexer.Position
	Cond *exprNode  `parser:"'elif' @@ ':'"`
	Body *suiteNode `parser:"@@"`
}

// forNode is a for loop, or a while loop (TIR's `while cond:`) when
// While is set (one node for both keeps stmtNode's size).
type forNode struct {
	Pos     lexer.Position
	While   *exprNode   `parser:"(  'while' @@ ':'"`
	Targets []*exprNode `parser:"  | 'for' @@ ( ',' @@ )* ','?"`
	Iter    *exprNode   `parser:"    'in' @@ ':' )"`
	Body    *suiteNode  `parser:"@@"`
}

type withNode struct {
	Pos  lexer.Position
	Item *exprNode  `parser:"'with' @@"`
	As   *exprNode  `parser:"( 'as' @@ )?"`
	Body *suiteNode `parser:"':' @@"`
}

// exprRoot parses one expression: the contents of a string dimension such
// as "n * 2 + 1" in a signature.
type exprRoot struct {
	Expr *exprNode `parser:"@@ NEWLINE?"`
}
