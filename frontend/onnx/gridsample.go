package onnx

import (
	"fmt"

	"github.com/phasec/phasec/ir"
	"github.com/phasec/phasec/op"
)

// GridSample (2-D) as ONNX's reference computes it
// (onnx/reference/ops/op_grid_sample.py); TVM's Relax frontend leaves it
// out. Every output position's source coordinates are computed from the
// grid in float64 (denormalized per align_corners; outside the border,
// clamped or reflected per padding_mode), then the 1 (nearest), 4
// (bilinear) or 16 (bicubic) source pixels are read with gather_elements
// over the flattened image, each pixel read applying padding_mode again
// (zeros: 0 outside; border: clamped; reflection: reflected), and
// weighted.

func convertGridSample(c *nodeCtx) ([]ir.Expr, error) {
	x, err := c.arg(0)
	if err != nil {
		return nil, err
	}
	grid, err := c.arg(1)
	if err != nil {
		return nil, err
	}
	xs, ok1 := c.staticShape(0)
	gs, ok2 := c.staticShape(1)
	if !ok1 || !ok2 || len(xs) != 4 || len(gs) != 4 || gs[3] != 2 || gs[0] != xs[0] {
		return nil, unsupported("GridSample other than 2-D of static shapes")
	}
	mode := c.attrString("mode", "bilinear")
	mode = map[string]string{"linear": "bilinear", "cubic": "bicubic"}[mode] + map[string]string{"bilinear": "bilinear", "nearest": "nearest", "bicubic": "bicubic"}[mode]
	pad := c.attrString("padding_mode", "zeros")
	if mode == "" || pad != "zeros" && pad != "border" && pad != "reflection" {
		return nil, fmt.Errorf("mode %q, padding_mode %q", c.attrString("mode", "bilinear"), pad)
	}
	align := c.attrInt("align_corners", 0) == 1
	N, C, H, W := xs[0], xs[1], xs[2], xs[3]
	Ho, Wo := gs[1], gs[2]
	dt := dtypeOf(x)
	f := func(v float64) ir.Expr { return scalarConst(v, ir.Float64) }
	g := c.castTo(grid, ir.Float64)
	coord := func(k int64) ir.Expr {
		v := c.emitOp(op.StridedSlice, nil, g, primTuple([]int64{3}), primTuple([]int64{k}), primTuple([]int64{k + 1}), primTuple([]int64{1}))
		return c.emitOp(op.Reshape, nil, v, shapeExpr(i64Dims([]int64{N, Ho, Wo})))
	}
	denorm := func(v ir.Expr, L float64) ir.Expr {
		if align {
			return c.bin(op.Multiply, c.bin(op.Add, v, f(1)), f((L-1)/2))
		}
		return c.bin(op.Divide, c.bin(op.Subtract, c.bin(op.Multiply, c.bin(op.Add, v, f(1)), f(L)), f(1)), f(2))
	}
	lo := func(L float64) (float64, float64) { // the border
		if align {
			return 0, L - 1
		}
		return -0.5, L - 0.5
	}
	clamp := func(v ir.Expr, a, b float64) ir.Expr {
		return c.emitOp(op.Maximum, nil, c.emitOp(op.Minimum, nil, v, f(b)), f(a))
	}
	reflect := func(v ir.Expr, a, b float64) ir.Expr {
		rng := b - a
		side := func(dx ir.Expr, even, odd func(r ir.Expr) ir.Expr) ir.Expr {
			n := c.emitOp(op.Floor, nil, c.bin(op.Divide, dx, f(rng))) // dx >= 0: floor is int()
			r := c.bin(op.Subtract, dx, c.bin(op.Multiply, n, f(rng)))
			isEven := c.bin(op.Equal, c.bin(op.FloorMod, n, f(2)), f(0))
			return c.emitOp(op.Where, nil, isEven, even(r), odd(r))
		}
		below := side(c.bin(op.Subtract, f(a), v), func(r ir.Expr) ir.Expr { return c.bin(op.Add, f(a), r) },
			func(r ir.Expr) ir.Expr { return c.bin(op.Subtract, f(b), r) })
		above := side(c.bin(op.Subtract, v, f(b)), func(r ir.Expr) ir.Expr { return c.bin(op.Subtract, f(b), r) },
			func(r ir.Expr) ir.Expr { return c.bin(op.Add, f(a), r) })
		return c.emitOp(op.Where, nil, c.bin(op.Less, v, f(a)), below, c.emitOp(op.Where, nil, c.bin(op.Greater, v, f(b)), above, v))
	}
	// adjust applies padding_mode to a coordinate outside the border.
	adjust := func(v ir.Expr, L float64) ir.Expr {
		a, b := lo(L)
		switch pad {
		case "border":
			out := c.emitOp(op.LogicalOr, nil, c.bin(op.Less, v, f(a)), c.bin(op.Greater, v, f(b)))
			return c.emitOp(op.Where, nil, out, clamp(v, 0, L-1), v)
		case "reflection":
			return reflect(v, a, b)
		}
		return v
	}
	gx, gy := denorm(coord(0), float64(W)), denorm(coord(1), float64(H))
	if mode == "nearest" {
		gx, gy = c.roundHalfEven(gx), c.roundHalfEven(gy)
	}
	gx, gy = adjust(gx, float64(W)), adjust(gy, float64(H))

	flatX := c.emitOp(op.Reshape, nil, x, shapeExpr(i64Dims([]int64{N, C, H * W})))
	// pixel reads the image at integer-valued float coordinates (row r,
	// column col), applying padding_mode, as an (N, C, Ho, Wo) tensor.
	pixel := func(r, col ir.Expr) ir.Expr {
		var valid ir.Expr
		switch pad {
		case "zeros":
			valid = c.emitOp(op.LogicalAnd, nil,
				c.emitOp(op.LogicalAnd, nil, c.bin(op.GreaterEqual, col, f(0)), c.bin(op.LessEqual, col, f(float64(W-1)))),
				c.emitOp(op.LogicalAnd, nil, c.bin(op.GreaterEqual, r, f(0)), c.bin(op.LessEqual, r, f(float64(H-1)))))
		case "reflection":
			ax, bx := lo(float64(W))
			ay, by := lo(float64(H))
			col = c.emitOp(op.Trunc, nil, reflect(col, ax, bx))
			r = c.emitOp(op.Trunc, nil, reflect(r, ay, by))
		}
		col, r = clamp(col, 0, float64(W-1)), clamp(r, 0, float64(H-1))
		idx := c.i64(c.bin(op.Add, c.bin(op.Multiply, r, f(float64(W))), col))
		idx = c.emitOp(op.Reshape, nil, idx, shapeExpr(i64Dims([]int64{N, 1, Ho * Wo})))
		idx = c.emitOp(op.BroadcastTo, nil, idx, shapeExpr(i64Dims([]int64{N, C, Ho * Wo})))
		v := c.emitOp(op.GatherElements, ir.Attrs{"axis": int64(2)}, flatX, idx)
		v = c.emitOp(op.Reshape, nil, v, shapeExpr(i64Dims([]int64{N, C, Ho, Wo})))
		if valid != nil {
			v = c.emitOp(op.Where, nil, c.emitOp(op.ExpandDims, ir.Attrs{"axis": anyInts([]int64{1})}, valid), v, scalarConst(0, dt))
		}
		return v
	}
	weight := func(w ir.Expr) ir.Expr { // (N, Ho, Wo) float64 -> (N, 1, Ho, Wo) of x's type
		return c.emitOp(op.ExpandDims, ir.Attrs{"axis": anyInts([]int64{1})}, c.castTo(w, dt))
	}
	first := int64(0) // the offset of the first tap from floor(v)
	var x0, y0 ir.Expr
	var wx, wy []ir.Expr
	switch mode {
	case "nearest":
		return one(pixel(gy, gx))
	case "bilinear":
		x0, y0 = c.emitOp(op.Floor, nil, gx), c.emitOp(op.Floor, nil, gy)
		tx, ty := c.bin(op.Subtract, gx, x0), c.bin(op.Subtract, gy, y0)
		wx = []ir.Expr{c.bin(op.Subtract, f(1), tx), tx}
		wy = []ir.Expr{c.bin(op.Subtract, f(1), ty), ty}
	case "bicubic":
		first = -1
		x0, y0 = c.emitOp(op.Floor, nil, gx), c.emitOp(op.Floor, nil, gy)
		wx = c.cubicWeights(c.bin(op.Subtract, gx, x0), -0.75)
		wy = c.cubicWeights(c.bin(op.Subtract, gy, y0), -0.75)
	}
	var out ir.Expr
	for i, wyi := range wy {
		r := c.bin(op.Add, y0, f(float64(first+int64(i))))
		for j, wxj := range wx {
			col := c.bin(op.Add, x0, f(float64(first+int64(j))))
			term := c.bin(op.Multiply, pixel(r, col), weight(c.bin(op.Multiply, wyi, wxj)))
			if out == nil {
				out = term
			} else {
				out = c.bin(op.Add, out, term)
			}
		}
	}
	return one(out)
}

// roundHalfEven rounds to the nearest integer, ties to even (NumPy's
// rint, which ONNX's reference uses for nearest).
func (c *nodeCtx) roundHalfEven(v ir.Expr) ir.Expr {
	f := func(x float64) ir.Expr { return scalarConst(x, ir.Float64) }
	r := c.emitOp(op.Floor, nil, c.bin(op.Add, v, f(0.5)))
	tie := c.bin(op.Equal, c.bin(op.Subtract, r, v), f(0.5))
	odd := c.bin(op.Equal, c.bin(op.FloorMod, r, f(2)), f(1))
	return c.emitOp(op.Where, nil, c.emitOp(op.LogicalAnd, nil, tie, odd), c.bin(op.Subtract, r, f(1)), r)
}
