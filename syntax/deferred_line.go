package syntax

import (
	"github.com/alecthomas/participle/v2/lexer"

	"github.com/phasec/phasec/diag"
)

// lineReader reads the common deferred statements again straight from
// their bytes, without the token stream: "name = f(args)" and
// "name: annotation = f(args)" written on one line of ASCII text, with
// names, dotted names, calls (positional and keyword arguments), decimal
// integers, plain string literals, True/False/None, tuples and lists as
// operands. It builds exactly the syntax the statement reader builds for
// such a line (the same nodes, spans and dotted paths, in the same arena),
// so the builder cannot tell the two apart; TestLineReader checks that on
// every deferred statement of the corpus.
//
// It is a fast path, not a second grammar: whatever it does not recognize
// (an operator, a float, a line that goes on, a comment with non-ASCII
// text, a syntax error) makes it give up before it has built anything the
// builder sees, and the statement reader reads the statement instead.
// Re-reading through the token stream was half of Parse's time on a large
// module: each statement was scanned into 64-byte tokens twice.
type lineReader struct {
	src, file string
	i         int // next byte
	line      int
	lineStart int // offset of column 1 of line
	depth     int // open brackets and trailers, bounded by maxLineDepth
	arena     *stmtArena
}

// maxLineDepth bounds the nesting the line reader takes on; deeper lines
// (rare) go to the statement reader and its own bound.
const maxLineDepth = 32

// read returns the statement st stands for, in the arena, or nil when the
// statement reader must read it.
func (r *lineReader) read(st *stmtNode) *stmtNode {
	r.i, r.line, r.lineStart, r.depth = st.Pos.Offset, st.Pos.Line, st.Pos.Offset-(st.Pos.Column-1), 0
	m := r.arena
	m.reset()
	parts := &m.parts
	*parts = assignParts{}
	as := &parts.as
	as.Pos = st.Pos
	if !r.list(&parts.target) {
		return nil
	}
	as.Target = &parts.target
	if r.at(':') {
		r.i++
		r.blank()
		annot, ok := r.expr()
		if !ok {
			return nil
		}
		parts.annot.tree = annot
		as.Annot = &parts.annot
	}
	if r.at('=') && !r.atPair('=', '=') {
		r.i++
		r.blank()
		if !r.list(&parts.value) {
			return nil
		}
		as.Value = &parts.value
	}
	if !r.at('\n') {
		return nil
	}
	m.simple = simpleNode{Pos: st.Pos, EndPos: st.EndPos, Expr: as}
	m.stmt = stmtNode{Pos: st.Pos, EndPos: st.EndPos, Simple: &m.simple}
	return &m.stmt
}

func (r *lineReader) at(c byte) bool { return r.i < len(r.src) && r.src[r.i] == c }

func (r *lineReader) atPair(c, d byte) bool {
	return r.i+1 < len(r.src) && r.src[r.i] == c && r.src[r.i+1] == d
}

// pos is the position of byte offset off of the current line (ASCII up to
// off, so columns count bytes).
func (r *lineReader) pos(off int) lexer.Position {
	return lexer.Position{Filename: r.file, Offset: off, Line: r.line, Column: off - r.lineStart + 1}
}

// span is the span from byte offset from to byte offset to of the line.
func (r *lineReader) span(from, to int) diag.Span {
	return diag.Span{File: r.file, Line: r.line, Col: from - r.lineStart + 1, EndLine: r.line, EndCol: to - r.lineStart + 1}
}

// node returns a zeroed node of kind k from the arena.
func (r *lineReader) node(k astKind) *ast {
	a := r.arena.node()
	a.Kind = k
	return a
}

// blank skips blanks, and a comment up to the line break when it is ASCII
// (the line break's column, where the last nodes end, counts runes).
func (r *lineReader) blank() {
	src, i := r.src, r.i
	for i < len(src) && (src[i] == ' ' || src[i] == '\t' || src[i] == '\f') {
		i++
	}
	if i < len(src) && src[i] == '#' {
		j := i
		for j < len(src) && src[j] != '\n' && src[j] < 0x80 {
			j++
		}
		if j < len(src) && src[j] == '\n' {
			i = j
		}
	}
	r.i = i
}

// list reads an expression list of one item (a tuple without parentheses
// goes to the statement reader).
func (r *lineReader) list(n *exprListNode) bool {
	n.Pos = r.pos(r.i)
	e, ok := r.expr()
	if !ok || r.at(',') {
		return false
	}
	m := r.arena
	if m.nlists == len(m.lists) {
		return false
	}
	one := &m.lists[m.nlists]
	m.nlists++
	one.node = exprNode{tree: e}
	one.items[0] = &one.node
	n.Items, n.EndPos = one.items[:1:1], r.pos(r.i)
	return true
}

// expr reads an operand and checks that no operator follows it.
func (r *lineReader) expr() (*ast, bool) {
	e, ok := r.primary()
	if !ok || r.i >= len(r.src) {
		return nil, false
	}
	switch r.src[r.i] {
	case ',', ')', ']', ':', '\n':
		return e, true
	case '=':
		return e, !r.atPair('=', '=')
	}
	return nil, false
}

// primary reads an atom and its trailers (attributes and calls; the
// subscripts of Relax bindings are rare enough for the statement reader).
// Each trailer counts toward the depth bound, as in exprReader.
func (r *lineReader) primary() (*ast, bool) {
	entry := r.depth
	e, ok := r.trailers()
	r.depth = entry
	return e, ok
}

