//go:build !unix

package tensor

import (
	"errors"
	"os"
)

const mmapSupported = false

func mapFile(*os.File, int64) ([]byte, error) {
	return nil, errors.New("memory mapping is not supported here")
}

func unmap([]byte) error { return nil }
