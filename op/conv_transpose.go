package op

import "github.com/phasec/phasec/ir"

// Transposed convolution: R.nn.conv1d_transpose, conv2d_transpose and
// conv3d_transpose, the gradient of conv*d with respect to its data.
//
// Inference follows TVM's InferStructInfoConv{1,2}dTranspose
// (src/relax/op/nn/convolution.cc): the data is (N, C, spatial...) in
// data_layout, the weight (C, O/groups, kernel...) in kernel_layout (IOW,
// IOHW, IODHW by default), and each output extent is
//
//	(in - 1)*stride - pad_before - pad_after + dilation*(kernel - 1) + output_padding + 1.
//
// The layouts may be any permutation of the canonical ones (NHWC, HWIO, ...);
// layouts with split axes (NCHW4c) are a diagnostic.
//
// The evaluator scatters: every input element, times every kernel tap,
// adds into output position in*stride + tap*dilation - pad_before. The
// legalization gathers, shaped as topi's conv2d_transpose_nchw /
// group_conv2d_transpose_nchw (python/tvm/topi/nn/conv2d_transpose.py):
// data_pad (the data dilated by the strides and padded by
// dilation*(kernel-1) - padding, fused into one stage), kernel_transform
// (the weight flipped and turned to OI order) and compute (a convolution
// with stride 1 and the given dilation). TVM legalizes only the canonical
// layouts and dilation 1 (python/tvm/relax/transform/legalize_ops/nn.py);
// phasec legalizes every call it can infer, since the gather is the same.
//
// TVM v0.23 registers no relax.nn.conv3d_transpose (topi has
// conv3d_transpose_ncdhw); phasec's follows the same rules on three axes.

var (
	// Conv1DTranspose is R.nn.conv1d_transpose(data, weight, strides,
	// padding, output_padding, dilation, groups, data_layout="NCW",
	// kernel_layout="IOW", out_layout=None, out_dtype=None).
	Conv1DTranspose = Define(newConvTransposeOp(1))
	// Conv2DTranspose is R.nn.conv2d_transpose (NCHW data, IOHW weight).
	Conv2DTranspose = Define(newConvTransposeOp(2))
	// Conv3DTranspose is R.nn.conv3d_transpose (NCDHW data, IODHW weight).
	Conv3DTranspose = Define(newConvTransposeOp(3))
)

// convTransposeAttrs are a call's attributes in canonical form.
type convTransposeAttrs struct {
	convAttrs
	outputPadding []int64
}

