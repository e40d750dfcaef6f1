package syntax

import (
	"github.com/alecthomas/participle/v2"
	"github.com/alecthomas/participle/v2/lexer"
	"github.com/phasec/phasec/diag"
)

// Expressions are participle.Parseable productions: exprNode and
// exprListNode parse themselves from participle's PeekingLexer by recursive
// descent with precedence climbing and build the ast directly. Expressions
// are most of the tokens of a module, and participle's generic machinery
// (a branch context per alternative, a reflective struct per production,
// deferred captures) cost ~700 allocations per binding when they were
// grammar structs; here a leaf costs one ast.
//
// Every choice is made on the next token (two for "name =" keyword
// arguments), so there is no backtracking. The grammar, in participle's
// EBNF notation (kept in testdata/grammar.ebnf beside the generated part):
const exprGrammar = `exprListNode = exprNode ("," exprNode)* ","? .
exprNode = Binary .
Binary = Unary (BinaryOp Unary)* .   # precedence climbing, Python's table
BinaryOp = "or" | "and" | "==" | "!=" | "<=" | ">=" | "<" | ">" | "|" | "^" | "&" | "<<" | ">>" | "+" | "-" | "*" | "/" | "//" | "%" | "**" .
Unary = ("not" | "-" | "+" | "~") Unary | Primary .
Primary = Atom Trailer* .
Atom = <name> | <float> | <int> | <string>+ | "True" | "False" | "None" | Lambda | Paren | List | Dict .
Lambda = "lambda" (<name> ("," <name>)*)? ":" exprNode .
Paren = "(" (Item ("," Item)*)? ","? ")" .
List = "[" (Item ("," Item)* ","?)? "]" .
Item = "*"? exprNode .   # a starred item: phasec expands it statically (build_star.go)
Dict = "{" (DictEntry ("," DictEntry)* ","?)? "}" .
DictEntry = exprNode ":" exprNode .
Trailer = "." <name> | "(" (Arg ("," Arg)* ","?)? ")" | "[" Subscript ("," Subscript)* ","? "]" .
Arg = (<name> "=")? ("**" | "*")? exprNode .   # "*" positional only; "**" is reported
Subscript = exprNode (":" exprNode?)? | ":" exprNode? .`

// Operator precedence, Python's table (higher binds tighter): or < and <
// not < comparisons < | < ^ < & < shifts < + - < * / // % < unary - + ~ <
// **.
const (
	precOr = 1 + iota
	precAnd
	precNot
	precCmp
	precBitOr
	precBitXor
	precBitAnd
	precShift
	precAdd
	precMul
	precUnary
	precPow
)

// binaryPrec returns the precedence of tok as a binary operator, or 0.
func binaryPrec(tok *lexer.Token) int {
	switch tok.Type {
	case typeOp:
		switch tok.Value {
		case "==", "!=", "<", "<=", ">", ">=":
			return precCmp
		case "|":
			return precBitOr
		case "^":
			return precBitXor
		case "&":
			return precBitAnd
		case "<<", ">>":
			return precShift
		case "+", "-":
			return precAdd
		case "*", "/", "//", "%":
			return precMul
		case "**":
			return precPow
		}
	case typeKeyword:
		switch tok.Value {
		case "or":
			return precOr
		case "and":
			return precAnd
		}
	}
	return 0
}

// startsExpr reports whether tok can begin an expression.
func startsExpr(tok *lexer.Token) bool {
	switch tok.Type {
	case typeName, typeInt, typeFloat, typeString:
		return true
	case typeKeyword:
		switch tok.Value {
		case "True", "False", "None", "not", "lambda":
			return true
		}
	case typeOp:
		switch tok.Value {
		case "(", "[", "{", "-", "+", "~":
			return true
		}
	}
	return false
}

func isOp(tok *lexer.Token, op string) bool { return tok.Type == typeOp && tok.Value == op }

