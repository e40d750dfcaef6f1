package onnx

import (
	"fmt"

	"github.com/phasec/phasec/ir"
	"github.com/phasec/phasec/op"
)

// Data-dependent shapes.
//
// A shape, axes, pads, sizes, k or depth that is a graph input (or is
// computed from one) is known only when the model runs. TVM's frontend
// handles such a value with R.tensor_to_shape and a match_cast of the
// resulting shape to fresh symbolic dimensions (ConstantOfShape, Compress's
// nonzero count), or passes the tensor to an op that takes it at run time
// (R.dynamic_strided_slice). The helpers here do the same: the integer
// arithmetic ONNX defines on such values (Reshape's 0 and -1, Expand's
// broadcasting, negative axes, the positions Squeeze and Unsqueeze remove
// or insert) is computed by small int64 tensor ops in the graph, and the
// result becomes a shape through dynShape. The ops that take their
// parameters as attributes (tile, one_hot, topk, the reductions) are
// rewritten onto ops whose shape comes from such a shape: broadcast_to,
// arange, strided_slice with symbolic bounds, where.
//
// Invariant: a dynamic path is taken only when the value is not a
// constant at import; constants keep the static conversion, so models
// with static shapes import exactly as before.

// i64 casts e to int64.
func (c *nodeCtx) i64(e ir.Expr) ir.Expr { return c.castTo(e, ir.Int64) }

// ic is an int64 scalar constant.
func ic(v int64) *ir.Constant { return scalarConst(float64(v), ir.Int64) }

// pv is an int64 R.prim_value.
func pv(e ir.PrimExpr) *ir.PrimValue { return ir.NewPrimValue(e) }

// vecLen returns input i's length when it is a 1-D tensor of static length
// (a rank-0 tensor counts as length 1).
func (c *nodeCtx) vecLen(i int) (int, error) {
	s, ok := c.staticShape(i)
	if !ok || len(s) > 1 {
		// Its entries cannot become a fixed number of dimensions.
		return 0, c.notConstant(i)
	}
	if len(s) == 0 {
		return 1, nil
	}
	return int(s[0]), nil
}

// vec returns input i as a 1-D int64 tensor.
func (c *nodeCtx) vec(i int) (ir.Expr, int, error) {
	n, err := c.vecLen(i)
	if err != nil {
		return nil, 0, err
	}
	v := c.i64(c.in[i])
	if t, _ := c.tinfo(i); t != nil && t.NDim == 0 {
		v = c.emitOp(op.Reshape, nil, v, shapeExpr(i64Dims([]int64{1})))
	}
	return v, n, nil
}

// dimsTensor returns x's shape as a 1-D int64 tensor.
func (c *nodeCtx) dimsTensor(x ir.Expr) ir.Expr {
	if t, ok := x.StructInfo().(*ir.TensorInfo); ok {
		if d, ok := t.Dims(); ok {
			vals := make([]int64, len(d))
			static := true
			for i, e := range d {
				vals[i], static = ir.IntValue(e)
				if !static {
					break
				}
			}
			if static {
				return intsConst(vals)
			}
		}
	}
	return c.emit(call(op.ShapeToTensor, nil, c.imp.b.Emit(call(op.ShapeOf, nil, x), "lv")))
}

// freshDim is a new symbolic dimension for a value known at run time.
func (imp *importer) freshDim() *ir.PrimVar {
	for {
		imp.ndyn++
		name := fmt.Sprintf("dyn%d", imp.ndyn)
		if _, taken := imp.syms[name]; !taken {
			v := ir.NewPrimVar(name, ir.Int64)
			imp.syms[name] = v
			return v
		}
	}
}

