package op

import (
	"slices"

	"github.com/phasec/phasec/ir"
)

// LayoutTransform is R.layout_transform(x, index_map, pad_value=None,
// axis_separators=None, input_axis_separators=None) (TVM's
// src/relax/op/tensor/manipulate.cc; legalized in
// python/tvm/relax/transform/legalize_ops/manipulate.py): element x[i] moves
// to out[index_map(i)]; the output's shape is the index map's image of x's
// (ir.IndexMap.MapShape), so a split that does not divide its dimension
// leaves positions no input element maps to, which hold pad_value (0 when
// None). Axis separators only say how a backend flattens the buffers into
// physical memory: they are checked and kept, and do not change what the op
// computes.
var LayoutTransform = Define(newLayoutTransformOp())

func newLayoutTransformOp() Def {
	op := &ir.Op{Name: "relax.layout_transform", Doc: "Moves each element of x to the position an index map gives, padding the positions no element reaches.",
		Pure: true, Category: ir.CatTensor, Pattern: ir.PatternInjective,
		Params: []ir.Param{{Name: "x", Kind: ir.ArgExpr}, {Name: "index_map", Kind: ir.AttrAny},
			{Name: "pad_value", Kind: ir.AttrAny, Optional: true, PrintNone: true},
			{Name: "axis_separators", Kind: ir.AttrInts, Default: []any{}},
			{Name: "input_axis_separators", Kind: ir.AttrInts, Default: []any{}}}}
	op.Infer = func(_ *ir.InferCtx, call *ir.Call) (ir.StructInfo, error) {
		t, err := firstTensorArg(op, call)
		if err != nil {
			return nil, err
		}
		m, err := layoutIndexMap(op, call)
		if err != nil {
			return nil, err
		}
		if _, err := layoutPadValue(op, call, t.DType); err != nil {
			return nil, err
		}
		for _, name := range []string{"axis_separators", "input_axis_separators"} {
			seps, _, err := opAttrInts(op, call, name)
			if err != nil {
				return nil, err
			}
			rank := len(m.Results)
			if name == "input_axis_separators" {
				rank = len(m.Params)
			}
			for _, s := range seps {
				if s < 0 || s > int64(rank) {
					return nil, opErrorf(op, "%s entry %d is outside [0, %d]", name, s, rank)
				}
			}
		}
		if t.NDim < 0 {
			return ir.TensorInfoNDim(t.DType, len(m.Results)), nil
		}
		// TVM's InferStructInfoLayoutTransform messages.
		if len(m.Params) != t.NDim {
			return nil, opErrorf(op, "number of dimensions in input must match the number of source dimensions in index map, but got %d != %d", t.NDim, len(m.Params))
		}
		dims, ok := t.Dims()
		if !ok {
			return ir.TensorInfoNDim(t.DType, len(m.Results)), nil
		}
		out, err := layoutShape(op, m, dims)
		if err != nil {
			return nil, err
		}
		// An image smaller than the input: two elements land on one position.
		in, to := ir.Simplify(shapeProduct(dims)), ir.Simplify(shapeProduct(out))
		if a, ok := ir.IntValue(in); ok {
			if b, ok := ir.IntValue(to); ok && b < a {
				return nil, opErrorf(op, "the index map is not injective: it maps the %d elements of x into %d positions", a, b)
			}
		}
		return ir.TensorInfoOf(t.DType, out...), nil
	}
	op.Normalize = schemaNormalize(op)
	eval := func(call *ir.Call, args []Value) (Value, error) {
		x, err := argArray(op, args, 0)
		if err != nil {
			return nil, err
		}
		m, err := layoutIndexMap(op, call)
		if err != nil {
			return nil, err
		}
		pad, err := layoutPadValue(op, call, x.dt)
		if err != nil {
			return nil, err
		}
		if len(m.Params) != len(x.shape) {
			return nil, opErrorf(op, "x has rank %d, the index map takes %d indices", len(x.shape), len(m.Params))
		}
		dims := make([]ir.PrimExpr, len(x.shape))
		for i, d := range x.shape {
			dims[i] = ir.I64(d)
		}
		outDims, err := layoutShape(op, m, dims)
		if err != nil {
			return nil, err
		}
		shape := make([]int64, len(outDims))
		for i, d := range outDims {
			shape[i], _ = ir.IntValue(d)
		}
		if err := CheckSize(shape); err != nil {
			return nil, opErrorf(op, "%v", err)
		}
		out := newArray(x.dt, shape)
		for j := range out.size() {
			if out.f != nil {
				out.setFloat(j, pad)
			} else {
				out.setInt(j, int64(pad))
			}
		}
		idx, to := make([]int64, len(x.shape)), make([]int64, len(shape))
		from := make(map[int64]int64, x.size()) // output position -> input element
		for k := range x.size() {
			unravel(k, x.shape, idx)
			if err := m.ApplyInts(idx, to); err != nil {
				return nil, opErrorf(op, "%v", err)
			}
			for i, v := range to {
				if v < 0 || v >= shape[i] {
					return nil, opErrorf(op, "the index map sends %v to %v, outside the output %v", idx, to, shape)
				}
			}
			j := flatIndex(to, shape)
			if prev, dup := from[j]; dup {
				other := make([]int64, len(x.shape))
				unravel(prev, x.shape, other)
				return nil, opErrorf(op, "the index map is not injective: it sends both %v and %v to %v", other, idx, to)
			}
			from[j] = k
			out.copyElem(j, x, k)
		}
		return out.tensor()
	}
	legalize := func(k *Kernel, call *ir.Call) error {
		m, err := layoutIndexMap(op, call)
		if err != nil {
			return err
		}
		for _, r := range m.Results {
			for _, v := range FreeVars(r) {
				if !slices.Contains(m.Params, v) {
					return ErrNotLegalizable // a symbolic variable of the function in the map
				}
			}
		}
		x, err := k.Input(call.Args[0], "x")
		if err != nil {
			return err
		}
		pad, err := layoutPadValue(op, call, x.DType)
		if err != nil {
			return err
		}
		padValue := constOf(x.DType, pad)
		inv, inRange := layoutInverse(m, x.Shape)
		k.Name = "te_layout_transform"
		if inRange != nil {
			k.Name = "te_layout_transform_with_pad"
		}
		out, err := k.Output(k.Name)
		if err != nil {
			return err
		}
		if inv == nil {
			// No closed-form inverse: fill with the pad value, then send
			// every element where the map says. Only where the map can be
			// injective (an output at least as large as the input): the
			// evaluator rejects a collision, a kernel would overwrite.
			var an ir.Analyzer
			grows := ir.NewBinary(ir.OpGE, shapeProduct(out.Shape), shapeProduct(x.Shape))
			for _, v := range FreeVars(grows) {
				an.AssumeNonNegative(v) // shape variables
			}
			if !an.CanProve(grows) {
				return ErrNotLegalizable
			}
			k.Compute(k.Name+"_pad", out, "ax", func([]ir.PrimExpr) ir.PrimExpr { return padValue })
			k.Scatter(k.Name, out, "ax", x.Shape, func(v []ir.PrimExpr) []ir.PrimExpr { return m.Apply(v) },
				func(v []ir.PrimExpr, _ ir.PrimExpr) ir.PrimExpr { return Load(x, v) })
			return nil
		}
		// As TVM's transform_layout of a copy: each output element reads
		// the input element the inverse map names, or is padding.
		k.Compute(k.Name, out, "ax", func(v []ir.PrimExpr) ir.PrimExpr {
			src := inv(v)
			if inRange == nil {
				return Load(x, src)
			}
			return intrinsic("if_then_else", x.DType, inRange(src), Load(x, src), padValue)
		})
		return nil
	}
	return Def{Op: op, Eval: eval, Legalize: legalize,
		MixedPrecision: mixedFollow}
}

