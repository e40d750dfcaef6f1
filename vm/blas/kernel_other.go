//go:build !amd64 || purego

package blas

// hasAVX2FMA is false off amd64: every path uses the portable Go loops.
var hasAVX2FMA = false

// fmaPeak has no assembly loop off amd64; it reports 0 FLOP.
func fmaPeak(n int) int64 { return 0 }
