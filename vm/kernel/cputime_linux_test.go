package kernel_test

import "golang.org/x/sys/unix"

// processCPUTime returns the CPU time all threads of this process have
// used, in nanoseconds: on a machine shared with other jobs it excludes
// the time the benchmark was descheduled.
func processCPUTime() int64 {
	var ts unix.Timespec
	if err := unix.ClockGettime(unix.CLOCK_PROCESS_CPUTIME_ID, &ts); err != nil {
		return 0
	}
	return ts.Nano()
}
