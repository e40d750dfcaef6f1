package syntax

import (
	"strings"

	"github.com/alecthomas/participle/v2/lexer"
	"github.com/phasec/phasec/diag"
)

// The builder works on a compact expression tree converted from participle's
// flat nodes. Conversion applies operator precedence (precedence climbing
// over "operand (op operand)*") and unquotes strings.

type astKind uint8

const (
	aName   astKind = iota // Name
	aInt                   // Text holds the literal
	aFloat                 // Text holds the literal
	aStr                   // Text holds the unquoted value
	aConst                 // Text is True, False or None
	aTuple                 // Items
	aList                  // Items
	aDict                  // Items are keys, Values values
	aAttr                  // X.Name
	aCall                  // X(Items), Keywords parallel to Items ("" when positional)
	aIndex                 // X[Items]
	aSlice                 // X:Y (either may be nil) inside an index
	aBinary                // X Op Y
	aUnary                 // Op X
)

// ast is one expression of the syntax tree.
type ast struct {
	Kind     astKind
	Span     diag.Span
	Name     string // aName, aAttr: the identifier; aBinary, aUnary: the operator
	Text     string // literal text or string value
	X, Y     *ast
	Items    []*ast
	Values   []*ast
	Keywords []string
	Paren    bool // written in parentheses (a parenthesized single value)
}

// spanOf converts participle positions to a diag.Span.
func spanOf(pos, end lexer.Position) diag.Span {
	s := diag.Span{File: pos.Filename, Line: pos.Line, Col: pos.Column}
	if end.Line > 0 {
		s.EndLine, s.EndCol = end.Line, end.Column
	} else {
		s.EndLine, s.EndCol = pos.Line, pos.Column
	}
	return s
}

// Dotted returns the dotted path of a chain of names ("R.nn.relu").
func (a *ast) Dotted() (string, bool) {
	switch a.Kind {
	case aName:
		return a.Name, true
	case aAttr:
		p, ok := a.X.Dotted()
		if !ok {
			return "", false
		}
		return p + "." + a.Name, true
	}
	return "", false
}

// callee returns the dotted name of a call's function, or "".
func (a *ast) callee() string {
	if a.Kind != aCall {
		return ""
	}
	s, _ := a.X.Dotted()
	return s
}

// kwarg returns the keyword argument named name.
func (a *ast) kwarg(name string) *ast {
	for i, k := range a.Keywords {
		if k == name {
			return a.Items[i]
		}
	}
	return nil
}

// describe names what an expression is, for "expected X, found Y" messages.
func (a *ast) describe() string {
	switch a.Kind {
	case aName:
		return "name " + a.Name
	case aInt, aFloat:
		return "number " + a.Text
	case aStr:
		return "string " + quoteShort(a.Text)
	case aConst:
		return a.Text
	case aTuple:
		return "a tuple"
	case aList:
		return "a list"
	case aDict:
		return "a dict"
	case aCall:
		if c := a.callee(); c != "" {
			return "a call of " + c
		}
		return "a call"
	case aAttr:
		if d, ok := a.Dotted(); ok {
			return d
		}
		return "an attribute"
	case aIndex:
		return "a subscript"
	case aSlice:
		return "a slice"
	case aBinary, aUnary:
		return "an expression with " + strings.TrimSpace(a.Name)
	}
	return "an expression"
}

func quoteShort(s string) string {
	if len(s) > 40 {
		s = s[:37] + "..."
	}
	return `"` + s + `"`
}

// Operator precedence, Python's table (higher binds tighter).
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

var binaryPrec = map[string]int{
	"or": precOr, "and": precAnd,
	"==": precCmp, "!=": precCmp, "<": precCmp, "<=": precCmp, ">": precCmp, ">=": precCmp,
	"|": precBitOr, "^": precBitXor, "&": precBitAnd, "<<": precShift, ">>": precShift,
	"+": precAdd, "-": precAdd, "*": precMul, "/": precMul, "//": precMul, "%": precMul,
	"**": precPow,
}

