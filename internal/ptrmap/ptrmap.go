// Package ptrmap provides Map, an open-addressing hash table keyed by IR
// node pointers, for the per-walk variable tables of structural equality,
// hashing, the well-formedness checker and the passes.
//
// Why not a Go map: those walks insert one entry per binding and look up
// one per use, most of them soon after the definition. Map hashes the
// address with a few multiplies inline (Go's heap does not move objects),
// keeps key and value in one slot so a probe touches one cache line, and
// has no control words or groups to maintain. Linear probing, load factor
// at most 1/2, deletion by backward shift. The zero Map is empty and
// ready to use.
//
// Invariant: the mean probe run depends on the load factor alone, never
// on the number of keys or the heap's layout (TestProbeRunsStayShort).
// Slots derived from the address bits themselves, as Map had, kept
// neighbouring vars in neighbouring slots but wrapped a heap larger than
// the table onto itself: at 100k vars their probe runs grew 15 to 30
// times per access, which made every pass using a Map superlinear in
// instructions (ExpandMatmulOfSum's 100k/10k ratio 10.3, now 9.8; make
// linearity). Uniform slots cost a cache miss per lookup once a table
// outgrows the cache, so a large table keeps neighbouring vars in one
// random window of slots instead (see home).
package ptrmap

import (
	"math/bits"
	"unsafe"
)

// Map maps *K to V.
type Map[K any, V any] struct {
	slots []slot[K, V]
	n     int
}

type slot[K any, V any] struct {
	k *K
	v V
}

// home is k's first slot in a table of mask+1 slots (a power of two).
//
// A small table's slot is the address mixed by MurmurHash3's 64-bit
// finalizer, which spreads keys uniformly whatever the heap's layout.
//
// A large table (localSlots or more: 256 KiB and up, which next to the
// module itself no longer stays in the core's 1 MiB L2) keeps neighbours
// together: the address's region of 1 KiB is mixed into a
// random window of the table, and the key's offset in the region places
// it in that window. The vars a function allocates one after another sit
// in one region, and a pass looks them up in about that order, so its
// lookups walk the table forwards rather than miss the cache on every
// one. Windows are small enough (64 slots, about 13 vars) that random
// windows still fill the table evenly: the mean probe run still depends
// on the load factor alone (TestProbeRunsStayShort). Side by side at 100k
// bindings, this took 11 to 28% off LazyGetInput, LiftTransformParams and
// ExpandMatmulOfSum against uniform slots for every table.
func home[K any](k *K, mask int) int {
	a := uint64(uintptr(unsafe.Pointer(k)))
	local := mask >= localSlots-1
	h := a
	if local {
		h >>= regionShift
	}
	h ^= h >> 33
	h *= 0xff51afd7ed558ccd
	h ^= h >> 33
	h *= 0xc4ceb9fe1a85ec53
	h ^= h >> 33
	i := int(h >> (64 - bits.Len(uint(mask))))
	if local {
		i += int(a>>grainShift) & (1<<(regionShift-grainShift) - 1)
	}
	return i & mask
}

const (
	// localSlots is the size from which a table keeps neighbouring keys
	// together (256 KiB at 16 bytes a slot).
	localSlots = 1 << 14
	// A region of 1<<regionShift bytes of heap maps to a window of
	// 1<<(regionShift-grainShift) slots, one per 16 bytes (Go's smallest
	// alignment for objects of 16 bytes or more).
	regionShift = 10
	grainShift  = 4
)

// Reserve makes room for n entries without regrowing.
func (m *Map[K, V]) Reserve(n int) {
	size := 16
	for size < 2*n {
		size *= 2
	}
	if size <= len(m.slots) {
		return
	}
	old := m.slots
	m.slots = make([]slot[K, V], size)
	m.n = 0
	for _, s := range old {
		if s.k != nil {
			m.Set(s.k, s.v)
		}
	}
}

