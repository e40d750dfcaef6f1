package transform

import (
	"strconv"

	"github.com/phasec/phasec/ir"
	"github.com/phasec/phasec/op"
	"github.com/phasec/phasec/passes"
	"github.com/phasec/phasec/phase"
	"github.com/phasec/phasec/transform/dpl"
)

// FuseTransposeMatmul is TVM's FuseTransposeMatmul
// (python/tvm/relax/transform/fuse_transpose_matmul.py): a matmul by a
// transposed weight, x * W^T (nn.Linear), becomes one kernel reading W
// directly,
//
//	R.matmul(x, R.permute_dims(w, [.., -1, -2]))  ->  R.call_tir(NT_matmul, (x, w))
//	    NT_matmul[i.., n] = sum_k x[i.., k] * w[.., n, k]
//
// where the permutation swaps the last two axes (or is the default
// reversal of a matrix). Only x * W^T is fused, not X^T * w, as TVM's.
// TVM matches the pair with FuseOpsByPattern and builds the kernel with
// call_te; here the pair is matched with the dpl rewriter and the kernel
// built as LegalizeOps builds matmul's (operand dtypes cast to the
// output's, batch dimensions broadcast), in the output's dtype. Pairs of
// the same shapes share one kernel (others are NT_matmul1, ...), as TVM's
// BlockBuilder deduplicates the functions call_te adds.
var FuseTransposeMatmul = passes.Define(passes.Info{
	Name:     "FuseTransposeMatmul",
	Doc:      "fuse x * permute_dims(w) (a transposed weight) into one NT_matmul kernel reading w untransposed",
	OptLevel: 0,
	Accepts:  []phase.Phase{phase.Ingest, phase.Optimize},
	Requires: map[phase.Property]string{
		phase.Normalized: "it matches the bindings of A-normal form, following operands through the variables bound to them, and reads operands' struct info",
	},
	Precedes: map[phase.Property]string{
		phase.Legalized: "it rewrites relax.matmul and relax.permute_dims calls, which LegalizeOps would turn into two kernels first",
	},
}, passes.Module(fuseTransposeMatmul))

func fuseTransposeMatmul(_ *passes.Env, mod *ir.Module) (*ir.Module, error) {
	x, w := dpl.Wildcard(), dpl.Wildcard()
	wT := dpl.IsOp("relax.permute_dims")(w)
	pat := dpl.IsOp("relax.matmul")(x, wT)
	// The kernels go into work as they are made: the builder resolves the
	// call_tir's callee there when it normalizes the replacement.
	f := &ntMatmulFuser{work: mod.Clone(), used: map[string]bool{}, made: map[uint64][]namedKernel{}}
	for _, name := range mod.Names() {
		f.used[name] = true
	}
	changed := false
	for _, name := range mod.Names() {
		fn := mod.Func(name)
		if fn == nil || skipRewrite(fn) {
			continue
		}
		nf, errs := rewriteCall(f.work, fn, pat, func(expr ir.Expr, m dpl.Match) ir.Expr {
			return f.fuse(expr.(*ir.Call), m[x], m[w], m[wT].(*ir.Call))
		})
		if err := errs.Err(); err != nil {
			return nil, err
		}
		if nf != fn {
			f.work.Set(name, nf)
			changed = true
		}
	}
	if !changed {
		return mod, nil
	}
	return f.work, nil
}

// ntMatmulFuser builds the NT_matmul kernels of one module.
type ntMatmulFuser struct {
	work *ir.Module      // the output module, kernels added
	used map[string]bool // global names taken
	// made holds the kernels made so far by structural hash: calls of the
	// same shapes share one kernel, as TVM's BlockBuilder.add_func gives
	// structurally equal functions one name.
	made map[uint64][]namedKernel
}

type namedKernel struct {
	name string
	fn   *ir.PrimFunc
}

