package op

import (
	"math"
	"slices"

	"github.com/phasec/phasec/ir"
)

// Image ops: R.image.resize2d (TVM's src/relax/op/image/resize.cc for the
// struct info; python/tvm/relax/transform/legalize_ops/image.py and
// python/tvm/topi/image/resize.py for what it computes).
//
// topi computes the source coordinate of every output pixel in float32
// whatever the data's dtype, and interpolates in the wider of float32 and
// the data's float type; the evaluator rounds each of those operations the
// same way, so integer outputs (which truncate) agree exactly.

// Resize2D is R.image.resize2d(data, size, roi=None, layout="NCHW",
// method="linear", coordinate_transformation_mode="half_pixel",
// rounding_method="round", cubic_alpha=-0.75, cubic_exclude=0,
// extrapolation_value=0.0, out_dtype=None).
var Resize2D = Define(newResize2DOp())

// resizeAttrs are a resize2d call's attributes, checked.
type resizeAttrs struct {
	axes                   []int      // positions of H and W in data
	roi                    [4]float64 // start_h, start_w, end_h, end_w (float32 values)
	method, mode, rounding string
	alpha, extrapolation   float64
	exclude                bool
	outDT                  ir.DataType // void: data's dtype
}

var (
	resizeMethods  = []string{"nearest_neighbor", "linear", "cubic"}
	resizeModes    = []string{"half_pixel", "align_corners", "asymmetric", "pytorch_half_pixel", "tf_half_pixel_for_nn", "tf_crop_and_resize"}
	resizeRounding = []string{"", "round", "round_prefer_floor", "round_prefer_ceil", "floor", "ceil"}
)

