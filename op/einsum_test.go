package op

import (
	"testing"

	"github.com/phasec/phasec/ir"
)

func TestInferEinsum(t *testing.T) {
	a := tensorVar("a", ir.Float32, symN, 3)
	b := tensorVar("b", ir.Float32, 3, 4)
	sub := func(s string) ir.Attrs { return ir.Attrs{"subscripts": s} }
	runInferCases(t, nil, []inferCase{
		{"einsum", opCall(Einsum, sub("ij,jk->ik"), ir.NewTuple(a, b)), tinfo(ir.Float32, symN, 4), ""},
		{"einsum implicit", opCall(Einsum, sub("ij,jk"), ir.NewTuple(a, b)), tinfo(ir.Float32, symN, 4), ""},
		{"einsum trace", opCall(Einsum, sub("ii"), ir.NewTuple(tensorVar("s", ir.Float32, 3, 3))), tinfo(ir.Float32), ""},
		{"einsum trace not square", opCall(Einsum, sub("ii"), ir.NewTuple(b)), nil, "label 'i' is 3 in one operand and 4 in operands[0]"},
		{"einsum mismatch", opCall(Einsum, sub("ij,ik->jk"), ir.NewTuple(tensorVar("c", ir.Float32, 2, 3), b)), nil, "R.einsum: label 'i' is 2 in one operand and 3 in operands[1]"},
		{"einsum rank", opCall(Einsum, sub("ijk,jk->i"), ir.NewTuple(a, b)), nil, "operands[0] has rank 2 but subscripts give it 3 labels"},
		{"einsum count", opCall(Einsum, sub("ij->i"), ir.NewTuple(a, b)), nil, "name 1 operands but 2 are given"},
		{"einsum output label", opCall(Einsum, sub("ij,jk->iz"), ir.NewTuple(a, b)), nil, "output label 'z' appears in no operand"},
		{"einsum ellipsis", opCall(Einsum, sub("...j,jk"), ir.NewTuple(a, b)), nil, "ellipses"},
		{"einsum dtype", opCall(Einsum, sub("ij,jk"), ir.NewTuple(a, tensorVar("c", ir.Int32, 3, 4))), nil, "must be equal"},
	})
}
