package syntax

import (
	"strings"

	"github.com/alecthomas/participle/v2/lexer"
	"github.com/phasec/phasec/diag"
)

// The builder works on a compact expression tree, built while parsing
// (grammar_expr.go): operators are nested by precedence and strings are
// unquoted.

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
	aLambda                // lambda Items: X
	aStar                  // *X: a starred argument or item, expanded by the converter (build_star.go)
)

// ast is one expression of the syntax tree.
type ast struct {
	Kind     astKind
	Paren    bool // written in parentheses (a parenthesized single value)
	Span     diag.Span
	Name     string // aName, aAttr: the identifier; aBinary, aUnary: the operator
	Text     string // literal text or string value; aAttr: the dotted path when X has one (see Dotted)
	X, Y     *ast
	Items    []*ast
	Values   []*ast
	Keywords []string
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
		if a.Text != "" {
			return a.Text, true
		}
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
	case aLambda:
		return "a lambda"
	case aStar:
		return "a starred expression"
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

// converter hands out the ast of parsed expressions and reports the
// problems found while parsing them (they do not stop parsing).
type converter struct {
	diags *diag.List
	// expandStar returns the items a starred operand stands for (the
	// builder's starItems); nil in tests that build no module.
	expandStar func(operand *ast) []*ast
}

func (c *converter) exprList(n *exprListNode) *ast {
	if len(n.Items) == 1 && !n.Comma {
		return c.expr(n.Items[0])
	}
	t := &ast{Kind: aTuple, Span: spanOf(n.Pos, n.EndPos), Items: make([]*ast, len(n.Items))}
	for i, it := range n.Items {
		t.Items[i] = c.expr(it)
	}
	return t
}

func (c *converter) expr(n *exprNode) *ast {
	for _, pr := range n.problems {
		c.diags.Add(pr.span, "", "%s", pr.msg)
	}
	if n.stars && c.expandStar != nil {
		c.expandStars(n.tree)
		n.stars = false // expanded in place
	}
	return n.tree
}

func joinSpan(a, b diag.Span) diag.Span {
	a.EndLine, a.EndCol = b.EndLine, b.EndCol
	return a
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
