package transform

import "github.com/phasec/phasec/diag"

// optCodes is the family of the Optimize-phase passes' diagnostic codes.
// Each pass defines its codes beside the code that reports them.
var optCodes = diag.NewFamily("OPT", "the Optimize-phase passes (package transform): options or input a pass cannot apply")