func newResize2DOp() Def {
	op := &ir.Op{Name: "relax.image.resize2d", Doc: "Resizes the H and W axes of images to size by interpolation.", Pure: true, Category: ir.CatTensor, Pattern: ir.PatternInjective,
		Params: []ir.Param{{Name: "data", Kind: ir.ArgExpr}, {Name: "size", Kind: ir.ArgShape},
			{Name: "roi", Kind: ir.AttrAny, Default: []any{0.0, 0.0, 0.0, 0.0}},
			{Name: "layout", Kind: ir.AttrStr, Default: "NCHW"},
			{Name: "method", Kind: ir.AttrStr, Default: "linear"},
			{Name: "coordinate_transformation_mode", Kind: ir.AttrStr, Default: "half_pixel"},
			{Name: "rounding_method", Kind: ir.AttrStr, Default: "round"},
			{Name: "cubic_alpha", Kind: ir.AttrFloat, Default: -0.75},
			{Name: "cubic_exclude", Kind: ir.AttrInt, Default: int64(0)},
			{Name: "extrapolation_value", Kind: ir.AttrFloat, Default: 0.0},
			{Name: "out_dtype", Kind: ir.AttrDType, Default: ir.Void}}}
	attrs := func(call *ir.Call) (resizeAttrs, error) {
		var r resizeAttrs
		layout, _ := opAttr(op, call, "layout").(string)
		if layout != "NCHW" && layout != "NHWC" {
			return r, opErrorf(op, "layout %q is not supported (NCHW or NHWC)", layout)
		}
		r.axes, _ = spatialAxes(op, layout, 2)
		roi, err := resizeROI(op, opAttr(op, call, "roi"))
		if err != nil {
			return r, err
		}
		for i, v := range roi {
			r.roi[i] = round32(v) // TVM holds them as float32 immediates
		}
		for _, s := range []struct {
			name  string
			dst   *string
			valid []string
		}{{"method", &r.method, resizeMethods}, {"coordinate_transformation_mode", &r.mode, resizeModes}, {"rounding_method", &r.rounding, resizeRounding}} {
			*s.dst, _ = opAttr(op, call, s.name).(string)
			if !slices.Contains(s.valid, *s.dst) {
				return r, opErrorf(op, "%s %q is not one of %q", s.name, *s.dst, s.valid)
			}
		}
		r.alpha, _ = opAttr(op, call, "cubic_alpha").(float64)
		r.extrapolation, _ = opAttr(op, call, "extrapolation_value").(float64)
		ex, _, err := opAttrInt(op, call, "cubic_exclude")
		if err != nil {
			return r, err
		}
		r.exclude = ex != 0
		r.outDT, err = opAttrDType(op, call, "out_dtype")
		return r, err
	}
	// outDims is data's shape with H and W replaced by size.
	outDims := func(r resizeAttrs, data, size []ir.PrimExpr) ([]ir.PrimExpr, error) {
		out := slices.Clone(data)
		for i, ax := range r.axes {
			out[ax] = size[i]
			if provablyNegative(size[i]) {
				return nil, opErrorf(op, "size %s is negative", fmtDim(size[i]))
			}
			if n, ok := ir.IntValue(size[i]); ok && n == 1 && r.mode == "align_corners" {
				return nil, opErrorf(op, "coordinate_transformation_mode \"align_corners\" divides by the output extent minus 1, so size must not be 1")
			}
		}
		return out, nil
	}
	op.Infer = func(_ *ir.InferCtx, call *ir.Call) (ir.StructInfo, error) {
		x, err := firstTensorArg(op, call)
		if err != nil {
			return nil, err
		}
		r, err := attrs(call)
		if err != nil {
			return nil, err
		}
		var size []ir.PrimExpr
		ndim := 2
		if se := resizeShorthand(call); se != nil {
			size = se.Values
		} else if size, ndim, _, err = shapeArg(op, call, 1); err != nil {
			return nil, err
		}
		if ndim != 2 && ndim != -1 {
			return nil, opErrorf(op, "size must be a 2-D shape (height, width), got %d dimensions", ndim)
		}
		if x.NDim >= 0 && x.NDim != 4 {
			return nil, opErrorf(op, "data must be a 4-D tensor, got rank %d", x.NDim)
		}
		outDT := r.outDT
		if outDT.IsVoid() {
			outDT = x.DType
		}
		dims, ok := x.Dims()
		if !ok || size == nil {
			return ir.TensorInfoNDim(outDT, 4), nil
		}
		out, err := outDims(r, dims, size)
		if err != nil {
			return nil, err
		}
		return newTensor(outDT, out, true, 4), nil
	}
	op.Normalize = func(ctx *ir.InferCtx, call *ir.Call) (ir.Expr, error) {
		c, err := normalizeSchema(op, call)
		if err != nil {
			return nil, err
		}
		roi, err := resizeROI(op, opAttr(op, c, "roi"))
		if err != nil {
			return nil, err
		}
		canon := []any{roi[0], roi[1], roi[2], roi[3]}
		size := resizeShorthand(c)
		if attrValueEqual(c.Attrs["roi"], canon) && size == nil {
			return c, nil
		}
		out := *c
		out.SetStructInfo(nil)
		out.Attrs = copyAttrsOnce(nil, c.Attrs)
		out.Attrs["roi"] = canon
		if size != nil {
			out.Args = slices.Clone(c.Args)
			out.Args[1] = size
		}
		return &out, nil
	}
	eval := func(call *ir.Call, args []Value) (Value, error) {
		x, err := argArray(op, args, 0)
		if err != nil {
			return nil, err
		}
		r, err := attrs(call)
		if err != nil {
			return nil, err
		}
		size, err := argShape(op, args, 1)
		if err != nil {
			return nil, err
		}
		if len(x.shape) != 4 || len(size) != 2 {
			return nil, opErrorf(op, "data must be 4-D and size 2-D, got %v and %v", x.shape, size)
		}
		return evalResize2D(op, call, x, size, r)
	}
	legalize := func(k *Kernel, call *ir.Call) error {
		r, err := attrs(call)
		if err != nil {
			return err
		}
		a, err := k.Input(call.Args[0], "A")
		if err != nil {
			return err
		}
		out, err := k.Output("resize")
		if err != nil {
			return err
		}
		if _, err := outDims(r, a.Shape, []ir.PrimExpr{out.Shape[r.axes[0]], out.Shape[r.axes[1]]}); err != nil {
			return err
		}
		legalizeResize2D(k, a, out, r)
		return nil
	}
	return Def{Op: op, Eval: eval, Legalize: legalize, Layout: layoutResize2D, MixedPrecision: mixedFollow}
}

