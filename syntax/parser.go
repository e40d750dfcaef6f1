package syntax

import (
	"errors"
	"slices"
	"strings"

	"github.com/alecthomas/participle/v2"
	"github.com/alecthomas/participle/v2/lexer"
)

// The statement skeleton, read by hand.
//
// The grammar of record is participle's (grammar.go, golden in
// testdata/grammar.ebnf): TestHandParserMatchesParticiple parses the corpus
// with both and compares the trees. Parse uses this reader instead because
// participle's generic machinery is the wrong shape for files of a million
// bindings: it needs the whole token list in memory (64 bytes a token,
// grown by doubling), caps a repeated production at participle.MaxIterations
// (a block of more than a million statements was a syntax error), and
// reports only its furthest failure, so recovery had to re-parse the file
// once per error. This reader pulls tokens from a fixed window
// (tokStream), has no size limits, decides every production on its first
// token (no backtracking), and recovers from a syntax error where it
// happens (see suite): a file with 20 errors costs about one parse.
//
// The nodes it builds, and their Pos/EndPos conventions (EndPos is the
// position of the token after the node), are participle's.

// stmtReader reads the statement skeleton of one file.
type stmtReader struct {
	ts  *tokStream
	rec *recovery // nil until the first syntax error
	src string
	// skim is Parse's first pass (deferred.go): the simple statements of
	// Relax function bodies (inRelax) are skipped, not read, and the first
	// syntax error aborts with errNotDeferred.
	skim, inRelax bool
	// skimRun lets the first pass skip runs of plain lines over their
	// bytes (skipRun); off only to test that it changes nothing.
	skimRun bool
	stubs   []stmtNode // the skipped statements' stand-ins, by slabs
	nstubs  int
}

func newStmtReader(filename, src string) *stmtReader {
	return &stmtReader{ts: newTokStream(filename, src), src: src}
}

// errTooMany aborts parsing once recovery has collected maxErrors errors.
var errTooMany = errors.New("too many syntax errors")

// readFile reads a whole file. On syntax errors it returns the tree of
// what remained (nil when recovery gave up) and the recovery state.
func readFile(filename string, src []byte) (*fileNode, *recovery) {
	return newStmtReader(filename, string(src)).file()
}

func (r *stmtReader) file() (*fileNode, *recovery) {
	filename := r.ts.sc.file
	n := &fileNode{Pos: r.ts.Peek().Pos}
	stmts, err := r.stmts(true)
	if err != nil {
		if r.skim {
			return nil, nil
		}
		if r.rec == nil { // an error recovery could not place: report it alone
			r.rec = newRecovery(filename, r.src)
			r.rec.diags = append(r.rec.diags, syntaxDiagnostic(filename, err))
		}
		return nil, r.rec
	}
	n.Stmts = stmts
	return n, r.rec
}

// stmts reads statements up to the end of the file (top) or of the block
// (a DEDENT, not consumed). A statement that fails to parse is recovered
// here when the text recovery drops starts within it: the diagnostic is
// recorded, the text is skipped, and a `pass` stands in its place.
func (r *stmtReader) stmts(top bool) ([]*stmtNode, error) {
	var out []*stmtNode
	var block *deferredBlock // the levels the deferred statements share
	for {
		tok := r.ts.Peek()
		if top && tok.EOF() {
			return out, nil
		}
		if !top && tok.Type == typeDedent {
			if out == nil {
				return nil, unexpected(tok, "a statement")
			}
			return out, nil
		}
		if tok.EOF() { // unreachable: DEDENTs close every block first
			return nil, unexpected(tok, "the end of the block")
		}
		start := tok.Pos
		// The indentation levels to resume with if the statement is
		// dropped: those of its line (an unexpected INDENT is the
		// statement's own error, not a level).
		levels := len(r.ts.sc.stack)
		if tok.Type == typeIndent {
			levels--
		}
		if r.skim && r.inRelax && tok.Type == typeName {
			if block == nil || !slices.Equal(block.levels, r.ts.sc.stack) {
				block = &deferredBlock{levels: slices.Clone(r.ts.sc.stack)}
			}
			if out == nil {
				out = make([]*stmtNode, 0, blockLines(r.src, tok.Pos.Offset))
			}
			if st, ok := r.skip(block); ok {
				out = r.skipRun(block, st, append(out, st))
				continue
			}
		}
		st, err := r.stmt()
		if err == nil {
			out = append(out, st)
			continue
		}
		pass, err := r.recover(err, start, levels)
		if err != nil {
			return nil, err
		}
		out = append(out, pass)
	}
}

