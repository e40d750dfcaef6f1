package op

import (
	"testing"

	"github.com/phasec/phasec/ir"
)

func TestInferLosses(t *testing.T) {
	p := tensorVar("p", ir.Float32, symN, 4)
	runInferCases(t, nil, []inferCase{
		{"cross_entropy", opCall(CrossEntropyWithLogits, nil, p, tensorVar("l", ir.Float32, symN, 4)), tinfo(ir.Float32), ""},
		{"cross_entropy shapes", opCall(CrossEntropyWithLogits, nil, p, tensorVar("l", ir.Float32, symN, 3)), nil, "R.nn.cross_entropy_with_logits"},
		{"nll_loss", opCall(NLLLoss, nil, p, tensorVar("t", ir.Int64, symN)), tinfo(ir.Float32), ""},
		{"nll_loss none", opCall(NLLLoss, ir.Attrs{"reduction": "none"}, tensorVar("q", ir.Float32, 2, 4, 5), tensorVar("t", ir.Int32, 2, 5)), tinfo(ir.Float32, 2, 5), ""},
		{"nll_loss targets rank", opCall(NLLLoss, nil, p, tensorVar("t", ir.Int64, symN, 4)), nil, "R.nn.nll_loss: targets must have rank 1"},
		{"nll_loss targets dim", opCall(NLLLoss, nil, tensorVar("q", ir.Float32, 2, 4, 5), tensorVar("t", ir.Int64, 2, 6)), nil, "targets dimension 1 is 6 but predictions' is 5"},
		{"nll_loss float targets", opCall(NLLLoss, nil, p, tensorVar("t", ir.Float32, symN)), nil, "targets must be an integer tensor"},
		{"nll_loss weights", opCall(NLLLoss, nil, p, tensorVar("t", ir.Int64, symN), tensorVar("w", ir.Float32, 3)), nil, "weights has 3 entries but predictions has 4 classes"},
		{"nll_loss reduction", opCall(NLLLoss, ir.Attrs{"reduction": "avg"}, p, tensorVar("t", ir.Int64, symN)), nil, `reduction must be "none", "mean" or "sum"`},
	})
}
