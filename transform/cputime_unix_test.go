//go:build unix

package transform_test

import (
	"syscall"
	"time"
)

// cpuTime is the CPU time (user + system, all threads, GC included) the
// process has used: on a shared machine it measures the work a benchmark
// does where wall time also measures the other processes.
func cpuTime() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}