// exprNode is one expression.
type exprNode struct {
	tree *ast
	// problems are diagnostics that do not stop parsing (a ** argument, a
	// bad string literal); the converter reports them when the expression
	// is used.
	problems []exprProblem
	// stars says the tree holds starred items (aStar), which the converter
	// expands when the expression is used (build_star.go).
	stars bool
}

type exprProblem struct {
	span diag.Span
	msg  string
}

func (n *exprNode) parse(lex tokenSource) error {
	p := newExprReader(lex)
	t, err := p.expr()
	if err != nil {
		return err
	}
	n.tree, n.problems, n.stars = t, p.problems, p.stars
	return nil
}

// exprListNode is "a, b, c": a tuple without parentheses when it has a comma.
type exprListNode struct {
	Pos    lexer.Position
	EndPos lexer.Position
	Items  []*exprNode
	Comma  bool // a trailing comma
}

func (n *exprListNode) parse(lex tokenSource) error {
	n.Pos = lex.Peek().Pos
	for {
		p := newExprReader(lex)
		t, err := p.expr()
		if err != nil {
			return err
		}
		if n.Items == nil {
			// Most lists have one item: allocate it with its slice.
			one := newListItem(lex)
			one.node = exprNode{tree: t, problems: p.problems, stars: p.stars}
			one.items[0] = &one.node
			n.Items = one.items[:1:1]
		} else {
			n.Items = append(n.Items, &exprNode{tree: t, problems: p.problems, stars: p.stars})
		}
		if !isOp(lex.Peek(), ",") {
			break
		}
		lex.Next()
		if !startsExpr(lex.Peek()) {
			n.Comma = true
			break
		}
	}
	n.EndPos = lex.Peek().Pos
	return nil
}

// exprReader parses expressions from participle's token stream. A node's
// span runs from its first token to the token after it (participle's
// Pos/EndPos convention, which the other productions follow too).
type exprReader struct {
	lex      tokenSource
	ts       *tokStream // lex, when it is one: calls without dynamic dispatch
	problems []exprProblem
	stars    bool // a starred item was read
	// depth counts the open binary calls plus the operators and trailers
	// chained inside them, so it bounds the depth of the ast being built.
	depth int
}

// maxExprDepth bounds the nesting of one expression (parentheses,
// brackets, calls, unary and chained binary operators, trailers). Parsing,
// building and every later pass recurse on expression depth; without a
// bound, deep enough input overflows the goroutine stack, which is fatal
// rather than a panic. Printed TVMScript nests a few levels.
const maxExprDepth = 1000

// deeper enters one more level, failing at the next token past the bound.
func (p *exprReader) deeper() error {
	p.depth++
	if p.depth > maxExprDepth {
		return participle.Errorf(p.next(), "expression nested too deeply (more than %d levels of parentheses, brackets, calls and operators)", maxExprDepth)
	}
	return nil
}

func (p *exprReader) problem(sp diag.Span, msg string) {
	p.problems = append(p.problems, exprProblem{sp, msg})
}

// unexpected is the syntax error for tok where expect was needed.
func unexpected(tok *lexer.Token, expect string) error {
	if tok.Type == typeError {
		return &lexer.Error{Msg: tok.Value, Pos: tok.Pos}
	}
	return &participle.UnexpectedTokenError{Unexpected: *tok, Expect: expect}
}

// expect consumes the operator op or fails with "expected want".
func (p *exprReader) expect(op, want string) error {
	tok := p.peek()
	if !isOp(tok, op) {
		return unexpected(tok, want)
	}
	p.advance()
	return nil
}

func newExprReader(lex tokenSource) exprReader {
	ts, _ := lex.(*tokStream)
	return exprReader{lex: lex, ts: ts}
}

func (p *exprReader) peek() *lexer.Token {
	if p.ts != nil {
		return p.ts.Peek()
	}
	return p.lex.Peek()
}

func (p *exprReader) advance() *lexer.Token {
	if p.ts != nil {
		return p.ts.Next()
	}
	return p.lex.Next()
}

