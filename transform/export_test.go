package transform

// NormalizeGlobalVars exposes the renaming of NormalizeGlobalVar, which no
// pipeline can reach (its input is not well-formed), to the tests.
var NormalizeGlobalVars = normalizeGlobalVars
