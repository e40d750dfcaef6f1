package op

import (
	"fmt"
	"slices"
	"strings"

	"github.com/phasec/phasec/ir"
)

// Tensor layouts with split axes, after TVM v0.23's tir::Layout and
// tir::BijectiveLayout (include/tvm/tir/data_layout.h,
// src/tir/ir/data_layout.cc).
//
// A layout string names the axes of a tensor in order. An upper-case letter
// is a primal axis (N, C, H, W, O, I, ...); a block size followed by a
// lower-case letter is a subordinate axis, the inner part of the primal axis
// of the same letter: NCHW16c holds element (n, c, h, w) of an NCHW tensor
// at (n, c/16, h, w, c%16), and its C axis counts blocks of 16 channels.
// The primal layout of a split one is its primal axes in order (NCHW16c:
// NCHW, NHWC4c: NHWC); ops compute in it (TVM's struct-info inference goes
// through the bijective layout to the primal layout and back).
//
// Invariants of a parsed layout: every axis letter occurs once as a primal
// axis and at most once as a subordinate one, and a subordinate axis has its
// primal axis somewhere in the layout and a positive block size. TVM accepts
// a few strings phasec rejects as meaningless: trailing digits ("NCHW16"
// parses as NCHW), and an axis split twice ("NCHW4c4c").

// tensorLayout is a parsed layout.
type tensorLayout struct {
	name string
	axes []layoutAxis
	// For each primal axis in primal order: its position, its block size
	// (1 when unsplit) and the position of its subordinate axis (-1).
	pos, sub []int
	factor   []int64
}

// layoutAxis is one axis of a layout: a primal axis (factor 0) or a
// subordinate one, a block of factor indices of its primal axis.
type layoutAxis struct {
	letter byte  // upper case: the primal axis it is or belongs to
	factor int64 // 0 for a primal axis
}

// parseLayout parses s; the error names the character of s at fault.
func parseLayout(s string) (*tensorLayout, error) {
	l := &tensorLayout{name: s}
	var factor int64
	start := -1 // offset of the first digit of the pending factor
	for i := range len(s) {
		c := s[i]
		switch {
		case c >= '0' && c <= '9':
			if start < 0 {
				start = i
			}
			factor = factor*10 + int64(c-'0')
			if factor > 1<<31 {
				return nil, fmt.Errorf("the block size at offset %d is too large", start)
			}
		case c >= 'A' && c <= 'Z':
			if start >= 0 {
				return nil, fmt.Errorf("the block size %s at offset %d precedes the primal axis %c: a block size names a subordinate (lower-case) axis, as in 16c", s[start:i], start, c)
			}
			l.axes = append(l.axes, layoutAxis{letter: c})
		case c >= 'a' && c <= 'z':
			if start < 0 {
				return nil, fmt.Errorf("the subordinate axis %c at offset %d has no block size (write %d%c)", c, i, 4, c)
			}
			if factor == 0 {
				return nil, fmt.Errorf("the subordinate axis %c at offset %d has block size 0", c, i)
			}
			l.axes = append(l.axes, layoutAxis{letter: c - 'a' + 'A', factor: factor})
			factor, start = 0, -1
		default:
			return nil, fmt.Errorf("%q at offset %d is not an axis: axes are letters, subordinate ones preceded by their block size (NCHW16c)", c, i)
		}
	}
	if start >= 0 {
		return nil, fmt.Errorf("the block size %s at offset %d ends the layout: it must be followed by its subordinate axis (16c)", s[start:], start)
	}
	for i, a := range l.axes {
		for _, b := range l.axes[:i] {
			if a.letter == b.letter && (a.factor == 0) == (b.factor == 0) {
				if a.factor == 0 {
					return nil, fmt.Errorf("the axis %c occurs twice", a.letter)
				}
				return nil, fmt.Errorf("the axis %c is split twice", a.letter)
			}
		}
		if a.factor > 0 && l.primalPos(a.letter) < 0 {
			return nil, fmt.Errorf("the subordinate axis %d%c has no primal axis %c", a.factor, a.letter+'a'-'A', a.letter)
		}
	}
	for i, a := range l.axes {
		if a.factor == 0 {
			f, s := int64(1), l.subPos(a.letter)
			if s >= 0 {
				f = l.axes[s].factor
			}
			l.pos, l.sub, l.factor = append(l.pos, i), append(l.sub, s), append(l.factor, f)
		}
	}
	return l, nil
}

// primalPos is the position of the primal axis letter, -1 when absent.
func (l *tensorLayout) primalPos(letter byte) int {
	for i, a := range l.axes {
		if a.letter == letter && a.factor == 0 {
			return i
		}
	}
	return -1
}