// resizeShorthand is the (s, s) size of TVM's one-extent forms of size, an
// integer or a 1-tuple, or nil for any other argument.
func resizeShorthand(call *ir.Call) *ir.ShapeExpr {
	if len(call.Args) < 2 {
		return nil
	}
	switch s := call.Args[1].(type) {
	case *ir.PrimValue:
		if s.Value.DType().IsInt() {
			return ir.NewShapeExpr(s.Value, s.Value)
		}
	case *ir.ShapeExpr:
		if len(s.Values) == 1 {
			return ir.NewShapeExpr(s.Values[0], s.Values[0])
		}
	}
	return nil
}

// resizeROI reads roi: four numbers (ints, floats or T.float32 literals), or
// one number for all four, or None for zeros, as TVM's resize2d accepts.
func resizeROI(op *ir.Op, v any) ([4]float64, error) {
	var roi [4]float64
	num := func(x any) (float64, bool) {
		switch x := x.(type) {
		case float64:
			return x, true
		case int64:
			return float64(x), true
		case *ir.FloatImm:
			return x.Value, true
		case *ir.IntImm:
			return float64(x.Value), true
		}
		return 0, false
	}
	if v == nil { // roi=None: TVM's (0, 0, 0, 0)
		return roi, nil
	}
	if f, ok := num(v); ok {
		return [4]float64{f, f, f, f}, nil
	}
	list, ok := v.([]any)
	if ok && len(list) == 4 {
		for i, x := range list {
			if roi[i], ok = num(x); !ok {
				break
			}
		}
	}
	if !ok || len(list) != 4 {
		return roi, opErrorf(op, "roi must be 4 numbers (start_h, start_w, end_h, end_w), got %v", v)
	}
	return roi, nil
}

// resizeIntDiv reports topi's shortcut for nearest_neighbor with asymmetric
// coordinates (can_convert_multiply_to_intdiv): when the input and output
// extents are constants and the output an integer multiple of the input,
// the source index is x / (out/in) in integers, whatever rounding_method
// says. It returns the multiple.
func resizeIntDiv(r resizeAttrs, in, out ir.PrimExpr) (int64, bool) {
	if r.method != "nearest_neighbor" || r.mode != "asymmetric" {
		return 0, false
	}
	n, ok1 := ir.IntValue(in)
	m, ok2 := ir.IntValue(out)
	if !ok1 || !ok2 || n <= 0 || m <= 0 || m%n != 0 {
		return 0, false
	}
	const epsilon = 1e-5
	if float64(m/n) > 1/(epsilon*float64(n)+epsilon) {
		return 0, false
	}
	return m / n, true
}

// round32 rounds to float32, as one float32 operation of topi's does.
func round32(v float64) float64 { return float64(float32(v)) }

