package onnx

import (
	"fmt"
	"math"
	"sort"
	"strings"

	"github.com/phasec/phasec/ir"
	"github.com/phasec/phasec/op"
)

// Ops TVM's frontend has no (or no Relax) converter for that map onto
// phasec's ops: ReverseSequence as a gather_elements, NonZero as a
// compaction of positions, Det by Leibniz's formula, MaxPool's Indices,
// MaxUnpool as a scatter, and Einsum's ellipsis spelled out in letters.

func registerExtra() {
	converters["ReverseSequence"] = convertReverseSequence
	converters["NonZero"] = convertNonZero
	converters["Det"] = convertDet
	converters["MaxUnpool"] = convertMaxUnpool
	converters["GridSample"] = convertGridSample
	converters["Unique"] = convertUnique
}

// convertReverseSequence reverses the first lens[b] entries along
// time_axis of each batch b: gather_elements along time_axis at index
// t < lens[b] ? lens[b]-1-t : t, broadcast over the other axes.
func convertReverseSequence(c *nodeCtx) ([]ir.Expr, error) {
	x, err := c.arg(0)
	if err != nil {
		return nil, err
	}
	dims, err := c.dims(0)
	if err != nil {
		return nil, err
	}
	r := len(dims)
	bAxis, err := normAxis(c.attrInt("batch_axis", 1), r)
	if err != nil {
		return nil, err
	}
	tAxis, err := normAxis(c.attrInt("time_axis", 0), r)
	if err != nil {
		return nil, err
	}
	if bAxis == tAxis || r < 2 {
		return nil, fmt.Errorf("batch_axis and time_axis must be two different axes")
	}
	lens, err := c.arg(1)
	if err != nil {
		return nil, err
	}
	shapeAlong := func(axis int, n ir.PrimExpr) *ir.ShapeExpr {
		s := make([]ir.PrimExpr, r)
		for i := range s {
			s[i] = ir.I64(1)
		}
		s[axis] = n
		return shapeExpr(s)
	}
	t := c.emitOp(op.Reshape, nil, c.arangeN(dims[tAxis]), shapeAlong(tAxis, dims[tAxis]))
	l := c.emitOp(op.Reshape, nil, c.i64(lens), shapeAlong(bAxis, dims[bAxis]))
	rev := c.bin(op.Subtract, c.bin(op.Subtract, l, ic(1)), t)
	idx := c.emitOp(op.Where, nil, c.bin(op.Less, t, l), rev, t)
	idx = c.emitOp(op.BroadcastTo, nil, idx, shapeExpr(dims))
	return one(c.emitOp(op.GatherElements, ir.Attrs{"axis": int64(tAxis)}, x, idx))
}

// convertNonZero: the flat positions of the non-zero elements, their
// count a fresh dimension (TVM's nonzero and match_cast), compacted
// (position p is the number of flat indices with at most p non-zeros up
// to and including them), then unravelled into one row per axis.
func convertNonZero(c *nodeCtx) ([]ir.Expr, error) {
	x, err := c.arg(0)
	if err != nil {
		return nil, err
	}
	in, ok := c.staticShape(0)
	if !ok {
		return nil, unsupported("NonZero of an input of non-static shape")
	}
	total := int64(1)
	for _, d := range in {
		total *= d
	}
	flat := c.emitOp(op.Reshape, nil, x, shapeExpr(i64Dims([]int64{total})))
	keep := c.i64(c.bin(op.NotEqual, flat, scalarConst(0, dtypeOf(x))))
	n := c.dynScalar(c.emitOp(op.Sum, ir.Attrs{"axis": anyInts([]int64{0}), "keepdims": false}, keep))
	cnt := c.emitOp(op.Cumsum, ir.Attrs{"axis": int64(0), "exclusive": false}, keep)
	p := c.emitOp(op.ExpandDims, ir.Attrs{"axis": anyInts([]int64{1})}, c.arangeN(n))
	j := c.emitOp(op.Sum, ir.Attrs{"axis": anyInts([]int64{1}), "keepdims": false}, c.i64(c.bin(op.LessEqual, cnt, p)))
	rows := make([]ir.Expr, len(in))
	stride := total
	for k, d := range in {
		stride /= max(d, 1)
		v := c.bin(op.FloorDivide, j, ic(stride))
		v = c.bin(op.FloorMod, v, ic(max(d, 1)))
		rows[k] = c.emitOp(op.ExpandDims, ir.Attrs{"axis": anyInts([]int64{0})}, v)
	}
	if len(rows) == 1 {
		return one(rows[0])
	}
	return one(c.emitOp(op.Concat, ir.Attrs{"axis": int64(0)}, ir.NewTuple(rows...)))
}

