package main

import (
	"math"
	"os"
	"runtime/debug"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// phasec sets its soft memory limit only when the environment sets none: a
// GOMEMLIMIT the runtime already applied stays in force.
func TestSetMemoryLimit(t *testing.T) {
	prev := debug.SetMemoryLimit(-1)
	t.Cleanup(func() { debug.SetMemoryLimit(prev) })

	debug.SetMemoryLimit(math.MaxInt64)
	t.Setenv("GOMEMLIMIT", "")
	assert.Equal(t, int64(math.MaxInt64), setMemoryLimit(), "GOMEMLIMIT set (even empty): the runtime's limit stays")
	assert.Equal(t, int64(math.MaxInt64), debug.SetMemoryLimit(-1))

	// t.Setenv above restores the variable at cleanup; unset it meanwhile.
	require.NoError(t, os.Unsetenv("GOMEMLIMIT"))
	assert.Equal(t, int64(defaultMemoryLimit), setMemoryLimit())
	assert.Equal(t, int64(defaultMemoryLimit), debug.SetMemoryLimit(-1))
}
