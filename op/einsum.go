package op

import (
	"strings"

	"github.com/phasec/phasec/ir"
)

// Einsum is R.einsum(operands, subscripts) (TVM's linear_algebra.py;
// src/relax/op/tensor/linear_algebra.cc; legalized as topi.einsum): the
// Einstein summation over a tuple of tensors, e.g. "ij,jk->ik". Without
// "->" the output takes the labels appearing once, in alphabetical order.
// Ellipses ("...") are not supported (a diagnostic).
var Einsum = Define(newEinsumOp())

// einsumSpec is a parsed subscripts string: one label list per operand,
// the output labels, and the summed labels (in first-appearance order).
type einsumSpec struct {
	ins    [][]byte
	out    []byte
	summed []byte
}

func parseEinsum(op *ir.Op, s string, nOperands int) (*einsumSpec, error) {
	s = strings.ReplaceAll(s, " ", "")
	if strings.Contains(s, ".") {
		return nil, opErrorf(op, "ellipses in subscripts %q are not supported", s)
	}
	lhs, rhs, explicit := strings.Cut(s, "->")
	spec := &einsumSpec{}
	count := map[byte]int{}
	var order []byte
	for _, term := range strings.Split(lhs, ",") {
		var labels []byte
		for i := 0; i < len(term); i++ {
			c := term[i]
			if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z') {
				return nil, opErrorf(op, "subscripts %q: %q is not a letter", s, c)
			}
			if count[c] == 0 {
				order = append(order, c)
			}
			count[c]++
			labels = append(labels, c)
		}
		spec.ins = append(spec.ins, labels)
	}
	if len(spec.ins) != nOperands {
		return nil, opErrorf(op, "subscripts %q name %d operands but %d are given", s, len(spec.ins), nOperands)
	}
	if explicit {
		for i := 0; i < len(rhs); i++ {
			c := rhs[i]
			if count[c] == 0 {
				return nil, opErrorf(op, "subscripts %q: output label %q appears in no operand", s, c)
			}
			if strings.IndexByte(rhs[:i], c) >= 0 {
				return nil, opErrorf(op, "subscripts %q: output label %q repeats", s, c)
			}
			spec.out = append(spec.out, c)
		}
	} else {
		for c := byte('A'); c <= 'z'; c++ {
			if count[c] == 1 {
				spec.out = append(spec.out, c)
			}
		}
	}
	for _, c := range order {
		if strings.IndexByte(string(spec.out), c) < 0 {
			spec.summed = append(spec.summed, c)
		}
	}
	return spec, nil
}

