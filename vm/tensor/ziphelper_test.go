package tensor

import (
	"archive/zip"
	"io"
	"testing"

	"github.com/stretchr/testify/require"
)

func zipWith(t *testing.T, w io.Writer, files map[string][]byte) {
	zw := zip.NewWriter(w)
	for name, b := range files {
		ew, err := zw.Create(name)
		require.NoError(t, err)
		_, err = ew.Write(b)
		require.NoError(t, err)
	}
	require.NoError(t, zw.Close())
}
