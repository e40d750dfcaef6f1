package transform

import (
	"errors"
	"slices"

	"github.com/phasec/phasec/internal/ptrmap"
	"github.com/phasec/phasec/ir"
	"github.com/phasec/phasec/op"
	"github.com/phasec/phasec/passes"
	"github.com/phasec/phasec/phase"
)

// CombineParallelMatmul is TVM's CombineParallelMatmul
// (src/relax/transform/combine_parallel_matmul.cc): the matmuls of one
// dataflow block that share their left operand become one matmul by the
// concatenation of their right operands, split back into the original
// results,
//
//	y0 = R.matmul(x, w0); y1 = R.matmul(x, w1)
//	    ->  lv = R.matmul(x, R.concat((w0, w1), axis=-1)); s = R.split(lv, [n0], axis=-1); y0 = s[0]; y1 = s[1]
//
// A bias add (R.add(matmul, b)) and an activation (relu, gelu,
// gelu_tanh, silu) after every matmul of the group are combined too: the
// biases concatenated and added once, the activation applied once. As
// TVM's, combining more matmuls wins over fusing ops: the ops are fused
// only when every matmul of the group has them (and, for biases, they
// have the same rank), else the matmuls are combined alone and the ops
// applied to the split results.
//
// Right operands are combined per rank, and only when their batch
// dimensions are provably equal. R.split takes static indices, so all
// right operands but the last must have a static output width: the static
// ones go first (in binding order) and at most one symbolic one joins
// them. A bias whose last dimension is not its matmul's output width
// (one that broadcasts) is not concatenated.
//
// TVM's option is a check callback deciding each group; here it is
// min_branches, the fewest matmuls worth combining (TVM's test_check
// declines groups of two with a callback). The combined computation is
// emitted before the first result it replaces; a group whose operands
// are defined later than that is left alone.
var CombineParallelMatmul = passes.Define(passes.Info{
	Name:     "CombineParallelMatmul",
	Doc:      "combine matmuls sharing a left operand (with their bias adds and activations) into one matmul by concatenated weights, split after",
	OptLevel: 0,
	Accepts:  []phase.Phase{phase.Ingest, phase.Optimize},
	Requires: map[phase.Property]string{
		phase.Normalized: "it groups the matmul bindings of each dataflow block by left operand and reads operands' struct info",
	},
	Precedes: map[phase.Property]string{
		phase.Legalized: "it rewrites relax.matmul calls (and the bias adds and activations after them), which LegalizeOps turns into call_tir",
	},
	Options: []passes.Option{{
		Name: "min_branches", Type: passes.Int, Default: int64(2),
		Doc: "the fewest matmuls sharing a left operand that are combined (TVM's check callback declining smaller groups)",
		Check: func(v any) error {
			if v.(int64) < 2 {
				return errors.New("want 2 or more: combining fewer than two matmuls is no combination")
			}
			return nil
		},
	}},
}, passes.Functions(func(env *passes.Env, mod *ir.Module, _ string, f *ir.Function) (*ir.Function, error) {
	if skipRewrite(f) {
		return f, nil
	}
	return combineParallelMatmul(mod, f, int(env.Options().Int("min_branches")))
}).InParallel())

// combineActivations are the activations TVM combines after matmuls.
var combineActivations = []*ir.Op{op.Relu, op.Gelu, op.GeluTanh, op.Silu}

// matmulBranch is one matmul of a group and the ops after it.
type matmulBranch struct {
	matmul     *ir.VarBinding // y = R.matmul(x, w)
	biasAdd    *ir.VarBinding // R.add(y, b), when it is y's only use that is an add
	activation *ir.VarBinding // act(y or the bias add)
	rhs        ir.Expr
	bias       ir.Expr
	width      ir.PrimExpr // the output width: rhs's last dimension
}

// combinedGroup is the plan for one combined matmul: the branches it
// replaces and what each branch's last op becomes.
type combinedGroup struct {
	lhs        ir.Expr
	branches   []*matmulBranch // in split order
	bias       bool
	activation *ir.Op
	rhsRank    int
	at         int     // the block index of the first replaced binding
	split      *ir.Var // the split of the combined matmul, once emitted
}

