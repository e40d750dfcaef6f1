package tensor_test

import (
	"fmt"
	"os"
	"path/filepath"

	"github.com/phasec/phasec/tensor"
)

// A parameter file is read against the dtype and shape the function
// declares; a symbolic dimension is -1.
func ExampleReadNpyFileAs() {
	dir, _ := os.MkdirTemp("", "npy")
	defer os.RemoveAll(dir)
	path := filepath.Join(dir, "w.npy")
	w, _ := tensor.FromSlice([]float64{1, 2, 3, 4, 5, 6}, 2, 3)
	_ = tensor.WriteNpyFile(path, w)

	x, err := tensor.ReadNpyFileAs(path, tensor.Float64, []int64{-1, 3})
	fmt.Println(x, err)
	_, err = tensor.ReadNpyFileAs(path, tensor.Float32, []int64{-1, 3})
	fmt.Println(err != nil, err.Error()[len(path):])
	// Output:
	// float64(2, 3) <nil>
	// true : holds float64 (2, 3), expected float32 (?, 3)
}

// Storage from an allocator is viewed by tensors at byte offsets and goes
// back to the allocator once.
func ExampleNewPooledAllocator() {
	a := tensor.NewPooledAllocator()
	s, _ := a.Alloc(64)
	x, _ := tensor.View(s, 0, tensor.Float32, []int64{4})
	y, _ := tensor.View(s, 16, tensor.Float32, []int64{2, 2})
	tensor.Data[float32](x)[0] = 1
	tensor.Data[float32](y)[0] = 2
	a.Free(s)
	s2, _ := a.Alloc(40) // same 64-byte size class: reused
	fmt.Println(a.Stats())
	a.Free(s2)
	// Output:
	// live 64 B, peak 64 B, 2 allocs (1 reused), 1 frees, cached 0 B
}
