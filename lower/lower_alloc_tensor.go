package lower

import (
	"math"

	"github.com/phasec/phasec/diag"
	"github.com/phasec/phasec/ir"
	"github.com/phasec/phasec/op"
	"github.com/phasec/phasec/passes"
	"github.com/phasec/phasec/phase"
)

// LowerAllocTensor is TVM's src/relax/transform/lower_alloc_tensor.cc.
var LowerAllocTensor = passes.Define(passes.Info{
	Name:     "LowerAllocTensor",
	Doc:      "lower the remaining builtin.alloc_tensor to memory.alloc_storage + memory.alloc_tensor",
	OptLevel: 0,
	Requires: map[phase.Property]string{
		phase.Normalized:     "it replaces builtin.alloc_tensor bindings",
		phase.ExplicitMemory: "it lowers the builtin.alloc_tensor calls CallTIRRewrite emits",
	},
}, passes.Module(func(_ *passes.Env, mod *ir.Module) (*ir.Module, error) {
	out, errs := lowerAllocTensor(mod)
	if err := errs.Err(); err != nil {
		return nil, err
	}
	return out, nil
}))

// lowerAllocTensor turns every R.builtin.alloc_tensor(shape, dtype, dev,
// scope) left after memory planning into a storage of its own:
//
//	storage = R.memory.alloc_storage(R.shape([bytes]), dev, scope, R.dtype("uint8"))
//	alloc = R.memory.alloc_tensor(storage, R.prim_value(0), shape, dtype)
//
// bytes being the element size times the dimensions (symbolic when the
// shape is), the shape a ShapeExpr or a var whose struct info holds the
// values. A shape without known values, a negative dimension or a byte
// count overflowing int64 is reported at the allocation.
//
//	phasec opt --passes LowerAllocTensor testdata/passes/LowerAllocTensor/basic.tvms
func lowerAllocTensor(mod *ir.Module) (*ir.Module, diag.List) {
	b := ir.NewBuilder(mod)
	sp := &splicer{binding: func(bind ir.Binding) ([]ir.Binding, bool) {
		vb, ok := bind.(*ir.VarBinding)
		if !ok {
			return nil, false
		}
		c, ok := vb.Value.(*ir.Call)
		if !ok || c.Op != op.BuiltinAllocTensor || len(c.Args) < 4 {
			return nil, false
		}
		span := bind.Span()
		if c.Span().IsValid() {
			span = c.Span()
		}
		var dims []ir.PrimExpr
		switch s := c.Args[0].(type) {
		case *ir.ShapeExpr:
			dims = s.Values
		default:
			if si, ok := s.StructInfo().(*ir.ShapeInfo); ok && si.Known() {
				dims = si.Values
			}
		}
		dt, ok := c.Args[1].(*ir.DataTypeImm)
		ti, isTensor := c.StructInfo().(*ir.TensorInfo)
		if dims == nil || !ok || !isTensor {
			b.Errorf(span, DiagAllocSize, "R.builtin.alloc_tensor: the shape must be a ShapeExpr or a var with known shape values")
			return nil, false
		}
		nbytes, ok := allocBytes(b, dims, dt.Value, span)
		if !ok {
			return nil, false
		}
		storage := ir.NewVar("storage", ir.Object())
		sb := ir.NewVarBinding(storage, memAllocStorage(b, nbytes, c.Args[2], c.Args[3], ir.UInt8))
		sb.SetSpan(vb.Span())
		return []ir.Binding{sb, rebind(vb, memAllocTensor(b, storage, 0, c.Args[0], ti))}, true
	}}
	out := mod.Clone()
	for _, name := range mod.Names() {
		fn := mod.Func(name)
		if fn == nil {
			continue
		}
		if seq, ok := fn.Body.(*ir.SeqExpr); ok {
			if nseq := sp.seq(seq, nil); nseq != seq {
				out.Set(name, withBody(fn, nseq))
			}
		}
	}
	errs := b.Diagnostics()
	errs.Sort()
	return out, errs
}

// allocBytes is TVM's nbytes: the element size times each dimension in
// turn, constants folded as they meet.
func allocBytes(b *ir.Builder, dims []ir.PrimExpr, dt ir.DataType, span diag.Span) (ir.PrimExpr, bool) {
	var acc ir.PrimExpr = ir.I64(int64(dt.Bytes()))
	for i, d := range dims {
		c, isConst := ir.IntValue(d)
		if isConst && c < 0 {
			b.Errorf(span, DiagAllocSize, "R.builtin.alloc_tensor: dimension %d is %d, a negative size", i, c)
			return nil, false
		}
		if a, ok := ir.IntValue(acc); ok && isConst {
			if c != 0 && a > math.MaxInt64/c {
				b.Errorf(span, DiagAllocSize, "R.builtin.alloc_tensor: the size in bytes of shape %s overflows int64", formatDims(dims))
				return nil, false
			}
			acc = ir.I64(a * c)
			continue
		}
		acc = ir.Mul(acc, d)
	}
	return acc, true
}
