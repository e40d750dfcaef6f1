package op

import (
	"github.com/phasec/phasec/ir"
)

// The gradient-checkpointing markers of TVM v0.23 (src/relax/op/tensor/grad.cc,
// python/tvm/relax/op/grad/grad.py): R.grad.start_checkpoint(x) marks x
// as an input of a checkpoint stage, R.grad.end_checkpoint(y) marks y as
// its output. Gradient (package transform) reads them: the bindings of a
// stage are not kept from the forward pass for the backward one but
// recomputed from the stage's inputs. Both compute their argument
// unchanged.
//
// Invariants: the argument is a variable (TVM's inference rejects
// anything else, which a normalized call would otherwise hide) and the
// result has its struct info. Gradient drops the markers from the
// adjoint function; anywhere else LegalizeOps replaces a marker by its
// argument, as TVM's legalization does
// (python/tvm/relax/transform/legalize_ops/grad.py), so none reaches the
// build.
var (
	// StartCheckpoint is R.grad.start_checkpoint(input): input, marked as
	// an input of a checkpoint stage.
	StartCheckpoint = Define(newCheckpointOp("relax.grad.start_checkpoint",
		"Marks the start of a checkpoint stage: its input, whose stage Gradient recomputes in the backward pass instead of keeping it."))
	// EndCheckpoint is R.grad.end_checkpoint(input): input, marked as an
	// output of a checkpoint stage.
	EndCheckpoint = Define(newCheckpointOp("relax.grad.end_checkpoint",
		"Marks the end of a checkpoint stage: its output (see R.grad.start_checkpoint)."))
)

func newCheckpointOp(name, doc string) Def {
	op := &ir.Op{
		Name: name, Doc: doc,
		Params:   []ir.Param{{Name: "input", Kind: ir.ArgExpr}},
		Pure:     true,
		Category: ir.CatTensor,
		// TVM registers no TOpPattern: FuseOps takes such an op as opaque
		// (it never sees one: LegalizeOps removes them first).
		Pattern: ir.PatternOpaque,
	}
	// TVM's InferStructInfoStartCheckpoint / InferStructInfoEndCheckpoint.
	op.Infer = func(_ *ir.InferCtx, call *ir.Call) (ir.StructInfo, error) {
		if err := opCheckArity(op, call); err != nil {
			return nil, err
		}
		v, ok := call.Args[0].(*ir.Var)
		if !ok {
			return nil, opErrorf(op, "the input must be a variable, got %s", exprKind(call.Args[0]))
		}
		return v.StructInfo(), nil
	}
	return Def{Op: op, Eval: evalIdentity, Legalize: legalizeIdentity}
}

// evalIdentity is the value of an op that computes its first argument.
func evalIdentity(_ *ir.Call, args []Value) (Value, error) { return args[0], nil }

// legalizeIdentity replaces the call by its first argument: no kernel
// (TVM's legalizations of the checkpoint markers return call.args[0]).
func legalizeIdentity(k *Kernel, call *ir.Call) error {
	k.Forward = call.Args[0]
	return nil
}
