package barrier

import "github.com/phasec/phasec/diag"

// barCodes is the family of the barriers' diagnostic codes.
var barCodes = diag.NewFamily("BAR", "the barriers (canonicalize, lower, build): the summary of a barrier that could not establish its phase")
