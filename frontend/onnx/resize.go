package onnx

import (
	"fmt"
	"math"

	"github.com/phasec/phasec/ir"
	"github.com/phasec/phasec/op"
)

// Resize.
//
// TVM converts Resize to R.image.resize2d (resize1d/3d through topi), which
// derives each axis's coordinate transform from the input and output
// sizes. ONNX defines it from the scales when scales are given (a 0.6
// downsampling of 4 rows gives 2 rows but samples at (i+0.5)/0.6-0.5, not
// (i+0.5)/0.5-0.5), and takes scales and sizes at run time. phasec keeps
// resize2d where the two agree (constant sizes, or constant scales equal
// to output/input on every axis, and a rounding and transform resize2d
// has) and otherwise resizes one axis at a time as ONNX's reference does
// (onnx/reference/ops/op_resize.py: interpolation is separable): the
// source coordinate of every output position, in float64, then a take of
// the nearest index, or takes of the 2 (linear) or 4 (cubic) neighbours,
// edge-clamped, weighted; tf_crop_and_resize writes extrapolation_value
// where the coordinate leaves the input.

// resizeParams are a Resize node's per-axis parameters: out the output
// sizes (constants or fresh dimensions), scale the scalar float64 tensors
// of the scales (given, or output/input for sizes).
type resizeParams struct {
	out   []ir.PrimExpr
	scale []ir.Expr
	// static is true when out and scale are constants that resize2d's
	// size-derived transform reproduces.
	static bool
}

// resizeShapes reads scales or sizes (constants or run-time tensors).
func (c *nodeCtx) resizeShapes(in []int64, scaleIn, sizeIn int, attrScales []float64) (*resizeParams, error) {
	r := len(in)
	p := &resizeParams{out: make([]ir.PrimExpr, r), scale: make([]ir.Expr, r), static: true}
	f64 := func(v float64) ir.Expr { return scalarConst(v, ir.Float64) }
	switch {
	case attrScales != nil || scaleIn >= 0 && isConstIn(c, scaleIn):
		s := attrScales
		if s == nil {
			var err error
			if s, err = c.constFloats(scaleIn); err != nil {
				return nil, err
			}
		}
		if len(s) != r {
			return nil, fmt.Errorf("%d scales for rank %d", len(s), r)
		}
		for a := range r {
			o := int64(math.Floor(float64(in[a]) * s[a]))
			p.out[a], p.scale[a] = ir.I64(o), f64(s[a])
			if float64(o) != float64(in[a])*s[a] {
				p.static = false
			}
		}
	case sizeIn >= 0 && isConstIn(c, sizeIn):
		s, err := c.constInts(sizeIn)
		if err != nil {
			return nil, err
		}
		if len(s) != r {
			return nil, fmt.Errorf("%d sizes for rank %d", len(s), r)
		}
		for a := range r {
			p.out[a], p.scale[a] = ir.I64(s[a]), f64(float64(s[a])/float64(in[a]))
		}
	case sizeIn >= 0:
		p.static = false
		s, n, err := c.vec(sizeIn)
		if err != nil {
			return nil, err
		}
		if n != r {
			return nil, fmt.Errorf("%d sizes for rank %d", n, r)
		}
		p.out = c.dynShape(s, r)
		sf := c.castTo(s, ir.Float64)
		for a := range r {
			p.scale[a] = c.bin(op.Divide, c.elem(sf, a), f64(float64(in[a])))
		}
	case scaleIn >= 0:
		p.static = false
		if n, err := c.vecLen(scaleIn); err != nil || n != r {
			return nil, fmt.Errorf("scales must be a vector of %d entries", r)
		}
		sf := c.castTo(c.in[scaleIn], ir.Float64)
		out := c.i64(c.emitOp(op.Floor, nil, c.bin(op.Multiply, sf, c.castTo(intsConst(in), ir.Float64))))
		p.out = c.dynShape(out, r)
		for a := range r {
			p.scale[a] = c.elem(sf, a)
		}
	default:
		return nil, fmt.Errorf("Resize needs scales or sizes")
	}
	return p, nil
}

// vecLenOf is the static length of a 1-D tensor expression.
func (c *nodeCtx) vecLenOf(e ir.Expr) (int, error) {
	if k, ok := e.(*ir.Constant); ok && len(k.Data.Shape) == 1 {
		return int(k.Data.Shape[0]), nil
	}
	if t, ok := e.StructInfo().(*ir.TensorInfo); ok {
		if d, ok := t.Dims(); ok && len(d) == 1 {
			if n, ok := ir.IntValue(d[0]); ok {
				return int(n), nil
			}
		}
	}
	return 0, fmt.Errorf("not a vector of static length")
}

