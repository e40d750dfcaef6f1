package onnx

import (
	"fmt"
	"math"

	"github.com/phasec/phasec/ir"
	"github.com/phasec/phasec/op"
)

func registerLoss() {
	converters["NegativeLogLikelihoodLoss"] = convertNLLLoss
	converters["SoftmaxCrossEntropyLoss"] = convertSoftmaxCrossEntropy
}

// nllLoss is R.nn.nll_loss with ONNX's attributes; without
// ignore_index no target is ignored.
func (c *nodeCtx) nllLoss(logProb ir.Expr) (ir.Expr, error) {
	target, err := c.arg(1)
	if err != nil {
		return nil, err
	}
	red := c.attrString("reduction", "mean")
	if red != "mean" && red != "sum" && red != "none" {
		return nil, fmt.Errorf("reduction %q is not one of mean, sum, none", red)
	}
	ignore := c.attrInt("ignore_index", math.MinInt32)
	args := []ir.Expr{logProb, c.castTo(target, ir.Int64)}
	if c.has(2) {
		args = append(args, c.in[2])
	}
	return c.emitOp(op.NLLLoss, ir.Attrs{"reduction": red, "ignore_index": ignore}, args...), nil
}

func convertNLLLoss(c *nodeCtx) ([]ir.Expr, error) {
	x, err := c.arg(0)
	if err != nil {
		return nil, err
	}
	loss, err := c.nllLoss(x)
	if err != nil {
		return nil, err
	}
	return one(loss)
}

// convertSoftmaxCrossEntropy is log_softmax over the class axis (1),
// then the negative log likelihood; the second output is the log
// probabilities.
func convertSoftmaxCrossEntropy(c *nodeCtx) ([]ir.Expr, error) {
	x, err := c.arg(0)
	if err != nil {
		return nil, err
	}
	logProb := c.emitOp(op.LogSoftmax, ir.Attrs{"axis": int64(1)}, x)
	loss, err := c.nllLoss(logProb)
	if err != nil {
		return nil, err
	}
	return []ir.Expr{loss, logProb}, nil
}
