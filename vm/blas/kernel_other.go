//go:build !amd64

package blas

// fmaPeak has no assembly loop off amd64; it reports 0 FLOP.
func fmaPeak(n int) int64 { return 0 }