// blockLines bounds the number of statements in the block whose statement
// starts at offset: its lines indented as that one, up to the first one
// indented less (blank and comment lines aside). The
// skimming pass sizes a Relax body's statement list with it, as appending
// 100k stubs one by one allocated megabytes of slices. A string or bracket
// continuation indented less ends the count early: the list then grows.
func blockLines(src string, offset int) int {
	start := strings.LastIndexByte(src[:offset], '\n') + 1
	indent := offset - start
	n := 0
	for rest := src[start:]; rest != ""; {
		line := rest
		if i := strings.IndexByte(rest, '\n'); i >= 0 {
			line, rest = rest[:i], rest[i+1:]
		} else {
			rest = ""
		}
		k := 0
		for k < len(line) && (line[k] == ' ' || line[k] == '\t') {
			k++
		}
		if k == len(line) || line[k] == '#' || line[k] == '\r' {
			continue
		}
		if k < indent {
			break
		}
		if k == indent {
			n++
		}
	}
	return n
}

// recover handles the syntax error err of the statement starting at start
// if the text to drop starts within it; otherwise it passes err on.
func (r *stmtReader) recover(err error, start lexer.Position, levels int) (*stmtNode, error) {
	if err == errTooMany || err == errNotDeferred {
		return nil, err
	}
	if r.skim {
		return nil, errNotDeferred // the reading that recovers is the eager one
	}
	var drop *dropError
	if !errors.As(err, &drop) {
		if r.rec == nil {
			r.rec = newRecovery(r.ts.sc.file, r.src)
		}
		d := syntaxDiagnostic(r.ts.sc.file, err)
		first, last, names, ok := r.rec.damage(d)
		if !ok {
			return nil, err
		}
		r.rec.diags = append(r.rec.diags, d)
		if len(r.rec.diags) > maxErrors {
			return nil, errTooMany
		}
		drop = &dropError{err: err, first: first, last: last, names: names}
	}
	if drop.first < start.Line {
		return nil, drop
	}
	// The whole statement goes, from its first line.
	r.rec.drop(start.Line, drop.last, drop.names)
	off, line := r.rec.lineOffset(drop.last + 1)
	r.ts.restart(off, line, levels)
	pass := &stmtNode{Pos: start, Simple: &simpleNode{Pos: start, Pass: true}}
	pass.EndPos = r.ts.Peek().Pos
	pass.Simple.EndPos = pass.EndPos
	return pass, nil
}

// dropError carries a recorded syntax error up to the block that holds the
// statement its dropped text starts in.
type dropError struct {
	err         error
	first, last int // physical lines to drop
	names       []string
}

func (e *dropError) Error() string { return e.err.Error() }

// stmt reads one statement.
func (r *stmtReader) stmt() (*stmtNode, error) {
	tok := r.ts.Peek()
	var st *stmtNode
	if a := r.ts.arena; a != nil {
		st = &a.stmt
		*st = stmtNode{}
	} else {
		st = new(stmtNode)
	}
	st.Pos = tok.Pos
	var err error
	switch {
	case isOp(tok, "@"):
		st.Decorated, err = r.decorated()
	case tok.Type == typeKeyword:
		switch tok.Value {
		case "class":
			st.Class, err = r.class()
		case "def":
			st.Def, err = r.def()
		case "if":
			st.If, err = r.ifStmt()
		case "for":
			st.For, err = r.forStmt()
		case "while":
			st.For, err = r.whileStmt()
		case "with":
			st.With, err = r.with()
		default:
			st.Simple, err = r.simple()
		}
	default:
		st.Simple, err = r.simple()
	}
	if err != nil {
		return nil, err
	}
	st.EndPos = r.ts.Peek().Pos
	return st, nil
}

func (r *stmtReader) simple() (*simpleNode, error) {
	var n *simpleNode
	if a := r.ts.arena; a != nil {
		n = &a.simple
		*n = simpleNode{}
	} else {
		n = new(simpleNode)
	}
	if err := n.parse(r.ts); err != nil {
		if err == participle.NextMatch {
			return nil, unexpected(r.ts.Peek(), "a statement")
		}
		return nil, err
	}
	return n, nil
}

