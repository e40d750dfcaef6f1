package onnx

import (
	"fmt"
	"math"

	"github.com/phasec/phasec/ir"
	"github.com/phasec/phasec/op"
)

func registerMore() {
	for name, f := range map[string]converter{
		"HannWindow": windowConverter([]float64{0.5, -0.5}), "HammingWindow": windowConverter([]float64{25.0 / 46, -21.0 / 46}),
		"BlackmanWindow": windowConverter([]float64{0.42, -0.5, 0.08}),
		"Compress":       convertCompress, "DynamicQuantizeLinear": convertDynamicQuantize,
		"MatMulInteger": convertMatMulInteger, "ConvInteger": convertConvInteger,
		"QLinearMatMul": convertQLinearMatMul, "QLinearConv": convertQLinearConv,
	} {
		converters[name] = f
	}
}

// windowConverter computes a cosine-sum window sum_k a_k cos(2 pi k n /
// N) of a constant size, N the size (periodic) or the size - 1
// (symmetric), as a constant.
func windowConverter(coeffs []float64) converter {
	return func(c *nodeCtx) ([]ir.Expr, error) {
		if _, ok := c.constant(0); !ok && c.has(0) {
			dt, ok := DType(int32(c.attrInt("output_datatype", 1)))
			if !ok {
				return nil, unsupported("output_datatype %s", dtypeName(int32(c.attrInt("output_datatype", 1))))
			}
			return dynWindow(c, coeffs, dt)
		}
		size, err := c.constInts(0)
		if err != nil {
			return nil, err
		}
		if len(size) != 1 || size[0] < 0 || size[0] > foldLimit {
			return nil, fmt.Errorf("size must be a scalar in [0, %d]", foldLimit)
		}
		dt, ok := DType(int32(c.attrInt("output_datatype", 1)))
		if !ok {
			return nil, unsupported("output_datatype %s", dtypeName(int32(c.attrInt("output_datatype", 1))))
		}
		n := size[0]
		den := float64(n)
		if c.attrInt("periodic", 1) == 0 {
			den = float64(n - 1)
		}
		a, err := ir.NewNDArray(dt, []int64{n})
		if err != nil {
			return nil, err
		}
		for i := range int(n) {
			v := 0.0
			for k, ck := range coeffs {
				v += ck * math.Cos(2*math.Pi*float64(k)*float64(i)/den)
			}
			if dt.IsFloat() {
				a.SetFloat(i, v)
			} else {
				a.SetInt(i, int64(v))
			}
		}
		return one(&ir.Constant{Data: a})
	}
}

// convertCompress keeps the slices along axis (or of the flattened
// input) where a constant condition is true: a take of their indices.
func convertCompress(c *nodeCtx) ([]ir.Expr, error) {
	x, err := c.arg(0)
	if err != nil {
		return nil, err
	}
	if _, ok := c.constant(1); !ok && c.has(1) {
		axis := 0
		if _, ok := c.attrs["axis"]; !ok {
			dims, err := c.dims(0)
			if err != nil {
				return nil, err
			}
			x = c.emitOp(op.Reshape, nil, x, shapeExpr([]ir.PrimExpr{product(dims)}))
		} else {
			rank, err := c.rank(0)
			if err != nil {
				return nil, err
			}
			if axis, err = normAxis(c.attrInt("axis", 0), rank); err != nil {
				return nil, err
			}
		}
		return dynCompress(c, x, axis)
	}
	cond, err := c.constInts(1)
	if err != nil {
		return nil, err
	}
	var idx []int64
	for i, v := range cond {
		if v != 0 {
			idx = append(idx, int64(i))
		}
	}
	if _, ok := c.attrs["axis"]; !ok {
		dims, err := c.dims(0)
		if err != nil {
			return nil, err
		}
		x = c.emitOp(op.Reshape, nil, x, shapeExpr([]ir.PrimExpr{product(dims)}))
		return one(c.emitOp(op.Take, ir.Attrs{"axis": int64(0)}, x, intsConst(idx)))
	}
	rank, err := c.rank(0)
	if err != nil {
		return nil, err
	}
	axis, err := normAxis(c.attrInt("axis", 0), rank)
	if err != nil {
		return nil, err
	}
	return one(c.emitOp(op.Take, ir.Attrs{"axis": int64(axis)}, x, intsConst(idx)))
}

