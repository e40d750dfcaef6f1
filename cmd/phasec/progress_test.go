package main

import (
	"bytes"
	"os"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestProgressOnlyOnTerminals(t *testing.T) {
	var buf bytes.Buffer
	p := newProgress(&buf)
	p.Printf("step %d", 1)
	p.Done()
	assert.Empty(t, buf.String(), "a buffer is not a terminal")

	f, err := os.CreateTemp(t.TempDir(), "log")
	require.NoError(t, err)
	defer f.Close()
	p = newProgress(f)
	p.Printf("step %d", 1)
	p.Done()
	st, err := f.Stat()
	require.NoError(t, err)
	assert.Zero(t, st.Size(), "a regular file is not a terminal")

	// A terminal gets the line and its erasure.
	p = &progress{w: &buf}
	p.Printf("checking pass %d: %s", 3, "LegalizeOps")
	p.Printf("dropped: within 100 ms of the last")
	p.Done()
	assert.Equal(t, "\r\x1b[Kchecking pass 3: LegalizeOps\r\x1b[K", buf.String())
}
