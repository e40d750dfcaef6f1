package op

import (
	"github.com/phasec/phasec/ir"
)

// ScatterND is R.scatter_nd(data, indices, updates, reduction="update")
// (ONNX ScatterND; TVM's src/relax/op/tensor/manipulate.cc, legalized in
// python/tvm/relax/transform/legalize_ops/manipulate.py through
// topi.scatter_nd): a copy of data where, for every position p of
// indices.shape[:-1], the slice data[indices[p, 0], ..., indices[p, K-1]]
// (K = indices.shape[-1]) is combined with updates[p]. Updates apply in C
// order of p, so with "update" the last duplicate wins, as topi's serial
// loop does. Negative indices count from the end of their dimension.
var ScatterND = Define(newScatterNDOp())

// scatterReductions are the reduction attributes of scatter_nd (and of
// scatter_elements, which adds "mean").
var scatterReductions = []string{"update", "add", "mul", "min", "max"}

func newScatterNDOp() Def {
	op := &ir.Op{Name: "relax.scatter_nd", Doc: "Scatters updates into a copy of data at the multi-indices in indices' last axis.",
		Pure: true, Category: ir.CatTensor, Pattern: ir.PatternOpaque,
		Params: []ir.Param{{Name: "data", Kind: ir.ArgExpr}, {Name: "indices", Kind: ir.ArgExpr}, {Name: "updates", Kind: ir.ArgExpr},
			{Name: "reduction", Kind: ir.AttrStr, Default: "update"}}}
	reduction := func(call *ir.Call) (string, error) {
		r, _ := opAttr(op, call, "reduction").(string)
		for _, ok := range scatterReductions {
			if r == ok {
				return r, nil
			}
		}
		return "", opErrorf(op, "reduction must be one of update, add, mul, min, max; got %q", r)
	}
	op.Infer = func(_ *ir.InferCtx, call *ir.Call) (ir.StructInfo, error) {
		ts, err := tensorArgs(op, call, 3)
		if err != nil {
			return nil, err
		}
		t, idx, upd := ts[0], ts[1], ts[2]
		if _, err := reduction(call); err != nil {
			return nil, err
		}
		// The rules of TVM's InferStructInfoScatterND, with its messages.
		if t.DType.IsVoid() || upd.DType.IsVoid() {
			return nil, opErrorf(op, "data and updates must have known dtypes, got data: %s, updates: %s", fmtDType(t.DType), fmtDType(upd.DType))
		}
		if t.DType != upd.DType {
			return nil, opErrorf(op, "data and updates must have the same dtype, got data: %s, updates: %s", t.DType, upd.DType)
		}
		if !idx.DType.IsVoid() && !idx.DType.IsInteger() {
			return nil, opErrorf(op, "indices must have an integer dtype, got %s", idx.DType)
		}
		if idx.NDim == 0 {
			return nil, opErrorf(op, "indices must have rank at least 1")
		}
		dd, okD := t.Dims()
		di, okI := idx.Dims()
		du, okU := upd.Dims()
		if okD && okI && okU {
			k, ok := ir.IntValue(di[len(di)-1])
			if !ok {
				return nil, opErrorf(op, "the last axis of indices must have a static extent, got indices.shape %s", descShape(di))
			}
			if int64(len(dd))+int64(len(di))-k-1 != int64(len(du)) {
				return nil, opErrorf(op, "updates must have rank data + indices - indices.shape[-1] - 1, got data.shape %s, indices.shape %s, updates.shape %s",
					descShape(dd), descShape(di), descShape(du))
			}
			if k > int64(len(dd)) {
				return nil, opErrorf(op, "indices.shape[-1] must be at most data's rank, got data.shape %s, indices.shape %s", descShape(dd), descShape(di))
			}
			want := append(append([]ir.PrimExpr{}, di[:len(di)-1]...), dd[k:]...)
			var an ir.Analyzer
			for i := range want {
				if !an.CanProveEqual(want[i], du[i]) {
					return nil, opErrorf(op, "updates.shape must be indices.shape[:-1] + data.shape[K:], got updates.shape %s, indices.shape %s, data.shape %s",
						descShape(du), descShape(di), descShape(dd))
				}
			}
		}
		return t, nil
	}
	op.Normalize = schemaNormalize(op)
	eval := func(call *ir.Call, args []Value) (Value, error) {
		as, err := argArrays(op, args, 3)
		if err != nil {
			return nil, err
		}
		x, ix, up := as[0], as[1], as[2]
		red, err := reduction(call)
		if err != nil {
			return nil, err
		}
		if ix.f != nil || len(ix.shape) == 0 {
			return nil, opErrorf(op, "indices must be an integer tensor of rank >= 1, got %s%v", ix.dt, ix.shape)
		}
		lead := ix.shape[:len(ix.shape)-1]
		k := int(ix.shape[len(ix.shape)-1])
		if k > len(x.shape) || !sameDims(up.shape, append(append([]int64{}, lead...), x.shape[k:]...)) {
			return nil, opErrorf(op, "updates %v must be indices.shape[:-1] + data.shape[K:] for indices %v and data %v", up.shape, ix.shape, x.shape)
		}
		if up.dt != x.dt {
			return nil, opErrorf(op, "updates has dtype %s, data %s", up.dt, x.dt)
		}
		out := newArray(x.dt, x.shape)
		for j := range out.size() {
			out.copyElem(j, x, j)
		}
		slice := numElems(x.shape[k:])
		dst := make([]int64, len(x.shape))
		for p := range numElems(lead) {
			for j := range k {
				v := ix.i[p*int64(k)+int64(j)]
				if v < 0 {
					v += x.shape[j]
				}
				if v < 0 || v >= x.shape[j] {
					return nil, opErrorf(op, "index %d is out of range for data dimension %d of extent %d", ix.i[p*int64(k)+int64(j)], j, x.shape[j])
				}
				dst[j] = v
			}
			base := flatIndex(dst, x.shape)
			for t := range slice {
				at, from := base+t, p*slice+t
				if out.f != nil {
					out.setFloat(at, scatterCombine(red, out.f[at], up.float(from)))
				} else {
					out.setInt(at, scatterCombine(red, out.i[at], up.int(from)))
				}
			}
		}
		return out.tensor()
	}
	legalize := func(k *Kernel, call *ir.Call) error {
		red, err := reduction(call)
		if err != nil {
			return err
		}
		a, err := k.Input(call.Args[0], "data")
		if err != nil {
			return err
		}
		ix, err := k.Input(call.Args[1], "indices")
		if err != nil {
			return err
		}
		up, err := k.Input(call.Args[2], "updates")
		if err != nil {
			return err
		}
		kk, ok := ir.IntValue(ix.Shape[len(ix.Shape)-1])
		if !ok {
			return ErrNotLegalizable
		}
		out, err := k.Output("T_scatter_nd")
		if err != nil {
			return err
		}
		// As topi.scatter_nd: copy data, then one serial pass over the
		// update positions p (indices.shape[:-1]) and the slice
		// positions t (data.shape[K:]): out[indices[p, :], t] =
		// combine(out[indices[p, :], t], updates[p, t]).
		k.Compute("T_scatter_nd_data", out, "ax", func(v []ir.PrimExpr) ir.PrimExpr { return Load(a, v) })
		lead := len(ix.Shape) - 1
		extents := append(append([]ir.PrimExpr{}, ix.Shape[:lead]...), a.Shape[kk:]...)
		k.Scatter("T_scatter_nd", out, "i", extents, func(v []ir.PrimExpr) []ir.PrimExpr {
			dst := make([]ir.PrimExpr, 0, len(a.Shape))
			for j := range kk {
				at := append(append([]ir.PrimExpr{}, v[:lead]...), ir.I64(j))
				i := castTo(ir.Int64, Load(ix, at))
				dst = append(dst, &ir.Select{Cond: ir.NewBinary(ir.OpLT, i, ir.I64(0)), True: ir.Add(i, a.Shape[j]), False: i})
			}
			return append(dst, v[lead:]...)
		}, func(v []ir.PrimExpr, cur ir.PrimExpr) ir.PrimExpr {
			return scatterCombineTIR(red, cur, Load(up, v))
		})
		return nil
	}
	return Def{Op: op, Eval: eval, Legalize: legalize, Layout: layoutScatterND}
}

