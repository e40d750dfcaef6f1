package lower

import (
	"github.com/phasec/phasec/ir"
	"github.com/phasec/phasec/passes"
	"github.com/phasec/phasec/phase"
)

// ToNonDataflow is TVM's src/relax/transform/to_non_dataflow.cc.
var ToNonDataflow = passes.Define(passes.Info{
	Name:     "ToNonDataflow",
	Doc:      "turn dataflow blocks into plain binding blocks and dataflow vars into plain vars",
	OptLevel: 0,
	Requires: map[phase.Property]string{
		phase.Normalized: "it rewrites blocks and bindings and assumes A-normal form",
	},
	Establishes: phase.Of(phase.NoDataflow),
}, passes.Functions(func(_ *passes.Env, _ *ir.Module, _ string, f *ir.Function) (*ir.Function, error) {
	return toNonDataflow(f), nil
}).InParallel())

// toNonDataflow returns f with every dataflow block (in its body, its If
// branches and any local function) turned into a plain block and every
// dataflow var into a plain var with the same name and struct info.
// Adjacent blocks that become plain are merged. f itself is returned when
// it has no dataflow block. Struct info does not change, so rebuilt nodes
// keep theirs and no re-normalization is needed.
func toNonDataflow(f *ir.Function) *ir.Function {
	m := &ir.Mutator{
		KeepStructInfo: true,
		DefVar: func(v *ir.Var) *ir.Var {
			if !v.Dataflow {
				return v
			}
			n := ir.NewVar(v.Name, v.StructInfo())
			n.SetSpan(v.Span())
			return n
		},
		PostExpr: func(e ir.Expr) ir.Expr {
			seq, ok := e.(*ir.SeqExpr)
			if !ok {
				return e
			}
			return plainBlocks(seq)
		},
	}
	return m.Function(f)
}

// plainBlocks returns seq with its dataflow blocks made plain and merged
// with their neighbours, or seq itself when it has none.
func plainBlocks(seq *ir.SeqExpr) *ir.SeqExpr {
	hasDataflow := false
	for _, b := range seq.Blocks {
		hasDataflow = hasDataflow || b.Dataflow
	}
	if !hasDataflow {
		return seq
	}
	blocks := make([]*ir.BindingBlock, len(seq.Blocks))
	for i, b := range seq.Blocks {
		if b.Dataflow {
			nb := &ir.BindingBlock{Bindings: b.Bindings}
			nb.SetSpan(b.Span())
			b = nb
		}
		blocks[i] = b
	}
	blocks, _ = ir.NormalizeBlocks(blocks)
	out := &ir.SeqExpr{Blocks: blocks, Body: seq.Body}
	out.SetSpan(seq.Span())
	out.SetStructInfo(seq.StructInfo())
	return out
}
