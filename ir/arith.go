package ir

// Symbolic arithmetic: the contract entry points. The canonical simplifier
// lives in arith_simplify.go and arith_poly.go, constant folding in
// arith_const.go, bounds and proofs in arith_prove.go, substitution in
// arith_subst.go; printing is primexpr_format.go's.
//
// The arithmetic is a package inside ir in all but its import path, and
// stays here because ir's own semantics are defined with it (see "Symbolic
// arithmetic" in doc.go). arith_boundary_test.go keeps the cut a cut: the
// rest of ir calls only the exported entry points (Simplify,
// CanProveEqual, Analyzer, SubstitutePrim, VisitPrimVars, ...), never the
// simplifier's internals, so the files can move the day the PrimExpr model
// moves below ir.

// Simplify returns the canonical form of e using no assumptions beyond the
// ranges of the variables' types. Integer expressions come back in
// sum-of-products form (`4 * (2 * n)` and `8 * n` both give `n * 8`); other
// expressions come back with simplified children and folded constants.
// Simplify never edits e; unchanged non-integer nodes are returned as is.
func Simplify(e PrimExpr) PrimExpr { return noAssumptions.Simplify(e) }

// CanProveEqual reports whether a and b are provably equal for every value
// of their variables (integers: the canonical form of a - b is 0).
func CanProveEqual(a, b PrimExpr) bool { return noAssumptions.CanProveEqual(a, b) }

// noAssumptions is the analyzer of the package-level entry points. A nil
// *Analyzer knows nothing and is never written to, so sharing it costs no
// allocation per call.
var noAssumptions *Analyzer