// next is the position of the next token: the end of the node just read.
func (p *exprReader) next() lexer.Position { return p.peek().Pos }

func (p *exprReader) expr() (*ast, error) { return p.binary(precOr) }

// binary is precedence climbing: it reads operands joined by operators
// binding at least as tight as minPrec.
func (p *exprReader) binary(minPrec int) (*ast, error) {
	entry := p.depth
	t, err := p.climb(minPrec)
	p.depth = entry
	return t, err
}

func (p *exprReader) climb(minPrec int) (*ast, error) {
	if err := p.deeper(); err != nil {
		return nil, err
	}
	left, err := p.unary()
	if err != nil {
		return nil, err
	}
	for {
		op := p.peek()
		prec := binaryPrec(op)
		if prec == 0 || prec < minPrec {
			return left, nil
		}
		opName := op.Value // op is not held across the operand: the stream moves on
		p.advance()
		if err := p.deeper(); err != nil {
			return nil, err
		}
		var right *ast
		if prec == precPow {
			right, err = p.binary(precUnary) // right associative; allows 2 ** -1
		} else {
			right, err = p.binary(prec + 1)
		}
		if err != nil {
			return nil, err
		}
		left = p.node(ast{Kind: aBinary, Name: opName, X: left, Y: right, Span: joinSpan(left.Span, right.Span)})
	}
}

func (p *exprReader) unary() (*ast, error) {
	op := *p.peek()
	prec := 0
	switch {
	case op.Type == typeKeyword && op.Value == "not":
		prec = precCmp
	case op.Type == typeOp && (op.Value == "-" || op.Value == "+" || op.Value == "~"):
		prec = precUnary
	default:
		return p.primary()
	}
	p.advance()
	x, err := p.binary(prec)
	if err != nil {
		return nil, err
	}
	return p.node(ast{Kind: aUnary, Name: op.Value, X: x, Span: joinSpan(spanOf(op.Pos, op.Pos), x.Span)}), nil
}

func (p *exprReader) primary() (*ast, error) {
	start := p.next()
	e, err := p.atom()
	if err != nil {
		return nil, err
	}
	for {
		tok := p.peek()
		if tok.Type != typeOp {
			return e, nil
		}
		switch tok.Value {
		case ".", "(", "[":
			if err := p.deeper(); err != nil {
				return nil, err
			}
		}
		switch tok.Value {
		case ".":
			p.advance()
			name := p.peek()
			if name.Type != typeName {
				return nil, unexpected(name, `a name after "."`)
			}
			nameTok := *name
			p.advance()
			e = p.node(ast{Kind: aAttr, X: e, Name: nameTok.Value, Text: p.dotted(e, start, &nameTok), Span: spanOf(start, p.next())})
		case "(":
			if e, err = p.call(e, start); err != nil {
				return nil, err
			}
		case "[":
			if e, err = p.index(e, start); err != nil {
				return nil, err
			}
		default:
			return e, nil
		}
	}
}

// dotted returns the dotted path of x.name ("R.nn.relu"), or "" when x has
// none. The builder asks for callee paths several times per binding; they
// are computed once here, as a slice of the source when the path is written
// without blanks (so without allocating).
func (p *exprReader) dotted(x *ast, start lexer.Position, name *lexer.Token) string {
	src := ""
	if p.ts != nil {
		src = p.ts.sc.src
	}
	return dottedPath(src, x, start.Offset, name.Pos.Offset, name.Value)
}

// dottedPath is the dotted path of x.name, where x starts at byte offset
// from of src and name at nameOff: src[from:nameOff+len(name)] when that is
// the path (written without blanks), else a new string.
func dottedPath(src string, x *ast, from, nameOff int, name string) string {
	var prefix string
	switch {
	case x.Kind == aName:
		prefix = x.Name
	case x.Kind == aAttr && x.Text != "":
		prefix = x.Text
	default:
		return ""
	}
	if to := nameOff + len(name); to-from == len(prefix)+1+len(name) && to <= len(src) &&
		src[from:from+len(prefix)] == prefix && src[from+len(prefix)] == '.' {
		return src[from:to]
	}
	return prefix + "." + name
}