// subPos is the position of letter's subordinate axis, -1 when unsplit.
func (l *tensorLayout) subPos(letter byte) int {
	for i, a := range l.axes {
		if a.letter == letter && a.factor > 0 {
			return i
		}
	}
	return -1
}

// rank is the number of axes of a tensor in the layout.
func (l *tensorLayout) rank() int { return len(l.axes) }

// split reports whether the layout has subordinate axes.
func (l *tensorLayout) split() bool { return len(l.pos) != len(l.axes) }

// primal is the layout of the primal axes alone, in order (NCHW16c: NCHW).
func (l *tensorLayout) primal() string {
	var b strings.Builder
	for _, a := range l.axes {
		if a.factor == 0 {
			b.WriteByte(a.letter)
		}
	}
	return b.String()
}

// checkPrimal reports an error unless the layout's primal axes are those
// of canonical (TVM's BijectiveLayout to the canonical layout is defined).
func (l *tensorLayout) checkPrimal(canonical string) error {
	p := l.primal()
	for i := range len(p) {
		if strings.IndexByte(canonical, p[i]) < 0 {
			return fmt.Errorf("it has the axis %c, which %s has not", p[i], canonical)
		}
	}
	for i := range len(canonical) {
		if strings.IndexByte(p, canonical[i]) < 0 {
			return fmt.Errorf("it lacks the axis %c of %s", canonical[i], canonical)
		}
	}
	return nil
}

// unsplitShape is TVM's ForwardShape to the primal layout: the shape, in
// primal order, of the tensor of shape dims in the layout. A subordinate
// axis whose extent is a constant other than its block size is an error;
// a symbolic one is trusted, as TVM does.
func (l *tensorLayout) unsplitShape(dims []ir.PrimExpr) ([]ir.PrimExpr, error) {
	factor, sub := l.factor, l.sub
	out := make([]ir.PrimExpr, len(factor))
	for j, pos := range l.pos {
		out[j] = dims[pos]
		if sub[j] < 0 {
			continue
		}
		if v, ok := ir.IntValue(dims[sub[j]]); ok && v != factor[j] {
			return nil, fmt.Errorf("axis %d (the block of %c in %s) has extent %d, the layout says %d", sub[j], l.axes[sub[j]].letter, l.name, v, factor[j])
		}
		out[j] = ir.Simplify(ir.Mul(dims[pos], ir.I64(factor[j])))
	}
	return out, nil
}

// splitShape is TVM's BackwardShape from the primal layout: the shape in
// the layout of the tensor of primal shape dims. A block size that does
// not divide its axis rounds the outer extent up (the extra elements are
// padding).
func (l *tensorLayout) splitShape(dims []ir.PrimExpr) []ir.PrimExpr {
	factor, sub := l.factor, l.sub
	out := make([]ir.PrimExpr, len(l.axes))
	for j, pos := range l.pos {
		if sub[j] < 0 {
			out[pos] = dims[j]
			continue
		}
		f := ir.I64(factor[j])
		out[pos] = ir.Simplify(ir.FloorDiv(ir.Add(dims[j], ir.I64(factor[j]-1)), f))
		out[sub[j]] = f
	}
	return out
}

// unsplitInts and splitInts are the shape maps on constant shapes.
func (l *tensorLayout) unsplitInts(dims []int64) []int64 {
	factor := l.factor
	out := make([]int64, len(factor))
	for j, pos := range l.pos {
		out[j] = dims[pos] * factor[j]
	}
	return out
}

func (l *tensorLayout) splitInts(dims []int64) []int64 {
	factor, sub := l.factor, l.sub
	out := make([]int64, len(l.axes))
	for j, pos := range l.pos {
		out[pos] = (dims[j] + factor[j] - 1) / factor[j]
		if sub[j] >= 0 {
			out[sub[j]] = factor[j]
		}
	}
	return out
}

// primalIndex is TVM's ForwardIndex: the primal index of the element at
// index idx of the layout (outer * block + inner).
func (l *tensorLayout) primalIndex(idx []ir.PrimExpr) []ir.PrimExpr {
	factor, sub := l.factor, l.sub
	out := make([]ir.PrimExpr, len(factor))
	for j, pos := range l.pos {
		out[j] = idx[pos]
		if sub[j] >= 0 {
			out[j] = ir.Add(ir.Mul(idx[pos], ir.I64(factor[j])), idx[sub[j]])
		}
	}
	return out
}

// layoutIndex is TVM's BackwardIndex: the index in the layout of the
// element at primal index p (p / block, p % block).
func (l *tensorLayout) layoutIndex(p []ir.PrimExpr) []ir.PrimExpr {
	factor, sub := l.factor, l.sub
	out := make([]ir.PrimExpr, len(l.axes))
	for j, pos := range l.pos {
		out[pos] = p[j]
		if sub[j] >= 0 {
			f := ir.I64(factor[j])
			out[pos], out[sub[j]] = ir.FloorDiv(p[j], f), ir.FloorMod(p[j], f)
		}
	}
	return out
}

