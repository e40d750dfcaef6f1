// Package tensor is the VM's n-dimensional array runtime: element types,
// aligned storage, allocators and NumPy .npy/.npz files.
//
// Parameters are read with ReadNpyFileAs (or OpenNpyFile, which maps large
// files), checking dtype and shape (-1 for a symbolic dimension) before any
// data is read. Bad input files are errors naming the file (and .npz
// entry), what it holds and what was expected; they wrap ErrNpy and never
// panic (fuzzed).
//
// Invariants:
//
//   - A Tensor is C-contiguous (row-major, no strides): element i of a
//     tensor sits at byte Offset + i*DType.Size() of its Storage. Views
//     (View) share storage at different byte offsets; the offset is always
//     a multiple of the element size, so Data can reinterpret the bytes as
//     a typed slice without copying or per-element interface calls.
//   - Elements are in the host's native byte order. Bool elements are one
//     byte holding exactly 0 or 1 (readers normalize other bytes).
//     Float16 and BFloat16 are storage formats: code computes in float32
//     and converts with F16/BF16, rounding to nearest even.
//   - Every Storage begins on a 64-byte boundary (Alignment), like TVM's
//     kAllocAlignment.
//   - Who frees: storage from New, NewChecked, NewStorage and the .npy
//     readers belongs to the garbage collector. Storage from an Allocator
//     (Alloc, Allocator.Alloc) goes back to that allocator's Free exactly
//     once, when no tensor views it any more; the pooled allocator may hand
//     the same bytes out again, uncleared. Allocators are safe for
//     concurrent use. A MappedTensor from OpenNpyFile may be a
//     copy-on-write mapping of the file; its owner calls Close once nothing
//     uses the tensor, which unmaps it.
//   - A frozen Storage (Freeze: only the garbage collector's) never changes
//     again; values derived from its bytes (packed weights) are kept with
//     it (Memo), built once. The VM freezes its constants, and its kernels
//     refuse to write a frozen tensor.
//
// The package imports nothing from the compiler (syntax/, passes/, ...);
// its tests use ir only to check that ParseDType agrees with the IR's
// dtype grammar.
package tensor