// converter turns participle nodes into ast values; it records problems
// (bad literals) as diagnostics.
type converter struct {
	diags *diag.List
}

func (c *converter) exprList(n *exprListNode) *ast {
	if len(n.Items) == 1 && !n.Comma {
		return c.expr(n.Items[0])
	}
	t := &ast{Kind: aTuple, Span: spanOf(n.Pos, n.EndPos)}
	for _, it := range n.Items {
		t.Items = append(t.Items, c.expr(it))
	}
	return t
}

// expr applies precedence climbing to the flat operand/operator sequence.
func (c *converter) expr(n *exprNode) *ast {
	if len(n.Tail) == 0 && len(n.Left.Prefix) == 0 {
		return c.primary(n.Left.Primary)
	}
	p := &climber{c: c, first: n.Left, tail: n.Tail}
	e := p.parse(precOr)
	return e
}

// climber walks the operand stream of one exprNode. Operand i is first (i
// == 0) or tail[i-1].Right; prefix operators of an operand are consumed
// one at a time (pre counts those already applied).
type climber struct {
	c     *converter
	first *unaryNode
	tail  []*binaryOp
	i     int // current operand
	pre   int // prefixes of the current operand already consumed
}

func (p *climber) operand() *unaryNode {
	if p.i == 0 {
		return p.first
	}
	return p.tail[p.i-1].Right
}

func (p *climber) parse(minPrec int) *ast {
	left := p.unary()
	for p.i < len(p.tail) {
		op := p.tail[p.i]
		prec := binaryPrec[op.Op]
		if prec < minPrec {
			break
		}
		p.i++
		p.pre = 0
		var right *ast
		if op.Op == "**" {
			right = p.parse(precUnary) // right associative; allows 2 ** -1
		} else {
			right = p.parse(prec + 1)
		}
		left = &ast{Kind: aBinary, Name: op.Op, X: left, Y: right, Span: joinSpan(left.Span, right.Span)}
	}
	return left
}

func (p *climber) unary() *ast {
	u := p.operand()
	if p.pre < len(u.Prefix) {
		op := u.Prefix[p.pre]
		start := u.Pos
		p.pre++
		var x *ast
		if op == "not" {
			x = p.parse(precCmp)
		} else {
			x = p.parse(precUnary)
		}
		sp := spanOf(start, start)
		return &ast{Kind: aUnary, Name: op, X: x, Span: joinSpan(sp, x.Span)}
	}
	return p.c.primary(u.Primary)
}

func joinSpan(a, b diag.Span) diag.Span {
	a.EndLine, a.EndCol = b.EndLine, b.EndCol
	return a
}

func (c *converter) primary(n *primaryNode) *ast {
	e := c.atom(n.Atom)
	for _, t := range n.Trailers {
		sp := spanOf(n.Pos, t.EndPos)
		switch {
		case t.Attr != nil:
			e = &ast{Kind: aAttr, X: e, Name: *t.Attr, Span: sp}
		case t.Call:
			call := &ast{Kind: aCall, X: e, Span: sp}
			for _, a := range t.Args {
				v := c.expr(a.Value)
				if a.Star != "" {
					c.diags.Add(spanOf(a.Pos, a.Pos), "", "expected an argument, found %s (star arguments are not supported)", a.Star)
				}
				kw := ""
				if a.Keyword != nil {
					kw = *a.Keyword
				}
				call.Items = append(call.Items, v)
				call.Keywords = append(call.Keywords, kw)
			}
			e = call
		default:
			idx := &ast{Kind: aIndex, X: e, Span: sp}
			for _, s := range t.Index {
				idx.Items = append(idx.Items, c.subscript(s))
			}
			if t.Comma && len(idx.Items) == 1 {
				idx.Items = []*ast{{Kind: aTuple, Items: idx.Items, Span: idx.Items[0].Span}}
			}
			e = idx
		}
	}
	return e
}

