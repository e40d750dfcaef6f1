//go:build unix

package transform_test

import "syscall"

// foldCPUTime is the process's user and system CPU time in nanoseconds.
func foldCPUTime() int64 {
	var ru syscall.Rusage
	if syscall.Getrusage(syscall.RUSAGE_SELF, &ru) != nil {
		return -1
	}
	return ru.Utime.Nano() + ru.Stime.Nano()
}
