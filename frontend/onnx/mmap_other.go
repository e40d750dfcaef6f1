//go:build !unix

package onnx

import (
	"io"
	"os"
)

// mapOrRead reads the file (no mapping on this system).
func mapOrRead(f *os.File, size int64) ([]byte, func(), error) {
	b := make([]byte, size)
	if _, err := io.ReadFull(f, b); err != nil {
		return nil, nil, err
	}
	return b, func() {}, nil
}
