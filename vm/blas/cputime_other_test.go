//go:build !linux

package blas

// processCPUTime is not measured off Linux; the CPU-time metrics read 0.
func processCPUTime() float64 { return 0 }
