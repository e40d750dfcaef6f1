package tensor

import (
	"fmt"
	"sync"
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
//
// A Storage the garbage collector owns can be frozen (Freeze): its bytes
// never change again, so values derived from them (packed weights) can be
// kept with it (Memo) and reused without re-reading the bytes.
type Storage struct {
	data   []byte    // len = requested size; cap may be larger (the size class)
	owner  Allocator // nil for NewStorage
	freed  atomic.Bool
	frozen atomic.Bool
	memo   atomic.Pointer[memoTable]
}

// memoTable holds the values Memo derived from a frozen storage's bytes.
type memoTable struct {
	mu sync.Mutex
	m  map[any]any
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

// Freeze declares that s's bytes never change again: the VM freezes the
// constants of an executable when it links them, and a caller may freeze
// tensors it binds once and runs many times with (a model's weights). A
// compiled kernel refuses to write a frozen storage, so nothing the VM
// runs can change it; code outside the VM that writes a frozen storage's
// Bytes breaks the promise and may see stale derived values.
//
// Only storage the garbage collector owns (NewStorage) can be frozen:
// an allocator's storage goes back to its pool and is reused. Freeze
// reports whether s is frozen.
func (s *Storage) Freeze() bool {
	if s.owner != nil {
		return false
	}
	s.frozen.Store(true)
	return true
}

// Release gives s back to the allocator that made it, for its next Alloc
// to reuse, and reports whether it did. Storage no allocator made
// (NewStorage: frozen weights, a caller's own tensors) and storage already
// freed are left as they are. The caller promises that nothing reads or
// writes s's bytes afterwards, and does not release s concurrently with
// another Release or Free of it.
func (s *Storage) Release() bool {
	if s.owner == nil || s.freed.Load() {
		return false
	}
	s.owner.Free(s)
	return true
}

// Frozen reports whether s was frozen.
func (s *Storage) Frozen() bool { return s.frozen.Load() }

// Memo returns the value build derives from a frozen storage's bytes
// under key, calling build once per (storage, key): weights packed for a
// kernel are packed once per load of the executable or binding of the
// weights, not per run. The key must capture everything build depends
// on besides the bytes (the view's offset and shape, the packing's
// geometry). On storage that is not frozen Memo builds nothing and
// returns false. Safe for concurrent use; a build runs under the
// storage's lock, so a second caller waits for the first's result.
func (s *Storage) Memo(key any, build func() any) (any, bool) {
	if !s.frozen.Load() {
		return nil, false
	}
	t := s.memo.Load()
	if t == nil {
		s.memo.CompareAndSwap(nil, &memoTable{m: map[any]any{}})
		t = s.memo.Load()
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	v, ok := t.m[key]
	if !ok {
		v = build()
		t.m[key] = v
	}
	return v, true
}

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