// convertDynamicQuantize: scale = (max(0, max x) - min(0, min x)) / 255,
// zero point = saturate(round(-min / scale)), y = saturate(round(x /
// scale) + zero point), all uint8.
func convertDynamicQuantize(c *nodeCtx) ([]ir.Expr, error) {
	x, err := c.arg(0)
	if err != nil {
		return nil, err
	}
	dt := dtypeOf(x)
	zero := scalarConst(0, dt)
	hi := c.emitOp(op.Maximum, nil, c.emitOp(op.Max, ir.Attrs{"keepdims": false}, x), zero)
	lo := c.emitOp(op.Minimum, nil, c.emitOp(op.Min, ir.Attrs{"keepdims": false}, x), zero)
	scale := c.emitOp(op.Divide, nil, c.emitOp(op.Subtract, nil, hi, lo), scalarConst(255, dt))
	clip := func(e ir.Expr) ir.Expr {
		return c.emitOp(op.Clip, nil, e, ir.NewPrimValue(ir.NewFloat(ir.Float64, 0)), ir.NewPrimValue(ir.NewFloat(ir.Float64, 255)))
	}
	zp := clip(c.emitOp(op.Round, nil, c.emitOp(op.Divide, nil, c.emitOp(op.Negative, nil, lo), scale)))
	y := clip(c.emitOp(op.Add, nil, c.emitOp(op.Round, nil, c.emitOp(op.Divide, nil, x, scale)), zp))
	return []ir.Expr{c.castTo(y, ir.UInt8), scale, c.castTo(zp, ir.UInt8)}, nil
}

// centered is x - zero_point in int32 (the zero point optional).
func (c *nodeCtx) centered(x ir.Expr, zp int) ir.Expr {
	v := c.castTo(x, ir.Int32)
	if c.has(zp) {
		v = c.emitOp(op.Subtract, nil, v, c.castTo(c.in[zp], ir.Int32))
	}
	return v
}

func convertMatMulInteger(c *nodeCtx) ([]ir.Expr, error) {
	if !c.has(0) || !c.has(1) {
		return nil, fmt.Errorf("two inputs are required")
	}
	return one(c.emitOp(op.Matmul, nil, c.centered(c.in[0], 2), c.centered(c.in[1], 3)))
}

func convertConvInteger(c *nodeCtx) ([]ir.Expr, error) {
	if !c.has(0) || !c.has(1) {
		return nil, fmt.Errorf("two inputs are required")
	}
	sub := *c
	sub.in = []ir.Expr{c.centered(c.in[0], 2), c.centered(c.in[1], 3)}
	return convertConv(&sub)
}

// dequantized is (x - zero_point) * scale in float32.
func (c *nodeCtx) dequantized(x, scale, zp int) ir.Expr {
	v := c.emitOp(op.Subtract, nil, c.castTo(c.in[x], ir.Float32), c.castTo(c.in[zp], ir.Float32))
	return c.emitOp(op.Multiply, nil, v, c.castTo(c.in[scale], ir.Float32))
}

// quantized is saturate(round(v / scale) + zero_point) in the zero
// point's type.
func (c *nodeCtx) quantized(v ir.Expr, scale, zp int) (ir.Expr, error) {
	out := dtypeOf(c.in[zp])
	lo, hi := 0.0, 255.0
	if out == ir.Int8 {
		lo, hi = -128, 127
	} else if out != ir.UInt8 {
		return nil, unsupported("quantizing to %s", out)
	}
	q := c.emitOp(op.Round, nil, c.emitOp(op.Divide, nil, v, c.castTo(c.in[scale], ir.Float32)))
	q = c.emitOp(op.Add, nil, q, c.castTo(c.in[zp], ir.Float32))
	q = c.emitOp(op.Clip, nil, q, ir.NewPrimValue(ir.NewFloat(ir.Float64, lo)), ir.NewPrimValue(ir.NewFloat(ir.Float64, hi)))
	return c.castTo(q, out), nil
}

func (c *nodeCtx) requireInputs(n int) error {
	for i := range n {
		if !c.has(i) {
			return fmt.Errorf("input %d is required", i)
		}
	}
	return nil
}

// convertQLinearMatMul dequantizes both operands, multiplies in float32
// and quantizes the product (the reference semantics; TVM's QLinearMatMul
// does the same through relax ops).
func convertQLinearMatMul(c *nodeCtx) ([]ir.Expr, error) {
	if err := c.requireInputs(8); err != nil {
		return nil, err
	}
	m := c.emitOp(op.Matmul, nil, c.dequantized(0, 1, 2), c.dequantized(3, 4, 5))
	q, err := c.quantized(m, 6, 7)
	if err != nil {
		return nil, err
	}
	return one(q)
}

func convertQLinearConv(c *nodeCtx) ([]ir.Expr, error) {
	if err := c.requireInputs(8); err != nil {
		return nil, err
	}
	sub := *c
	sub.in = []ir.Expr{c.dequantized(0, 1, 2), c.dequantized(3, 4, 5)}
	if c.has(8) {
		// The bias is int32 at scale x_scale * w_scale.
		s := c.emitOp(op.Multiply, nil, c.castTo(c.in[1], ir.Float32), c.castTo(c.in[4], ir.Float32))
		sub.in = append(sub.in, c.emitOp(op.Multiply, nil, c.castTo(c.in[8], ir.Float32), s))
	}
	out, err := convertConv(&sub)
	if err != nil {
		return nil, err
	}
	q, err := c.quantized(out[0], 6, 7)
	if err != nil {
		return nil, err
	}
	return one(q)
}
