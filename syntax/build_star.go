package syntax

import (
	"strconv"

	"github.com/phasec/phasec/ir"
)

// Starred items. TVMScript is Python, so TVM's parser evaluates
// T.grid(*A.shape) or T.axis.remap("SS", [*iters]) before building the IR
// (python/tvm/script/parser/core/evaluator.py). phasec has no Python
// evaluator: it expands a star statically when the converter hands out the
// expression, splicing the items its operand stands for into the enclosing
// call, tuple or list. An operand it cannot expand is a positioned error.
//
// The operands phasec expands:
//   - a tuple or list display: *(a, b), *[a, b];
//   - a buffer's shape in TIR: *A.shape is A.shape[0], A.shape[1], ...;
//   - a loop group: *iters, where "for iters in T.grid(...)" bound it.

// expandStars replaces, in every call, tuple and list of the tree a, each
// starred item by the items its operand stands for. Its recursion follows
// the expression's nesting, which the parser bounds (maxExprDepth).
func (c *converter) expandStars(a *ast) {
	if a == nil {
		return
	}
	c.expandStars(a.X)
	c.expandStars(a.Y)
	for _, v := range a.Values {
		c.expandStars(v)
	}
	star := false
	for _, it := range a.Items {
		c.expandStars(it)
		star = star || it.Kind == aStar
	}
	if !star {
		return
	}
	items := make([]*ast, 0, len(a.Items)+2)
	var kws []string
	for i, it := range a.Items {
		if it.Kind != aStar {
			items = append(items, it)
			if a.Keywords != nil {
				kws = append(kws, a.Keywords[i])
			}
			continue
		}
		spliced := c.expandStar(it.X)
		items = append(items, spliced...)
		if a.Keywords != nil {
			for range spliced {
				kws = append(kws, "")
			}
		}
	}
	a.Items = items
	if a.Keywords != nil {
		a.Keywords = kws
	}
}

// starItems returns the items the operand of a star stands for, or fails
// at the operand.
func (bd *builder) starItems(x *ast) []*ast {
	switch x.Kind {
	case aTuple, aList:
		return x.Items
	case aName:
		if bd.tir != nil {
			if g := bd.loopGroup(x); g != nil {
				return g
			}
		}
	case aAttr:
		if buf := bd.shapeOf(x); buf != nil {
			out := make([]*ast, len(buf.Shape))
			for k := range buf.Shape {
				out[k] = &ast{Kind: aIndex, X: x, Span: x.Span,
					Items: []*ast{{Kind: aInt, Text: strconv.Itoa(k), Span: x.Span}}}
			}
			return out
		}
	}
	bd.fail(x.Span, "cannot expand the starred %s statically: phasec expands a tuple or list, a TIR buffer's .shape, or a loop group bound by \"for iters in T.grid(...)\"", x.describe())
	return nil
}

// shapeOf returns the buffer A of "A.shape" in a PrimFunc, or nil.
func (bd *builder) shapeOf(a *ast) *ir.Buffer {
	if bd.tir == nil || a.Kind != aAttr || a.Name != "shape" || a.X.Kind != aName {
		return nil
	}
	if s := bd.lookup(a.X.Name); s != nil && s.buf != nil {
		return s.buf
	}
	return nil
}

// shapeItem converts A.shape[k], a dimension of a TIR buffer.
func (bd *builder) shapeItem(a *ast, buf *ir.Buffer) ir.PrimExpr {
	if len(a.Items) != 1 || a.Items[0].Kind != aInt {
		bd.fail(a.Span, "expected %s.shape[k] with an integer k", buf.Name)
	}
	k, _ := bd.number(a.Items[0], false).(int64)
	if k < 0 || k >= int64(len(buf.Shape)) {
		bd.fail(a.Items[0].Span, "index %d out of range: buffer %s has %s", k, buf.Name, plural(len(buf.Shape), "dimension"))
	}
	return buf.Shape[k]
}
