//go:build unix

package onnx

import (
	"io"
	"os"
	"syscall"
)

// mapOrRead maps the file read-only (its pages are the page cache's, not
// a copy on the heap) and returns a function that unmaps it; small or
// unmappable files are read.
func mapOrRead(f *os.File, size int64) ([]byte, func(), error) {
	if size >= 1<<20 {
		if b, err := syscall.Mmap(int(f.Fd()), 0, int(size), syscall.PROT_READ, syscall.MAP_SHARED); err == nil {
			return b, func() { _ = syscall.Munmap(b) }, nil
		}
	}
	b := make([]byte, size)
	if _, err := io.ReadFull(f, b); err != nil {
		return nil, nil, err
	}
	return b, func() {}, nil
}
