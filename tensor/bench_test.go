package tensor

import (
	"io"
	"os"
	"path/filepath"
	"testing"
)

// writeBenchFile writes a float32 .npy of n elements and returns its path.
func writeBenchFile(b *testing.B, n int64) string {
	p := filepath.Join(b.TempDir(), "x.npy")
	x := New(Float32, n)
	for i := range Data[float32](x) {
		Data[float32](x)[i] = float32(i)
	}
	if err := WriteNpyFile(p, x); err != nil {
		b.Fatal(err)
	}
	return p
}

const benchElems = 16 << 20 // 64 MiB of float32: larger than the caches

// Reading a .npy file against the baseline of reading the same file into a
// plain byte slice (os.ReadFile): the decoder's overhead is the ratio.
func BenchmarkNpyRead(b *testing.B) {
	p := writeBenchFile(b, benchElems)
	st, _ := os.Stat(p)
	b.Run("ReadNpyFile", func(b *testing.B) {
		b.SetBytes(st.Size())
		for b.Loop() {
			if _, err := ReadNpyFile(p); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("os.ReadFile", func(b *testing.B) {
		b.SetBytes(st.Size())
		for b.Loop() {
			if _, err := os.ReadFile(p); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("ReadNpyFileAs", func(b *testing.B) {
		b.SetBytes(st.Size())
		for b.Loop() {
			if _, err := ReadNpyFileAs(p, Float32, []int64{-1}); err != nil {
				b.Fatal(err)
			}
		}
	})
}

func BenchmarkNpyWrite(b *testing.B) {
	x := New(Float32, benchElems)
	b.SetBytes(x.NBytes())
	for b.Loop() {
		if err := WriteNpy(io.Discard, x); err != nil {
			b.Fatal(err)
		}
	}
}

// Alloc+Free of 1 MiB in steady state: the pooled allocator reuses the
// buffer (no Go allocation, no zeroing); the naive one allocates each time.
func BenchmarkAllocFree(b *testing.B) {
	for name, a := range map[string]Allocator{"pooled": NewPooledAllocator(), "naive": NewNaiveAllocator()} {
		b.Run(name, func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				s, err := a.Alloc(1 << 20)
				if err != nil {
					b.Fatal(err)
				}
				a.Free(s)
			}
		})
	}
}

func sumFloat32(x []float32) float32 {
	var s float32
	for _, v := range x {
		s += v
	}
	return s
}

// Loading a 64 MiB parameter and touching every element once: mapping
// against copying.
func BenchmarkNpyOpenMappedVsRead(b *testing.B) {
	p := writeBenchFile(b, benchElems)
	st, _ := os.Stat(p)
	b.Run("OpenNpyFile+sum", func(b *testing.B) {
		b.SetBytes(st.Size())
		for b.Loop() {
			m, err := OpenNpyFile(p, Float32, nil)
			if err != nil || !m.Mapped() {
				b.Fatal(err, "not mapped")
			}
			sumFloat32(Data[float32](m.Tensor))
			m.Close()
		}
	})
	b.Run("ReadNpyFile+sum", func(b *testing.B) {
		b.SetBytes(st.Size())
		for b.Loop() {
			t, err := ReadNpyFile(p)
			if err != nil {
				b.Fatal(err)
			}
			sumFloat32(Data[float32](t))
		}
	})
	b.Run("OpenNpyFile", func(b *testing.B) {
		for b.Loop() {
			m, err := OpenNpyFile(p, Float32, nil)
			if err != nil {
				b.Fatal(err)
			}
			m.Close()
		}
	})
}