// expandEllipsis rewrites an einsum equation's "..." into letters the
// equation does not use, as many as each operand's rank leaves, right
// aligned (broadcast) across operands; an implicit output lists the
// ellipsis letters first, then the letters used once in sorted order.
func expandEllipsis(eq string, ranks []int) (string, error) {
	lhs, rhs, explicit := strings.Cut(strings.ReplaceAll(eq, " ", ""), "->")
	ops := strings.Split(lhs, ",")
	if len(ops) != len(ranks) {
		return "", fmt.Errorf("equation %q has %d operands, the node %d inputs", eq, len(ops), len(ranks))
	}
	used := map[rune]bool{}
	for _, r := range eq {
		used[r] = true
	}
	var free []rune
	for r := 'A'; r <= 'z' && len(free) < 64; r++ {
		if (r <= 'Z' || r >= 'a') && !used[r] {
			free = append(free, r)
		}
	}
	most := 0
	for i, o := range ops {
		if !strings.Contains(o, "...") {
			continue
		}
		n := ranks[i] - (len(o) - 3)
		if n < 0 {
			return "", fmt.Errorf("operand %d (%q) has rank %d", i, o, ranks[i])
		}
		most = max(most, n)
	}
	if most > len(free) {
		return "", fmt.Errorf("too many ellipsis axes")
	}
	ell := string(free[:most])
	for i, o := range ops {
		if strings.Contains(o, "...") {
			n := ranks[i] - (len(o) - 3)
			ops[i] = strings.Replace(o, "...", ell[most-n:], 1)
		}
	}
	if explicit {
		rhs = strings.Replace(rhs, "...", ell, 1)
	} else {
		count := map[rune]int{}
		for _, o := range ops {
			for _, r := range o {
				count[r]++
			}
		}
		var once []string
		for r, n := range count {
			if n == 1 && !strings.ContainsRune(ell, r) {
				once = append(once, string(r))
			}
		}
		sort.Strings(once)
		rhs = ell + strings.Join(once, "")
	}
	return strings.Join(ops, ",") + "->" + rhs, nil
}

