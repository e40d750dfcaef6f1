package lower

import "github.com/phasec/phasec/diag"

// lowCodes is the family of the lowering passes' diagnostic codes. Each
// pass defines its own codes beside the code that reports them; a new code
// takes the next free number (phasec doc codes lists those taken).
var lowCodes = diag.NewFamily("LOW", "the lowering passes of the lower and build barriers: input a pass cannot lower")