func (c *converter) subscript(s *subscript) *ast {
	sp := spanOf(s.Pos, s.EndPos)
	switch {
	case s.Colon:
		return &ast{Kind: aSlice, Y: c.optExpr(s.Upper2), Span: sp}
	case s.Slice:
		return &ast{Kind: aSlice, X: c.expr(s.Lower), Y: c.optExpr(s.Upper), Span: sp}
	}
	return c.expr(s.Lower)
}

func (c *converter) optExpr(n *exprNode) *ast {
	if n == nil {
		return nil
	}
	return c.expr(n)
}

func (c *converter) atom(n *atomNode) *ast {
	sp := spanOf(n.Pos, n.EndPos)
	switch {
	case n.Name != nil:
		return &ast{Kind: aName, Name: *n.Name, Span: sp}
	case n.Float != nil:
		return &ast{Kind: aFloat, Text: *n.Float, Span: sp}
	case n.Int != nil:
		return &ast{Kind: aInt, Text: *n.Int, Span: sp}
	case n.Str != nil:
		var b strings.Builder
		for _, s := range n.Str {
			v, err := unquote(s)
			if err != nil {
				c.diags.Add(sp, "", "bad string literal %s: %v", s, err)
			}
			b.WriteString(v)
		}
		return &ast{Kind: aStr, Text: b.String(), Span: sp}
	case n.Const != nil:
		return &ast{Kind: aConst, Text: *n.Const, Span: sp}
	case n.Paren != nil:
		if len(n.Paren.Items) == 1 && !n.Paren.Comma {
			e := c.expr(n.Paren.Items[0])
			e.Paren = true
			return e
		}
		if len(n.Paren.Items) == 0 && n.Paren.Comma {
			c.diags.Add(sp, "", "expected an expression before \",\", found \",\"")
		}
		t := &ast{Kind: aTuple, Span: sp}
		for _, it := range n.Paren.Items {
			t.Items = append(t.Items, c.expr(it))
		}
		return t
	case n.List != nil:
		t := &ast{Kind: aList, Span: sp}
		for _, it := range n.List.Items {
			t.Items = append(t.Items, c.expr(it))
		}
		return t
	case n.Dict != nil:
		t := &ast{Kind: aDict, Span: sp}
		for _, en := range n.Dict.Entries {
			t.Items = append(t.Items, c.expr(en.Key))
			t.Values = append(t.Values, c.expr(en.Value))
		}
		return t
	}
	return &ast{Kind: aConst, Text: "None", Span: sp}
}

// unquote decodes a Python string literal: '...', "..." or triple-quoted,
// with the common backslash escapes.
func unquote(s string) (string, error) {
	var body string
	switch {
	case len(s) >= 6 && (strings.HasPrefix(s, `"""`) || strings.HasPrefix(s, `'''`)):
		body = s[3 : len(s)-3]
	case len(s) >= 2:
		body = s[1 : len(s)-1]
	default:
		return s, errBadString
	}
	if !strings.Contains(body, `\`) {
		return body, nil
	}
	var b strings.Builder
	for i := 0; i < len(body); i++ {
		ch := body[i]
		if ch != '\\' || i+1 == len(body) {
			b.WriteByte(ch)
			continue
		}
		i++
		switch body[i] {
		case 'n':
			b.WriteByte('\n')
		case 't':
			b.WriteByte('\t')
		case 'r':
			b.WriteByte('\r')
		case '0':
			b.WriteByte(0)
		case '\\', '\'', '"':
			b.WriteByte(body[i])
		case '\n':
		default:
			b.WriteByte('\\')
			b.WriteByte(body[i])
		}
	}
	return b.String(), nil
}

type stringError string

func (e stringError) Error() string { return string(e) }

const errBadString = stringError("unterminated string")
