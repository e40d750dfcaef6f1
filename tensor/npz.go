package tensor

import (
	"archive/zip"
	"bytes"
	"compress/flate"
	"fmt"
	"io"
	"os"
	"strings"
)

// Named is one array of an .npz archive.
type Named struct {
	Name   string // without the ".npy" suffix, as numpy.load(...).files shows it
	Tensor *Tensor
}

// ReadNpz reads every array of an .npz file (np.savez or
// np.savez_compressed: a zip of NAME.npy entries, stored or deflated), in
// archive order. Errors name the file and the entry.
func ReadNpz(path string) ([]Named, error) {
	f, size, err := openSized(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	arrays, err := ReadNpzFrom(f, size)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return arrays, nil
}

// ReadNpzFrom reads an .npz archive of the given size from r.
func ReadNpzFrom(r io.ReaderAt, size int64) ([]Named, error) {
	zr, err := zip.NewReader(r, size)
	if err != nil {
		return nil, npyErrorf("not a valid .npz (zip) archive: %v", err)
	}
	var out []Named
	seen := map[string]bool{}
	for _, f := range zr.File {
		name, ok := strings.CutSuffix(f.Name, ".npy")
		if !ok {
			return nil, npyErrorf("entry %q is not a .npy array", f.Name)
		}
		if seen[name] {
			return nil, npyErrorf("duplicate entry %q", f.Name)
		}
		seen[name] = true
		t, err := readNpzEntry(f, size)
		if err != nil {
			return nil, fmt.Errorf("entry %q: %w", f.Name, err)
		}
		out = append(out, Named{Name: name, Tensor: t})
	}
	return out, nil
}

func readNpzEntry(f *zip.File, archiveSize int64) (*Tensor, error) {
	rc, err := f.Open()
	if err != nil {
		return nil, npyErrorf("%v", err)
	}
	defer rc.Close()
	size, exact := int64(-1), false
	if f.Method == zip.Store {
		// Stored data lies in the archive, so its claimed size is bounded by
		// the archive's and we can trust it for allocation. A deflated
		// entry's claimed size could be anything; we read what arrives.
		if f.UncompressedSize64 > uint64(archiveSize) {
			return nil, npyErrorf("stored entry claims %d bytes in a %d-byte archive", f.UncompressedSize64, archiveSize)
		}
		size, exact = int64(f.UncompressedSize64), true
	}
	t, err := readNpySized(rc, size, exact, Invalid, nil)
	if err != nil {
		return nil, zipError(err)
	}
	// Reading to the end makes archive/zip verify the size and CRC-32.
	var one [1]byte
	if n, err := io.ReadFull(rc, one[:]); n > 0 {
		return nil, npyErrorf("unexpected bytes after the array data")
	} else if err != io.EOF {
		return nil, zipError(err)
	}
	return t, nil
}

// zipError marks archive/zip's checksum and format errors as .npz content
// errors.
func zipError(err error) error {
	if err == zip.ErrChecksum || err == zip.ErrFormat || err == zip.ErrAlgorithm {
		return npyErrorf("%v", err)
	}
	if _, ok := err.(flate.CorruptInputError); ok {
		return npyErrorf("corrupt deflate data: %v", err)
	}
	return err
}

// WriteNpz writes the arrays as np.savez does: a zip of NAME.npy entries,
// stored uncompressed.
func WriteNpz(path string, arrays []Named) error { return writeNpzFile(path, arrays, zip.Store) }

// WriteNpzCompressed writes the arrays as np.savez_compressed does (deflated).
func WriteNpzCompressed(path string, arrays []Named) error {
	return writeNpzFile(path, arrays, zip.Deflate)
}

func writeNpzFile(path string, arrays []Named, method uint16) error {
	f, err := os.Create(path)
	if err != nil {
		return err
	}
	if err := WriteNpzTo(f, arrays, method == zip.Deflate); err != nil {
		f.Close()
		return fmt.Errorf("%s: %w", path, err)
	}
	return f.Close()
}

// WriteNpzTo writes an .npz archive to w, deflated if compress is set.
func WriteNpzTo(w io.Writer, arrays []Named, compress bool) error {
	method := zip.Store
	if compress {
		method = zip.Deflate
	}
	seen := map[string]bool{}
	zw := zip.NewWriter(w)
	for _, a := range arrays {
		if a.Name == "" || seen[a.Name] {
			return fmt.Errorf("npz: array name %q is empty or repeated", a.Name)
		}
		seen[a.Name] = true
		ew, err := zw.CreateHeader(&zip.FileHeader{Name: a.Name + ".npy", Method: method})
		if err != nil {
			return err
		}
		if err := WriteNpy(ew, a.Tensor); err != nil {
			return fmt.Errorf("array %q: %w", a.Name, err)
		}
	}
	return zw.Close()
}

// readNpzBytes is ReadNpzFrom over a byte slice (tests and fuzzing).
func readNpzBytes(b []byte) ([]Named, error) { return ReadNpzFrom(bytes.NewReader(b), int64(len(b))) }
