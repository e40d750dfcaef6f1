package kernel_test

import "syscall"

// processCPUTime returns the CPU time all threads of this process have
// used, in nanoseconds: on a machine shared with other jobs it excludes
// the time the benchmark was descheduled.
func processCPUTime() int64 {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return ru.Utime.Nano() + ru.Stime.Nano()
}
