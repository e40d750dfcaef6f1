//go:build !amd64 || purego

package blas

func normF32(dst, x []float32, m, r float32, g, h []float32) { normF32Go(dst, x, m, r, g, h) }