// call reads the argument list of fn(...).
func (p *exprReader) call(fn *ast, start lexer.Position) (*ast, error) {
	p.advance() // (
	// Calls rarely have more than four arguments: one allocation each for
	// the arguments and their keywords.
	items, kws := p.argSlices()
	call := p.node(ast{Kind: aCall, X: fn, Items: items, Keywords: kws})
	for !isOp(p.peek(), ")") {
		tok := p.peek()
		argStart := tok.Pos
		kw := ""
		if tok.Type == typeName && isOp(p.lex.Peek2(), "=") {
			kw = tok.Value
			p.advance()
			p.advance()
		}
		var v *ast
		var err error
		switch star := p.peek(); {
		case kw == "" && isOp(star, "*"):
			v, err = p.starred()
		case isOp(star, "*") || isOp(star, "**"):
			p.advance()
			what := "keyword argument unpacking (**)"
			if star.Value == "*" {
				what = "a starred keyword argument"
			}
			p.problem(spanOf(argStart, argStart), "expected an argument, found "+star.Value+" ("+what+" is not supported)")
			fallthrough
		default:
			if !startsExpr(p.peek()) {
				return nil, unexpected(p.peek(), `an argument or ")"`)
			}
			v, err = p.expr()
		}
		if err != nil {
			return nil, err
		}
		call.Items = append(call.Items, v)
		call.Keywords = append(call.Keywords, kw)
		if !isOp(p.peek(), ",") {
			break
		}
		p.advance()
	}
	if err := p.expect(")", `"," or ")"`); err != nil {
		return nil, err
	}
	call.Span = spanOf(start, p.next())
	return call, nil
}

// starred reads "*operand" (an argument or a tuple or list item): Python's
// star_expression, whose operand binds like "|" and tighter.
func (p *exprReader) starred() (*ast, error) {
	star := *p.advance()
	if !startsExpr(p.peek()) {
		return nil, unexpected(p.peek(), `an expression after "*"`)
	}
	x, err := p.binary(precBitOr)
	if err != nil {
		return nil, err
	}
	p.stars = true
	return p.node(ast{Kind: aStar, X: x, Span: joinSpan(spanOf(star.Pos, star.Pos), x.Span)}), nil
}

// index reads the subscripts of x[...].
func (p *exprReader) index(x *ast, start lexer.Position) (*ast, error) {
	p.advance() // [
	idx := p.node(ast{Kind: aIndex, X: x})
	comma := false
	for {
		s, err := p.subscript()
		if err != nil {
			return nil, err
		}
		idx.Items = append(idx.Items, s)
		if !isOp(p.peek(), ",") {
			break
		}
		p.advance()
		if isOp(p.peek(), "]") {
			comma = true
			break
		}
	}
	if err := p.expect("]", `"," or "]"`); err != nil {
		return nil, err
	}
	idx.Span = spanOf(start, p.next())
	if comma && len(idx.Items) == 1 {
		idx.Items = []*ast{{Kind: aTuple, Items: idx.Items, Span: idx.Items[0].Span}}
	}
	return idx, nil
}

// subscript reads an index or a slice lo:hi (either bound may be absent).
func (p *exprReader) subscript() (*ast, error) {
	start := p.next()
	var lo, hi *ast
	var err error
	if !isOp(p.peek(), ":") {
		if !startsExpr(p.peek()) {
			return nil, unexpected(p.peek(), "an index")
		}
		if lo, err = p.expr(); err != nil {
			return nil, err
		}
		if !isOp(p.peek(), ":") {
			return lo, nil
		}
	}
	p.advance() // :
	if startsExpr(p.peek()) {
		if hi, err = p.expr(); err != nil {
			return nil, err
		}
	}
	return p.node(ast{Kind: aSlice, X: lo, Y: hi, Span: spanOf(start, p.next())}), nil
}