// isConstIn reports whether input i is present and a constant.
func isConstIn(c *nodeCtx, i int) bool {
	_, ok := c.constant(i)
	return ok
}

// resizeSeparable resizes x (static shape in) axis by axis.
func (c *nodeCtx) resizeSeparable(x ir.Expr, in []int64, p *resizeParams, roi ir.Expr) (ir.Expr, error) {
	mode := c.attrString("mode", "nearest")
	coord := c.attrString("coordinate_transformation_mode", "half_pixel")
	if c.opset < 11 {
		coord = "asymmetric"
	}
	nearest := c.attrString("nearest_mode", "round_prefer_floor")
	if c.opset < 11 {
		nearest = "floor" // Upsample and Resize-10 take the floor (ONNX's reference)
	}
	A := c.attrFloat("cubic_coeff_a", -0.75)
	exclude := c.attrInt("exclude_outside", 0) == 1
	extrap := c.attrFloat("extrapolation_value", 0)
	if c.attrInt("antialias", 0) != 0 {
		return nil, unsupported("Resize with antialias")
	}
	switch coord {
	case "half_pixel", "pytorch_half_pixel", "align_corners", "asymmetric", "tf_crop_and_resize", "tf_half_pixel_for_nn":
	default:
		return nil, unsupported("coordinate_transformation_mode %q", coord)
	}
	if mode == "bilinear" {
		mode = "linear"
	}
	if mode != "nearest" && mode != "linear" && mode != "cubic" {
		return nil, fmt.Errorf("mode %q", mode)
	}
	r := len(in)
	dt := dtypeOf(x)
	f64 := func(v float64) ir.Expr { return scalarConst(v, ir.Float64) }
	y := x
	for a := range r {
		if o, ok := ir.IntValue(p.out[a]); ok && o == in[a] && coord != "tf_crop_and_resize" {
			if s, ok := p.scale[a].(*ir.Constant); ok && s.Data.Float(0) == 1 {
				continue // the identity
			}
		}
		L := float64(in[a])
		i := c.castTo(c.arangeN(p.out[a]), ir.Float64)
		s := p.scale[a]
		// ONNX's reference takes the output length as scale * input
		// length, unrounded, in align_corners, pytorch_half_pixel and
		// tf_crop_and_resize (the same as the size when sizes are given).
		outW := c.bin(op.Multiply, s, f64(L))
		var xo ir.Expr
		switch coord {
		case "half_pixel":
			xo = c.bin(op.Subtract, c.bin(op.Divide, c.bin(op.Add, i, f64(0.5)), s), f64(0.5))
		case "pytorch_half_pixel":
			hp := c.bin(op.Subtract, c.bin(op.Divide, c.bin(op.Add, i, f64(0.5)), s), f64(0.5))
			xo = c.emitOp(op.Where, nil, c.bin(op.Greater, outW, f64(1)), hp, f64(0))
		case "align_corners":
			o := outW
			den := c.emitOp(op.Maximum, nil, c.bin(op.Subtract, o, f64(1)), f64(1))
			xo = c.emitOp(op.Where, nil, c.bin(op.Greater, o, f64(1)), c.bin(op.Divide, c.bin(op.Multiply, i, f64(L-1)), den), f64(0))
		case "asymmetric":
			xo = c.bin(op.Divide, i, s)
		case "tf_half_pixel_for_nn":
			xo = c.bin(op.Divide, c.bin(op.Add, i, f64(0.5)), s)
		case "tf_crop_and_resize":
			if roi == nil {
				return nil, fmt.Errorf("tf_crop_and_resize needs roi")
			}
			if n, err := c.vecLenOf(roi); err != nil || n != 2*r {
				return nil, fmt.Errorf("tf_crop_and_resize needs a roi of %d entries", 2*r)
			}
			start, end := c.elem(roi, a), c.elem(roi, a+r)
			o := outW
			den := c.emitOp(op.Maximum, nil, c.bin(op.Subtract, o, f64(1)), f64(1))
			step := c.bin(op.Divide, c.bin(op.Multiply, c.bin(op.Subtract, end, start), f64(L-1)), den)
			many := c.bin(op.Add, c.bin(op.Multiply, start, f64(L-1)), c.bin(op.Multiply, i, step))
			mid := c.bin(op.Multiply, c.bin(op.Add, start, end), f64(0.5*(L-1)))
			xo = c.emitOp(op.Where, nil, c.bin(op.Greater, o, f64(1)), many, mid)
		}
		last := float64(in[a] - 1)
		clampIdx := func(v ir.Expr) ir.Expr {
			return c.i64(c.emitOp(op.Maximum, nil, c.emitOp(op.Minimum, nil, v, f64(last)), f64(0)))
		}
		along := func(w ir.Expr) ir.Expr { // a weight vector shaped to broadcast along axis a
			shape := make([]ir.PrimExpr, r)
			for j := range shape {
				shape[j] = ir.I64(1)
			}
			shape[a] = p.out[a]
			return c.emitOp(op.Reshape, nil, c.castTo(w, dt), shapeExpr(shape))
		}
		take := func(idx ir.Expr) ir.Expr { return c.emitOp(op.Take, ir.Attrs{"axis": int64(a)}, y, idx) }
		var z ir.Expr
		switch mode {
		case "nearest":
			var n ir.Expr
			switch nearest {
			case "round_prefer_floor":
				n = c.emitOp(op.Ceil, nil, c.bin(op.Subtract, xo, f64(0.5)))
			case "round_prefer_ceil":
				n = c.emitOp(op.Floor, nil, c.bin(op.Add, xo, f64(0.5)))
			case "floor":
				n = c.emitOp(op.Floor, nil, xo)
			case "ceil":
				n = c.emitOp(op.Ceil, nil, xo)
			default:
				return nil, fmt.Errorf("nearest_mode %q", nearest)
			}
			z = take(clampIdx(n))
		case "linear":
			f := c.emitOp(op.Floor, nil, xo)
			w := c.bin(op.Subtract, xo, f)
			z0 := c.bin(op.Multiply, take(clampIdx(f)), along(c.bin(op.Subtract, f64(1), w)))
			z1 := c.bin(op.Multiply, take(clampIdx(c.bin(op.Add, f, f64(1)))), along(w))
			z = c.bin(op.Add, z0, z1)
		case "cubic":
			f := c.emitOp(op.Floor, nil, xo)
			t := c.bin(op.Subtract, xo, f)
			ws := c.cubicWeights(t, A)
			if exclude {
				var sum ir.Expr
				for k := range ws {
					pos := c.bin(op.Add, f, f64(float64(k-1)))
					inside := c.emitOp(op.LogicalAnd, nil, c.bin(op.GreaterEqual, pos, f64(0)), c.bin(op.LessEqual, pos, f64(last)))
					ws[k] = c.emitOp(op.Where, nil, inside, ws[k], f64(0))
					if sum == nil {
						sum = ws[k]
					} else {
						sum = c.bin(op.Add, sum, ws[k])
					}
				}
				for k := range ws {
					ws[k] = c.bin(op.Divide, ws[k], sum)
				}
			}
			for k, w := range ws {
				term := c.bin(op.Multiply, take(clampIdx(c.bin(op.Add, f, f64(float64(k-1))))), along(w))
				if z == nil {
					z = term
				} else {
					z = c.bin(op.Add, z, term)
				}
			}
		}
		if coord == "tf_crop_and_resize" {
			outside := c.emitOp(op.LogicalOr, nil, c.bin(op.Less, xo, f64(0)), c.bin(op.Greater, xo, f64(last)))
			shape := make([]ir.PrimExpr, r)
			for j := range shape {
				shape[j] = ir.I64(1)
			}
			shape[a] = p.out[a]
			outside = c.emitOp(op.Reshape, nil, outside, shapeExpr(shape))
			z = c.emitOp(op.Where, nil, outside, scalarConst(extrap, dt), z)
		}
		y = z
	}
	return y, nil
}