func newEinsumOp() Def {
	op := &ir.Op{Name: "relax.einsum", Doc: "Einstein summation of a tuple of tensors.", Pure: true, Category: ir.CatTensor, Pattern: ir.PatternInjective,
		Params: []ir.Param{{Name: "operands", Kind: ir.ArgTuple}, {Name: "subscripts", Kind: ir.AttrStr}}}
	op.Infer = func(_ *ir.InferCtx, call *ir.Call) (ir.StructInfo, error) {
		if err := opCheckArity(op, call); err != nil {
			return nil, err
		}
		infos := argListInfos(call.Args[0])
		if len(infos) == 0 {
			return nil, opErrorf(op, "needs at least one operand")
		}
		sub, _ := opAttr(op, call, "subscripts").(string)
		spec, err := parseEinsum(op, sub, len(infos))
		if err != nil {
			return nil, err
		}
		var dt ir.DataType
		extent := map[byte]ir.PrimExpr{}
		known := true
		for i, s := range infos {
			t, ok := s.(*ir.TensorInfo)
			if !ok {
				return nil, opErrorf(op, "operands[%d] must be a tensor, got %s", i, sinfoKind(s))
			}
			if i == 0 {
				dt = t.DType
			} else if dt, err = unifyDType(op, dt, t.DType); err != nil {
				return nil, err
			}
			if t.NDim >= 0 && t.NDim != len(spec.ins[i]) {
				return nil, opErrorf(op, "operands[%d] has rank %d but subscripts give it %d labels", i, t.NDim, len(spec.ins[i]))
			}
			dims, ok := t.Dims()
			if !ok {
				known = false
				continue
			}
			for j, c := range spec.ins[i] {
				if e, seen := extent[c]; seen && dimsProvablyDiffer(e, dims[j]) {
					return nil, opErrorf(op, "label %q is %s in one operand and %s in operands[%d]", c, fmtDim(e), fmtDim(dims[j]), i)
				}
				if _, seen := extent[c]; !seen {
					extent[c] = dims[j]
				}
			}
		}
		if !known {
			return ir.TensorInfoNDim(dt, len(spec.out)), nil
		}
		out := make([]ir.PrimExpr, len(spec.out))
		for i, c := range spec.out {
			out[i] = extent[c]
		}
		return newTensor(dt, out, true, len(out)), nil
	}
	op.Normalize = func(_ *ir.InferCtx, call *ir.Call) (ir.Expr, error) { return normalizeArgTuple(op, call, 0) }
	eval := func(call *ir.Call, args []Value) (Value, error) {
		xs, err := tupleArrays(op, args, 0)
		if err != nil {
			return nil, err
		}
		sub, _ := opAttr(op, call, "subscripts").(string)
		spec, err := parseEinsum(op, sub, len(xs))
		if err != nil {
			return nil, err
		}
		extent := map[byte]int64{}
		for i, x := range xs {
			if len(x.shape) != len(spec.ins[i]) || x.dt != xs[0].dt {
				return nil, opErrorf(op, "operands[%d] %s%v does not fit subscripts %q", i, x.dt, x.shape, sub)
			}
			for j, c := range spec.ins[i] {
				if e, seen := extent[c]; seen && e != x.shape[j] {
					return nil, opErrorf(op, "label %q is %d in one operand and %d in operands[%d]", c, e, x.shape[j], i)
				}
				extent[c] = x.shape[j]
			}
		}
		labels := append(append([]byte{}, spec.out...), spec.summed...)
		shape := make([]int64, len(spec.out))
		for i, c := range spec.out {
			shape[i] = extent[c]
		}
		all := make([]int64, len(labels))
		for i, c := range labels {
			all[i] = extent[c]
		}
		if err := CheckSize(all); err != nil {
			return nil, opErrorf(op, "%v", err)
		}
		pos := map[byte]int{}
		for i, c := range labels {
			pos[c] = i
		}
		out := newArray(xs[0].dt, shape)
		sf, si := make([]float64, out.size()), make([]int64, out.size())
		idx := make([]int64, len(labels))
		in := make([][]int64, len(xs))
		for i := range xs {
			in[i] = make([]int64, len(spec.ins[i]))
		}
		for k := range numElems(all) {
			unravel(k, all, idx)
			pf, pi := 1.0, int64(1)
			for i, x := range xs {
				for j, c := range spec.ins[i] {
					in[i][j] = idx[pos[c]]
				}
				e := flatIndex(in[i], x.shape)
				if x.f != nil {
					pf *= x.f[e]
				} else {
					pi *= x.i[e]
				}
			}
			o := flatIndex(idx[:len(spec.out)], shape)
			sf[o] += pf
			si[o] += pi
		}
		for o := range out.size() {
			if out.f != nil {
				out.setFloat(o, sf[o])
			} else {
				out.setInt(o, si[o])
			}
		}
		return out.tensor()
	}
	legalize := func(k *Kernel, call *ir.Call) error {
		tup, ok := call.Args[0].(*ir.Tuple)
		if !ok || len(tup.Fields) == 0 {
			return ErrNotLegalizable
		}
		sub, _ := opAttr(op, call, "subscripts").(string)
		spec, err := parseEinsum(op, sub, len(tup.Fields))
		if err != nil {
			return err
		}
		var ins []*ir.Buffer
		extent := map[byte]ir.PrimExpr{}
		for i, f := range tup.Fields {
			b, err := k.Input(f, string(rune('A'+i%26)))
			if err != nil {
				return err
			}
			for j, c := range spec.ins[i] {
				if _, seen := extent[c]; !seen {
					extent[c] = b.Shape[j]
				}
			}
			ins = append(ins, b)
		}
		out, err := k.Output("T_einsum")
		if err != nil {
			return err
		}
		var reduce []ir.PrimExpr
		for _, c := range spec.summed {
			reduce = append(reduce, extent[c])
		}
		product := func(s, r []ir.PrimExpr) ir.PrimExpr {
			at := map[byte]ir.PrimExpr{}
			for i, c := range spec.out {
				at[c] = s[i]
			}
			for i, c := range spec.summed {
				at[c] = r[i]
			}
			var p ir.PrimExpr
			for i, b := range ins {
				idx := make([]ir.PrimExpr, len(spec.ins[i]))
				for j, c := range spec.ins[i] {
					idx[j] = at[c]
				}
				if p == nil {
					p = Load(b, idx)
				} else {
					p = ir.NewBinary(ir.OpMul, p, Load(b, idx))
				}
			}
			return p
		}
		if len(reduce) == 0 {
			k.Compute("T_einsum", out, "ax", func(v []ir.PrimExpr) ir.PrimExpr { return product(v, nil) })
			return nil
		}
		k.Reduce("T_einsum", out, "ax", reduce, constOf(out.DType, 0), func(s, r []ir.PrimExpr, acc ir.PrimExpr) ir.PrimExpr {
			return ir.NewBinary(ir.OpAdd, acc, product(s, r))
		})
		return nil
	}
	return Def{Op: op, Eval: eval, Legalize: legalize}
}