// maxPoolIndices is MaxPool's Indices output: the flat index
// ((n*C + c)*H + h)*W + w (storage_order 1: ((n*C + c)*W + w)*H + h)
// of each window's first maximum. For every
// kernel offset, the strided slice of the input padded with -inf that
// the offset visits is compared with the pooled y; the smallest flat
// index among the matches is the first in row-major window order.
func (c *nodeCtx) maxPoolIndices(x, y ir.Expr, o *convOpts) (ir.Expr, error) {
	in, ok := c.staticShape(0)
	yt, _ := y.StructInfo().(*ir.TensorInfo)
	var out []int64
	if yt != nil {
		if d, ok := yt.Dims(); ok {
			for _, e := range d {
				v, static := ir.IntValue(e)
				if !static {
					out = nil
					break
				}
				out = append(out, v)
			}
		}
	}
	if !ok || len(out) != len(in) {
		return nil, unsupported("MaxPool's Indices of a non-static shape")
	}
	r, sp := len(in), o.spatial
	width := make([]int64, 2*r)
	for i := range sp {
		a := 2 + i
		need := (out[a]-1)*o.strides[i] + (o.kernel[i]-1)*o.dilations[i] + 1
		after := max(o.pads[sp+i], need-in[a]-o.pads[i])
		width[2*a], width[2*a+1] = o.pads[i], after
	}
	padded := c.emitOp(op.Pad, ir.Attrs{"pad_width": anyInts(width), "pad_mode": "constant", "pad_value": math.Inf(-1)}, x)
	// flat index parts: one constant per axis, broadcast along it.
	// storage_order 1 numbers the spatial positions column-major.
	order := make([]int, 0, r)
	if c.attrInt("storage_order", 0) == 1 {
		for a := 2; a < r; a++ {
			order = append(order, a)
		}
	} else {
		for a := r - 1; a >= 2; a-- {
			order = append(order, a)
		}
	}
	order = append(order, 1, 0)
	strides := make([]int64, r)
	acc := int64(1)
	for _, a := range order {
		strides[a] = acc
		acc *= in[a]
	}
	along := func(a int, vals []int64) ir.Expr {
		shape := make([]int64, r)
		for i := range shape {
			shape[i] = 1
		}
		shape[a] = int64(len(vals))
		return c.emitOp(op.Reshape, nil, intsConst(vals), shapeExpr(i64Dims(shape)))
	}
	base := ir.Expr(nil)
	for a := range 2 {
		vals := make([]int64, out[a])
		for i := range vals {
			vals[i] = int64(i) * strides[a]
		}
		if base == nil {
			base = along(a, vals)
		} else {
			base = c.bin(op.Add, base, along(a, vals))
		}
	}
	var best ir.Expr
	offsets := make([]int64, sp)
	for {
		begin, end, step := make([]int64, sp), make([]int64, sp), make([]int64, sp)
		axes := make([]int64, sp)
		flat := base
		for i := range sp {
			a := 2 + i
			axes[i] = int64(a)
			begin[i] = offsets[i] * o.dilations[i]
			end[i] = begin[i] + (out[a]-1)*o.strides[i] + 1
			step[i] = o.strides[i]
			vals := make([]int64, out[a])
			for j := range vals {
				vals[j] = (int64(j)*o.strides[i] - o.pads[i] + begin[i]) * strides[a]
			}
			flat = c.bin(op.Add, flat, along(a, vals))
		}
		window := c.emitOp(op.StridedSlice, nil, padded, primTuple(axes), primTuple(begin), primTuple(end), primTuple(step))
		cand := c.emitOp(op.Where, nil, c.bin(op.Equal, window, y), flat, ic(acc))
		if best == nil {
			best = cand
		} else {
			best = c.emitOp(op.Minimum, nil, best, cand)
		}
		i := sp - 1
		for ; i >= 0; i-- {
			if offsets[i]++; offsets[i] < o.kernel[i] {
				break
			}
			offsets[i] = 0
		}
		if i < 0 {
			return best, nil
		}
	}
}

// convertDet is the determinant of the trailing n×n matrices by
// Leibniz's formula, sum over permutations s of sign(s) prod_i x[i,
// s(i)], for the small static n it is exact and cheap for (n <= 4; phasec
// has no LU op). TVM's Relax frontend has no Det converter.
func convertDet(c *nodeCtx) ([]ir.Expr, error) {
	x, err := c.arg(0)
	if err != nil {
		return nil, err
	}
	dims, err := c.dims(0)
	if err != nil {
		return nil, err
	}
	r := len(dims)
	if r < 2 {
		return nil, fmt.Errorf("Det needs a matrix, got rank %d", r)
	}
	n, ok := ir.IntValue(dims[r-1])
	if m, ok2 := ir.IntValue(dims[r-2]); !ok || !ok2 || m != n {
		return nil, unsupported("Det of non-square or non-static matrices")
	}
	if n > 4 {
		return nil, unsupported("Det of %d×%d matrices (Leibniz's formula is used up to 4×4)", n, n)
	}
	batch := shapeExpr(dims[:r-2])
	elem := make(map[[2]int64]ir.Expr)
	at := func(i, j int64) ir.Expr {
		if e, ok := elem[[2]int64{i, j}]; ok {
			return e
		}
		v := c.emitOp(op.StridedSlice, nil, x, primTuple([]int64{int64(r - 2), int64(r - 1)}), primTuple([]int64{i, j}), primTuple([]int64{i + 1, j + 1}), primTuple([]int64{1, 1}))
		v = c.emitOp(op.Reshape, nil, v, batch)
		elem[[2]int64{i, j}] = v
		return v
	}
	var det ir.Expr
	for _, p := range permutations(int(n)) {
		term := at(0, int64(p.perm[0]))
		for i := 1; i < int(n); i++ {
			term = c.bin(op.Multiply, term, at(int64(i), int64(p.perm[i])))
		}
		switch {
		case det == nil && p.sign > 0:
			det = term
		case det == nil:
			det = c.emitOp(op.Negative, nil, term)
		case p.sign > 0:
			det = c.bin(op.Add, det, term)
		default:
			det = c.bin(op.Subtract, det, term)
		}
	}
	return one(det)
}