// primalIndexInts is primalIndex on constant indices, into out.
func (l *tensorLayout) primalIndexInts(idx, out []int64) {
	factor, sub := l.factor, l.sub
	for j, pos := range l.pos {
		out[j] = idx[pos]
		if sub[j] >= 0 {
			out[j] = idx[pos]*factor[j] + idx[sub[j]]
		}
	}
}

// parseLayoutAttr parses the layout attribute attr of op; the error names
// the attribute, the string and the character at fault.
func parseLayoutAttr(op *ir.Op, attr, s string) (*tensorLayout, error) {
	l, err := parseLayout(s)
	if err != nil {
		return nil, opErrorf(op, "%s %q is not a layout: %v", attr, s, err)
	}
	return l, nil
}

// --- split layouts in ConvertLayout's decisions ------------------------------

// IsSplitLayout reports whether a layout (or a layout decision, "ABCD4b")
// splits an axis.
func IsSplitLayout(s string) bool {
	return strings.ContainsFunc(s, func(r rune) bool { return r >= '0' && r <= '9' || r >= 'a' && r <= 'z' })
}

// transposeSubLayoutLike writes desired, a layout over src's letters, in
// ref's letters: each axis of desired names the axis ref has where src has
// it (TVM's TransposeSubLayoutStrLike). transposeSubLayoutLike("ABCD",
// "NCHW", "NHWC4c") is "ACDB4b".
func transposeSubLayoutLike(ref, src, desired string) string {
	out := make([]byte, 0, len(desired))
	for i := range len(desired) {
		switch c := desired[i]; {
		case c >= 'A' && c <= 'Z':
			out = append(out, ref[strings.IndexByte(src, c)])
		case c >= 'a' && c <= 'z':
			out = append(out, ref[strings.IndexByte(src, c-'a'+'A')]-'A'+'a')
		default:
			out = append(out, c)
		}
	}
	return string(out)
}

// canProveLayoutTransform reports whether a tensor of the given shape in
// layout from converts to layout to and back without padding (TVM's
// CanProveLayoutTransform): every block size of to divides its axis where
// the axis's extent is a constant. Layouts that do not parse, or do not
// have the same primal axes, cannot convert. With strict, a symbolic
// extent must be a provable multiple too (TVM trusts it).
func canProveLayoutTransform(from, to string, shape []ir.PrimExpr, strict bool) bool {
	lf, err1 := parseLayout(from)
	lt, err2 := parseLayout(to)
	if err1 != nil || err2 != nil || lf.checkPrimal(lt.primal()) != nil || len(shape) != lf.rank() {
		return false
	}
	extents, err := lf.unsplitShape(shape)
	if err != nil {
		return false
	}
	for j, pos := range lt.pos {
		if lt.sub[j] < 0 {
			continue
		}
		e := extents[slices.Index(lf.pos, lf.primalPos(lt.axes[pos].letter))]
		if n, ok := ir.IntValue(e); ok && n%lt.factor[j] != 0 {
			return false
		}
		if r, ok := ir.IntValue(ir.Simplify(ir.FloorMod(e, ir.I64(lt.factor[j])))); strict && (!ok || r != 0) {
			return false
		}
	}
	return true
}

// LayoutTransformMap is the index map of R.layout_transform from layout
// decision from to layout decision to (both over the same primal axes,
// either split): each index of from goes to the index of to holding the
// same element (TVM's BijectiveLayout index rules, as ConvertLayout's
// RewriteExpr emits them: lambda i0, i1, i2, i3: (i0, i1 // 4, i2, i3,
// i1 % 4) from ABCD to ABCD4b).
func LayoutTransformMap(from, to string) (*ir.IndexMap, bool) {
	lf, err1 := parseLayout(from)
	lt, err2 := parseLayout(to)
	if err1 != nil || err2 != nil || lf.checkPrimal(lt.primal()) != nil {
		return nil, false
	}
	m := &ir.IndexMap{Params: make([]*ir.PrimVar, lf.rank())}
	idx := make([]ir.PrimExpr, lf.rank())
	for i := range m.Params {
		m.Params[i] = ir.NewPrimVar("i"+itoa(i), ir.Int64)
		idx[i] = m.Params[i]
	}
	primal := lf.primalIndex(idx) // in from's primal order
	byLetter := make([]ir.PrimExpr, len(lt.pos))
	for j, pos := range lt.pos {
		byLetter[j] = primal[slices.Index(lf.pos, lf.primalPos(lt.axes[pos].letter))]
	}
	m.Results = lt.layoutIndex(byLetter)
	for i, r := range m.Results {
		m.Results[i] = ir.Simplify(r)
	}
	return m, true
}
