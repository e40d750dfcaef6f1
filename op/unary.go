package op

import "github.com/phasec/phasec/ir"

// Elementwise unary tensor ops. The result has the operand's shape and
// dtype; the transcendental ones require a float (or unknown) dtype.

var (
	Exp      = ir.RegisterOp(newUnaryOp("relax.exp", "x", "Elementwise e**x.", true))
	Log      = ir.RegisterOp(newUnaryOp("relax.log", "x", "Elementwise natural logarithm.", true))
	Sqrt     = ir.RegisterOp(newUnaryOp("relax.sqrt", "x", "Elementwise square root.", true))
	Rsqrt    = ir.RegisterOp(newUnaryOp("relax.rsqrt", "x", "Elementwise reciprocal square root.", true))
	Tanh     = ir.RegisterOp(newUnaryOp("relax.tanh", "x", "Elementwise hyperbolic tangent.", true))
	Sigmoid  = ir.RegisterOp(newUnaryOp("relax.sigmoid", "x", "Elementwise logistic sigmoid.", true))
	Negative = ir.RegisterOp(newUnaryOp("relax.negative", "x", "Elementwise negation.", false))
	Abs      = ir.RegisterOp(newUnaryOp("relax.abs", "x", "Elementwise absolute value.", false))
	Floor    = ir.RegisterOp(newUnaryOp("relax.floor", "x", "Elementwise floor.", false))
	Ceil     = ir.RegisterOp(newUnaryOp("relax.ceil", "x", "Elementwise ceiling.", false))
	Relu     = ir.RegisterOp(newUnaryOp("relax.nn.relu", "data", "Elementwise max(x, 0).", false))
	Gelu     = ir.RegisterOp(newUnaryOp("relax.nn.gelu", "data", "Elementwise Gaussian error linear unit (erf form).", true))
	Silu     = ir.RegisterOp(newUnaryOp("relax.nn.silu", "data", "Elementwise x * sigmoid(x).", true))
)

func newUnaryOp(name, param, doc string, floatOnly bool) *ir.Op {
	op := &ir.Op{Name: name, Doc: doc, Pure: true, Category: ir.CatTensor,
		Params: []ir.Param{{Name: param, Kind: ir.ArgExpr}}}
	op.Infer = func(_ *ir.InferCtx, call *ir.Call) (ir.StructInfo, error) {
		t, err := firstTensorArg(op, call)
		if err != nil {
			return nil, err
		}
		if floatOnly {
			if err := requireFloat(op, t.DType); err != nil {
				return nil, err
			}
		}
		return t, nil
	}
	return op
}