type signedPerm struct {
	perm []int
	sign int
}

// permutations lists the permutations of 0..n-1 with their signs.
func permutations(n int) []signedPerm {
	out := []signedPerm{{perm: []int{}, sign: 1}}
	for k := range n {
		var next []signedPerm
		for _, p := range out {
			// Insert k at every position: moving it left past j entries
			// is j transpositions.
			for pos := len(p.perm); pos >= 0; pos-- {
				q := make([]int, 0, k+1)
				q = append(q, p.perm[:pos]...)
				q = append(q, k)
				q = append(q, p.perm[pos:]...)
				sign := p.sign
				if (len(p.perm)-pos)%2 == 1 {
					sign = -sign
				}
				next = append(next, signedPerm{q, sign})
			}
		}
		out = next
	}
	return out
}

// convertMaxUnpool scatters x into zeros of the output shape at the flat
// indices MaxPool gave (TVM's MaxUnpool): the output shape is
// (in - 1) * stride + kernel - pads, or the output_shape input (a
// run-time shape when it is a graph input), which pads after it.
func convertMaxUnpool(c *nodeCtx) ([]ir.Expr, error) {
	x, err := c.arg(0)
	if err != nil {
		return nil, err
	}
	idx, err := c.arg(1)
	if err != nil {
		return nil, err
	}
	in, ok := c.staticShape(0)
	if !ok {
		return nil, unsupported("MaxUnpool of an input of non-static shape")
	}
	r := len(in)
	sp := r - 2
	kernel, _ := c.attrInts("kernel_shape")
	if len(kernel) != sp {
		return nil, fmt.Errorf("kernel_shape has %d entries for %d spatial axes", len(kernel), sp)
	}
	strides, ok := c.attrInts("strides")
	if !ok {
		strides = onesN(sp)
	}
	pads, ok := c.attrInts("pads")
	if !ok {
		pads = make([]int64, 2*sp)
	}
	def := append([]int64(nil), in[:2]...)
	for i := range sp {
		def = append(def, (in[2+i]-1)*strides[i]+kernel[i]-pads[i]-pads[sp+i])
	}
	out := i64Dims(def)
	idx = c.i64(idx)
	if c.has(2) {
		// The indices number the positions of the default shape; a
		// larger output_shape pads after them (ONNX's example): each
		// index is unravelled in the default shape and ravelled in the
		// given one.
		s, n, err := c.vec(2)
		if err != nil {
			return nil, err
		}
		if n != r {
			return nil, fmt.Errorf("output_shape has %d entries for rank %d", n, r)
		}
		out = c.dynShape(s, r)
		var flat ir.Expr = ic(0)
		rest, stride := idx, ir.Expr(ic(1))
		for a := r - 1; a >= 0; a-- {
			coord := c.bin(op.FloorMod, rest, ic(def[a]))
			rest = c.bin(op.FloorDivide, rest, ic(def[a]))
			flat = c.bin(op.Add, flat, c.bin(op.Multiply, coord, stride))
			stride = c.bin(op.Multiply, stride, c.elem(s, a))
		}
		idx = flat
	}
	total := ir.PrimExpr(ir.I64(1))
	for _, d := range out {
		total = ir.Mul(total, d)
	}
	dt := dtypeOf(x)
	zeros := c.emitOp(op.Full, ir.Attrs{"dtype": dt}, shapeExpr([]ir.PrimExpr{total}), scalarConst(0, dt))
	n := int64(1)
	for _, d := range in {
		n *= d
	}
	flat := func(e ir.Expr) ir.Expr { return c.emitOp(op.Reshape, nil, e, shapeExpr(i64Dims([]int64{n}))) }
	y := c.emitOp(opScatterElements, ir.Attrs{"axis": int64(0), "reduction": "update"}, zeros, flat(idx), flat(x))
	return one(c.emitOp(op.Reshape, nil, y, shapeExpr(out)))
}

