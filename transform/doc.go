// Package transform holds the Optimize-phase passes, TVM's
// relax.transform: one file per pass, named after the TVM source file it
// follows (src/relax/transform/<name>.cc), whose doc cites that file.
//
// Every pass here accepts modules in phase ingest or optimize and keeps
// Ingest's invariants (Optimize has exactly Ingest's), requires Normalized,
// runs at the opt level TVM creates it with, and takes TVM's Python
// parameters as options with TVM's defaults. A pass returns its input
// module itself when it changes nothing, never edits its input, and is
// linear in module size: traversals use ir's Mutator, Rewriter and
// Visitor, which loop over binding lists, so no recursion depth grows with
// program length.
//
// A TVM user who runs the same pass on the same module gets a structurally
// equal module; the goldens under testdata/passes/<Pass>/ are TVM's test
// cases (tests/python/relax/test_transform_<name>.py) written in phasec's
// own words.
package transform
