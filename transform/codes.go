package transform

import "github.com/phasec/phasec/diag"

// optCodes is the family of the Optimize-phase passes' diagnostic codes.
// Each pass defines its codes beside the code that reports them.
var optCodes = diag.NewFamily("OPT", "the Optimize-phase passes (package transform): options or input a pass cannot apply")

// Codes of CanonicalizeBindings.
var (
	codeInconsistentMatchCast = optCodes.Define("OPT240", "two R.match_cast bindings imply different values for one symbolic variable")
)