// convertUnique (without axis: of the flattened input): the sorted
// values, the first of each run marked, their count a fresh dimension,
// the marked values compacted; indices, counts and inverse_indices from
// the (unique × input) equality matrix. sorted=0 orders them by first
// occurrence (an argsort of the indices). TVM's R.unique is not in
// phasec; Unique over an axis stays unsupported.
func convertUnique(c *nodeCtx) ([]ir.Expr, error) {
	x, err := c.arg(0)
	if err != nil {
		return nil, err
	}
	if _, ok := c.attrs["axis"]; ok {
		return nil, unsupported("Unique with axis")
	}
	in, ok := c.staticShape(0)
	if !ok {
		return nil, unsupported("Unique of an input of non-static shape")
	}
	L := int64(1)
	for _, d := range in {
		L *= d
	}
	if L == 0 {
		return nil, unsupported("Unique of an empty input")
	}
	flat := c.emitOp(op.Reshape, nil, x, shapeExpr(i64Dims([]int64{L})))
	s := c.emitOp(op.Sort, ir.Attrs{"axis": int64(0), "descending": false}, flat)
	var first ir.Expr = intsConst([]int64{1})
	if L > 1 {
		tail := func(from, to int64) ir.Expr {
			return c.emitOp(op.StridedSlice, nil, s, primTuple([]int64{0}), primTuple([]int64{from}), primTuple([]int64{to}), primTuple([]int64{1}))
		}
		first = c.emitOp(op.Concat, ir.Attrs{"axis": int64(0)}, ir.NewTuple(first, c.i64(c.bin(op.NotEqual, tail(1, L), tail(0, L-1)))))
	}
	n := c.dynScalar(c.emitOp(op.Sum, ir.Attrs{"axis": anyInts([]int64{0}), "keepdims": false}, first))
	cnt := c.emitOp(op.Cumsum, ir.Attrs{"axis": int64(0), "exclusive": false}, first)
	col := func(v ir.Expr) ir.Expr { return c.emitOp(op.ExpandDims, ir.Attrs{"axis": anyInts([]int64{1})}, v) }
	p := c.arangeN(n)
	j := c.emitOp(op.Sum, ir.Attrs{"axis": anyInts([]int64{1}), "keepdims": false}, c.i64(c.bin(op.LessEqual, cnt, col(p))))
	y := c.emitOp(op.Take, ir.Attrs{"axis": int64(0)}, s, j)
	eq := c.bin(op.Equal, col(y), flat) // (n, L)
	pos := make([]int64, L)
	for i := range pos {
		pos[i] = int64(i)
	}
	idx := c.emitOp(op.Min, ir.Attrs{"axis": anyInts([]int64{1}), "keepdims": false}, c.emitOp(op.Where, nil, eq, intsConst(pos), ic(L)))
	counts := c.emitOp(op.Sum, ir.Attrs{"axis": anyInts([]int64{1}), "keepdims": false}, c.i64(eq))
	inverse := c.emitOp(op.Sum, ir.Attrs{"axis": anyInts([]int64{0}), "keepdims": false}, c.bin(op.Multiply, c.i64(eq), col(p)))
	if c.attrInt("sorted", 1) == 0 {
		ord := c.emitOp(op.Argsort, ir.Attrs{"axis": int64(0), "descending": false, "dtype": ir.Int64}, idx)
		rank := c.emitOp(op.Argsort, ir.Attrs{"axis": int64(0), "descending": false, "dtype": ir.Int64}, ord)
		take := func(v ir.Expr) ir.Expr { return c.emitOp(op.Take, ir.Attrs{"axis": int64(0)}, v, ord) }
		y, idx, counts = take(y), take(idx), take(counts)
		inverse = c.emitOp(op.Take, ir.Attrs{"axis": int64(0)}, rank, inverse)
	}
	return []ir.Expr{y, idx, inverse, counts}, nil
}
