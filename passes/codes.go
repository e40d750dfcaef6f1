package passes

import "github.com/phasec/phasec/diag"

// The diagnostic code families of this package: the static pipeline check
// (Check, and the phase claim every run verifies), the pass context
// (PassContext.Validate) and textual pipelines (ParsePipeline).
var (
	chkCodes  = diag.NewFamily("CHK", "the static pipeline check (phasec passes/opt/build): a pass that would not accept what it receives, and a module's phase claim its content contradicts")
	ctxCodes  = diag.NewFamily("CTX", "the pass context (opt level, required and disabled passes, config), checked before a pipeline runs")
	pipeCodes = diag.NewFamily("PIPE", "textual pipelines (--passes): syntax, pass names and options")
)

// Codes of the static pipeline check.
var (
	codeNotAccepted = chkCodes.Define("CHK001", "a pass would get a module in a phase it does not accept, or without a property it needs")
	codeNotRunYet   = chkCodes.Define("CHK002", "a pass's Requires prerequisite would not have run before it")
	codeReqDisabled = chkCodes.Define("CHK003", "a pass's Requires prerequisite is disabled")
	codeTooLate     = chkCodes.Define("CHK005", "a pass would run after a property it Precedes already holds")
	// CodeFalseClaim is the code of the diagnostic refusing a module whose
	// recorded phase its content does not satisfy.
	CodeFalseClaim = chkCodes.Define("CHK004", "a module's recorded phase is contradicted by its content")
)

// Codes of the pass context.
var (
	codeOptLevel        = ctxCodes.Define("CTX001", "the opt level is outside 0..3")
	codeCtxUnknownPass  = ctxCodes.Define("CTX002", "a required or disabled pass is not registered")
	codeAlwaysRuns      = ctxCodes.Define("CTX003", "a disabled pass always runs")
	codeUnknownConfig   = ctxCodes.Define("CTX004", "a config key is not registered")
	codeConfigValueType = ctxCodes.Define("CTX005", "a config value is not of its key's type")
)

// Codes of textual pipelines.
var (
	codePipeSyntax   = pipeCodes.Define("PIPE000", "the pipeline text does not parse")
	codeUnknownPass  = pipeCodes.Define("PIPE001", "a pipeline names a pass that is not registered")
	codeBadOption    = pipeCodes.Define("PIPE002", "a pass option is unknown, given twice or missing")
	codeOptionSyntax = pipeCodes.Define("PIPE003", "a pass option's value does not parse as its type")
	// CodeFixpointCap is the warning of a fixpoint(...) that reached its
	// iteration cap while its rounds still changed the module.
	CodeFixpointCap = pipeCodes.Define("PIPE004", "a fixpoint(...) reached its iteration cap before a round changed nothing (warning)")
)
