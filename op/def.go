package op

import (
	"slices"
	"strconv"
	"strings"
	"sync"

	"github.com/phasec/phasec/ir"
)

// Def is the record of one op: everything phasec knows about it, defined
// in one place (the op's file) and registered once, by Define.
//
// The record is split in two because ir cannot import op: Op (the ir.Op)
// holds what ir-level consumers read (schema, struct-info inference,
// purity, category, fusion pattern, legal-at-Build), and Def adds the
// behaviour whose types live here (evaluator values, the Kernel builder).
type Def struct {
	// Op is the op's schema and inference, registered in ir's op registry.
	Op *ir.Op
	// Eval is what a call computes, for the reference evaluator (package
	// eval). Nil for ops the evaluator runs itself because they need its
	// machine (call_tir, closures, memory, print; see eval.Evaluates) and
	// for ops nothing evaluates yet.
	Eval EvalFunc
	// Legalize builds the TIR kernel LegalizeOps (package lower) calls in
	// place of the op; nil for ops that are not legalized.
	Legalize LegalizeFunc
	// Layout is the op's rule for ConvertLayout (TVM's FRelaxInferLayout);
	// nil: the op keeps its arguments' layouts out (ConvertLayout converts
	// them back before the call).
	Layout LayoutFunc
	// Gradient is the op's rule for Gradient (TVM's FPrimalGradient); nil:
	// the op is not differentiable yet.
	Gradient GradientFunc
	// MixedPrecision is the op's rule for ToMixedPrecision (TVM's
	// TMixedPrecisionPolicy and FInferMixedPrecision); the zero value is
	// MixedNever, TVM's default.
	MixedPrecision MixedPrecisionPolicy
}

// LayoutFunc decides, for ConvertLayout, the layouts a call works in
// (TVM's FRelaxInferLayout; op/layout_infer.go has the rules and the
// layout notation): desired are the layouts asked for, by op name
// ("relax.nn.conv2d": ["NHWC", "OHWI"]), and in the current layouts of the
// call's arguments (in Call.Args order; LayoutUnknown for what is not a
// tensor of known rank). It returns nil, nil to leave the call in its
// arguments' initial layouts, and an error for desired layouts the op
// cannot take.
type LayoutFunc func(call *ir.Call, desired map[string][]string, in []NLayout) (*LayoutDecision, error)

// LayoutDecision is what a LayoutFunc decided: the layouts the leading
// len(In) arguments must be converted to, the layout of the result, and
// the call rewritten for them (its attributes naming the new layouts, and
// non-tensor arguments that name axes replaced; its tensor arguments are
// the original ones, which ConvertLayout converts).
type LayoutDecision struct {
	In   []NLayout
	Out  NLayout
	Call *ir.Call
}

// GradientFunc is an op's reverse-mode derivative (TVM's FPrimalGradient):
// given the block builder the adjoint is emitted through (a rule may emit
// helper bindings, and normalizes to read a partial's shape), the call,
// the variable bound to its result and the gradient flowing into that
// result, it returns one expression per argument of the call, the
// gradient with respect to that argument (nil where none flows).
type GradientFunc func(b *ir.Builder, call *ir.Call, result, outGrad *ir.Var) ([]ir.Expr, error)

// The registry of op records. Named ops are defined while the package
// initializes and never change after, so looking them up takes no lock;
// opaque ops are added while parsing, from any goroutine, under mu.
var registry = struct {
	named map[*ir.Op]*Def

	mu           sync.Mutex
	opaque       map[*ir.Op]*Def
	opaqueByCall map[string]*ir.Op // by name, arity and keywords
}{named: map[*ir.Op]*Def{}, opaque: map[*ir.Op]*Def{}, opaqueByCall: map[string]*ir.Op{}}

// Define registers d while the package initializes: its op in ir's
// registry (by name, for the parser) and the record here (by op, for
// DefOf). It returns d.Op, so an op file reads var Exp = Define(...). It
// panics on an op defined twice.
func Define(d Def) *ir.Op {
	ir.RegisterOp(d.Op)
	if _, dup := registry.named[d.Op]; dup {
		panic("op: " + d.Op.Name + " defined twice")
	}
	registry.named[d.Op] = &d
	return d.Op
}

// DefOf returns the record of o, if o is an op of this package (or an
// opaque op the parser made).
func DefOf(o *ir.Op) (*Def, bool) {
	if d, ok := registry.named[o]; ok {
		return d, true
	}
	if !o.Opaque {
		return nil, false
	}
	registry.mu.Lock()
	defer registry.mu.Unlock()
	d, ok := registry.opaque[o]
	return d, ok
}

// Defs returns the records of the named ops in name order (opaque ops
// are not listed).
func Defs() []*Def {
	out := make([]*Def, 0, len(registry.named))
	for _, d := range registry.named {
		out = append(out, d)
	}
	slices.SortFunc(out, func(a, b *Def) int { return strings.Compare(a.Op.Name, b.Op.Name) })
	return out
}

// Opaque returns the opaque op for a call of a TVM operator phasec has no
// op for, spelled "relax."+path: its params are the call's positional
// arguments (ir.ArgExpr) followed by its keywords (ir.AttrAny). Every call
// of the same name and argument shape gets the same op (structural
// equality compares ops by identity). An opaque op is a high-level tensor
// op nothing evaluates or lowers (the phase invariants report it); its
// inference returns the struct info the call states (out_sinfo=,
// sinfo_args=) or R.Object. It is not in ir's name registry: the name
// belongs to TVM, and parsing it again must come back here.
func Opaque(name string, params []ir.Param) *ir.Op {
	var key strings.Builder
	key.WriteString(name)
	for _, p := range params {
		key.WriteString("/" + p.Name + ":" + strconv.Itoa(int(p.Kind)))
	}
	registry.mu.Lock()
	defer registry.mu.Unlock()
	if o, ok := registry.opaqueByCall[key.String()]; ok {
		return o
	}
	o := &ir.Op{
		Name:     name,
		Doc:      "an operator phasec does not know yet, kept as written",
		Params:   params,
		Pure:     true,
		Category: ir.CatTensor,
		Pattern:  ir.PatternOpaque,
		Opaque:   true,
		Infer:    inferOpaque,
	}
	registry.opaqueByCall[key.String()] = o
	registry.opaque[o] = &Def{Op: o}
	return o
}

// inferOpaque: the explicit output struct info, the declared one, or
// R.Object.
func inferOpaque(_ *ir.InferCtx, c *ir.Call) (ir.StructInfo, error) {
	for _, k := range []string{"out_sinfo", "sinfo_args"} {
		switch s := c.Attrs[k].(type) {
		case ir.StructInfo:
			return s, nil
		case []any:
			fields := make([]ir.StructInfo, 0, len(s))
			for _, f := range s {
				if si, ok := f.(ir.StructInfo); ok {
					fields = append(fields, si)
				}
			}
			if k == "sinfo_args" && len(fields) > 0 {
				return fields[0], nil
			}
			if len(fields) == len(s) {
				return ir.NewTupleInfo(fields...), nil
			}
		}
	}
	if len(c.SInfoArgs) > 0 {
		return c.SInfoArgs[0], nil
	}
	return ir.Object(), nil
}

// opOf is the op of the call an Eval or Legalize function receives. A
// named evaluation or legalization takes its op from the call rather than
// from the op's package variable, whose Define refers to the function: Go
// would reject that as an initialization cycle.
func opOf(call *ir.Call) *ir.Op { return call.Op.(*ir.Op) }