// replaced is the binding a branch's result comes from after combining.
func (g *combinedGroup) replaced(b *matmulBranch) *ir.VarBinding {
	switch {
	case g.activation != nil:
		return b.activation
	case g.bias:
		return b.biasAdd
	}
	return b.matmul
}

func combineParallelMatmul(mod *ir.Module, f *ir.Function, minBranches int) (*ir.Function, error) {
	// Plan every dataflow block first (reading the input function), then
	// rebuild once.
	// Bindings are found by the var they bind (each var is bound once),
	// in ptrmaps: a Go map keyed by bindings misses the cache on every
	// lookup at 100k bindings.
	var firstOf ptrmap.Map[ir.Var, *combinedGroup] // binding -> group emitted before it
	var chunkOf ptrmap.Map[ir.Var, chunkRef]       // binding -> its split result
	ir.Walk(f.Body, &ir.Visitor{Block: func(blk *ir.BindingBlock) bool {
		if blk.Dataflow {
			for _, g := range planParallelMatmuls(blk, minBranches) {
				firstOf.Set(blk.Bindings[g.at].BoundVar(), g)
				for i, b := range g.branches {
					chunkOf.Set(g.replaced(b).Var, chunkRef{g, i})
				}
			}
		}
		return true
	}})
	if firstOf.Len() == 0 {
		return f, nil
	}
	rw := ir.NewRewriter(mod)
	rw.Binding = func(rw *ir.Rewriter, bind ir.Binding, value ir.Expr) bool {
		if g, ok := firstOf.Get(bind.BoundVar()); ok {
			g.split = emitCombined(rw, g)
		}
		ref, ok := chunkOf.Get(bind.BoundVar())
		if !ok {
			return false
		}
		rw.ReEmit(bind, &ir.TupleGetItem{Tuple: ref.group.split, Index: ref.index})
		return true
	}
	nf := rw.Function(f)
	if errs := rw.B.Diagnostics(); errs.HasErrors() {
		return nil, errs
	}
	// The replaced matmuls, adds and activations are dead now (TVM's
	// RewriteBindings removes them the same way).
	return removeAllUnused(mod, nf), nil
}

type chunkRef struct {
	group *combinedGroup
	index int
}

// emitCombined emits a group's concat, matmul, bias, activation and split
// and returns the split's var.
func emitCombined(rw *ir.Rewriter, g *combinedGroup) *ir.Var {
	b := rw.B
	use := func(e ir.Expr) ir.Expr { return rw.Expr(e) } // remapped uses
	rhs := make([]ir.Expr, len(g.branches))
	for i, br := range g.branches {
		rhs[i] = use(br.rhs)
	}
	weights := b.Emit(call(op.Concat, ir.Attrs{"axis": int64(g.rhsRank - 1)}, ir.NewTuple(rhs...)), "lv")
	outDType := g.branches[0].matmul.Var.StructInfo().(*ir.TensorInfo).DType
	var out ir.Expr = b.Emit(call(op.Matmul, ir.Attrs{"out_dtype": outDType}, use(g.lhs), weights), "lv")
	if g.bias {
		biases := make([]ir.Expr, len(g.branches))
		for i, br := range g.branches {
			biases[i] = use(br.bias)
		}
		rank := g.branches[0].bias.StructInfo().(*ir.TensorInfo).NDim
		bias := b.Emit(call(op.Concat, ir.Attrs{"axis": int64(rank - 1)}, ir.NewTuple(biases...)), "lv")
		out = b.Emit(call(op.Add, nil, out, bias), "lv")
	}
	if g.activation != nil {
		out = b.Emit(call(g.activation, nil, out), "lv")
	}
	var indices []int64
	sum := int64(0)
	for _, br := range g.branches[:len(g.branches)-1] {
		w, _ := ir.IntValue(br.width)
		sum += w
		indices = append(indices, sum)
	}
	outRank := out.StructInfo().(*ir.TensorInfo).NDim
	return b.Emit(call(op.Split, ir.Attrs{"indices_or_sections": indices, "axis": int64(outRank - 1)}, out), "lv")
}

