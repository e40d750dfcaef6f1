//go:build !amd64 || purego

package blas

func dotF32(a, b []float32) float32         { return dotF32Go(a, b) }
func axpyF32(alpha float32, x, y []float32) { axpyF32Go(alpha, x, y) }
func sumF32(a []float32) float32            { return sumF32Go(a) }
func maxF32(a []float32) float32            { return maxF32Go(a) }
