// Package dpl is a dataflow pattern language for Relax, the part of TVM's
// relax.dpl (python/tvm/relax/dpl/pattern.py, src/relax/ir/dataflow_matcher.cc)
// that pattern-based offload (FuseOpsByPattern) needs: op calls, wildcards,
// constants, call attributes, alternatives, optional ops, tuples and
// predicates.
//
// A pattern is a tree of Pattern values. Match matches one against an
// expression in the context of a dataflow block's bindings: the root is a
// binding's value, and where a call or tuple pattern meets a dataflow
// variable bound in the same block, the matcher follows the variable to its
// value (TVM's auto-jump through var-to-value). A wildcard matches the
// variable itself, so it never pulls a producer into the match: that is how
// a pattern marks the inputs of a subgraph.
//
// Invariants:
//   - a Pattern value that occurs twice in a tree must match the same
//     expression both times (the match records one expression per pattern);
//   - matching never recurses deeper than the pattern tree is deep, whatever
//     the length of the program.
package dpl

import (
	"fmt"
	"slices"
	"strings"

	"github.com/phasec/phasec/ir"
)

// Pattern is a node of a dataflow pattern. Patterns are pointers: identity
// matters (a Match maps each pattern node to the expression it matched, as
// TVM's Map<DFPattern, Expr>).
type Pattern interface {
	// String spells the pattern in TVM's Python constructors.
	String() string
	pattern()
}

// WildcardPattern matches any expression.
type WildcardPattern struct {
	_ byte // not zero-sized: distinct wildcards must be distinct pointers
}

// ConstantPattern matches an R.const tensor literal.
type ConstantPattern struct {
	_ byte // not zero-sized, as WildcardPattern
}

// CallPattern matches a call of one of the ops Ops (all when empty) whose
// arguments match Args in order. Variadic calls (TVM's varg_default_wildcard)
// are not supported: the argument count must be equal.
type CallPattern struct {
	Ops  []*ir.Op
	Args []Pattern
}

// AttrPattern matches what Pattern matches when the matched expression is a
// call whose attributes hold every entry of Attrs (TVM's has_attr on a call
// pattern). Values compare as their printed forms, so []int64{1, 1} equals
// []any{1, 1}.
type AttrPattern struct {
	Pattern Pattern
	Attrs   map[string]any
}

// OrPattern matches what Left matches, else what Right matches.
type OrPattern struct{ Left, Right Pattern }

// TuplePattern matches a tuple whose fields match Fields in order.
type TuplePattern struct{ Fields []Pattern }

// TupleGetItemPattern matches a projection of a tuple matching Tuple;
// Index -1 matches any index.
type TupleGetItemPattern struct {
	Tuple Pattern
	Index int
}

// PredicatePattern matches what Pattern matches when Pred holds of the
// matched expression (a Go check on one node, e.g. its dtype).
type PredicatePattern struct {
	Pattern Pattern
	Name    string
	Pred    func(ir.Expr) bool
}

func (*WildcardPattern) pattern()     {}
func (*ConstantPattern) pattern()     {}
func (*CallPattern) pattern()         {}
func (*AttrPattern) pattern()         {}
func (*OrPattern) pattern()           {}
func (*TuplePattern) pattern()        {}
func (*TupleGetItemPattern) pattern() {}
func (*PredicatePattern) pattern()    {}

// Wildcard returns a pattern matching anything (TVM's wildcard()).
func Wildcard() *WildcardPattern { return &WildcardPattern{} }

// IsConst returns a pattern matching a constant tensor (TVM's is_const()).
func IsConst() *ConstantPattern { return &ConstantPattern{} }

// OpCall makes a call pattern of fixed ops from its argument patterns:
// IsOp("relax.matmul")(Wildcard(), Wildcard()).
type OpCall func(args ...Pattern) *CallPattern

