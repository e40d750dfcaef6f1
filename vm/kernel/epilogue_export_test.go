package kernel

// SetEpilogueFusion turns producer + epilogue fusion on or off for the
// kernels compiled afterwards (benchmarks time both dispatches of one
// PrimFunc); it returns the previous setting.
func SetEpilogueFusion(on bool) bool {
	old := epilogueFusion
	epilogueFusion = on
	return old
}

// SimplifyIndices is simplifyIndices (index_simplify.go).
var SimplifyIndices = simplifyIndices