// expect consumes the token (an operator or keyword) or fails.
func (r *stmtReader) expect(value string) error {
	tok := r.ts.Peek()
	if (tok.Type != typeOp && tok.Type != typeKeyword) || tok.Value != value {
		return unexpected(tok, `"`+value+`"`)
	}
	r.ts.Next()
	return nil
}

func (r *stmtReader) name() (string, error) {
	tok := r.ts.Peek()
	if tok.Type != typeName {
		return "", unexpected(tok, "a name")
	}
	r.ts.Next()
	return tok.Value, nil
}

func (r *stmtReader) expr() (*exprNode, error) {
	if !startsExpr(r.ts.Peek()) {
		return nil, unexpected(r.ts.Peek(), "an expression")
	}
	n := &exprNode{}
	return n, n.parse(r.ts)
}

func (r *stmtReader) decorated() (*decoratedNode, error) {
	n := &decoratedNode{Pos: r.ts.Peek().Pos}
	for isOp(r.ts.Peek(), "@") {
		r.ts.Next()
		e, err := r.expr()
		if err != nil {
			return nil, err
		}
		n.Decorators = append(n.Decorators, e)
		if tok := r.ts.Peek(); tok.Type != typeNewline {
			return nil, unexpected(tok, "end of line")
		}
		r.ts.Next()
	}
	tok := r.ts.Peek()
	var err error
	inRelax := r.inRelax
	defer func() { r.inRelax = inRelax }()
	switch {
	case tok.Type == typeKeyword && tok.Value == "class":
		r.inRelax = false
		n.Class, err = r.class()
	case tok.Type == typeKeyword && tok.Value == "def":
		r.inRelax = len(n.Decorators) == 1 && isRelaxDecorator(n.Decorators[0].tree)
		n.Def, err = r.def()
	default:
		err = unexpected(tok, `"@", "class" or "def"`)
	}
	return n, err
}

func (r *stmtReader) class() (*classNode, error) {
	n := &classNode{Pos: r.ts.Next().Pos}
	var err error
	if n.Name, err = r.name(); err != nil {
		return nil, err
	}
	if isOp(r.ts.Peek(), "(") {
		r.ts.Next()
		for !isOp(r.ts.Peek(), ")") {
			e, err := r.expr()
			if err != nil {
				return nil, err
			}
			n.Bases = append(n.Bases, e)
			if !isOp(r.ts.Peek(), ",") {
				break
			}
			r.ts.Next()
		}
		if err := r.expect(")"); err != nil {
			return nil, err
		}
	}
	if err := r.expect(":"); err != nil {
		return nil, err
	}
	n.Body, err = r.suite()
	return n, err
}

func (r *stmtReader) def() (*defNode, error) {
	n := &defNode{Pos: r.ts.Next().Pos}
	var err error
	if n.Name, err = r.name(); err != nil {
		return nil, err
	}
	if err := r.expect("("); err != nil {
		return nil, err
	}
	for !isOp(r.ts.Peek(), ")") {
		p := &paramNode{Pos: r.ts.Peek().Pos}
		if p.Name, err = r.name(); err != nil {
			return nil, unexpected(r.ts.Peek(), `a parameter or ")"`)
		}
		if isOp(r.ts.Peek(), ":") {
			r.ts.Next()
			if p.Annot, err = r.expr(); err != nil {
				return nil, err
			}
		}
		if isOp(r.ts.Peek(), "=") {
			r.ts.Next()
			if p.Default, err = r.expr(); err != nil {
				return nil, err
			}
		}
		p.EndPos = r.ts.Peek().Pos
		n.Params = append(n.Params, p)
		if !isOp(r.ts.Peek(), ",") {
			if !isOp(r.ts.Peek(), ")") {
				return nil, unexpected(r.ts.Peek(), `"," or ")"`)
			}
			break
		}
		r.ts.Next()
	}
	r.ts.Next() // )
	if isOp(r.ts.Peek(), "->") {
		r.ts.Next()
		if n.Ret, err = r.expr(); err != nil {
			return nil, err
		}
	}
	if err := r.expect(":"); err != nil {
		return nil, err
	}
	if n.Body, err = r.suite(); err != nil {
		return nil, err
	}
	n.EndPos = r.ts.Peek().Pos
	return n, nil
}

