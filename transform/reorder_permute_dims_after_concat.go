package transform

import (
	"slices"

	"github.com/phasec/phasec/ir"
	"github.com/phasec/phasec/op"
	"github.com/phasec/phasec/passes"
	"github.com/phasec/phasec/phase"
	"github.com/phasec/phasec/transform/dpl"
)

// ReorderPermuteDimsAfterConcat is TVM's ReorderPermuteDimsAfterConcat
// (src/relax/transform/reorder_permute_dims_after_concat.cc): a concat of
// tensors that are all permuted the same way concatenates the unpermuted
// tensors and permutes once,
//
//	R.concat((R.permute_dims(A, p), R.permute_dims(B, p)), axis=k)  ->  R.permute_dims(R.concat((A, B), axis=p[k]), p)
//
// so that weights stored transposed (nn.Linear) and concatenated for
// CombineParallelMatmul become one transposed weight a later matmul can
// read directly. permute_dims without axes (reverse all) and its explicit
// form are the same permutation. Concats of 2 to 12 tensors are matched,
// as TVM's (max_concat).
var ReorderPermuteDimsAfterConcat = passes.Define(passes.Info{
	Name:     "ReorderPermuteDimsAfterConcat",
	Doc:      "concat of equally permuted tensors becomes one permute_dims of the concat of the tensors",
	OptLevel: 1,
	Accepts:  []phase.Phase{phase.Ingest, phase.Optimize},
	Requires: map[phase.Property]string{
		phase.Normalized: "it matches the bindings of A-normal form, following operands through the variables bound to them, and reads operands' struct info",
	},
	Precedes: map[phase.Property]string{
		phase.Legalized: "it rewrites relax.concat and relax.permute_dims calls, which LegalizeOps turns into call_tir",
	},
}, passes.Functions(func(_ *passes.Env, mod *ir.Module, _ string, f *ir.Function) (*ir.Function, error) {
	if skipRewrite(f) {
		return f, nil
	}
	out, errs := rewriteCall(mod, f, permutedConcat.pattern, permutedConcat.rewrite)
	if err := errs.Err(); err != nil {
		return nil, err
	}
	return out, nil
}).InParallel())

// TVM's bounds on the number of concatenated tensors.
const minConcat, maxConcat = 2, 12

// permutedConcatPattern holds the pattern (built once: patterns are
// immutable and matching does not modify them) and the nodes the rewriter
// reads.
type permutedConcatPattern struct {
	pattern  dpl.Pattern
	args     []dpl.Pattern // the tensors concatenated, before permutation
	permuted []dpl.Pattern // their permute_dims calls
	concats  []dpl.Pattern // the concat call of each alternative
}

var permutedConcat = newPermutedConcatPattern()

func newPermutedConcatPattern() *permutedConcatPattern {
	p := &permutedConcatPattern{}
	for range maxConcat {
		a := dpl.Wildcard()
		p.args = append(p.args, a)
		p.permuted = append(p.permuted, dpl.IsOp("relax.permute_dims")(a))
	}
	var alts []dpl.Pattern
	for n := minConcat; n <= maxConcat; n++ {
		c := dpl.IsOp("relax.concat")(dpl.IsTuple(p.permuted[:n]...))
		p.concats = append(p.concats, c)
		alts = append(alts, c)
	}
	p.pattern = dpl.Or(alts...)
	return p
}

func (p *permutedConcatPattern) rewrite(expr ir.Expr, m dpl.Match) ir.Expr {
	var args []ir.Expr
	var perm []int64
	var axesAttr any
	for i, pd := range p.permuted {
		c, ok := m[pd].(*ir.Call)
		if !ok {
			break
		}
		axes, ok := permutation(c)
		if !ok || perm != nil && !slices.Equal(axes, perm) {
			return expr
		}
		if perm == nil {
			perm, axesAttr = axes, c.Attrs["axes"]
		}
		args = append(args, m[p.args[i]])
	}
	concat, ok := m[p.concats[len(args)-minConcat]].(*ir.Call)
	if !ok {
		return expr
	}
	axis, _ := concat.Attrs.Int("axis")
	if axis < 0 {
		axis += int64(len(perm))
	}
	if axis < 0 || axis >= int64(len(perm)) {
		return expr
	}
	inner := call(op.Concat, concat.Attrs.With("axis", perm[axis]), ir.NewTuple(args...))
	return call(op.PermuteDims, ir.Attrs{"axes": axesAttr}, inner)
}

// permutation is the axes a permute_dims call applies: its axes, or the
// reversal of its argument's axes when it has none.
func permutation(c *ir.Call) ([]int64, bool) {
	if axes, ok := ir.AttrAsInts(c.Attrs["axes"]); ok && c.Attrs["axes"] != nil {
		return axes, true
	}
	t, ok := c.Args[0].StructInfo().(*ir.TensorInfo)
	if !ok || t.NDim < 0 {
		return nil, false
	}
	rev := make([]int64, t.NDim)
	for i := range rev {
		rev[i] = int64(t.NDim - 1 - i)
	}
	return rev, true
}
