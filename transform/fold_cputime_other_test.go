//go:build !unix

package transform_test

// foldCPUTime is unknown here: no cpu-ns/op metric.
func foldCPUTime() int64 { return -1 }