// suite reads a block: NEWLINE INDENT statements DEDENT, or a simple
// statement on the header's line.
func (r *stmtReader) suite() (*suiteNode, error) {
	tok := r.ts.Peek()
	n := &suiteNode{Pos: tok.Pos}
	if tok.Type != typeNewline {
		if !startsExpr(tok) && !(tok.Type == typeKeyword && (tok.Value == "return" || tok.Value == "pass")) {
			return nil, unexpected(tok, "a block")
		}
		var err error
		n.Simple, err = r.simple()
		return n, err
	}
	r.ts.Next()
	if tok := r.ts.Peek(); tok.Type != typeIndent {
		return nil, unexpected(tok, "an indented block")
	}
	r.ts.Next()
	var err error
	if n.Stmts, err = r.stmts(false); err != nil {
		return nil, err
	}
	r.ts.Next() // DEDENT
	return n, nil
}

func (r *stmtReader) ifStmt() (*ifNode, error) {
	n := &ifNode{Pos: r.ts.Next().Pos}
	var err error
	if n.Cond, err = r.expr(); err != nil {
		return nil, err
	}
	if err := r.expect(":"); err != nil {
		return nil, err
	}
	if n.Then, err = r.suite(); err != nil {
		return nil, err
	}
	for tok := r.ts.Peek(); tok.Type == typeKeyword && tok.Value == "elif"; tok = r.ts.Peek() {
		e := &elifNode{Pos: r.ts.Next().Pos}
		if e.Cond, err = r.expr(); err != nil {
			return nil, err
		}
		if err := r.expect(":"); err != nil {
			return nil, err
		}
		if e.Body, err = r.suite(); err != nil {
			return nil, err
		}
		n.Elifs = append(n.Elifs, e)
	}
	if tok := r.ts.Peek(); tok.Type == typeKeyword && tok.Value == "else" {
		r.ts.Next()
		if err := r.expect(":"); err != nil {
			return nil, err
		}
		if n.Else, err = r.suite(); err != nil {
			return nil, err
		}
	}
	return n, nil
}

func (r *stmtReader) forStmt() (*forNode, error) {
	n := &forNode{Pos: r.ts.Next().Pos}
	for {
		e, err := r.expr()
		if err != nil {
			return nil, err
		}
		n.Targets = append(n.Targets, e)
		if !isOp(r.ts.Peek(), ",") {
			break
		}
		r.ts.Next()
		if !startsExpr(r.ts.Peek()) {
			break
		}
	}
	if err := r.expect("in"); err != nil {
		return nil, err
	}
	var err error
	if n.Iter, err = r.expr(); err != nil {
		return nil, err
	}
	if err := r.expect(":"); err != nil {
		return nil, err
	}
	n.Body, err = r.suite()
	return n, err
}

// whileStmt reads `while cond:` into a forNode with While set.
func (r *stmtReader) whileStmt() (*forNode, error) {
	n := &forNode{Pos: r.ts.Next().Pos}
	var err error
	if n.While, err = r.expr(); err != nil {
		return nil, err
	}
	if err := r.expect(":"); err != nil {
		return nil, err
	}
	n.Body, err = r.suite()
	return n, err
}

func (r *stmtReader) with() (*withNode, error) {
	n := &withNode{Pos: r.ts.Next().Pos}
	var err error
	if n.Item, err = r.expr(); err != nil {
		return nil, err
	}
	if tok := r.ts.Peek(); tok.Type == typeKeyword && tok.Value == "as" {
		r.ts.Next()
		if n.As, err = r.expr(); err != nil {
			return nil, err
		}
	}
	if err := r.expect(":"); err != nil {
		return nil, err
	}
	n.Body, err = r.suite()
	return n, err
}

// parseExprString parses one expression, the contents of a string
// dimension such as "n * 2 + 1".
func parseExprString(filename, src string) (*exprNode, error) {
	ts := newTokStream(filename, src)
	n := &exprNode{}
	if !startsExpr(ts.Peek()) {
		return nil, unexpected(ts.Peek(), "an expression")
	}
	if err := n.parse(ts); err != nil {
		return nil, err
	}
	if ts.Peek().Type == typeNewline {
		ts.Next()
	}
	if !ts.Peek().EOF() {
		return nil, unexpected(ts.Peek(), "end of the expression")
	}
	return n, nil
}
