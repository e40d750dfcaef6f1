//go:build !linux

package kernel_test

func processCPUTime() int64 { return 0 }