// resizeCoord is topi's get_inx: the float32 source coordinate of output
// index x along an axis of extent in resized to out, with roi's start and
// end for tf_crop_and_resize.
func resizeCoord(mode string, x, in, out int64, start, end float64) float64 {
	fx, fin, fout := float64(x), float64(in), float64(out)
	scale := round32(fin / fout)
	switch mode {
	case "half_pixel":
		return round32(round32(round32(fx+0.5)*scale) - 0.5)
	case "align_corners":
		return round32(round32((fin-1)/(fout-1)) * fx)
	case "asymmetric":
		return round32(scale * fx)
	case "pytorch_half_pixel":
		if out > 1 {
			return round32(round32(round32(fx+0.5)*scale) - 0.5)
		}
		return 0
	case "tf_half_pixel_for_nn":
		return round32(round32(fx+0.5) * scale)
	}
	// tf_crop_and_resize
	if out > 1 {
		return round32(round32(start*(fin-1)) + round32(round32(round32(fx*round32(end-start))*(fin-1))/(fout-1)))
	}
	return round32(round32(round32(0.5*round32(start+end))) * (fin - 1))
}

// resizeRound is topi's get_closest_index for a float32 coordinate.
func resizeRound(rounding, mode string, v float64) int64 {
	if rounding == "" {
		rounding = "floor"
		if mode == "align_corners" {
			rounding = "round"
		}
	}
	const epsilon = 1e-5
	switch rounding {
	case "round":
		v = math.RoundToEven(v)
	case "round_prefer_floor":
		v = math.Ceil(round32(v - 0.5))
	case "round_prefer_ceil":
		v = math.Floor(round32(v + 0.5))
	case "floor":
		v = math.Floor(round32(v + round32(epsilon)))
	default: // ceil
		v = math.Ceil(round32(v - round32(epsilon)))
	}
	return int64(v)
}

// cubicWeights are topi's _cubic_spline_weights of fraction t (float32).
func cubicWeights(t, alpha float64) [4]float64 {
	a := round32(alpha)
	t2 := round32(t * t)
	t3 := round32(t2 * t)
	return [4]float64{
		round32(a * round32(round32(t3-round32(2*t2))+t)),
		round32(round32(round32(round32(alpha+2)*t3)-round32(round32(3+alpha)*t2)) + 1),
		round32(round32(round32(round32(-(alpha+2))*t3)+round32(round32(3+2*alpha)*t2)) - round32(a*t)),
		round32(round32(round32(-alpha)*t3) + round32(a*t2)),
	}
}