// dynShape turns a 1-D int64 tensor of n entries into n dimensions: the
// entries when t is a constant, else fresh symbolic dimensions bound by
// R.match_cast(R.tensor_to_shape(t), R.Shape([...])).
func (c *nodeCtx) dynShape(t ir.Expr, n int) []ir.PrimExpr {
	t = c.i64(t)
	if k, ok := t.(*ir.Constant); ok {
		out := make([]ir.PrimExpr, n)
		for i := range out {
			out[i] = ir.I64(k.Data.Int(i))
		}
		return out
	}
	s := c.imp.b.Emit(call(op.TensorToShape, nil, t), "lv")
	dims := make([]ir.PrimExpr, n)
	for i := range dims {
		dims[i] = c.imp.freshDim()
	}
	c.imp.b.EmitMatchCast(s, &ir.ShapeInfo{Values: dims, NDim: n}, "lv")
	return dims
}

// dynScalar is dynShape of one value (a rank-0 or one-element tensor).
func (c *nodeCtx) dynScalar(t ir.Expr) ir.PrimExpr {
	t = c.emitOp(op.Reshape, nil, c.i64(t), shapeExpr(i64Dims([]int64{1})))
	return c.dynShape(t, 1)[0]
}

// arangeN is R.arange(0, n) of int64.
func (c *nodeCtx) arangeN(n ir.PrimExpr) ir.Expr {
	return c.emitOp(op.Arange, ir.Attrs{"dtype": ir.Int64}, pv(ir.I64(0)), pv(n), pv(ir.I64(1)))
}

// elem is t[i] of a 1-D tensor, as a rank-0 tensor.
func (c *nodeCtx) elem(t ir.Expr, i int) ir.Expr {
	return c.emitOp(op.Take, ir.Attrs{"axis": int64(0)}, t, ic(int64(i)))
}

// bin is a binary op.
func (c *nodeCtx) bin(o *ir.Op, a, b ir.Expr) ir.Expr { return c.emitOp(o, nil, a, b) }

// normAxesT maps possibly negative axes (an int64 vector) into [0, rank).
func (c *nodeCtx) normAxesT(axes ir.Expr, rank int) ir.Expr {
	neg := c.bin(op.Less, axes, ic(0))
	return c.emitOp(op.Where, nil, neg, c.bin(op.Add, axes, ic(int64(rank))), axes)
}

// axisMask is the int64 vector of rank entries that is 1 at the
// positions named by axes (normalized) and 0 elsewhere.
func (c *nodeCtx) axisMask(axes ir.Expr, rank int) ir.Expr {
	pos := make([]int64, rank)
	for i := range pos {
		pos[i] = int64(i)
	}
	col := c.emitOp(op.ExpandDims, ir.Attrs{"axis": anyInts([]int64{1})}, axes) // (k, 1)
	hit := c.i64(c.bin(op.Equal, col, intsConst(pos)))                          // (k, rank)
	return c.emitOp(op.Max, ir.Attrs{"axis": anyInts([]int64{0}), "keepdims": false}, hit)
}

// compact keeps the entries of the int64 vector v (of rank entries)
// where keep (0/1 vector) is 1, returning n of them: entry p is v[j_p],
// j_p the number of positions whose inclusive count of kept entries is at
// most p.
func (c *nodeCtx) compact(v, keep ir.Expr, n int) ir.Expr {
	if n == 0 {
		return intsConst(nil)
	}
	cnt := c.emitOp(op.Cumsum, ir.Attrs{"axis": int64(0), "exclusive": false}, keep)
	p := make([]int64, n)
	for i := range p {
		p[i] = int64(i)
	}
	pc := c.emitOp(op.ExpandDims, ir.Attrs{"axis": anyInts([]int64{1})}, intsConst(p)) // (n, 1)
	le := c.i64(c.bin(op.LessEqual, cnt, pc))                                          // (n, rank)
	j := c.emitOp(op.Sum, ir.Attrs{"axis": anyInts([]int64{1}), "keepdims": false}, le)
	return c.emitOp(op.Take, ir.Attrs{"axis": int64(0)}, v, j)
}

// reshapeTo reshapes x to the int64 vector shape of n entries.
func (c *nodeCtx) reshapeTo(x, shape ir.Expr, n int) ir.Expr {
	return c.emitOp(op.Reshape, nil, x, shapeExpr(c.dynShape(shape, n)))
}
