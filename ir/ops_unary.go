package ir

// Elementwise unary tensor ops. The result has the operand's shape and
// dtype; the transcendental ones require a float (or unknown) dtype.

var (
	OpExp      = RegisterOp(newUnaryOp("relax.exp", "x", "Elementwise e**x.", true))
	OpLog      = RegisterOp(newUnaryOp("relax.log", "x", "Elementwise natural logarithm.", true))
	OpSqrt     = RegisterOp(newUnaryOp("relax.sqrt", "x", "Elementwise square root.", true))
	OpRsqrt    = RegisterOp(newUnaryOp("relax.rsqrt", "x", "Elementwise reciprocal square root.", true))
	OpTanh     = RegisterOp(newUnaryOp("relax.tanh", "x", "Elementwise hyperbolic tangent.", true))
	OpSigmoid  = RegisterOp(newUnaryOp("relax.sigmoid", "x", "Elementwise logistic sigmoid.", true))
	OpNegative = RegisterOp(newUnaryOp("relax.negative", "x", "Elementwise negation.", false))
	OpAbs      = RegisterOp(newUnaryOp("relax.abs", "x", "Elementwise absolute value.", false))
	OpFloor    = RegisterOp(newUnaryOp("relax.floor", "x", "Elementwise floor.", false))
	OpCeil     = RegisterOp(newUnaryOp("relax.ceil", "x", "Elementwise ceiling.", false))
	OpNNRelu   = RegisterOp(newUnaryOp("relax.nn.relu", "data", "Elementwise max(x, 0).", false))
	OpNNGelu   = RegisterOp(newUnaryOp("relax.nn.gelu", "data", "Elementwise Gaussian error linear unit (erf form).", true))
	OpNNSilu   = RegisterOp(newUnaryOp("relax.nn.silu", "data", "Elementwise x * sigmoid(x).", true))
)

func newUnaryOp(name, param, doc string, floatOnly bool) *Op {
	op := &Op{Name: name, Doc: doc, Pure: true, Category: CatTensor,
		Params: []Param{{Name: param, Kind: ArgExpr}}}
	op.Infer = func(_ *InferCtx, call *Call) (StructInfo, error) {
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
