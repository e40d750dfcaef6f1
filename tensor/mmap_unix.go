//go:build unix

package tensor

import (
	"os"
	"syscall"
)

const mmapSupported = true

// mapFile maps the whole file copy-on-write; the mapping starts on a page
// boundary, so a 64-byte aligned file offset is a 64-byte aligned address.
func mapFile(f *os.File, size int64) ([]byte, error) {
	return syscall.Mmap(int(f.Fd()), 0, int(size), syscall.PROT_READ|syscall.PROT_WRITE, syscall.MAP_PRIVATE)
}

func unmap(b []byte) error { return syscall.Munmap(b) }