// cubicWeights are the Keys cubic convolution weights (coefficient A) of
// the neighbours at offsets -1, 0, 1, 2 from floor(x), t = x - floor(x).
func (c *nodeCtx) cubicWeights(t ir.Expr, A float64) []ir.Expr {
	f64 := func(v float64) ir.Expr { return scalarConst(v, ir.Float64) }
	// far(d) = ((A*d - 5A)*d + 8A)*d - 4A for 1 <= d <= 2;
	// near(d) = ((A+2)*d - (A+3))*d*d + 1 for d <= 1.
	far := func(d ir.Expr) ir.Expr {
		v := c.bin(op.Subtract, c.bin(op.Multiply, d, f64(A)), f64(5*A))
		v = c.bin(op.Add, c.bin(op.Multiply, v, d), f64(8*A))
		return c.bin(op.Subtract, c.bin(op.Multiply, v, d), f64(4*A))
	}
	near := func(d ir.Expr) ir.Expr {
		v := c.bin(op.Subtract, c.bin(op.Multiply, d, f64(A+2)), f64(A+3))
		return c.bin(op.Add, c.bin(op.Multiply, c.bin(op.Multiply, v, d), d), f64(1))
	}
	one := c.bin(op.Subtract, f64(1), t)
	return []ir.Expr{
		far(c.bin(op.Add, t, f64(1))),
		near(t),
		near(one),
		far(c.bin(op.Add, one, f64(1))),
	}
}
