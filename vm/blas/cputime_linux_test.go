package blas

import "golang.org/x/sys/unix"

// processCPUTime returns the CPU time all threads of this process have
// used, in seconds: on a machine shared with other jobs it excludes the
// time the benchmark was descheduled.
func processCPUTime() float64 {
	var ts unix.Timespec
	if err := unix.ClockGettime(unix.CLOCK_PROCESS_CPUTIME_ID, &ts); err != nil {
		return 0
	}
	return float64(ts.Sec) + float64(ts.Nsec)/1e9
}
