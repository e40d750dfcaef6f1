package ir

import (
	"fmt"
	"slices"
	"strings"

	"github.com/phasec/phasec/diag"
)

// Op is a registered primitive operator such as "relax.add" or
// "relax.call_tir". Ops are singletons: compare them by pointer. Passes
// dispatch on an op's fields (Purity, Category, Pattern, LegalAtBuild, ...),
// never on its name.
//
// Op holds what ir-level consumers (the parser, the normalizer, the
// checker, the passes) read. What an op computes and how it lowers to TIR
// live in package op's record for it (op.Def: evaluation, legalization,
// layout and gradient rules), which ir cannot import; op.Define registers
// both at once.
type Op struct {
	// Name is the registered name, "relax." followed by the TVMScript path
	// after "R." ("relax.nn.relu" is R.nn.relu).
	Name string
	// Doc is a one-line description.
	Doc string
	// Params is the argument schema, in positional order. It tells the
	// parser how keyword arguments map to positions, which literal forms
	// are wrapped into which Relax leaves, and which parameters are call
	// attributes rather than arguments.
	Params []Param
	// SInfoArgs says whether the op takes explicit output struct info
	// (out_sinfo= / sinfo_args=) and how it is spelled.
	SInfoArgs SInfoArgsKind
	// ExternCallee names the argument parameter, if any, whose string
	// literal form means an ExternFunc ("R.call_packed("f", ...)" passes
	// ExternFunc("f"), not R.str("f")); empty when there is none.
	ExternCallee string
	// Pure reports whether a call has no visible side effects.
	Pure bool
	// Category groups ops for phase invariants (high-level tensor ops must be
	// legalized before the Lower phase).
	Category OpCategory
	// Pattern is how the op's computation maps its inputs to its output,
	// for operator fusion (TVM's OpPatternKind).
	Pattern OpPattern
	// LegalAtBuild reports whether VM code generation emits a call of the
	// op itself (phase Build allows no other op): the one statement of that
	// set, read by the checker (property BuiltinsLowered) and by codegen.
	LegalAtBuild bool
	// Opaque marks an op the parser made up for a TVM name phasec has no op
	// for: its calls are kept as written, and nothing evaluates or lowers
	// them.
	Opaque bool
	// Infer computes the struct info of a call whose arguments are
	// normalized (have struct info).
	Infer func(ctx *InferCtx, call *Call) (StructInfo, error)
	// Normalize, when set, returns the canonical form of a call (e.g. a
	// call_tir argument list always wrapped in a tuple); it returns call
	// itself when the call is already canonical.
	Normalize func(ctx *InferCtx, call *Call) (Expr, error)
	// Validate, when set, checks the call beyond struct info inference
	// (e.g. call_tir arguments against the callee's signature).
	Validate func(ctx *InferCtx, call *Call) error
}

// Op implements Expr so it can be a call's callee.
func (*Op) Span() diag.Span        { return diag.Span{} }
func (*Op) StructInfo() StructInfo { return nil }
func (*Op) expr()                  {}

func (op *Op) String() string { return op.Name }

// OpCategory classifies ops for the phase invariants.
type OpCategory uint8

const (
	// CatTensor: a high-level tensor op (add, matmul, softmax, ...) that
	// LegalizeOps lowers to call_tir.
	CatTensor OpCategory = iota
	// CatCall: the call_tir / call_dps_packed family, removed by CallTIRRewrite.
	CatCall
	// CatPacked: call_packed, call_pure_packed, call_builtin_with_ctx.
	CatPacked
	// CatClosure: make_closure, invoke_closure, invoke_pure_closure.
	CatClosure
	// CatBuiltin: relax.builtin.* (alloc_tensor), removed by memory planning.
	CatBuiltin
	// CatMemory: relax.memory.*, removed by builtin lowering.
	CatMemory
	// CatVM: relax.vm.*, introduced by CallTIRRewrite (vm.call_tir_dyn)
	// and LowerRuntimeBuiltin; which of them survive to Build says
	// Op.LegalAtBuild.
	CatVM
	// CatShape: shape_of, reshape and the other ops LowerRuntimeBuiltin
	// turns into VM builtins (to_vdevice, hint_on_device), not LegalizeOps.
	CatShape
	// CatMisc: null_value, print, assert and other utilities.
	CatMisc
)

// OpPattern is TVM's OpPatternKind (include/tvm/relax/op_attr_types.h),
// with its values: how an op's output elements depend on its inputs, which
// decides what operator fusion may put in one kernel. Fusion compares
// patterns by order (a pattern up to PatternInjective fuses into its
// consumer), so the values are TVM's and the order matters.
type OpPattern uint8

