package syntax

import (
	"errors"
	"unicode/utf8"
	"unsafe"

	"github.com/alecthomas/participle/v2/lexer"

	"github.com/phasec/phasec/diag"
	"github.com/phasec/phasec/ir"
)

// Deferred statements: how Parse keeps the syntax tree of a large function
// from ever existing whole.
//
// The builder needs the whole file before it converts a function body
// (calls resolve against functions defined later, the metadata section
// comes last), so reading everything first and building after would hold
// the tree of every binding at once: most of the memory a parse allocated
// was that tree. Parse instead reads in two passes over the same text:
//
//  1. skim: the statement reader builds the file's skeleton as usual, but
//     the simple statements of @R.function bodies (bindings and expression
//     statements; not return, pass or R.output(...), which the builder
//     looks at out of order) are only scanned to their NEWLINE and stand in
//     the tree as stubs carrying their position and the indentation levels
//     of their block;
//  2. build: when the builder's statement loop reaches a stub
//     (builder.materialize), the statement is read again from its line into
//     memory that is reused for the next one (stmtArena). The builder keeps
//     no syntax of a statement once it has converted it (names and literal
//     text are slices of the source, spans are copied).
//
// Valid input is read this way only. Any syntax error, in either pass,
// abandons the deferred parse (errNotDeferred) and Parse starts over with
// the eager reader and its recovery, so diagnostics are exactly the eager
// ones; so does a build that never got to some stubs (they might hide a
// syntax error). An invalid file costs at most one extra deferred parse. TestDeferredParse
// checks that both readings build the same module on the whole corpus.

// errNotDeferred abandons a deferred parse: the eager one takes over.
var errNotDeferred = errors.New("deferred parse abandoned")

// deferredBlock is shared by the stubs of one block: the indentation columns
// the scanner has open at their lines. A stub the builder has read points to
// the block's twin marked read (the mark costs the stubs no field).
type deferredBlock struct {
	levels []int
	read   bool
	twin   *deferredBlock // the read twin, made at the first read
}

// markRead returns b's twin marked read (b itself if it is one).
func (b *deferredBlock) markRead() *deferredBlock {
	if b.read {
		return b
	}
	if b.twin == nil {
		b.twin = &deferredBlock{levels: b.levels, read: true}
	}
	return b.twin
}

// parseDeferred parses valid text in the two passes above; ok is false when
// the text needs the eager reader.
func parseDeferred(filename, text string) (mod *ir.Module, diags diag.List, ok bool) {
	r := newStmtReader(filename, text)
	r.skim, r.skimRun = true, true
	tree, _ := r.file()
	if tree == nil || r.rec != nil {
		return nil, nil, false
	}
	bd := newBuilder(filename)
	bd.lazy = newLazyReader(filename, text)
	defer func() {
		if p := recover(); p != nil {
			if p != any(errNotDeferred) {
				panic(p)
			}
			mod, diags, ok = nil, nil, false
		}
	}()
	mod = bd.buildFile(tree)
	if bd.lazy.reads != r.nstubs {
		// The builder gave up on some statements before it read them (a
		// failed signature, a misplaced function): they may hide syntax
		// errors, which only the eager reading reports.
		return nil, nil, false
	}
	if len(bd.diags) > 0 {
		return mod, finish(bd.diags), true
	}
	return mod, nil, true
}

// isRelaxDecorator reports whether a decorator is @R.function or
// @R.function(...).
func isRelaxDecorator(a *ast) bool {
	if a.Kind == aCall {
		a = a.X
	}
	d, _ := a.Dotted()
	return d == "R.function"
}

// skip scans over the simple statement at the next token and returns its
// stub, or false (nothing consumed) for a statement that must be read now.
// A lexical error stops the scan; the error token stays next, so reading
// the statement reports it. The stub's EndPos is left to skipRun.
func (r *stmtReader) skip(block *deferredBlock) (*stmtNode, bool) {
	ts := r.ts
	first := ts.Peek()
	if first.Value == "R" && isOp(ts.peekAt(1), ".") {
		if out := ts.peekAt(2); out.Type == typeName && out.Value == "output" {
			return nil, false // dataflowBlock looks for it first
		}
	}
	pos := first.Pos
	// Past the tokens looked at already, the rest of the line is skipped
	// over bytes when it is plain enough, then token by token.
	for buffered := true; ; {
		if buffered = buffered && ts.next < ts.end; !buffered {
			ts.sc.skipLine()
		}
		switch t := ts.Next(); t.Type {
		case typeNewline:
			return r.newStub(pos, block), true
		case typeError, lexer.EOF:
			return nil, false
		}
	}
}

