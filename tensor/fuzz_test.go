package tensor

import (
	"archive/zip"
	"bytes"
	"io"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"
)

func addGoldenSeeds(f *testing.F, pattern string, extra ...any) {
	files, err := filepath.Glob(filepath.Join("testdata", pattern))
	require.NoError(f, err, "seeds for %s", pattern)
	require.NotEmpty(f, files, "no seeds for %s", pattern)
	for _, p := range files {
		b, err := os.ReadFile(p)
		require.NoError(f, err)
		f.Add(append([]any{b}, extra...)...)
	}
}

// FuzzReadNpy: any input is a tensor or an error, never a panic or a hang;
// a tensor read back after writing is unchanged.
func FuzzReadNpy(f *testing.F) {
	addGoldenSeeds(f, "npy/*.npy")
	f.Fuzz(func(t *testing.T, data []byte) {
		x, err := ReadNpy(bytes.NewReader(data))
		if err != nil {
			return
		}
		require.Equal(t, x.NBytes(), int64(len(x.Bytes())), "inconsistent tensor %s", x)
		require.GreaterOrEqual(t, len(x.Storage.Bytes()), len(x.Bytes()), "inconsistent tensor %s", x)
		var buf bytes.Buffer
		require.NoError(t, WriteNpy(&buf, x))
		y, err := ReadNpy(&buf)
		require.NoError(t, err, "re-reading our own output")
		require.Equal(t, x.DType, y.DType, "round trip changed %s into %s", x, y)
		require.Equal(t, FormatShape(x.Shape), FormatShape(y.Shape), "round trip changed %s into %s", x, y)
		require.True(t, bytes.Equal(x.Bytes(), y.Bytes()), "round trip changed %s into %s", x, y)
	})
}

// FuzzReadNpz: any archive is a list of tensors or an error. With wrap set,
// the input becomes one deflated entry of a valid archive, so the fuzzer
// explores the entry decoder past the zip CRC check.
func FuzzReadNpz(f *testing.F) {
	addGoldenSeeds(f, "*.npz", false)
	addGoldenSeeds(f, "npy/float32.npy", true)
	addGoldenSeeds(f, "npy/fortran_int32_2x3x2.npy", true)
	f.Fuzz(func(t *testing.T, data []byte, wrap bool) {
		if wrap {
			var buf bytes.Buffer
			require.NoError(t, zipEntry(&buf, "x.npy", data))
			data = buf.Bytes()
		}
		arrays, err := readNpzBytes(data)
		if err != nil {
			return
		}
		for _, a := range arrays {
			require.Equal(t, a.Tensor.NBytes(), int64(len(a.Tensor.Bytes())), "inconsistent tensor %q %s", a.Name, a.Tensor)
		}
	})
}

func zipEntry(w io.Writer, name string, b []byte) error {
	zw := zip.NewWriter(w)
	ew, err := zw.Create(name)
	if err != nil {
		return err
	}
	if _, err := ew.Write(b); err != nil {
		return err
	}
	return zw.Close()
}
