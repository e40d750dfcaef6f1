package transform

// NormalizeGlobalVars exposes the renaming of NormalizeGlobalVar, which no
// pipeline can reach (its input is not well-formed), to the tests.
var NormalizeGlobalVars = normalizeGlobalVars

// CanonicalizeFunction exposes the function pass body to tests of inputs
// the pass's contract refuses (local functions, which phase ingest lifts).
var CanonicalizeFunction = canonicalizeFunction