func layoutIndexMap(op *ir.Op, call *ir.Call) (*ir.IndexMap, error) {
	m, ok := opAttr(op, call, "index_map").(*ir.IndexMap)
	if !ok {
		return nil, opErrorf(op, "index_map must be an index map (lambda i, j: (j, i)), got %s", ir.FormatAttrValue(opAttr(op, call, "index_map")))
	}
	return m, nil
}

// layoutPadValue is the pad value as a number: 0 when None; a Python int or
// float converts to x's dtype (as relax.op.layout_transform does); a typed
// constant must have x's dtype.
func layoutPadValue(op *ir.Op, call *ir.Call, dt ir.DataType) (float64, error) {
	switch v := opAttr(op, call, "pad_value").(type) {
	case nil:
		return 0, nil
	case int64:
		return float64(v), nil
	case float64:
		if !dt.IsFloat() && !dt.IsVoid() {
			return 0, opErrorf(op, "pad_value %v is not a value of the input dtype %s", v, dt)
		}
		return v, nil
	case ir.PrimExpr:
		if !dt.IsVoid() && v.DType() != dt {
			return 0, opErrorf(op, "layout_transform pad_value dtype (%s) and input dtype (%s) must be the same", v.DType(), dt)
		}
		switch c := v.(type) {
		case *ir.IntImm:
			return float64(c.Value), nil
		case *ir.FloatImm:
			return c.Value, nil
		}
	}
	return 0, opErrorf(op, "pad_value must be None or a constant, got %s", ir.FormatAttrValue(opAttr(op, call, "pad_value")))
}