func newConvTransposeOp(spatial int) Def {
	dataLayout, oiLayout := convLayouts(spatial)
	kernelLayout := "IO" + oiLayout[2:]
	name := "relax.nn.conv" + itoa(spatial) + "d_transpose"
	op := &ir.Op{Name: name, Doc: itoa(spatial) + "-D transposed convolution (" + dataLayout + " data, " + kernelLayout + " weight).",
		Pure: true, Category: ir.CatTensor, Pattern: ir.PatternOutEWiseFusable,
		Params: convParams(spatial, dataLayout, kernelLayout, true)}
	rank := spatial + 2
	attrs := func(call *ir.Call) (a convTransposeAttrs, err error) {
		if a.convAttrs, err = readConvAttrs(op, call, spatial, kernelLayout); err != nil {
			return a, err
		}
		opad, _, err := opAttrInts(op, call, "output_padding")
		if err != nil {
			return a, err
		}
		if a.outputPadding, err = expandInts(op, "output_padding", opad, spatial); err != nil {
			return a, err
		}
		for i, p := range a.outputPadding {
			// TVM: "expects the output padding less than the strides".
			if p < 0 || p >= a.win.strides[i] {
				return a, opErrorf(op, "output_padding must be non-negative and less than strides, got output_padding %v and strides %v",
					a.outputPadding, a.win.strides)
			}
		}
		return a, nil
	}
	// outDim is TVM's output extent of one spatial axis.
	outDim := func(a convTransposeAttrs, i int, in, k ir.PrimExpr) ir.PrimExpr {
		w := a.win
		return ir.Simplify(ir.Add(ir.Add(ir.Mul(ir.Sub(in, ir.I64(1)), ir.I64(w.strides[i])),
			ir.Mul(ir.I64(w.dilation[i]), ir.Sub(k, ir.I64(1)))),
			ir.I64(a.outputPadding[i]+1-w.padding[i]-w.padding[spatial+i])))
	}
	op.Infer = func(_ *ir.InferCtx, call *ir.Call) (ir.StructInfo, error) {
		a, err := attrs(call)
		if err != nil {
			return nil, err
		}
		dx, dw, outDT, err := convOperandInfo(op, call, rank, a.outDType)
		if err != nil {
			return nil, err
		}
		if dx == nil {
			return ir.TensorInfoNDim(outDT, rank), nil
		}
		cx, cw := toCanonical(dx, a.data), toCanonical(dw, a.kernel)
		if dimsProvablyDiffer(cx[1], cw[0]) {
			return nil, opErrorf(op, "data has %s channels but the weight has %s input channels (axis I of %s)",
				fmtDim(cx[1]), fmtDim(cw[0]), kernelLayout)
		}
		if c, ok := ir.IntValue(cw[0]); ok && c%a.groups != 0 {
			return nil, opErrorf(op, "the weight's %d input channels are not divisible by groups=%d", c, a.groups)
		}
		out := []ir.PrimExpr{cx[0], ir.Simplify(ir.Mul(cw[1], ir.I64(a.groups)))}
		for i := range spatial {
			d := outDim(a, i, cx[2+i], cw[2+i])
			if provablyNegative(d) {
				return nil, opErrorf(op, "padding %v leaves a negative output extent %s on spatial axis %d", a.win.padding, fmtDim(d), i)
			}
			out = append(out, d)
		}
		return newTensor(outDT, fromCanonical(out, a.out), true, rank), nil
	}
	normalize := normalizeConv(op, spatial)
	op.Normalize = func(ctx *ir.InferCtx, call *ir.Call) (ir.Expr, error) {
		e, err := normalize(ctx, call)
		if err != nil {
			return nil, err
		}
		a, err := attrs(e.(*ir.Call))
		if err != nil {
			return nil, err
		}
		return withIntLists(op, e.(*ir.Call), map[string][]int64{"output_padding": a.outputPadding}), nil
	}
	eval := func(call *ir.Call, args []Value) (Value, error) {
		a, err := attrs(call)
		if err != nil {
			return nil, err
		}
		x, w, outDT, err := convOperands(op, args, rank, a.outDType)
		if err != nil {
			return nil, err
		}
		cx, cw := toCanonical(x.shape, a.data), toCanonical(w.shape, a.kernel)
		if cx[1] != cw[0] || cw[0]%a.groups != 0 {
			return nil, opErrorf(op, "data %v and weight %v do not fit groups=%d", x.shape, w.shape, a.groups)
		}
		icg, ocg := cw[0]/a.groups, cw[1]
		cout := []int64{cx[0], ocg * a.groups}
		for i := range spatial {
			d, _ := ir.IntValue(outDim(a, i, ir.I64(cx[2+i]), ir.I64(cw[2+i])))
			cout = append(cout, max(0, d))
		}
		if err := CheckSize(cout); err != nil {
			return nil, opErrorf(op, "%v", err)
		}
		// Scatter every data element times every tap of its channel's
		// kernels into the canonical (NC...) sums.
		floats := outDT.IsFloat()
		var sf []float64
		var si []int64
		if floats {
			sf = make([]float64, numElems(cout))
		} else {
			si = make([]int64, numElems(cout))
		}
		xi, wi, oi, li := make([]int64, rank), make([]int64, rank), make([]int64, rank), make([]int64, rank)
		taps := numElems(cw[1:])
		for k := range numElems(cx) {
			unravel(k, cx, xi)
			xk := layoutFlat(xi, a.data, x.shape, li)
			wi[0] = xi[1]
			oi[0] = xi[0]
		tap:
			for t := range taps {
				unravel(t, cw[1:], wi[1:])
				oi[1] = xi[1]/icg*ocg + wi[1]
				for i := range spatial {
					o := xi[2+i]*a.win.strides[i] + wi[2+i]*a.win.dilation[i] - a.win.padding[i]
					if o < 0 || o >= cout[2+i] {
						continue tap
					}
					oi[2+i] = o
				}
				dst, wk := flatIndex(oi, cout), layoutFlat(wi, a.kernel, w.shape, li)
				if floats {
					sf[dst] += x.float(xk) * w.float(wk)
				} else {
					si[dst] += x.int(xk) * w.int(wk)
				}
			}
		}
		out := newArray(outDT, fromCanonical(cout, a.out))
		for k := range numElems(cout) {
			unravel(k, cout, oi)
			j := layoutFlat(oi, a.out, out.shape, li)
			if floats {
				out.setFloat(j, sf[k])
			} else {
				out.setInt(j, si[k])
			}
		}
		return out.tensor()
	}
	legalize := func(k *Kernel, call *ir.Call) error {
		a, err := attrs(call)
		if err != nil {
			return err
		}
		x, err := k.Input(call.Args[0], "A")
		if err != nil {
			return err
		}
		w, err := k.Input(call.Args[1], "B")
		if err != nil {
			return err
		}
		out, err := k.Output("compute")
		if err != nil {
			return err
		}
		dt := out.DType
		cx, cw, cout := toCanonical(x.Shape, a.data), toCanonical(w.Shape, a.kernel), toCanonical(out.Shape, a.out)
		// data_pad: the data dilated by the strides, padded before by
		// dilation*(kernel-1) - pad_before, as long as the output plus the
		// dilated kernel's reach.
		before := make([]ir.PrimExpr, spatial)
		padShape := []ir.PrimExpr{cx[0], cx[1]}
		for i := range spatial {
			reach := ir.Simplify(ir.Mul(ir.I64(a.win.dilation[i]), ir.Sub(cw[2+i], ir.I64(1))))
			before[i] = ir.Simplify(ir.Sub(reach, ir.I64(a.win.padding[i])))
			padShape = append(padShape, ir.Simplify(ir.Add(cout[2+i], reach)))
		}
		pad := k.Alloc("data_pad", x.DType, padShape)
		k.Compute("data_pad", pad, "i", func(v []ir.PrimExpr) ir.PrimExpr {
			src := []ir.PrimExpr{v[0], v[1]}
			var cond ir.PrimExpr
			and := func(c ir.PrimExpr) {
				if cond == nil {
					cond = c
				} else {
					cond = ir.NewBinary(ir.OpAnd, cond, c)
				}
			}
			for i := range spatial {
				s := ir.I64(a.win.strides[i])
				j := ir.Simplify(ir.Sub(v[2+i], before[i]))
				and(ir.NewBinary(ir.OpGE, j, ir.I64(0)))
				and(ir.NewBinary(ir.OpLT, j, ir.Simplify(ir.Mul(cx[2+i], s))))
				if a.win.strides[i] == 1 {
					src = append(src, j)
					continue
				}
				and(ir.NewBinary(ir.OpEQ, ir.FloorMod(j, s), ir.I64(0)))
				src = append(src, ir.FloorDiv(j, s))
			}
			return intrinsic("if_then_else", x.DType, cond, Load(x, fromCanonical(src, a.data)), constOf(x.DType, 0))
		})
		// kernel_transform: (O/groups, C, kernel...), flipped.
		icg, ocg := cw[0], cw[1]
		if a.groups > 1 {
			icg = ir.Simplify(ir.FloorDiv(cw[0], ir.I64(a.groups)))
		}
		kt := k.Alloc("kernel_transform", w.DType, append([]ir.PrimExpr{ocg, cw[0]}, cw[2:]...))
		k.Compute("kernel_transform", kt, "i", func(v []ir.PrimExpr) ir.PrimExpr {
			src := []ir.PrimExpr{v[1], v[0]}
			for i := range spatial {
				src = append(src, ir.Simplify(ir.Sub(ir.Sub(cw[2+i], ir.I64(1)), v[2+i])))
			}
			return Load(w, fromCanonical(src, a.kernel))
		})
		k.Reduce("compute", out, "i", append([]ir.PrimExpr{icg}, cw[2:]...), constOf(dt, 0), func(s, r []ir.PrimExpr, acc ir.PrimExpr) ir.PrimExpr {
			cs := toCanonical(s, a.out)
			ch, oc := r[0], cs[1]
			if a.groups > 1 {
				ch = ir.Add(ir.Mul(ir.FloorDiv(cs[1], ocg), icg), r[0])
				oc = ir.FloorMod(cs[1], ocg)
			}
			pi, ki := []ir.PrimExpr{cs[0], ch}, []ir.PrimExpr{oc, ch}
			for i := range spatial {
				pi = append(pi, ir.Simplify(ir.Add(cs[2+i], ir.Mul(r[1+i], ir.I64(a.win.dilation[i])))))
				ki = append(ki, r[1+i])
			}
			return ir.NewBinary(ir.OpAdd, acc, ir.NewBinary(ir.OpMul, castTo(dt, Load(pad, pi)), castTo(dt, Load(kt, ki))))
		})
		return nil
	}
	return withSplitLayouts(Def{Op: op, Eval: eval, Legalize: legalize, Layout: layoutConv, MixedPrecision: mixedAlwaysOutDType}, convLayoutRoles(spatial, kernelLayout))
}
