package tensor

import (
	"bytes"
	"os"
	"path/filepath"
	"testing"
)

func addGoldenSeeds(f *testing.F, pattern string) {
	files, err := filepath.Glob(filepath.Join("testdata", pattern))
	if err != nil || len(files) == 0 {
		f.Fatalf("no seeds for %s: %v", pattern, err)
	}
	for _, p := range files {
		b, err := os.ReadFile(p)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(b)
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

// FuzzReadNpz: any archive is a list of tensors or an error.
func FuzzReadNpz(f *testing.F) {
	addGoldenSeeds(f, "*.npz")
	f.Fuzz(func(t *testing.T, data []byte) {
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