// IsOp returns the call-pattern constructor for the named ops (TVM's
// is_op(name)(args...); several names match any of them). It panics on a
// name no op is registered under: patterns are written by programs, and a
// misspelt op name would otherwise silently match nothing.
func IsOp(names ...string) OpCall {
	ops := make([]*ir.Op, len(names))
	for i, n := range names {
		op, ok := ir.LookupOp(n)
		if !ok {
			panic(fmt.Sprintf("dpl.IsOp: no op named %q", n))
		}
		ops[i] = op
	}
	return func(args ...Pattern) *CallPattern { return &CallPattern{Ops: ops, Args: args} }
}

// HasAttr returns p restricted to calls whose attributes include attrs.
func HasAttr(p Pattern, attrs map[string]any) *AttrPattern {
	return &AttrPattern{Pattern: p, Attrs: attrs}
}

// Or returns the alternatives ps, tried in order (TVM's p1 | p2).
func Or(ps ...Pattern) Pattern {
	if len(ps) == 0 {
		panic("dpl.Or: no alternatives")
	}
	p := ps[len(ps)-1]
	for i := len(ps) - 2; i >= 0; i-- {
		p = &OrPattern{Left: ps[i], Right: p}
	}
	return p
}

// Optional returns p | wrap(p): p with an optional consumer around it
// (TVM's DFPattern.optional, e.g. an activation after a matmul).
func Optional(p Pattern, wrap func(Pattern) Pattern) Pattern {
	return &OrPattern{Left: p, Right: wrap(p)}
}

// IsTuple returns a pattern matching a tuple of the given fields.
func IsTuple(fields ...Pattern) *TuplePattern { return &TuplePattern{Fields: fields} }

// IsTupleGetItem returns a pattern matching t[index] (index -1: any).
func IsTupleGetItem(t Pattern, index int) *TupleGetItemPattern {
	return &TupleGetItemPattern{Tuple: t, Index: index}
}

// Where returns p restricted by a predicate on the matched expression; name
// describes the predicate in String.
func Where(p Pattern, name string, pred func(ir.Expr) bool) *PredicatePattern {
	return &PredicatePattern{Pattern: p, Name: name, Pred: pred}
}

// HasDType restricts p to expressions whose struct info is a tensor of the
// given dtype (TVM's has_dtype).
func HasDType(p Pattern, dtype string) *PredicatePattern {
	return Where(p, "has_dtype("+dtype+")", func(e ir.Expr) bool {
		t, ok := e.StructInfo().(*ir.TensorInfo)
		return ok && t.DType.String() == dtype
	})
}

func (*WildcardPattern) String() string { return "wildcard()" }
func (*ConstantPattern) String() string { return "is_const()" }
func (p *CallPattern) String() string {
	names := make([]string, len(p.Ops))
	for i, op := range p.Ops {
		names[i] = fmt.Sprintf("%q", op.Name)
	}
	return fmt.Sprintf("is_op(%s)(%s)", strings.Join(names, ", "), joinPatterns(p.Args))
}
func (p *AttrPattern) String() string {
	keys := make([]string, 0, len(p.Attrs))
	for k := range p.Attrs {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	parts := make([]string, len(keys))
	for i, k := range keys {
		parts[i] = fmt.Sprintf("%q: %v", k, p.Attrs[k])
	}
	return fmt.Sprintf("%s.has_attr({%s})", p.Pattern, strings.Join(parts, ", "))
}
func (p *OrPattern) String() string    { return fmt.Sprintf("(%s | %s)", p.Left, p.Right) }
func (p *TuplePattern) String() string { return fmt.Sprintf("is_tuple([%s])", joinPatterns(p.Fields)) }
func (p *TupleGetItemPattern) String() string {
	return fmt.Sprintf("is_tuple_get_item(%s, %d)", p.Tuple, p.Index)
}
func (p *PredicatePattern) String() string { return fmt.Sprintf("%s.%s", p.Pattern, p.Name) }

func joinPatterns(ps []Pattern) string {
	s := make([]string, len(ps))
	for i, p := range ps {
		s[i] = p.String()
	}
	return strings.Join(s, ", ")
}
