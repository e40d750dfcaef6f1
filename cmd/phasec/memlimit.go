package main

import (
	"os"
	"runtime/debug"
)

// defaultMemoryLimit is the soft limit on the memory of the Go runtime that
// phasec sets when the environment sets none (GOMEMLIMIT).
//
// With the collector's default pacing (GOGC=100) the heap grows to twice
// what was live at the previous collection before the next one starts; at
// a million bindings the parse holds about 2.5 GB live at its peak, so the
// heap would reach about 5 GB, most of it garbage. Near the limit the
// collector runs earlier instead. The limit complements, and does not
// replace, keeping little alive (see passes.InputBlind): it is soft, so a
// module whose live data exceeds it still compiles, with the collector
// running more often (the runtime caps its share of the CPU).
const defaultMemoryLimit = 3400 << 20

// setMemoryLimit applies defaultMemoryLimit unless GOMEMLIMIT is set (the
// runtime has then applied that one). It reports the limit in force.
func setMemoryLimit() int64 {
	if _, set := os.LookupEnv("GOMEMLIMIT"); set {
		return debug.SetMemoryLimit(-1)
	}
	debug.SetMemoryLimit(defaultMemoryLimit)
	return defaultMemoryLimit
}
