package onnx

import (
	"fmt"
	"math"

	"github.com/phasec/phasec/ir"
	"github.com/phasec/phasec/op"
)

// DFT and STFT as matrix products with constant cosine and sine
// matrices (static lengths); TVM's Relax frontend converts neither. A
// signal is real (last axis 1) or complex (last axis 2: real, imaginary);
// the result is complex. Y[k] = sum_j x[j] e^(∓2πi jk/N) (+ and 1/N for
// the inverse), N the DFT length (the signal zero-padded or truncated to
// it), k < N/2+1 when onesided.

func registerDFT() {
	converters["DFT"] = convertDFT
	converters["STFT"] = convertSTFT
}

// dftLast transforms the last axis of xr and xi (xi nil for a real
// signal) of length n: its real and imaginary parts, of m bins.
func (c *nodeCtx) dftLast(xr, xi ir.Expr, n, N int64, onesided, inverse bool) (ir.Expr, ir.Expr, int64) {
	m := N
	if onesided {
		m = N/2 + 1
	}
	rows := min(n, N)
	if rows < n { // truncate the signal to N
		slice := func(v ir.Expr) ir.Expr {
			if v == nil {
				return nil
			}
			r := v.StructInfo().(*ir.TensorInfo).NDim
			return c.emitOp(op.StridedSlice, nil, v, primTuple([]int64{int64(r - 1)}), primTuple([]int64{0}), primTuple([]int64{N}), primTuple([]int64{1}))
		}
		xr, xi = slice(xr), slice(xi)
	}
	dt := dtypeOf(xr)
	sign := -1.0
	if inverse {
		sign = 1
	}
	cosM, _ := ir.NewNDArray(dt, []int64{rows, m})
	sinM, _ := ir.NewNDArray(dt, []int64{rows, m})
	scale := 1.0
	if inverse {
		scale = 1 / float64(N)
	}
	for j := range rows {
		for k := range m {
			a := 2 * math.Pi * float64(j*k%N) / float64(N)
			cosM.SetFloat(int(j*m+k), scale*math.Cos(a))
			sinM.SetFloat(int(j*m+k), scale*sign*math.Sin(a))
		}
	}
	cm, sm := &ir.Constant{Data: cosM}, &ir.Constant{Data: sinM}
	yr := c.emitOp(op.Matmul, nil, xr, cm)
	yi := c.emitOp(op.Matmul, nil, xr, sm)
	if xi != nil {
		// (xr + i xi)(cos + i s sin): real xr cos - xi s sin, imaginary xr s sin + xi cos.
		yr = c.bin(op.Subtract, yr, c.emitOp(op.Matmul, nil, xi, sm))
		yi = c.bin(op.Add, yi, c.emitOp(op.Matmul, nil, xi, cm))
	}
	return yr, yi, m
}

// complexParts splits x's last axis (1 or 2 entries) into real and
// imaginary parts (nil for a real signal).
func (c *nodeCtx) complexParts(x ir.Expr, dims []int64) (ir.Expr, ir.Expr, error) {
	r := len(dims)
	last := dims[r-1]
	if last != 1 && last != 2 {
		return nil, nil, fmt.Errorf("the last axis must hold 1 (real) or 2 (complex) values, has %d", last)
	}
	part := func(k int64) ir.Expr {
		v := c.emitOp(op.StridedSlice, nil, x, primTuple([]int64{int64(r - 1)}), primTuple([]int64{k}), primTuple([]int64{k + 1}), primTuple([]int64{1}))
		return c.emitOp(op.Reshape, nil, v, shapeExpr(i64Dims(dims[:r-1])))
	}
	if last == 1 {
		return part(0), nil, nil
	}
	return part(0), part(1), nil
}

// stackComplex joins real and imaginary parts on a new last axis.
func (c *nodeCtx) stackComplex(yr, yi ir.Expr) ir.Expr {
	r := yr.StructInfo().(*ir.TensorInfo).NDim
	e := func(v ir.Expr) ir.Expr {
		return c.emitOp(op.ExpandDims, ir.Attrs{"axis": anyInts([]int64{int64(r)})}, v)
	}
	return c.emitOp(op.Concat, ir.Attrs{"axis": int64(r)}, ir.NewTuple(e(yr), e(yi)))
}