// Reset empties the table; a large table is dropped rather than cleared, so
// comparing many small functions after a large one stays cheap.
func (m *Map[K, V]) Reset() {
	if m.n == 0 {
		return
	}
	if len(m.slots) > smallSlots {
		m.slots, m.n = nil, 0
		return
	}
	clear(m.slots)
	m.n = 0
}

// maxRecycledSlots bounds the table kept for reuse by later comparisons
// (8 MiB at 16 bytes a slot: functions of up to about 260k bindings).
const maxRecycledSlots = 1 << 19

// Recycle empties the table for a later comparison, keeping its storage
// when clearing it costs no more than filling it did: the table is small,
// or at least 1/16 full. A table kept from a large comparison and then used
// for a small one is dropped instead: clearing it after every small
// comparison (a pass comparing each binding's value after comparing whole
// functions) would cost the large function's size per binding. A huge
// table is never kept.
func (m *Map[K, V]) Recycle() {
	switch {
	case len(m.slots) > maxRecycledSlots || len(m.slots) > smallSlots && 16*m.n < len(m.slots):
		m.slots, m.n = nil, 0
	case m.n > 0:
		clear(m.slots)
		m.n = 0
	}
}

// smallSlots is the size of table (16 KiB at 16 bytes a slot) that Reset
// and Recycle clear whatever it holds: clearing it is cheap next to
// allocating it again.
const smallSlots = 1024

// Len is the number of entries.
func (m *Map[K, V]) Len() int { return m.n }

// Get returns the value stored for k.
func (m *Map[K, V]) Get(k *K) (V, bool) {
	if m.n == 0 {
		var zero V
		return zero, false
	}
	mask := len(m.slots) - 1
	for i := home(k, mask); ; i = (i + 1) & mask {
		switch s := &m.slots[i]; s.k {
		case k:
			return s.v, true
		case nil:
			var zero V
			return zero, false
		}
	}
}

// Set stores k→v; when k was already present it returns the replaced value
// and true.
func (m *Map[K, V]) Set(k *K, v V) (V, bool) {
	sl, found := m.slotFor(k)
	old := sl.v
	sl.v = v
	if !found {
		var zero V
		return zero, false
	}
	return old, true
}

// GetOrSet returns k's value and true when k is present; otherwise it
// stores v for k and returns v and false. A definition is one probe
// sequence, not a lookup followed by an insert.
func (m *Map[K, V]) GetOrSet(k *K, v V) (V, bool) {
	sl, found := m.slotFor(k)
	if !found {
		sl.v = v
	}
	return sl.v, found
}

// slotFor returns k's slot, claiming an empty one (counted, with a zero
// value) when k is absent.
func (m *Map[K, V]) slotFor(k *K) (sl *slot[K, V], found bool) {
	if 2*(m.n+1) > len(m.slots) {
		m.Reserve(m.n + 1)
	}
	mask := len(m.slots) - 1
	for i := home(k, mask); ; i = (i + 1) & mask {
		switch sl = &m.slots[i]; sl.k {
		case k:
			return sl, true
		case nil:
			sl.k = k
			m.n++
			return sl, false
		}
	}
}

// Delete removes k.
func (m *Map[K, V]) Delete(k *K) {
	if m.n == 0 {
		return
	}
	mask := len(m.slots) - 1
	i := home(k, mask)
	for m.slots[i].k != k {
		if m.slots[i].k == nil {
			return
		}
		i = (i + 1) & mask
	}
	// Backward shift: move later entries of the probe run into the hole
	// unless their home slot lies cyclically in (hole, j].
	for j := (i + 1) & mask; m.slots[j].k != nil; j = (j + 1) & mask {
		h := home(m.slots[j].k, mask)
		if (j > i && (h <= i || h > j)) || (j < i && h <= i && h > j) {
			m.slots[i] = m.slots[j]
			i = j
		}
	}
	m.slots[i] = slot[K, V]{}
	m.n--
}
