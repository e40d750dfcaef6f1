//go:build race

package vm

// raceEnabled: the race detector makes sync.Pool drop items at random, so
// allocation counts that rely on pooled machines do not hold.
const raceEnabled = true