func (r *lineReader) trailers() (*ast, bool) {
	start := r.i
	e, ok := r.atom()
	for ok && r.i < len(r.src) {
		c := r.src[r.i]
		if c == '.' || c == '(' {
			if r.depth++; r.depth > maxLineDepth {
				return nil, false
			}
		}
		switch c {
		case '.':
			r.i++
			r.blank()
			nameOff := r.i
			name, isName := r.name()
			if !isName {
				return nil, false
			}
			r.blank()
			x := e
			e = r.node(aAttr)
			e.X, e.Name, e.Text, e.Span = x, name, dottedPath(r.src, x, start, nameOff, name), r.span(start, r.i)
		case '(':
			e, ok = r.call(e, start)
		default:
			return e, true
		}
	}
	return e, ok
}

// ident returns the end of the identifier at r.i, or -1 when there is
// none or it runs into non-ASCII text.
func (r *lineReader) ident() int {
	src, i := r.src, r.i
	if i >= len(src) || !isLetter(src[i]) {
		return -1
	}
	j := i + 1
	for j < len(src) && (isLetter(src[j]) || isDigit(src[j])) {
		j++
	}
	if j < len(src) && src[j] >= 0x80 {
		return -1
	}
	return j
}

// name scans an identifier that is not a keyword.
func (r *lineReader) name() (string, bool) {
	j := r.ident()
	if j < 0 || isKeyword(r.src[r.i:j]) {
		return "", false
	}
	s := r.src[r.i:j]
	r.i = j
	return s, true
}

func (r *lineReader) atom() (*ast, bool) {
	src, i := r.src, r.i
	if i >= len(src) {
		return nil, false
	}
	var a *ast
	switch c := src[i]; {
	case isLetter(c):
		j := r.ident()
		if j < 0 {
			return nil, false
		}
		switch id := src[i:j]; {
		case !isKeyword(id):
			a = r.node(aName)
			a.Name = id
		case id == "True" || id == "False" || id == "None":
			a = r.node(aConst)
			a.Text = id
		default:
			return nil, false
		}
		r.i = j
	case isDigit(c):
		j := i + 1
		for j < len(src) && isDigit(src[j]) {
			j++
		}
		if j < len(src) && (isLetter(src[j]) || src[j] == '.' || src[j] >= 0x80) {
			return nil, false // a float, a hex or malformed literal
		}
		a = r.node(aInt)
		a.Text, r.i = src[i:j], j
	case c == '"' || c == '\'':
		j := i + 1
		for j < len(src) && src[j] != c && src[j] != '\\' && src[j] != '\n' && src[j] < 0x80 {
			j++
		}
		if j == i+1 || j >= len(src) || src[j] != c {
			return nil, false // empty or triple-quoted, an escape, unterminated
		}
		a = r.node(aStr)
		a.Text, r.i = src[i+1:j], j+1
	case c == '(' || c == '[':
		return r.bracketed(i)
	default:
		return nil, false
	}
	r.blank()
	if a.Kind == aStr && (r.at('"') || r.at('\'')) {
		return nil, false // adjacent literals concatenate
	}
	a.Span = r.span(i, r.i)
	return a, true
}

// bracketed reads (), (e), (e,), (e1, e2, ...) and [e1, ...].
func (r *lineReader) bracketed(open int) (*ast, bool) {
	closing := byte(')')
	if r.src[r.i] == '[' {
		closing = ']'
	}
	r.i++
	r.blank()
	items, _ := r.arena.argSlices()
	comma := false
	items, comma, ok := r.items(items, nil, closing)
	if !ok {
		return nil, false
	}
	if closing == ')' && len(items) == 1 && !comma {
		items[0].Paren = true
		return items[0], true
	}
	kind := aTuple
	if closing == ']' {
		kind = aList
	}
	a := r.node(kind)
	a.Items, a.Span = items, r.span(open, r.i)
	return a, true
}

// items reads "e1, e2, ..." up to and including closing; with kws non-nil,
// arguments (name=value or value) whose keywords go to kws.
func (r *lineReader) items(items []*ast, kws *[]string, closing byte) ([]*ast, bool, bool) {
	if r.depth++; r.depth > maxLineDepth {
		return nil, false, false
	}
	comma := false
	for !r.at(closing) {
		if kws != nil {
			kw := ""
			if save := r.i; r.i < len(r.src) && isLetter(r.src[r.i]) {
				if name, ok := r.name(); ok {
					r.blank()
					if r.at('=') && !r.atPair('=', '=') {
						kw = name
						r.i++
						r.blank()
					} else {
						r.i = save
					}
				}
			}
			*kws = append(*kws, kw)
		}
		e, ok := r.expr()
		if !ok {
			return nil, false, false
		}
		items = append(items, e)
		if !r.at(',') {
			break
		}
		r.i++
		r.blank()
		comma = true
	}
	if !r.at(closing) {
		return nil, false, false
	}
	r.i++
	r.blank()
	r.depth--
	return items, comma, true
}

// call reads the argument list of fn(...).
func (r *lineReader) call(fn *ast, start int) (*ast, bool) {
	r.i++
	r.blank()
	items, kws := r.arena.argSlices()
	items, _, ok := r.items(items, &kws, ')')
	if !ok {
		return nil, false
	}
	call := r.node(aCall)
	call.X, call.Items, call.Keywords, call.Span = fn, items, kws, r.span(start, r.i)
	return call, true
}