func evalResize2D(op *ir.Op, call *ir.Call, x *array, size []int64, r resizeAttrs) (Value, error) {
	outDT := r.outDT
	if outDT.IsVoid() {
		outDT = x.dt
	}
	shape := slices.Clone(x.shape)
	in := make([]int64, 2)
	for i, ax := range r.axes {
		shape[ax], in[i] = size[i], x.shape[ax]
	}
	if err := CheckSize(shape); err != nil {
		return nil, opErrorf(op, "%v", err)
	}
	out := newArray(outDT, shape)
	if out.size() == 0 {
		return out.tensor()
	}
	if in[0] == 0 || in[1] == 0 {
		return nil, opErrorf(op, "cannot resize an empty image %v to %v", x.shape, size)
	}
	if r.mode == "align_corners" && (size[0] == 1 || size[1] == 1) {
		return nil, opErrorf(op, "coordinate_transformation_mode \"align_corners\" divides by the output extent minus 1, so size must not be 1")
	}
	// The integer shortcut depends on which extents were constants when
	// the call was compiled: the data's static shape and the size literal.
	var intDiv [2]int64
	if t, ok := argStructInfo(call.Args[0]).(*ir.TensorInfo); ok {
		if dims, ok := t.Dims(); ok {
			if sizeDims, _, _, _ := shapeArg(op, call, 1); sizeDims != nil {
				for i, ax := range r.axes {
					intDiv[i], _ = resizeIntDiv(r, dims[ax], sizeDims[i])
				}
			}
		}
	}
	// Interpolation runs in float64 for float64 data, else in float32.
	wide := func(v float64) float64 { return round32(v) }
	if x.dt.IsFloat() && x.dt.Bits == 64 {
		wide = func(v float64) float64 { return v }
	}
	idx := make([]int64, 4)
	src := make([]int64, 4)
	// at is the flat index of pixel (y, xx) of the current image, clamped
	// to its edges as topi's get_2d_pixel does.
	at := func(y, xx int64) int64 {
		copy(src, idx)
		src[r.axes[0]] = max(min(y, in[0]-1), 0)
		src[r.axes[1]] = max(min(xx, in[1]-1), 0)
		return flatIndex(src, x.shape)
	}
	pixel := func(y, xx int64) float64 { return x.float(at(y, xx)) }
	lerp := func(a, b, t float64) float64 { return wide(wide(a*round32(1-t)) + wide(b*t)) }
	for k := range out.size() {
		unravel(k, shape, idx)
		var coord [2]float64
		for i, ax := range r.axes {
			coord[i] = resizeCoord(r.mode, idx[ax], in[i], size[i], r.roi[i], r.roi[2+i])
		}
		var v float64
		switch r.method {
		case "nearest_neighbor":
			var c [2]int64
			for i, ax := range r.axes {
				if intDiv[i] > 0 {
					c[i] = idx[ax] / intDiv[i]
				} else {
					c[i] = resizeRound(r.rounding, r.mode, coord[i])
				}
			}
			if r.mode != "tf_crop_and_resize" {
				out.copyElem(k, x, at(c[0], c[1])) // exact for every dtype
				continue
			}
			v = wide(pixel(c[0], c[1])) // meets the float32 extrapolation value
		case "linear":
			y0, x0 := math.Floor(coord[0]), math.Floor(coord[1])
			ty, tx := round32(coord[0]-y0), round32(coord[1]-x0)
			yi, xi := int64(y0), int64(x0)
			top := lerp(wide(pixel(yi, xi)), wide(pixel(yi, xi+1)), tx)
			bottom := lerp(wide(pixel(yi+1, xi)), wide(pixel(yi+1, xi+1)), tx)
			v = lerp(top, bottom, ty)
		default: // cubic
			var w [2][4]float64
			var base [2]int64
			for i := range 2 {
				fl := math.Floor(coord[i])
				base[i] = int64(fl)
				w[i] = cubicWeights(round32(coord[i]-fl), r.alpha)
				if !r.exclude {
					continue
				}
				var sum float64
				for j := range 4 {
					if base[i]-1+int64(j) < 0 || base[i]+int64(j) > in[i] {
						w[i][j] = 0
					}
					sum = round32(sum + w[i][j])
				}
				for j := range 4 {
					w[i][j] = round32(w[i][j] / sum)
				}
			}
			kernel := func(p [4]float64, w [4]float64) float64 {
				s := wide(p[0] * w[0])
				for j := 1; j < 4; j++ {
					s = wide(s + wide(p[j]*w[j]))
				}
				return s
			}
			var cols [4]float64
			for j := range 4 {
				var row [4]float64
				for i := range 4 {
					row[i] = wide(pixel(base[0]+int64(j)-1, base[1]+int64(i)-1))
				}
				cols[j] = kernel(row, w[1])
			}
			v = kernel(cols, w[0])
		}
		if r.mode == "tf_crop_and_resize" {
			for i := range 2 {
				if coord[i] < 0 || coord[i] > float64(in[i]-1) {
					v = round32(r.extrapolation)
				}
			}
		}
		out.setFloat(k, v)
	}
	return out.tensor()
}

