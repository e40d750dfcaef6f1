package wellformed

import (
	"github.com/phasec/phasec/diag"
	"github.com/phasec/phasec/phase"
)

// Rule is one entry of the checker's catalogue. Codes are stable: a code is
// never reused or renumbered (the catalogue test pins them against a golden
// list); retired rules keep their slot. Every rule's code is registered in
// diag's registry of codes, with the rule's Title as its description, so
// the catalogue is the one source of both.
type Rule struct {
	// Code is the stable identifier printed in diagnostics ("WF017").
	Code diag.Code
	// Severity of every violation of the rule.
	Severity diag.Severity
	// Property is the property the rule belongs to; phase.WellFormed marks a
	// structural rule, checked in every phase.
	Property phase.Property
	// Family groups related rules (scoping, dataflow, purity, ...).
	Family string
	// Title is a one-line description of what the rule requires.
	Title string
	// Hint names the pass or barrier that establishes the rule, or says how
	// to fix the input when no pass can.
	Hint string
}

// Structural reports whether the rule holds in every phase.
func (r *Rule) Structural() bool { return r.Property == phase.WellFormed }

// ruleID indexes the catalogue. The order is the code order; append only.
type ruleID uint8

const (
	ruleUndefinedVar ruleID = iota
	ruleRedefinedVar
	ruleSharedParam
	ruleDataflowVarUse
	ruleDataflowVarDef
	ruleIfInDataflow
	ruleImpureInDataflow
	ruleImpureInPure
	ruleForcePureImpure
	ruleUndefinedGlobal
	ruleGlobalSymbolName
	ruleUndefinedSymVar
	ruleRetMissing
	ruleShapeNotInt
	ruleOpValidate
	ruleOpNormalizeFails
	ruleBindingInfo
	ruleCallInfo
	ruleBadCallee
	rulePhaseAttr
	ruleMalformed
	ruleInfoMissing
	ruleNotANF
	ruleSeqPlacement
	ruleNotCanonical
	ruleBlockHygiene
	ruleNestedFunction
	rulePrimFuncValue
	ruleTensorOp
	ruleDataflowBlock
	rulePureNotForced
	rulePurityOverride
	ruleCallTIR
	ruleKernelWritesConst
	ruleNotVMLegal
	ruleSymbolicShape
	ruleSymbolicPrimValue
	ruleNoGlobalSymbol
	ruleRetContradicted
	ruleTIRLoopVarInBlock
	ruleTIRUndefinedVar
	ruleTIREnvThread
	rulePrimitiveFunction
	ruleOffloadGroup
	numRules
)

// Hints for the per-phase rules name the pass that establishes the property
// and the barrier that runs it.
const (
	hintCanonicalize = "run Normalize, or the canonicalize barrier"
	hintLambdaLift   = "run LambdaLift, or the canonicalize barrier"
	hintLegalize     = "run LegalizeOps, or the lower barrier"
	hintToNonDF      = "run ToNonDataflow, or the lower barrier"
	hintPurity       = "run RemovePurityChecking, or the lower barrier"
	hintCallTIR      = "run CallTIRRewrite, or the lower barrier"
	hintBuiltins     = "run LowerRuntimeBuiltin, or the build barrier"
	hintShapes       = "run VMShapeLower, or the build barrier"
	hintSymbols      = "run AttachGlobalSymbol, or the build barrier"
)

