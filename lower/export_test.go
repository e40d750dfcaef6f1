package lower

// UseRewriter forces VMShapeLower's Rewriter path for every function.
func UseRewriter(on bool) { useRewriter = on }