// planParallelMatmuls finds the groups of blk to combine.
func planParallelMatmuls(blk *ir.BindingBlock, minBranches int) []*combinedGroup {
	// Per-var tables in ptrmaps, which stay in cache at 100k bindings.
	index := &ptrmap.Map[ir.Var, int]{} // var -> index of its binding in blk
	index.Reserve(len(blk.Bindings))
	uses := &ptrmap.Map[ir.Var, []*ir.VarBinding]{}
	var byLHS ptrmap.Map[ir.Var, []*matmulBranch]
	var order []*ir.Var // left operands in order of first matmul
	for i, bind := range blk.Bindings {
		index.Set(bind.BoundVar(), i)
		vb, ok := bind.(*ir.VarBinding)
		if !ok {
			continue
		}
		c, ok := vb.Value.(*ir.Call)
		if !ok {
			continue
		}
		for _, a := range c.Args {
			if v, ok := a.(*ir.Var); ok {
				us, _ := uses.Get(v)
				uses.Set(v, append(us, vb))
			}
		}
		if c.Op != op.Matmul || len(c.Args) != 2 {
			continue
		}
		lhs, ok := c.Args[0].(*ir.Var)
		if !ok {
			continue
		}
		branches, seen := byLHS.Get(lhs)
		if !seen {
			order = append(order, lhs)
		}
		byLHS.Set(lhs, append(branches, &matmulBranch{matmul: vb, rhs: c.Args[1]}))
	}
	var groups []*combinedGroup
	for _, lhs := range order {
		branches, _ := byLHS.Get(lhs)
		if len(branches) < minBranches {
			continue
		}
		for _, br := range branches {
			findBranchTail(br, uses)
		}
		bias, act := commonTail(branches)
		byRank := map[int][]*matmulBranch{}
		var ranks []int
		for _, br := range branches {
			t, ok := br.rhs.StructInfo().(*ir.TensorInfo)
			if !ok {
				continue
			}
			dims, ok := t.Dims()
			if !ok || len(dims) < 2 {
				continue
			}
			br.width = dims[len(dims)-1]
			if byRank[len(dims)] == nil {
				ranks = append(ranks, len(dims))
			}
			byRank[len(dims)] = append(byRank[len(dims)], br)
		}
		for _, rank := range ranks {
			g := planGroup(lhs, byRank[rank], rank, bias, act, minBranches, index)
			if g != nil {
				groups = append(groups, g)
			}
		}
	}
	return groups
}

// findBranchTail finds the bias add and activation after a matmul: the
// single add using it as its first operand, and the single activation
// call using that (or the matmul).
func findBranchTail(br *matmulBranch, uses *ptrmap.Map[ir.Var, []*ir.VarBinding]) {
	only := func(v *ir.Var, want func(*ir.Call) bool) *ir.VarBinding {
		var found *ir.VarBinding
		us, _ := uses.Get(v)
		for _, u := range us {
			if c := u.Value.(*ir.Call); want(c) {
				if found != nil {
					return nil
				}
				found = u
			}
		}
		return found
	}
	isBiasAdd := func(v *ir.Var) func(*ir.Call) bool {
		return func(c *ir.Call) bool { return c.Op == op.Add && len(c.Args) == 2 && c.Args[0] == v }
	}
	isActivation := func(v *ir.Var) func(*ir.Call) bool {
		return func(c *ir.Call) bool {
			o, ok := c.Op.(*ir.Op)
			return ok && slices.Contains(combineActivations, o) && len(c.Args) == 1 && c.Args[0] == v
		}
	}
	tail := br.matmul.Var
	if add := only(tail, isBiasAdd(tail)); add != nil && biasFits(add.Value.(*ir.Call).Args[1], br.rhs) {
		br.biasAdd, br.bias = add, add.Value.(*ir.Call).Args[1]
	}
	if act := only(tail, isActivation(tail)); act != nil {
		br.activation = act
	}
	if br.biasAdd != nil {
		br.activation = only(br.biasAdd.Var, isActivation(br.biasAdd.Var))
	}
}