func (r *stmtReader) newStub(pos lexer.Position, block *deferredBlock) *stmtNode {
	if len(r.stubs) == cap(r.stubs) {
		r.stubs = make([]stmtNode, 0, stubSlab)
	}
	r.stubs = append(r.stubs, stmtNode{Pos: pos, deferred: block})
	r.nstubs++
	return &r.stubs[len(r.stubs)-1]
}

// skipRun follows skip, the scanner at the start of the line after last's:
// the lines that follow at the block's indentation, each starting with a
// name (not a keyword, not R) and ending on its own line break, are
// skipped over bytes and appended to out as stubs, without making tokens.
// The first line it does not take (a blank or comment line, another
// indentation, a keyword, R.output, a string or continuation skipLine
// leaves to the scanner) goes back to the token stream, whose next token
// ends the last stub. The stubs are those skip would give (TestSkipRun).
func (r *stmtReader) skipRun(block *deferredBlock, last *stmtNode, out []*stmtNode) []*stmtNode {
	ts, sc := r.ts, r.ts.sc
	if r.skimRun && ts.next == ts.end && !ts.failed && sc.head >= len(sc.pending) && !sc.done && sc.atLineStart && sc.depth == 0 {
		src, indent := sc.src, sc.stack[len(sc.stack)-1]
		for {
			start := sc.off
			i := start
			for i < len(src) && src[i] == ' ' {
				i++
			}
			if i-start != indent || i >= len(src) || !isLetter(src[i]) {
				break
			}
			j := i + 1
			for j < len(src) && (isLetter(src[j]) || isDigit(src[j])) {
				j++
			}
			if name := src[i:j]; name == "R" || isKeyword(name) || j < len(src) && src[j] >= utf8.RuneSelf {
				break
			}
			line := sc.line
			sc.off = j
			sc.skipLine()
			if sc.off >= len(src) || src[sc.off] != '\n' || sc.depth != 0 {
				sc.off, sc.line, sc.lineStart, sc.lineWide, sc.depth = start, line, start, false, 0
				break
			}
			pos := lexer.Position{Filename: sc.file, Offset: i, Line: line, Column: i - start + 1}
			last.EndPos = pos
			sc.off++
			sc.newline(sc.off)
			last = r.newStub(pos, block)
			out = append(out, last)
		}
	}
	last.EndPos = ts.Peek().Pos
	return out
}

// stubSlab is the number of stubs per slab: as many as fill a 20 KiB
// allocation size class (142 of 144 bytes; 128 of 152 wasted 1 KiB per
// slab, some 800 KB per 100k stubs).
const stubSlab = 20480 / int(unsafe.Sizeof(stmtNode{}))

// lazyReader reads deferred statements again for the builder.
type lazyReader struct {
	line  lineReader // the common one-line forms (deferred_line.go)
	r     *stmtReader
	reads int // the stubs read, each counted once
}

func newLazyReader(filename, text string) *lazyReader {
	r := newStmtReader(filename, text)
	r.ts.arena = newStmtArena()
	return &lazyReader{r: r, line: lineReader{src: text, file: filename, arena: r.ts.arena}}
}

// read returns the statement st stands for. Its syntax lives until the next
// read.
func (lz *lazyReader) read(st *stmtNode) *stmtNode {
	got := lz.line.read(st)
	if got == nil {
		if got = lz.readTokens(st); got == nil {
			panic(errNotDeferred)
		}
	}
	if !st.deferred.read {
		st.deferred = st.deferred.markRead()
		lz.reads++
	}
	return got
}

// readTokens reads st through the token stream, or returns nil when that
// fails or does not end where the first pass ended.
func (lz *lazyReader) readTokens(st *stmtNode) *stmtNode {
	ts := lz.r.ts
	ts.arena.reset()
	// A block's statement starts its line, after blanks only.
	ts.restartLine(st.Pos.Offset-(st.Pos.Column-1), st.Pos.Line, st.deferred.levels)
	got, err := lz.r.stmt()
	if err != nil || got.Simple == nil || got.Pos != st.Pos || got.EndPos != st.EndPos {
		return nil
	}
	return got
}

// materialize returns the statement itself for a stub, st otherwise.
func (bd *builder) materialize(st *stmtNode) *stmtNode {
	if st.deferred == nil {
		return st
	}
	return bd.lazy.read(st)
}

// stmtArena is the memory of one deferred statement's syntax, reused for
// the next: the skeleton nodes, and chunks of expression nodes and
// argument slices (a statement needing more chunks than the last keeps
// them for the next).
type stmtArena struct {
	stmt   stmtNode
	simple simpleNode
	parts  assignParts
	lists  [4]listItem
	nlists int

	nodes       [][]ast
	nodeChunk   int
	items       [][]*ast
	kws         [][]string
	itemChunk   int
	itemsOffset int
}