func convertDFT(c *nodeCtx) ([]ir.Expr, error) {
	x, err := c.arg(0)
	if err != nil {
		return nil, err
	}
	dims, ok := c.staticShape(0)
	if !ok || len(dims) < 2 {
		return nil, unsupported("DFT of an input of non-static shape")
	}
	r := len(dims)
	axis := c.attrInt("axis", 1)
	if c.opset >= 20 {
		axis = -2
		if c.has(2) {
			a, err := c.constInts(2)
			if err != nil {
				return nil, err
			}
			axis = a[0]
		}
	}
	ax, err := normAxis(axis, r)
	if err != nil || ax == r-1 {
		return nil, fmt.Errorf("axis %d is not a signal axis of rank %d", axis, r)
	}
	n := dims[ax]
	N := n
	if c.has(1) {
		l, err := c.constInts(1)
		if err != nil {
			return nil, err
		}
		N = l[0]
	}
	onesided, inverse := c.attrInt("onesided", 0) == 1, c.attrInt("inverse", 0) == 1
	if onesided && inverse {
		return nil, unsupported("DFT with onesided and inverse")
	}
	xr, xi, err := c.complexParts(x, dims)
	if err != nil {
		return nil, err
	}
	// Move the signal axis last, transform, move it back.
	perm := make([]int64, 0, r-1)
	for i := range r - 1 {
		if i != ax {
			perm = append(perm, int64(i))
		}
	}
	perm = append(perm, int64(ax))
	inv := make([]int64, r-1)
	for i, p := range perm {
		inv[p] = int64(i)
	}
	move := func(v ir.Expr, p []int64) ir.Expr {
		if v == nil || ax == r-2 {
			return v
		}
		return c.emitOp(op.PermuteDims, ir.Attrs{"axes": anyInts(p)}, v)
	}
	yr, yi, _ := c.dftLast(move(xr, perm), move(xi, perm), n, N, onesided, inverse)
	return one(c.stackComplex(move(yr, inv), move(yi, inv)))
}

// convertSTFT frames the signal (frame_step may be a run-time value: the
// frame count is then a fresh dimension), windows the frames and
// transforms each: (batch, frames, bins, 2). The frame length must be
// known at import (the window's length, or a constant frame_length):
// it sizes the DFT matrices.
func convertSTFT(c *nodeCtx) ([]ir.Expr, error) {
	x, err := c.arg(0)
	if err != nil {
		return nil, err
	}
	dims, ok := c.staticShape(0)
	if !ok || len(dims) != 3 {
		return nil, unsupported("STFT of a signal of non-static shape")
	}
	length := dims[1]
	var L int64
	switch {
	case c.has(3) && isConstIn(c, 3):
		l, _ := c.constInts(3)
		L = l[0]
	case c.has(2):
		n, err := c.vecLen(2)
		if err != nil {
			return nil, err
		}
		L = int64(n)
	default:
		return nil, c.notConstant(3)
	}
	if L <= 0 || L > length {
		return nil, fmt.Errorf("frame length %d for a signal of %d", L, length)
	}
	step := c.emitOp(op.Reshape, nil, c.i64(c.in[1]), shapeExpr(nil))
	frames := c.dynScalar(c.bin(op.Add, c.bin(op.FloorDivide, c.bin(op.Subtract, ic(length), ic(L)), step), ic(1)))
	// Frame f, offset j reads position f*step + j.
	starts := c.bin(op.Multiply, c.emitOp(op.ExpandDims, ir.Attrs{"axis": anyInts([]int64{1})}, c.arangeN(frames)), step)
	offs := make([]int64, L)
	for j := range offs {
		offs[j] = int64(j)
	}
	pos := c.bin(op.Add, starts, intsConst(offs)) // (frames, L)
	xr, xi, err := c.complexParts(x, dims)
	if err != nil {
		return nil, err
	}
	frame := func(v ir.Expr) ir.Expr {
		if v == nil {
			return nil
		}
		f := c.emitOp(op.Take, ir.Attrs{"axis": int64(1)}, v, pos) // (batch, frames, L)
		if c.has(2) {
			f = c.bin(op.Multiply, f, c.castTo(c.in[2], dtypeOf(v)))
		}
		return f
	}
	onesided := c.attrInt("onesided", 1) == 1
	yr, yi, _ := c.dftLast(frame(xr), frame(xi), L, L, onesided, false)
	return one(c.stackComplex(yr, yi))
}