// legalizeResize2D emits topi.image.resize2d's compute (block resize) with
// the operations, dtypes and order of python/tvm/topi/image/resize.py.
func legalizeResize2D(k *Kernel, a, out *ir.Buffer, r resizeAttrs) {
	f := ir.Float32
	cf := func(v float64) ir.PrimExpr { return ir.NewFloat(f, v) }
	toF := func(e ir.PrimExpr) ir.PrimExpr { return castTo(f, e) }
	add := func(x, y ir.PrimExpr) ir.PrimExpr { return ir.NewBinary(ir.OpAdd, x, y) }
	sub := func(x, y ir.PrimExpr) ir.PrimExpr { return ir.NewBinary(ir.OpSub, x, y) }
	mul := func(x, y ir.PrimExpr) ir.PrimExpr { return ir.NewBinary(ir.OpMul, x, y) }
	div := func(x, y ir.PrimExpr) ir.PrimExpr { return ir.NewBinary(ir.OpDiv, x, y) }
	choose := func(cond, t, e ir.PrimExpr) ir.PrimExpr { return intrinsic("if_then_else", t.DType(), cond, t, e) }
	wideDT := f
	if a.DType.IsFloat() && a.DType.Bits == 64 {
		wideDT = ir.Float64
	}
	wide := func(e ir.PrimExpr) ir.PrimExpr { return castTo(wideDT, e) }
	var in, size [2]ir.PrimExpr
	var intDiv [2]int64
	for i, ax := range r.axes {
		in[i], size[i] = a.Shape[ax], out.Shape[ax]
		intDiv[i], _ = resizeIntDiv(r, in[i], size[i])
	}
	minus1 := func(e ir.PrimExpr) ir.PrimExpr { return ir.Simplify(ir.Sub(e, ir.I64(1))) }
	// coord is get_inx: the float32 source coordinate of output index x.
	coord := func(x ir.PrimExpr, i int) ir.PrimExpr {
		fx := toF(x)
		scale := div(toF(in[i]), toF(size[i]))
		halfPixel := func() ir.PrimExpr { return sub(mul(add(fx, cf(0.5)), scale), cf(0.5)) }
		above1 := ir.NewBinary(ir.OpGT, size[i], ir.I64(1))
		start, end := r.roi[i], r.roi[2+i]
		switch r.mode {
		case "half_pixel":
			return halfPixel()
		case "align_corners":
			return mul(div(toF(minus1(in[i])), toF(minus1(size[i]))), fx)
		case "asymmetric":
			return mul(scale, fx)
		case "pytorch_half_pixel":
			return choose(above1, halfPixel(), cf(0))
		case "tf_half_pixel_for_nn":
			return mul(add(fx, cf(0.5)), scale)
		}
		crop := add(mul(cf(start), toF(minus1(in[i]))), div(mul(mul(fx, cf(end-start)), toF(minus1(in[i]))), toF(minus1(size[i]))))
		return choose(above1, crop, mul(cf(0.5*round32(start+end)), toF(minus1(in[i]))))
	}
	closest := func(c ir.PrimExpr) ir.PrimExpr {
		rounding := r.rounding
		if rounding == "" {
			rounding = "floor"
			if r.mode == "align_corners" {
				rounding = "round"
			}
		}
		var e ir.PrimExpr
		switch rounding {
		case "round":
			e = intrinsic("round", f, c)
		case "round_prefer_floor":
			e = intrinsic("ceil", f, sub(c, cf(0.5)))
		case "round_prefer_ceil":
			e = intrinsic("floor", f, add(c, cf(0.5)))
		case "floor":
			e = intrinsic("floor", f, add(c, cf(1e-5)))
		default:
			e = intrinsic("ceil", f, sub(c, cf(1e-5)))
		}
		return castTo(ir.Int64, e)
	}
	k.Compute("resize", out, "i", func(v []ir.PrimExpr) ir.PrimExpr {
		// pixel is get_2d_pixel: data at (y, x) clamped to the image.
		pixel := func(y, x ir.PrimExpr) ir.PrimExpr {
			idx := slices.Clone(v)
			for i, p := range []ir.PrimExpr{y, x} {
				idx[r.axes[i]] = ir.Max(ir.Min(p, minus1(in[i])), ir.I64(0))
			}
			return Load(a, idx)
		}
		var cs [2]ir.PrimExpr
		for i, ax := range r.axes {
			cs[i] = coord(v[ax], i)
		}
		var value ir.PrimExpr
		switch r.method {
		case "nearest_neighbor":
			var ix [2]ir.PrimExpr
			for i, ax := range r.axes {
				if intDiv[i] > 0 {
					ix[i] = ir.FloorDiv(v[ax], ir.I64(intDiv[i]))
				} else {
					ix[i] = closest(cs[i])
				}
			}
			value = pixel(ix[0], ix[1])
			if r.mode == "tf_crop_and_resize" {
				value = wide(value)
			}
		case "linear":
			var base [2]ir.PrimExpr
			var frac [2]ir.PrimExpr
			for i := range 2 {
				fl := intrinsic("floor", f, cs[i])
				base[i], frac[i] = castTo(ir.Int64, fl), sub(cs[i], fl)
			}
			lerp := func(p, q, t ir.PrimExpr) ir.PrimExpr {
				return add(mul(p, wide(sub(cf(1), t))), mul(q, wide(t)))
			}
			at := func(j, i int64) ir.PrimExpr {
				return wide(pixel(ir.Add(base[0], ir.I64(j)), ir.Add(base[1], ir.I64(i))))
			}
			value = lerp(lerp(at(0, 0), at(0, 1), frac[1]), lerp(at(1, 0), at(1, 1), frac[1]), frac[0])
		default: // cubic
			var base [2]ir.PrimExpr
			var w [2][4]ir.PrimExpr
			alpha := r.alpha
			for i := range 2 {
				fl := intrinsic("floor", f, cs[i])
				base[i] = castTo(ir.Int64, fl)
				t := sub(cs[i], fl)
				t2 := mul(t, t)
				t3 := mul(t2, t)
				w[i] = [4]ir.PrimExpr{
					mul(cf(alpha), add(sub(t3, mul(cf(2), t2)), t)),
					add(sub(mul(cf(alpha+2), t3), mul(cf(3+alpha), t2)), cf(1)),
					sub(add(mul(cf(-(alpha+2)), t3), mul(cf(3+2*alpha), t2)), mul(cf(alpha), t)),
					add(mul(cf(-alpha), t3), mul(cf(alpha), t2)),
				}
				if !r.exclude {
					continue
				}
				var sum ir.PrimExpr
				for j := range 4 {
					outside := ir.NewBinary(ir.OpOr, ir.NewBinary(ir.OpLT, ir.Add(base[i], ir.I64(int64(j)-1)), ir.I64(0)),
						ir.NewBinary(ir.OpGT, ir.Add(base[i], ir.I64(int64(j))), in[i]))
					w[i][j] = choose(outside, cf(0), w[i][j])
					if sum == nil {
						sum = w[i][j]
					} else {
						sum = add(sum, w[i][j])
					}
				}
				for j := range 4 {
					w[i][j] = div(w[i][j], sum)
				}
			}
			kernel := func(p [4]ir.PrimExpr, w [4]ir.PrimExpr) ir.PrimExpr {
				s := mul(p[0], wide(w[0]))
				for j := 1; j < 4; j++ {
					s = add(s, mul(p[j], wide(w[j])))
				}
				return s
			}
			var cols [4]ir.PrimExpr
			for j := range 4 {
				var row [4]ir.PrimExpr
				for i := range 4 {
					row[i] = wide(pixel(ir.Add(base[0], ir.I64(int64(j)-1)), ir.Add(base[1], ir.I64(int64(i)-1))))
				}
				cols[j] = kernel(row, w[1])
			}
			value = kernel(cols, w[0])
		}
		if r.mode == "tf_crop_and_resize" {
			e := wide(cf(r.extrapolation))
			for i := range 2 {
				outside := ir.NewBinary(ir.OpOr, ir.NewBinary(ir.OpLT, cs[i], cf(0)), ir.NewBinary(ir.OpGT, cs[i], toF(minus1(in[i]))))
				value = choose(outside, e, value)
			}
		}
		return castTo(out.DType, value)
	})
}