func newStmtArena() *stmtArena {
	return &stmtArena{
		nodes: [][]ast{make([]ast, 0, astSlab)},
		items: [][]*ast{make([]*ast, 4*astSlab)},
		kws:   [][]string{make([]string, 4*astSlab)},
	}
}

// reset makes the arena empty. The nodes are cleared here, all at once
// (node hands them out zeroed): clearing them one by one with the
// collector's write barriers on was a sixth of the line reader's time.
func (m *stmtArena) reset() {
	m.nlists = 0
	for k := 0; k <= m.nodeChunk; k++ {
		clear(m.nodes[k])
		m.nodes[k] = m.nodes[k][:0]
	}
	m.nodeChunk = 0
	m.itemChunk, m.itemsOffset = 0, 0
}

// node returns a zeroed node.
func (m *stmtArena) node() *ast {
	c := &m.nodes[m.nodeChunk]
	if len(*c) == cap(*c) {
		m.nodeChunk++
		if m.nodeChunk == len(m.nodes) {
			m.nodes = append(m.nodes, make([]ast, 0, astSlab))
		}
		c = &m.nodes[m.nodeChunk]
		*c = (*c)[:0]
	}
	n := len(*c)
	*c = (*c)[:n+1]
	return &(*c)[n]
}

// argSlices is exprReader.argSlices from the arena.
func (m *stmtArena) argSlices() ([]*ast, []string) {
	if m.itemsOffset+4 > len(m.items[m.itemChunk]) {
		m.itemChunk++
		if m.itemChunk == len(m.items) {
			m.items = append(m.items, make([]*ast, 4*astSlab))
			m.kws = append(m.kws, make([]string, 4*astSlab))
		}
		m.itemsOffset = 0
	}
	n := m.itemsOffset
	m.itemsOffset += 4
	return m.items[m.itemChunk][n : n : n+4], m.kws[m.itemChunk][n : n : n+4]
}

// assignParts are the nodes of an assignment, allocated together.
type assignParts struct {
	as            assignNode
	target, value exprListNode
	annot         exprNode
}

func newAssignParts(lex tokenSource) *assignParts {
	if ts, ok := lex.(*tokStream); ok && ts.arena != nil {
		p := &ts.arena.parts
		*p = assignParts{}
		return p
	}
	return &assignParts{}
}

// listItem is the first item of an expression list with its slice.
type listItem struct {
	node  exprNode
	items [1]*exprNode
}

func newListItem(lex tokenSource) *listItem {
	if ts, ok := lex.(*tokStream); ok && ts.arena != nil && ts.arena.nlists < len(ts.arena.lists) {
		it := &ts.arena.lists[ts.arena.nlists]
		ts.arena.nlists++
		return it
	}
	return &listItem{}
}

// skipLine advances the scanner over the rest of the logical line, up to
// the line break that ends it, as scanning its tokens would (line and
// bracket counts), without making tokens. It leaves the state untouched at
// what it does not handle (triple-quoted strings, continuations, carriage
// returns, the end of the input), where the token scanner takes over; text
// that would be a lexical error goes by unnoticed here, and the statement's
// second reading reports it.
func (s *scanner) skipLine() {
	if s.head < len(s.pending) || s.done {
		return
	}
	src, i := s.src, s.off
	depth, line, lineStart, wide := s.depth, s.line, s.lineStart, s.lineWide
	commit := func() {
		s.off, s.depth, s.line, s.lineStart, s.lineWide = i, depth, line, lineStart, wide
	}
	for i < len(src) {
		switch c := src[i]; c {
		case '\n':
			if depth == 0 {
				commit()
				return
			}
			i++
			line, lineStart, wide = line+1, i, false
		case '(', '[', '{':
			depth++
			i++
		case ')', ']', '}':
			if depth > 0 {
				depth--
			}
			i++
		case '#':
			for i < len(src) && src[i] != '\n' {
				if src[i] >= utf8.RuneSelf {
					wide = true
				}
				i++
			}
		case '"', '\'':
			if i+2 < len(src) && src[i+1] == c && src[i+2] == c {
				commit()
				return
			}
			j := i + 1
			for j < len(src) && src[j] != c && src[j] != '\n' {
				if src[j] == '\\' {
					j++
				} else if src[j] >= utf8.RuneSelf {
					wide = true
				}
				j++
			}
			if j >= len(src) || src[j] != c {
				commit()
				return
			}
			i = j + 1
		case '\\', '\r':
			commit()
			return
		default:
			if c >= utf8.RuneSelf {
				wide = true
			}
			i++
		}
	}
	commit()
}
