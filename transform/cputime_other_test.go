//go:build !unix

package transform_test

// cpuTime is unknown here: no cpu-ns/op metric.
func cpuTime() int64 { return -1 }
