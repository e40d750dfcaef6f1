package tensor

import (
	"fmt"
	"sync/atomic"
	"unsafe"
)

// Alignment is the byte alignment of every Storage's first byte: a cache
// line, and enough for any AVX-512 load (TVM's kAllocAlignment is 64 too,
// include/tvm/runtime/device_api.h).
const Alignment = 64

// Storage is a 64-byte aligned, zero-offset block of bytes that tensors view.
// A Storage comes from an Allocator (or NewStorage) and goes back to the
// same Allocator's Free once nothing views it; after Free its bytes may be
// handed to another Alloc, so using a tensor over freed storage is a bug.
type Storage struct {
	data  []byte    // len = requested size; cap may be larger (the size class)
	owner Allocator // nil for NewStorage
	freed atomic.Bool
}

// NewStorage returns zeroed storage of n bytes owned by no allocator: the
// garbage collector frees it.
func NewStorage(n int64) *Storage {
	if n < 0 {
		panic(fmt.Sprintf("tensor: negative storage size %d", n))
	}
	return &Storage{data: alignedBytes(n, n)}
}

// Bytes returns the storage's bytes (its requested size). The capacity is
// capped too, so appending never reaches the rest of a pooled size class.
func (s *Storage) Bytes() []byte { return s.data[:len(s.data):len(s.data)] }

// Len is the storage's size in bytes.
func (s *Storage) Len() int64 { return int64(len(s.data)) }

// alignedBytes returns a zeroed slice of length n and capacity c >= n whose
// first byte is Alignment-aligned. Go's allocator aligns large objects to
// pages but small ones only to their size class, so we over-allocate by
// Alignment-1 bytes and slice from the first aligned address.
func alignedBytes(n, c int64) []byte {
	if c == 0 {
		return []byte{}
	}
	raw := make([]byte, c+Alignment-1)
	off := int64(-uintptr(unsafe.Pointer(&raw[0])) & (Alignment - 1))
	return raw[off : off+n : off+c]
}