// biasFits reports whether bias's last dimension is the matmul's output
// width (so concatenating biases lines up with the concatenated weights).
func biasFits(bias, rhs ir.Expr) bool {
	bt, ok1 := bias.StructInfo().(*ir.TensorInfo)
	rt, ok2 := rhs.StructInfo().(*ir.TensorInfo)
	if !ok1 || !ok2 {
		return false
	}
	bd, ok1 := bt.Dims()
	rd, ok2 := rt.Dims()
	return ok1 && ok2 && len(bd) >= 1 && len(rd) >= 1 && ir.CanProveEqual(bd[len(bd)-1], rd[len(rd)-1])
}

// commonTail is what every branch has after its matmul: a bias add (all
// of the same rank), and then the same activation (after the bias add
// when the bias is combined, else directly after the matmul).
func commonTail(branches []*matmulBranch) (bias bool, act *ir.Op) {
	bias = true
	rank := -1
	for _, br := range branches {
		if br.biasAdd == nil {
			bias = false
			break
		}
		r := br.bias.StructInfo().(*ir.TensorInfo).NDim
		if rank >= 0 && r != rank {
			bias = false
			break
		}
		rank = r
	}
	for i, br := range branches {
		a := br.activation
		if a == nil || !bias && br.biasAdd != nil && a.Value.(*ir.Call).Args[0] == br.biasAdd.Var {
			return bias, nil
		}
		o := a.Value.(*ir.Call).Op.(*ir.Op)
		if i > 0 && o != act {
			return bias, nil
		}
		act = o
	}
	return bias, act
}

// planGroup orders one rank's branches for the split and checks that they
// can be combined before the first result they replace.
func planGroup(lhs *ir.Var, branches []*matmulBranch, rank int, bias bool, act *ir.Op, minBranches int, index *ptrmap.Map[ir.Var, int]) *combinedGroup {
	if len(branches) < 2 {
		return nil
	}
	first, _ := branches[0].rhs.StructInfo().(*ir.TensorInfo).Dims()
	dtype := branches[0].matmul.Var.StructInfo()
	for _, br := range branches[1:] {
		dims, _ := br.rhs.StructInfo().(*ir.TensorInfo).Dims()
		for i := range rank - 2 {
			if !ir.CanProveEqual(first[i], dims[i]) {
				return nil // TVM combines none of a rank whose batches differ
			}
		}
		if t, ok := br.matmul.Var.StructInfo().(*ir.TensorInfo); !ok || t.DType != dtype.(*ir.TensorInfo).DType {
			return nil
		}
	}
	// Static widths first, then at most one symbolic width.
	var static, dynamic []*matmulBranch
	for _, br := range branches {
		if _, ok := ir.IntValue(br.width); ok {
			static = append(static, br)
		} else {
			dynamic = append(dynamic, br)
		}
	}
	ordered := static
	if len(dynamic) > 0 {
		ordered = append(slices.Clip(static), dynamic[0])
	}
	if len(ordered) < max(2, minBranches) {
		return nil
	}
	g := &combinedGroup{lhs: lhs, branches: ordered, bias: bias, activation: act, rhsRank: rank, at: -1}
	for _, br := range ordered {
		if at, _ := index.Get(g.replaced(br).Var); g.at < 0 || at < g.at {
			g.at = at
		}
	}
	definedBefore := func(e ir.Expr) bool {
		v, ok := e.(*ir.Var)
		if !ok {
			return true
		}
		i, local := index.Get(v)
		return !local || i < g.at
	}
	if !definedBefore(lhs) {
		return nil
	}
	for _, br := range ordered {
		if !definedBefore(br.rhs) || bias && !definedBefore(br.bias) {
			return nil
		}
	}
	return g
}
