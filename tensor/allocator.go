package tensor

import (
	"errors"
	"fmt"
	"math/bits"
	"sync"
)

// Allocator hands out Storage and takes it back. Implementations are safe
// for concurrent use (the VM runs calls concurrently).
//
// Free takes storage this allocator returned and that nothing uses any more;
// freeing storage twice or freeing another allocator's storage is a bug in
// the caller and panics (an internal invariant, not a user error).
type Allocator interface {
	Alloc(nbytes int64) (*Storage, error)
	Free(*Storage)
	Stats() Stats
}

// Stats are an allocator's counters. Live and Peak count the bytes held
// for callers (for the pooled allocator: whole size classes); Cached counts
// freed bytes the pooled allocator keeps for reuse.
type Stats struct {
	Live   int64 // bytes currently allocated and not freed
	Peak   int64 // maximum of Live over the allocator's life
	Allocs int64 // Alloc calls that succeeded
	Frees  int64 // Free calls
	Reuses int64 // Allocs served from a freed buffer (pooled only)
	Cached int64 // bytes held in the pool, free for reuse (pooled only)
}

// MaxAlloc bounds one allocation (1 TiB): a larger request is a corrupt
// shape, not something to hand to make().
const MaxAlloc = 1 << 40

// ErrTooLarge is returned for negative or absurd allocation sizes.
var ErrTooLarge = errors.New("tensor: allocation size out of range")

func checkSize(nbytes int64) error {
	if nbytes < 0 || nbytes > MaxAlloc {
		return fmt.Errorf("%w: %d bytes", ErrTooLarge, nbytes)
	}
	return nil
}

// counters is the shared bookkeeping; callers hold the allocator's mutex.
type counters struct{ s Stats }

func (c *counters) alloc(n int64) {
	c.s.Allocs++
	c.s.Live += n
	c.s.Peak = max(c.s.Peak, c.s.Live)
}

func (c *counters) free(n int64) {
	c.s.Frees++
	c.s.Live -= n
}

func checkFree(a Allocator, s *Storage) {
	if s == nil {
		panic("tensor: Free(nil)")
	}
	if s.owner != a {
		panic("tensor: Free of storage that this allocator did not allocate")
	}
	if s.freed.Swap(true) {
		panic("tensor: storage freed twice")
	}
}

// naiveAllocator allocates fresh zeroed memory for every Alloc and lets the
// garbage collector reclaim freed storage (TVM's NaiveAllocator,
// src/runtime/memory/naive_allocator.h).
type naiveAllocator struct {
	mu sync.Mutex
	c  counters
}

// NewNaiveAllocator returns an allocator that never reuses memory.
func NewNaiveAllocator() Allocator { return &naiveAllocator{} }

func (a *naiveAllocator) Alloc(nbytes int64) (*Storage, error) {
	if err := checkSize(nbytes); err != nil {
		return nil, err
	}
	s := &Storage{data: alignedBytes(nbytes, nbytes), owner: a}
	a.mu.Lock()
	a.c.alloc(nbytes)
	a.mu.Unlock()
	return s, nil
}

func (a *naiveAllocator) Free(s *Storage) {
	checkFree(a, s)
	a.mu.Lock()
	a.c.free(int64(len(s.data)))
	a.mu.Unlock()
}

func (a *naiveAllocator) Stats() Stats {
	a.mu.Lock()
	defer a.mu.Unlock()
	return a.c.s
}

// PooledAllocator keeps freed buffers in per-size-class free lists and hands
// them out again (TVM's PooledAllocator, src/runtime/memory/pooled_allocator.h,
// which rounds every request up to a page and reuses exact page counts).
// Size classes: powers of two from 64 bytes up to one 4 KiB page, then whole
// pages, as in TVM. So small requests waste at most half their class and
// large ones less than a page. Reused memory is NOT zeroed (as in TVM):
// whoever allocates initializes.
type PooledAllocator struct {
	mu   sync.Mutex
	c    counters
	pool map[int64][]*Storage // size class -> free buffers of that capacity
}

// NewPooledAllocator returns an empty pooled allocator.
func NewPooledAllocator() Allocator { return newPooled() }

func newPooled() *PooledAllocator { return &PooledAllocator{pool: map[int64][]*Storage{}} }

const pageSize = 4096

// sizeClass is the capacity a request of n bytes is served with.
func sizeClass(n int64) int64 {
	switch {
	case n <= Alignment:
		return Alignment
	case n <= pageSize:
		return 1 << bits.Len64(uint64(n-1))
	default:
		return (n + pageSize - 1) / pageSize * pageSize
	}
}

func (a *PooledAllocator) Alloc(nbytes int64) (*Storage, error) {
	if err := checkSize(nbytes); err != nil {
		return nil, err
	}
	class := sizeClass(nbytes)
	a.mu.Lock()
	if free := a.pool[class]; len(free) > 0 {
		s := free[len(free)-1]
		free[len(free)-1] = nil
		a.pool[class] = free[:len(free)-1]
		a.c.s.Reuses++
		a.c.s.Cached -= class
		a.c.alloc(class)
		a.mu.Unlock()
		s.data = s.data[:nbytes]
		s.freed.Store(false)
		return s, nil
	}
	a.c.alloc(class)
	a.mu.Unlock()
	// Allocate outside the lock: zeroing a large buffer takes a while.
	return &Storage{data: alignedBytes(nbytes, class), owner: a}, nil
}

func (a *PooledAllocator) Free(s *Storage) {
	checkFree(a, s)
	class := int64(cap(s.data))
	a.mu.Lock()
	a.c.free(class)
	a.pool[class] = append(a.pool[class], s)
	a.c.s.Cached += class
	a.mu.Unlock()
}

func (a *PooledAllocator) Stats() Stats {
	a.mu.Lock()
	defer a.mu.Unlock()
	return a.c.s
}

// ReleaseAll drops every cached buffer, leaving them to the garbage
// collector (TVM's PooledAllocator::ReleaseAll, used when memory runs out).
func (a *PooledAllocator) ReleaseAll() {
	a.mu.Lock()
	defer a.mu.Unlock()
	clear(a.pool)
	a.c.s.Cached = 0
}

// String formats the counters for `phasec run --stats`:
// "live 1.5 KiB, peak 4.0 MiB, 12 allocs (3 reused), 11 frees, cached 2.0 MiB".
func (s Stats) String() string {
	return fmt.Sprintf("live %s, peak %s, %d allocs (%d reused), %d frees, cached %s",
		FormatBytes(s.Live), FormatBytes(s.Peak), s.Allocs, s.Reuses, s.Frees, FormatBytes(s.Cached))
}

// FormatBytes spells a byte count with a binary unit: 512 B, 1.5 KiB, 3.0 GiB.
func FormatBytes(n int64) string {
	const unit = 1024
	if n < unit && n > -unit {
		return fmt.Sprintf("%d B", n)
	}
	f, i := float64(n), 0
	for (f >= unit || f <= -unit) && i < 4 {
		f /= unit
		i++
	}
	return fmt.Sprintf("%.1f %ciB", f, "KMGT"[i-1])
}