const (
	// PatternElemWise: out[i] depends on in[i] of every input of the same
	// shape (exp, relu, add of equal shapes).
	PatternElemWise OpPattern = 0
	// PatternBroadcast: out[i, j] depends on in[j]-style indices taken in
	// order (add with broadcasting, broadcast_to); transposes are not.
	PatternBroadcast OpPattern = 1
	// PatternInjective: each output element reads input elements at
	// indices computed from its own (reshape, permute_dims, take, concat).
	PatternInjective OpPattern = 2
	// PatternCommReduce: a commutative reduction (sum, max, argmax).
	PatternCommReduce OpPattern = 3
	// PatternOutEWiseFusable: a complex op (matmul, conv) into whose output
	// elementwise ops can fuse, but not another complex op.
	PatternOutEWiseFusable OpPattern = 4
	// PatternTuple: tuple construction (fuses into injective consumers).
	PatternTuple OpPattern = 7
	// PatternOpaque: fuses with nothing (sort, calls, memory and VM ops).
	PatternOpaque OpPattern = 8
)

var patternNames = map[OpPattern]string{
	PatternElemWise: "ElemWise", PatternBroadcast: "Broadcast", PatternInjective: "Injective",
	PatternCommReduce: "CommReduce", PatternOutEWiseFusable: "OutEWiseFusable",
	PatternTuple: "Tuple", PatternOpaque: "Opaque",
}

func (p OpPattern) String() string {
	if s, ok := patternNames[p]; ok {
		return s
	}
	return fmt.Sprintf("OpPattern(%d)", uint8(p))
}

// ParamKind says how a schema parameter is represented in a call.
type ParamKind uint8

const (
	// ArgExpr: a Relax expression argument, taken as is.
	ArgExpr ParamKind = iota
	// ArgPrimValue: a literal int/float/bool (or PrimExpr) is wrapped in R.prim_value.
	ArgPrimValue
	// ArgStr: a string literal is wrapped in R.str.
	ArgStr
	// ArgDType: a dtype string is wrapped in R.dtype.
	ArgDType
	// ArgShape: a tuple/list of dimensions becomes R.shape([...]).
	ArgShape
	// ArgTuple: the argument is always a tuple (a bare value gets wrapped).
	ArgTuple
	// AttrInt, AttrInts, AttrBool, AttrFloat, AttrStr, AttrDType, AttrAny:
	// the parameter is a call attribute of that type, not an argument.
	AttrInt
	AttrInts
	AttrBool
	AttrFloat
	AttrStr
	AttrDType
	AttrAny
)

// IsAttr reports whether the parameter is a call attribute.
func (k ParamKind) IsAttr() bool { return k >= AttrInt }

// Param is one entry of an op's schema.
type Param struct {
	Name string
	Kind ParamKind
	// Default is used when the argument is omitted: an Expr for argument
	// kinds, an attribute value for attribute kinds. A nil Default with
	// Optional false makes the parameter required.
	Default  any
	Optional bool // may be omitted with no default (e.g. call_tir's tir_vars)
	Variadic bool // collects all remaining positional arguments (call_packed)
	// PrintNone prints the attribute as name=None when it is absent, as
	// TVM prints every field of some attrs nodes (layout_transform's
	// pad_value).
	PrintNone bool
}

// SInfoArgsKind says whether and how an op takes explicit output struct info.
type SInfoArgsKind uint8

const (
	NoSInfoArgs SInfoArgsKind = iota
	OutSInfo                  // out_sinfo= (call_tir family, call_dps_packed)
	SInfoArgsKw               // sinfo_args= (call_packed, call_pure_packed, call_builtin_with_ctx, invoke_closure)
)

// InferCtx gives op hooks access to the module being built (to resolve
// GlobalVar callees of call_tir, for example).
type InferCtx struct {
	Module *Module
}

// GlobalInfo resolves a global function's struct info through the module.
func (c *InferCtx) GlobalInfo(name string) (StructInfo, bool) {
	if c == nil || c.Module == nil {
		return nil, false
	}
	return c.Module.GlobalInfo(name)
}

var opRegistry = map[string]*Op{}

// RegisterOp adds op to the registry. It panics on a duplicate name: the
// registry is built at init time by phasec itself.
func RegisterOp(op *Op) *Op {
	if _, dup := opRegistry[op.Name]; dup {
		panic(fmt.Sprintf("ir: op %q registered twice", op.Name))
	}
	opRegistry[op.Name] = op
	return op
}

// LookupOp returns the op with the registered name ("relax.add").
func LookupOp(name string) (*Op, bool) {
	op, ok := opRegistry[name]
	return op, ok
}

// MustOp returns a registered op, panicking if it does not exist; for ops
// phasec itself registers.
func MustOp(name string) *Op {
	op, ok := opRegistry[name]
	if !ok {
		panic(fmt.Sprintf("ir: op %q is not registered", name))
	}
	return op
}

// Ops returns every registered op in name order.
func Ops() []*Op {
	ops := make([]*Op, 0, len(opRegistry))
	for _, op := range opRegistry {
		ops = append(ops, op)
	}
	slices.SortFunc(ops, func(a, b *Op) int { return strings.Compare(a.Name, b.Name) })
	return ops
}