func (p *exprReader) atom() (*ast, error) {
	tok := p.peek()
	switch tok.Type {
	case typeName, typeInt, typeFloat:
		p.advance()
		a := p.node(ast{Span: spanOf(tok.Pos, p.next())})
		switch tok.Type {
		case typeName:
			a.Kind, a.Name = aName, tok.Value
		case typeInt:
			a.Kind, a.Text = aInt, tok.Value
		default:
			a.Kind, a.Text = aFloat, tok.Value
		}
		return a, nil
	case typeString:
		return p.strings(), nil
	case typeKeyword:
		switch tok.Value {
		case "True", "False", "None":
			p.advance()
			return p.node(ast{Kind: aConst, Text: tok.Value, Span: spanOf(tok.Pos, p.next())}), nil
		case "lambda":
			return p.lambda()
		}
	case typeOp:
		switch tok.Value {
		case "(":
			return p.paren()
		case "[":
			p.advance()
			items, _, err := p.items("]")
			if err != nil {
				return nil, err
			}
			return p.node(ast{Kind: aList, Items: items, Span: spanOf(tok.Pos, p.next())}), nil
		case "{":
			return p.dict()
		}
	}
	return nil, unexpected(tok, "an expression")
}

// strings reads adjacent string literals, which concatenate.
func (p *exprReader) strings() *ast {
	first := *p.advance() // a copy: the stream's buffer moves on
	text, err := unquote(first.Value)
	if err != nil {
		p.problem(spanOf(first.Pos, first.Pos), "bad string literal "+first.Value+": "+err.Error())
	}
	for p.peek().Type == typeString {
		tok := p.advance()
		v, err := unquote(tok.Value)
		if err != nil {
			p.problem(spanOf(first.Pos, first.Pos), "bad string literal "+tok.Value+": "+err.Error())
		}
		text += v
	}
	return p.node(ast{Kind: aStr, Text: text, Span: spanOf(first.Pos, p.next())})
}

// items reads "e1, e2, ..." up to and including the closing bracket; a
// trailing comma is allowed and reported.
func (p *exprReader) items(closing string) ([]*ast, bool, error) {
	var items []*ast
	if p.ts != nil && p.ts.arena != nil {
		items, _ = p.ts.arena.argSlices()
	} else {
		items = make([]*ast, 0, 4)
	}
	comma := false
	for !isOp(p.peek(), closing) {
		var e *ast
		var err error
		if isOp(p.peek(), "*") {
			e, err = p.starred()
		} else if !startsExpr(p.peek()) {
			return nil, false, unexpected(p.peek(), `an expression or "`+closing+`"`)
		} else {
			e, err = p.expr()
		}
		if err != nil {
			return nil, false, err
		}
		items = append(items, e)
		if !isOp(p.peek(), ",") {
			break
		}
		p.advance()
		comma = true
	}
	if err := p.expect(closing, `"," or "`+closing+`"`); err != nil {
		return nil, false, err
	}
	return items, comma, nil
}

// paren reads (), (e), (e,) and (e1, e2, ...). A single parenthesized value
// keeps its own span and is marked Paren.
func (p *exprReader) paren() (*ast, error) {
	open := *p.advance()
	if isOp(p.peek(), ",") { // "(,)": reported, read as an empty tuple
		p.advance()
		if err := p.expect(")", `")"`); err != nil {
			return nil, err
		}
		sp := spanOf(open.Pos, p.next())
		p.problem(sp, `expected an expression before ",", found ","`)
		return p.node(ast{Kind: aTuple, Span: sp}), nil
	}
	items, comma, err := p.items(")")
	if err != nil {
		return nil, err
	}
	if len(items) == 1 && !comma && items[0].Kind == aStar {
		// Python: "cannot use starred expression here"; (*x,) is a tuple.
		p.problem(items[0].Span, `expected a tuple around a starred item, found (*...) without a comma: write (*x,)`)
		return p.node(ast{Kind: aTuple, Items: items, Span: spanOf(open.Pos, p.next())}), nil
	}
	if len(items) == 1 && !comma {
		items[0].Paren = true
		return items[0], nil
	}
	return p.node(ast{Kind: aTuple, Items: items, Span: spanOf(open.Pos, p.next())}), nil
}