// scatterCombine folds update u into the current element a (scatter_nd's
// and scatter_elements' reductions; "mean" sums, the caller divides).
func scatterCombine[T int64 | float64](red string, a, u T) T {
	switch red {
	case "add", "mean":
		return a + u
	case "mul":
		return a * u
	case "max":
		return max(a, u)
	case "min":
		return min(a, u)
	}
	return u // "update"
}

// scatterCombineTIR is scatterCombine in TIR.
func scatterCombineTIR(red string, cur, u ir.PrimExpr) ir.PrimExpr {
	switch red {
	case "add":
		return ir.NewBinary(ir.OpAdd, cur, u)
	case "mul":
		return ir.NewBinary(ir.OpMul, cur, u)
	case "max":
		return ir.NewBinary(ir.OpMax, cur, u)
	case "min":
		return ir.NewBinary(ir.OpMin, cur, u)
	}
	return u
}

// descShape prints a shape as TVM's diagnostics do: [2, n, 3].
func descShape(dims []ir.PrimExpr) string {
	s := "["
	for i, d := range dims {
		if i > 0 {
			s += ", "
		}
		s += fmtDim(d)
	}
	return s + "]"
}

// Scatter emits a serial block over extents that updates out at a
// computed position: out[index(v)] = value(v, out[index(v)]). Instances
// run in loop order, so later ones see earlier writes (topi's ir_builder
// scatter loops, written as one block).
func (k *Kernel) Scatter(block string, out *ir.Buffer, prefix string, extents []ir.PrimExpr,
	index func(v []ir.PrimExpr) []ir.PrimExpr, value func(v []ir.PrimExpr, cur ir.PrimExpr) ir.PrimExpr) {
	loops, vars := k.loopVars(prefix, len(extents))
	v := exprs(vars)
	at := index(v)
	val := value(v, Load(out, at))
	b := &ir.Block{Name: block}
	for i, iv := range vars {
		b.IterVars = append(b.IterVars, &ir.IterVar{Var: iv, Dom: ir.Range{Min: ir.I64(0), Extent: extents[i]}})
	}
	b.Reads = append(readRegions(out, append(append([]ir.PrimExpr{}, at...), val)...), pointRegion(out, at))
	b.Writes = []ir.BufferRegion{pointRegion(out, at)}
	b.Body = &ir.BufferStore{Buffer: out, Indices: at, Value: val}
	var body ir.Stmt = &ir.BlockRealize{IterValues: exprs(loops), Block: b}
	for i := len(loops) - 1; i >= 0; i-- {
		body = &ir.For{Var: loops[i], Min: ir.I64(0), Extent: extents[i], Body: body}
	}
	k.stmts = append(k.stmts, body)
}
