// Package transform holds the Optimize-phase passes, TVM's relax.transform:
// one file per pass, named after TVM's source file
// (src/relax/transform/<name>.cc), each pass's doc citing it.
//
// Every pass here accepts modules in phase ingest or optimize and keeps
// Ingest's invariants (Optimize has exactly Ingest's), requires Normalized,
// returns its input module (the same pointer) when it changes nothing,
// never edits its input, and is linear in the size of the module: rewrites
// go through ir's Mutator and Rewriter, which walk binding lists in loops.
// Bad input (an option naming what the module lacks, a tensor of the wrong
// dtype or shape) is a diagnostic and leaves the module untouched: a pass
// either applies completely or not at all.
package transform
