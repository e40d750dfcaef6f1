package transform

// CanonicalizeFunction exposes the function pass body to tests of inputs
// the pass's contract refuses (local functions, which phase ingest lifts).
var CanonicalizeFunction = canonicalizeFunction
