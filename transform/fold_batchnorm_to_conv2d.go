package transform

import (
	"github.com/phasec/phasec/ir"
	"github.com/phasec/phasec/op"
	"github.com/phasec/phasec/passes"
	"github.com/phasec/phasec/phase"
	"github.com/phasec/phasec/transform/dpl"
)

// FoldBatchnormToConv2D is TVM's FoldBatchnormToConv2D
// (python/tvm/relax/transform/fold_batch_norm_to_conv2d_for_inference.py):
// an inference batch norm of a conv2d by constant weights, with constant
// statistics, is folded into the convolution's weights and a bias,
//
//	R.nn.batch_norm(R.nn.conv2d(x, W), gamma, beta, mean, var, axis=1)[0]
//	    ->  R.nn.conv2d(x, W * s) + (beta - mean * s)    with s = gamma / sqrt(var + eps)
//
// s reshaped to W's output-channel axis (OIHW: (C, 1, 1, 1); IOHW:
// (1, C, 1, 1)) and the bias to (1, C, 1, 1). The new weight and bias are
// computed from constants: FoldConstant after it makes them constants
// again, and no batch_norm is left.
//
// TVM's pass is for inference and folds every batch norm; phasec's
// batch_norm in training mode (training=True, the op's default, as TVM's)
// normalizes with the batch's own statistics, which folding would change.
// So a training-mode batch norm is folded only with the option
// assume_inference=true (TVM's behaviour, for a model about to be
// deployed: DecomposeOpsForInference treats it the same way).
//
// Where TVM's Python assumes, this checks: the convolution's output is
// NCHW and the batch norm normalizes its channel axis (axis 1), an IOHW
// kernel has one group, and the batch norm's scale=False (gamma unused)
// and center=False (beta unused) are honoured. Anything else is left
// alone. Only the normalized output ([0]) is replaced: a use of the
// statistics (moving mean and variance) keeps the batch norm.
var FoldBatchnormToConv2D = passes.Define(passes.Info{
	Name:     "FoldBatchnormToConv2D",
	Doc:      "fold an inference batch norm with constant statistics into the weights and a bias of the conv2d before it",
	OptLevel: 0,
	Accepts:  []phase.Phase{phase.Ingest, phase.Optimize},
	Requires: map[phase.Property]string{
		phase.Normalized: "it matches the bindings of A-normal form, following operands through the variables bound to them, and reads operands' struct info",
	},
	Precedes: map[phase.Property]string{
		phase.Legalized: "it rewrites relax.nn.batch_norm and relax.nn.conv2d calls, which LegalizeOps turns into call_tir",
	},
	Options: []passes.Option{{
		Name: "assume_inference", Type: passes.Bool, Default: false,
		Doc: "fold training-mode batch norms too, with their moving statistics (TVM's behaviour)",
	}},
}, passes.Functions(func(env *passes.Env, mod *ir.Module, _ string, f *ir.Function) (*ir.Function, error) {
	if skipRewrite(f) {
		return f, nil
	}
	assumeInference := env.Options().Bool("assume_inference")
	out, errs := rewriteCall(mod, f, convBN.pattern, func(expr ir.Expr, m dpl.Match) ir.Expr {
		return convBN.rewrite(expr, m, assumeInference)
	})
	if err := errs.Err(); err != nil {
		return nil, err
	}
	return out, nil
}).InParallel())

type convBNPattern struct {
	pattern                     dpl.Pattern
	input, weight               dpl.Pattern
	gamma, beta, mean, variance dpl.Pattern
	conv, bn                    dpl.Pattern
}

var convBN = func() *convBNPattern {
	p := &convBNPattern{input: dpl.Wildcard(), weight: dpl.IsConst(),
		gamma: dpl.IsConst(), beta: dpl.IsConst(), mean: dpl.IsConst(), variance: dpl.IsConst()}
	p.conv = dpl.IsOp("relax.nn.conv2d")(p.input, p.weight)
	p.bn = dpl.IsOp("relax.nn.batch_norm")(p.conv, p.gamma, p.beta, p.mean, p.variance)
	p.pattern = dpl.IsTupleGetItem(p.bn, 0)
	return p
}()

func (p *convBNPattern) rewrite(expr ir.Expr, m dpl.Match, assumeInference bool) ir.Expr {
	conv, bn := m[p.conv].(*ir.Call), m[p.bn].(*ir.Call)
	if training, ok := bn.Attrs.Bool("training"); (!ok || training) && !assumeInference {
		return expr
	}
	attrOr := func(c *ir.Call, key, def string) string {
		if s, ok := c.Attrs[key].(string); ok && s != "" {
			return s
		}
		return def
	}
	dataLayout := attrOr(conv, "data_layout", "NCHW")
	kernelLayout := attrOr(conv, "kernel_layout", "OIHW")
	outLayout := attrOr(conv, "out_layout", dataLayout)
	groups, ok := conv.Attrs.Int("groups")
	if !ok {
		groups = 1
	}
	axis, _ := bn.Attrs.Int("axis")
	if outLayout != "NCHW" || (axis != 1 && axis != -3) {
		return expr
	}
	gi, ok := m[p.gamma].StructInfo().(*ir.TensorInfo)
	if !ok {
		return expr
	}
	dims, ok := gi.Dims()
	if !ok || len(dims) != 1 {
		return expr
	}
	channels := dims[0]
	one := ir.NewInt(channels.DType(), 1)
	var scaleShape *ir.ShapeExpr
	switch {
	case kernelLayout == "OIHW":
		scaleShape = ir.NewShapeExpr(channels, one, one, one)
	case kernelLayout == "IOHW" && groups == 1:
		scaleShape = ir.NewShapeExpr(one, channels, one, one)
	default:
		return expr
	}
	eps, err := floatAttr(bn, "epsilon", 1e-5)
	if err != nil {
		return expr
	}
	gamma, beta, mean, variance := m[p.gamma], m[p.beta], m[p.mean], m[p.variance]
	// s = gamma / sqrt(var + eps): one call, bound once, used twice.
	std := call(op.Sqrt, nil, call(op.Add, nil, variance, scalar(eps, gi.DType)))
	var s ir.Expr = call(op.Divide, nil, gamma, std)
	if !boolAttr(bn, "scale") {
		s = call(op.Divide, nil, scalar(1, gi.DType), std)
	}
	bias := call(op.Negative, nil, call(op.Multiply, nil, mean, s))
	if boolAttr(bn, "center") {
		bias = call(op.Subtract, nil, beta, call(op.Multiply, nil, mean, s))
	}
	w := call(op.Multiply, nil, m[p.weight], call(op.Reshape, nil, s, scaleShape))
	folded := &ir.Call{Op: conv.Op, Args: []ir.Expr{m[p.input], w}, Attrs: conv.Attrs}
	return call(op.Add, nil, folded, call(op.Reshape, nil, bias, ir.NewShapeExpr(one, channels, one, one)))
}
