package tensor

import (
	"archive/zip"
	"bytes"
	"io"
	"os"
	"path/filepath"
	"testing"
)

func addGoldenSeeds(f *testing.F, pattern string, extra ...any) {
	files, err := filepath.Glob(filepath.Join("testdata", pattern))
	if err != nil || len(files) == 0 {
		f.Fatalf("no seeds for %s: %v", pattern, err)
	}
	for _, p := range files {
		b, err := os.ReadFile(p)
		if err != nil {
			f.Fatal(err)
		}
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
		if x.NBytes() != int64(len(x.Bytes())) || len(x.Storage.Bytes()) < len(x.Bytes()) {
			t.Fatalf("inconsistent tensor %s", x)
		}
		var buf bytes.Buffer
		if err := WriteNpy(&buf, x); err != nil {
			t.Fatal(err)
		}
		y, err := ReadNpy(&buf)
		if err != nil {
			t.Fatalf("re-reading our own output: %v", err)
		}
		if y.DType != x.DType || FormatShape(y.Shape) != FormatShape(x.Shape) || !bytes.Equal(x.Bytes(), y.Bytes()) {
			t.Fatalf("round trip changed %s into %s", x, y)
		}
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
			if err := zipEntry(&buf, "x.npy", data); err != nil {
				t.Fatal(err)
			}
			data = buf.Bytes()
		}
		arrays, err := readNpzBytes(data)
		if err != nil {
			return
		}
		for _, a := range arrays {
			if a.Tensor.NBytes() != int64(len(a.Tensor.Bytes())) {
				t.Fatalf("inconsistent tensor %q %s", a.Name, a.Tensor)
			}
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
