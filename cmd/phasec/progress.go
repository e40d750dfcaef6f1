package main

import (
	"fmt"
	"io"
	"os"
	"sync"
	"time"
)

// progress shows what a long operation is doing on one rewritten line of a
// terminal, at most ten times a second, and stays silent when the stream is
// not a terminal (a pipe, a file, CI's log), so logs carry results only.
type progress struct {
	mu    sync.Mutex
	w     io.Writer
	last  time.Time
	dirty bool
}

func newProgress(w io.Writer) *progress {
	if f, ok := w.(*os.File); ok {
		if st, err := f.Stat(); err == nil && st.Mode()&os.ModeCharDevice != 0 {
			return &progress{w: w}
		}
	}
	return &progress{}
}

// Printf replaces the progress line.
func (p *progress) Printf(format string, args ...any) {
	if p.w == nil {
		return
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	if now := time.Now(); now.Sub(p.last) >= 100*time.Millisecond {
		p.last = now
		fmt.Fprintf(p.w, "\r\033[K"+format, args...)
		p.dirty = true
	}
}

// Done clears the progress line before the results are printed.
func (p *progress) Done() {
	if p.w == nil {
		return
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.dirty {
		fmt.Fprint(p.w, "\r\033[K")
		p.dirty = false
	}
}