// layoutShape is the index map's image of dims, which must start at 0.
func layoutShape(op *ir.Op, m *ir.IndexMap, dims []ir.PrimExpr) ([]ir.PrimExpr, error) {
	ext, off, err := m.MapShape(dims)
	if err != nil {
		return nil, opErrorf(op, "%v", err)
	}
	for i, o := range off {
		if v, ok := ir.IntValue(o); !ok || v != 0 {
			return nil, opErrorf(op, "index map result %d (%s) takes values from %s, not from 0", i, ir.FormatPrim(m.Results[i], nil), fmtDim(o))
		}
	}
	return ext, nil
}

// layoutInverse inverts the index maps made of permutations and splits:
// each parameter p is a result by itself, or the pair p // c, p % c of
// results (c a positive constant). inv gives the input position of output
// position v; inRange, nil when every output position has an input
// element, says whether it has one. inv is nil for other maps.
func layoutInverse(m *ir.IndexMap, dims []ir.PrimExpr) (inv func(v []ir.PrimExpr) []ir.PrimExpr, inRange func(src []ir.PrimExpr) ir.PrimExpr) {
	type source struct{ whole, quot, rem int }
	src := make(map[*ir.PrimVar]*source, len(m.Params))
	for _, p := range m.Params {
		src[p] = &source{-1, -1, -1}
	}
	divisor := make([]ir.PrimExpr, len(m.Params))
	for r, e := range m.Results {
		var p *ir.PrimVar
		slot := func(s *source) *int { return &s.whole }
		switch x := e.(type) {
		case *ir.PrimVar:
			p = x
		case *ir.Binary:
			v, ok := x.A.(*ir.PrimVar)
			c, isConst := ir.IntValue(x.B)
			if !ok || !isConst || c <= 0 || (x.Op != ir.OpFloorDiv && x.Op != ir.OpFloorMod) {
				return nil, nil
			}
			p = v
			if x.Op == ir.OpFloorDiv {
				slot = func(s *source) *int { return &s.quot }
			} else {
				slot = func(s *source) *int { return &s.rem }
			}
			for i, q := range m.Params {
				if q == v {
					if divisor[i] != nil && !ir.StructuralEqual(divisor[i], x.B, ir.EqualOptions{}) {
						return nil, nil
					}
					divisor[i] = x.B
				}
			}
		default:
			return nil, nil
		}
		s, ok := src[p]
		if !ok || *slot(s) >= 0 {
			return nil, nil
		}
		*slot(s) = r
	}
	var needCheck []int
	for i, p := range m.Params {
		s := src[p]
		switch {
		case s.whole >= 0 && s.quot < 0 && s.rem < 0:
		case s.whole < 0 && s.quot >= 0 && s.rem >= 0:
			c, _ := ir.IntValue(divisor[i])
			if d, ok := ir.IntValue(dims[i]); !ok || d%c != 0 {
				needCheck = append(needCheck, i)
			}
		default:
			return nil, nil
		}
	}
	inv = func(v []ir.PrimExpr) []ir.PrimExpr {
		out := make([]ir.PrimExpr, len(m.Params))
		for i, p := range m.Params {
			s := src[p]
			if s.whole >= 0 {
				out[i] = v[s.whole]
			} else {
				out[i] = ir.Add(ir.Mul(v[s.quot], divisor[i]), v[s.rem])
			}
		}
		return out
	}
	if len(needCheck) == 0 {
		return inv, nil
	}
	return inv, func(at []ir.PrimExpr) ir.PrimExpr {
		var cond ir.PrimExpr
		for _, i := range needCheck {
			c := ir.NewBinary(ir.OpLT, at[i], dims[i])
			if cond == nil {
				cond = c
			} else {
				cond = ir.NewBinary(ir.OpAnd, cond, c)
			}
		}
		return cond
	}
}