func (p *exprReader) dict() (*ast, error) {
	open := *p.advance()
	d := p.node(ast{Kind: aDict})
	for !isOp(p.peek(), "}") {
		if !startsExpr(p.peek()) {
			return nil, unexpected(p.peek(), `a dict entry or "}"`)
		}
		k, err := p.expr()
		if err != nil {
			return nil, err
		}
		if err := p.expect(":", `":"`); err != nil {
			return nil, err
		}
		if !startsExpr(p.peek()) {
			return nil, unexpected(p.peek(), "an expression")
		}
		v, err := p.expr()
		if err != nil {
			return nil, err
		}
		d.Items = append(d.Items, k)
		d.Values = append(d.Values, v)
		if !isOp(p.peek(), ",") {
			break
		}
		p.advance()
	}
	if err := p.expect("}", `"," or "}"`); err != nil {
		return nil, err
	}
	d.Span = spanOf(open.Pos, p.next())
	return d, nil
}

// node allocates an ast. Reading from a tokStream, nodes come from slabs
// of astSlab (one allocation per astSlab nodes instead of one each: a
// binding is about seven nodes).
func (p *exprReader) node(a ast) *ast {
	ts, ok := p.ts, p.ts != nil
	if !ok {
		n := new(ast)
		*n = a
		return n
	}
	if ts.arena != nil {
		n := ts.arena.node()
		*n = a
		return n
	}
	if len(ts.slab) == cap(ts.slab) {
		ts.slab = make([]ast, 0, astSlab)
	}
	ts.slab = append(ts.slab, a)
	return &ts.slab[len(ts.slab)-1]
}

const astSlab = 128

// argSlices returns empty slices with room for four arguments and their
// keywords, carved from slabs when reading from a tokStream (a call with
// more arguments grows its own).
func (p *exprReader) argSlices() ([]*ast, []string) {
	ts, ok := p.ts, p.ts != nil
	if !ok {
		return make([]*ast, 0, 4), make([]string, 0, 4)
	}
	if ts.arena != nil {
		return ts.arena.argSlices()
	}
	if len(ts.itemSlab)+4 > cap(ts.itemSlab) {
		ts.itemSlab = make([]*ast, 0, 4*astSlab)
		ts.kwSlab = make([]string, 0, 4*astSlab)
	}
	n := len(ts.itemSlab)
	ts.itemSlab, ts.kwSlab = ts.itemSlab[:n+4], ts.kwSlab[:n+4]
	return ts.itemSlab[n : n : n+4], ts.kwSlab[n : n : n+4]
}

// lambda reads "lambda a, b: body" (TVM's index maps: T.index_map(lambda i,
// j: (i // 4, j))).
func (p *exprReader) lambda() (*ast, error) {
	start := p.advance().Pos
	lam := p.node(ast{Kind: aLambda})
	for !isOp(p.peek(), ":") {
		tok := p.peek()
		if tok.Type != typeName {
			return nil, unexpected(tok, `a parameter name or ":"`)
		}
		p.advance()
		lam.Items = append(lam.Items, p.node(ast{Kind: aName, Name: tok.Value, Span: spanOf(tok.Pos, p.next())}))
		if !isOp(p.peek(), ",") {
			break
		}
		p.advance()
	}
	if err := p.expect(":", `":"`); err != nil {
		return nil, err
	}
	if !startsExpr(p.peek()) {
		return nil, unexpected(p.peek(), "an expression")
	}
	if err := p.deeper(); err != nil {
		return nil, err
	}
	body, err := p.expr()
	if err != nil {
		return nil, err
	}
	lam.X, lam.Span = body, spanOf(start, p.next())
	return lam, nil
}