var catalogue = [numRules]Rule{
	// Structural rules (those of TVM's src/relax/analysis/well_formed.cc), checked in every phase.
	ruleUndefinedVar: {Code: "WF001", Family: "scoping",
		Title: "every variable is defined before use and in scope",
		Hint:  "define the variable earlier in an enclosing scope; variables bound in an If branch or a dataflow block are not visible after it"},
	ruleRedefinedVar: {Code: "WF002", Family: "scoping",
		Title: "every variable is defined exactly once (SSA)",
		Hint:  "bind a fresh variable instead of rebinding an existing one"},
	ruleSharedParam: {Code: "WF003", Family: "scoping",
		Title: "a parameter belongs to exactly one function, once",
		Hint:  "give each function its own parameter variables"},
	ruleDataflowVarUse: {Code: "WF004", Family: "dataflow",
		Title: "a dataflow variable is used only inside its dataflow block",
		Hint:  "export the value with R.output (bind it to a non-dataflow variable)"},
	ruleDataflowVarDef: {Code: "WF005", Family: "dataflow",
		Title: "a dataflow variable is defined only inside a dataflow block",
		Hint:  "bind an ordinary variable outside dataflow blocks"},
	ruleIfInDataflow: {Code: "WF006", Family: "dataflow",
		Title: "a dataflow block contains no If",
		Hint:  "move the conditional out of the dataflow block"},
	ruleImpureInDataflow: {Code: "WF007", Family: "dataflow",
		Title: "a dataflow block contains no impure call",
		Hint:  "move the call out of the dataflow block, or use R.call_pure_packed when it is really pure"},
	ruleImpureInPure: {Code: "WF008", Family: "purity",
		Title: "a pure function without relax.force_pure contains no impure call",
		Hint:  "declare the function @R.function(pure=False), or wrap a pure packed call in R.call_pure_packed"},
	ruleForcePureImpure: {Code: "WF009", Family: "purity",
		Title: "relax.force_pure is set only on pure functions",
		Hint:  "remove relax.force_pure or make the function pure"},
	ruleUndefinedGlobal: {Code: "WF010", Family: "globals",
		Title: "every global reference names a function of the module",
		Hint:  "define the function in the module or fix the reference"},
	ruleGlobalSymbolName: {Code: "WF011", Family: "globals",
		Title: "a function's global_symbol equals its name",
		Hint:  "rename the function or fix its global_symbol attribute"},
	ruleUndefinedSymVar: {Code: "WF012", Family: "symbolic",
		Title: "every symbolic shape variable is defined before use, in its own function and branch",
		Hint:  "define the variable in a parameter annotation or an R.match_cast before using it"},
	ruleRetMissing: {Code: "WF013", Family: "function",
		Title: "every function has return struct info",
		Hint:  "annotate the return type (-> ...)"},
	ruleShapeNotInt: {Code: "WF014", Family: "shape",
		Title: "every ShapeExpr value is an integer",
		Hint:  "use integer dimensions"},
	ruleOpValidate: {Code: "WF015", Family: "op contract",
		Title: "every call passes its op's Validate hook",
		Hint:  "fix the call's arguments to match the op's signature"},
	ruleOpNormalizeFails: {Code: "WF016", Family: "op contract",
		Title: "every call is accepted by its op's Normalize hook",
		Hint:  "fix the call's arguments to match the op's signature"},
	ruleBindingInfo: {Code: "WF017", Family: "struct info",
		Title: "a bound variable's struct info is a base of its value's struct info",
		Hint:  "annotate the variable with a type the value satisfies"},
	ruleCallInfo: {Code: "WF018", Family: "struct info",
		Title: "a call's struct info can be inferred and is not provably wrong",
		Hint:  "fix the call's arguments or its sinfo_args/out_sinfo annotation"},
	ruleBadCallee: {Code: "WF019", Family: "expressions",
		Title: "a call's callee is an op, a global function, an extern function or a closure variable",
		Hint:  "call an op, a global function, an extern function or a closure variable"},
	rulePhaseAttr: {Code: "WF020", Family: "module",
		Title: "the module's phase attribute names a phase",
		Hint:  `set I.module_attrs({"phase": ...}) to one of ingest, optimize, lower, build, or remove it`},
	ruleMalformed: {Code: "WF021", Family: "expressions",
		Title: "every node has its required fields",
		Hint:  "build the node through the ir constructors or the Builder"},

	// Normalized.
	ruleInfoMissing: {Code: "WF022", Property: phase.Normalized, Family: "normal form",
		Title: "every expression has struct info", Hint: hintCanonicalize},
	ruleNotANF: {Code: "WF023", Property: phase.Normalized, Family: "normal form",
		Title: "call operands, tuple fields, projected tuples, If conditions and SeqExpr results are leaves or tuples (ANF)",
		Hint:  hintCanonicalize},
	ruleSeqPlacement: {Code: "WF024", Property: phase.Normalized, Family: "normal form",
		Title: "function bodies and If branches are SeqExprs, and SeqExprs appear nowhere else",
		Hint:  hintCanonicalize},
	ruleNotCanonical: {Code: "WF025", Property: phase.Normalized, Family: "normal form",
		Title: "every call is in its op's canonical form (Normalize returns the call itself)",
		Hint:  hintCanonicalize},
	ruleBlockHygiene: {Code: "WF026", Property: phase.Normalized, Family: "normal form",
		Title: "no empty binding blocks and no two adjacent blocks of the same kind",
		Hint:  hintCanonicalize},

	// Per-phase invariants.
	ruleNestedFunction: {Code: "WF027", Property: phase.NoNestedFunctions, Family: "functions",
		Title: "no local functions or closures inside function bodies", Hint: hintLambdaLift},
	rulePrimFuncValue: {Code: "WF028", Property: phase.PrimFuncsViaCallTIR, Family: "functions",
		Title: "a PrimFunc is referenced only as a kernel (of a call_tir-family call or vm.builtin.call_tir_dyn) or as a direct (DPS) callee",
		Hint:  "call the PrimFunc through R.call_tir; no pass rewrites a PrimFunc used as a value"},
	ruleTensorOp: {Code: "WF029", Property: phase.Legalized, Family: "ops",
		Title: "no high-level tensor ops remain", Hint: hintLegalize},
	ruleDataflowBlock: {Code: "WF030", Property: phase.NoDataflow, Family: "dataflow",
		Title: "no dataflow blocks remain", Hint: hintToNonDF},
	rulePureNotForced: {Code: "WF031", Property: phase.PurityRelaxed, Family: "purity",
		Title: "every pure function carries relax.force_pure", Hint: hintPurity},
	rulePurityOverride: {Code: "WF032", Property: phase.PurityRelaxed, Family: "purity",
		Title: "no purity overrides (call_pure_packed, call_inplace_packed, invoke_pure_closure) remain",
		Hint:  hintPurity},
	ruleCallTIR: {Code: "WF033", Property: phase.NoCallTIR, Family: "ops",
		Title: "no call_tir, call_tir_inplace or call_dps_packed remains", Hint: hintCallTIR},
	ruleKernelWritesConst: {Code: "WF034", Property: phase.ExplicitMemory, Family: "memory",
		Title: "every buffer a kernel writes is an explicitly allocated tensor, never a constant",
		Hint:  hintCallTIR},
	ruleNotVMLegal: {Code: "WF035", Property: phase.BuiltinsLowered, Family: "ops",
		Title: "only VM-codegen-legal ops remain (vm.alloc_storage, vm.alloc_tensor, vm.kill_object, call_builtin_with_ctx, call_packed, null_value)",
		Hint:  hintBuiltins},
	ruleSymbolicShape: {Code: "WF036", Property: phase.ShapesLowered, Family: "shape",
		Title: "every ShapeExpr used as a value is constant", Hint: hintShapes},
	ruleSymbolicPrimValue: {Code: "WF037", Property: phase.ShapesLowered, Family: "shape",
		Title: "every PrimValue is a constant", Hint: "run ComputePrimValue and VMShapeLower, or the build barrier"},
	ruleNoGlobalSymbol: {Code: "WF038", Property: phase.GlobalSymbols, Family: "globals",
		Title: "every function has a global_symbol", Hint: hintSymbols},

	// Added after the catalogue above; codes stay in append order.
	ruleRetContradicted: {Code: "WF039", Property: phase.Normalized, Family: "struct info",
		Title: "a function's body is not provably of another type than its return annotation",
		// TVM's Function constructor keeps such an annotation and its
		// well_formed accepts it; phases require the annotation to hold.
		Hint: "annotate the return with a type the body satisfies; no pass repairs it (run the canonicalize barrier to find it)"},
	ruleTIRLoopVarInBlock: {Code: "WF040", Family: "tir",
		Title: "a block with iteration variables reads no loop variable of an enclosing loop outside it, except through its iteration values",
		Hint:  "bind the loop variable to a block iteration variable (T.axis.*) and use that inside the block"},
	ruleTIRUndefinedVar: {Code: "WF041", Family: "tir",
		Title: "every TIR variable is defined once (by a parameter, a buffer's shape, a loop, a let, a block iteration, a thread launch or an allocation) and used in its scope",
		Hint:  "bind the variable through a match_buffer shape, a loop or a T.LetStmt before using it, and give every binding site its own variable"},
	ruleTIREnvThread: {Code: "WF042", Family: "tir",
		Title: "every environment thread of a PrimFunc is launched through one variable",
		Hint:  "declare the thread once with T.env_thread and launch that variable each time"},
	rulePrimitiveFunction: {Code: "WF043", Property: phase.NoPrimitiveFunctions, Family: "functions",
		Title: "no Relax function is a fusion group awaiting its kernel (a nonzero Primitive attribute)",
		// The diagnostic's own hint names the one member of the group
		// that is missing (checker.checkGroupFunction).
		Hint: "run FuseTIR after FuseOps (the fusion group), or RunCodegen after FuseOpsByPattern (a pattern group)"},
	ruleOffloadGroup: {Code: "WF044", Property: phase.NoOffloadGroups, Family: "functions",
		Title: "no Relax function is an offload group awaiting its external kernel (a Codegen attribute, or a Composite function outside one)",
		Hint:  "run RunCodegen after MergeCompositeFunctions (the offload group)"},
}

// wfCodes is the family of the catalogue's codes.
var wfCodes = diag.NewFamily("WF", "well-formedness rules (wellformed.Rule): the structural invariants and the per-phase properties, checked by phasec check and at every barrier")

func init() {
	for _, r := range catalogue {
		wfCodes.Define(r.Code, r.Title)
	}
}

// Rules returns the catalogue in code order.
func Rules() []Rule {
	rs := make([]Rule, numRules)
	copy(rs, catalogue[:])
	return rs
}

// LookupRule returns the rule with the given code.
func LookupRule(code diag.Code) (Rule, bool) {
	for _, r := range catalogue {
		if r.Code == code {
			return r, true
		}
	}
	return Rule{}, false
}

// RulesFor returns the rules that decide property p, in code order.
func RulesFor(p phase.Property) []Rule {
	var rs []Rule
	for _, r := range catalogue {
		if r.Property == p {
			rs = append(rs, r)
		}
	}
	return rs
}
