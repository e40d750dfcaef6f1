package printer

import (
	"strconv"

	"github.com/phasec/phasec/ir"
)

// Struct info and Relax-level symbolic expressions.
//
// Struct info prints through ir.SInfoFormat (TVM's struct_info.cc forms);
// the printer only spells the dimensions and shape expressions: symbolic
// variables take their unique printed names and are declared on first use,
// and in a signature a dimension mentioning one of the function's own
// symbolic variables is quoted ("n"). A missing struct info prints as
// R.Object.

// sinfo writes s.
func (p *printer) sinfo(s ir.StructInfo) {
	p.out = ir.SInfoFormat{Spell: p, Missing: "R.Object", VDevices: p.mod.VDevices}.Append(p.out, s)
}

// sinfoList writes l separated by commas.
func (p *printer) sinfoList(l []ir.StructInfo) {
	for i, s := range l {
		if i > 0 {
			p.str(", ")
		}
		p.sinfo(s)
	}
}

// AppendDim implements ir.SInfoSpeller with relaxPrim.
func (p *printer) AppendDim(b []byte, e ir.PrimExpr) []byte {
	p.out = b
	p.relaxPrim(e)
	return p.out
}

// AppendShape implements ir.SInfoSpeller with the expression printer.
func (p *printer) AppendShape(b []byte, e ir.Expr) []byte {
	p.out = b
	p.expr(e)
	return p.out
}

func (p *printer) relaxPrims(l []ir.PrimExpr) {
	for i, e := range l {
		if i > 0 {
			p.str(", ")
		}
		p.relaxPrim(e)
	}
}

// relaxPrim writes a Relax-level PrimExpr (a shape dimension, a prim value)
// in canonical simplified form, int64 literals bare.
func (p *printer) relaxPrim(e ir.PrimExpr) {
	switch x := e.(type) {
	case *ir.IntImm:
		if x.Type == ir.Int64 {
			p.out = strconv.AppendInt(p.out, x.Value, 10)
			return
		}
	case *ir.PrimVar:
		p.sigOwn = false
		name := p.relaxPrimName(x)
		if p.sig && p.sigOwn {
			p.byte('"')
			p.str(name)
			p.byte('"')
		} else {
			p.str(name)
		}
		return
	}
	p.sigOwn = false
	s := ir.PrimFormat{VarName: p.relaxPrimNameFn, BareInt: ir.Int64}.Format(printedForm(e))
	if p.sig && p.sigOwn {
		p.quote(s)
	} else {
		p.str(s)
	}
}

// printedForm is the form of a Relax-level symbolic expression to print:
// an expression read from the text (it has a position) prints as written
// when its canonical form (ir.Simplify) only reorders the same operations
// on the same operands, because TVM's parser keeps "n * m" or "2 * n" as
// written and its printer prints them so; anything else prints in the
// canonical form. Either parses back to an equal module, as equality
// compares canonical forms.
func printedForm(e ir.PrimExpr) ir.PrimExpr {
	s := ir.Simplify(e)
	if !e.Span().IsValid() {
		return s // built by inference or a pass: TVM's would be simplified
	}
	terms := map[any]int{}
	if countTerms(e, terms, 1) && countTerms(s, terms, -1) {
		same := true
		for _, n := range terms {
			if n != 0 {
				same = false
				break
			}
		}
		if same {
			return e
		}
	}
	return s
}

// binaryTerm and immTerm key countTerms' multiset.
type (
	binaryTerm ir.BinaryOp
	immTerm    struct {
		v  int64
		dt ir.DataType
	}
)

// countTerms adds d to the count of each operator and operand of e. It
// reports false for expressions other than integer arithmetic on variables
// and constants, which are left to the canonical form.
func countTerms(e ir.PrimExpr, terms map[any]int, d int) bool {
	switch x := e.(type) {
	case *ir.Binary:
		terms[binaryTerm(x.Op)] += d
		return countTerms(x.A, terms, d) && countTerms(x.B, terms, d)
	case *ir.IntImm:
		terms[immTerm{x.Value, x.Type}] += d
		return true
	case *ir.PrimVar:
		terms[x] += d
		return true
	}
	return false
}