// fuse returns the call_tir replacing matmul = R.matmul(x, R.permute_dims(w)),
// or matmul itself when the permutation is not a swap of the last two
// axes or a shape is unknown.
func (f *ntMatmulFuser) fuse(matmul *ir.Call, x, w ir.Expr, transpose *ir.Call) ir.Expr {
	wt, ok := w.StructInfo().(*ir.TensorInfo)
	if !ok || wt.NDim < 2 || !swapsLastTwo(transpose, wt.NDim) {
		return matmul
	}
	xt, ok := x.StructInfo().(*ir.TensorInfo)
	out, ok2 := matmul.StructInfo().(*ir.TensorInfo)
	if !ok || !ok2 || xt.NDim < 1 {
		return matmul
	}
	if _, ok := out.Dims(); !ok || out.DType.IsVoid() {
		return matmul
	}
	k := op.NewKernel(matmul)
	a, err := k.Input(x, "x")
	if err != nil {
		return matmul
	}
	b, err := k.Input(w, "w")
	if err != nil {
		return matmul
	}
	res, err := k.Output("NT_matmul")
	if err != nil {
		return matmul
	}
	aVec := len(a.Shape) == 1
	nBatch := len(res.Shape) - 1 // w is a matrix at least: its rows are an output axis
	if !aVec {
		nBatch--
	}
	dt := res.DType
	cast := func(e ir.PrimExpr) ir.PrimExpr {
		if e.DType() == dt {
			return e
		}
		return &ir.Cast{Type: dt, Value: e}
	}
	red := a.Shape[len(a.Shape)-1]
	k.Reduce("NT_matmul", res, "i", []ir.PrimExpr{red}, zeroOf(dt), func(s, r []ir.PrimExpr, acc ir.PrimExpr) ir.PrimExpr {
		batch := s[:nBatch]
		var ai []ir.PrimExpr
		if aVec {
			ai = []ir.PrimExpr{r[0]}
		} else {
			ai = append(broadcastBatch(a.Shape[:len(a.Shape)-2], res.Shape[:nBatch], batch), s[nBatch], r[0])
		}
		n := s[len(s)-1]
		bi := append(broadcastBatch(b.Shape[:len(b.Shape)-2], res.Shape[:nBatch], batch), n, r[0])
		return ir.NewBinary(ir.OpAdd, acc, ir.NewBinary(ir.OpMul, cast(op.Load(a, ai)), cast(op.Load(b, bi))))
	})
	pf, tirVars := k.Finish()
	name := f.add(pf)
	args := []ir.Expr{ir.NewGlobalVar(name), ir.NewTuple(k.Args...)}
	if len(tirVars) > 0 {
		args = append(args, ir.NewShapeExpr(tirVars...))
	}
	return &ir.Call{Op: op.CallTIR, Args: args, SInfoArgs: []ir.StructInfo{out}}
}

// add returns the name of a kernel structurally equal to pf, adding pf
// under a fresh name when there is none.
func (f *ntMatmulFuser) add(pf *ir.PrimFunc) string {
	h := ir.StructuralHash(pf)
	for _, k := range f.made[h] {
		if ir.StructuralEqual(k.fn, pf, ir.EqualOptions{}) {
			return k.name
		}
	}
	name := f.fresh("NT_matmul")
	f.work.Set(name, pf)
	f.made[h] = append(f.made[h], namedKernel{name, pf})
	return name
}

// fresh is name, or name with the first numeric suffix no global has.
func (f *ntMatmulFuser) fresh(name string) string {
	n := name
	for i := 1; f.used[n]; i++ {
		n = name + strconv.Itoa(i)
	}
	f.used[n] = true
	return n
}

// swapsLastTwo reports whether a permute_dims call swaps the last two of
// ndim axes and keeps the others (the default reversal does for a matrix).
func swapsLastTwo(c *ir.Call, ndim int) bool {
	axes, ok := ir.AttrAsInts(c.Attrs["axes"])
	if !ok || c.Attrs["axes"] == nil {
		return ndim == 2
	}
	if len(axes) != ndim {
		return false
	}
	for i, a := range axes {
		want := int64(i)
		switch i {
		case ndim - 2:
			want = int64(ndim - 1)
		case ndim - 1:
			want = int64(ndim - 2)
		}
		if a != want && a != want-int64(ndim) {
			return false
		}
	}
	return true
}

// broadcastBatch indexes batch dimensions in of an operand inside the
// output's batch dimensions out with block variables v (right-aligned): a
// dimension 1 where the output's is not reads index 0 (LegalizeOps'
// matmul does the same).
func broadcastBatch(in, out, v []ir.PrimExpr) []ir.PrimExpr {
	idx := make([]ir.PrimExpr, len(in))
	off := len(out) - len(in)
	for i, d := range in {
		if n, ok := ir.IntValue(d); ok && n == 1 {
			if m, ok := ir.IntValue(out[off+i]); !ok || m != 1 {
				idx[i] = ir.I64(0)
				continue
			}
		}
		idx[i] = v[off+i]
	}
	return idx
}

// zeroOf is the constant 0 of dtype dt.
func zeroOf(dt ir.DataType) ir.PrimExpr {
	if dt.IsFloat() {
		return ir.NewFloat(dt, 0)
	}
	return ir.NewInt(dt, 0)
}
