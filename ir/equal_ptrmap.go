package ir

import "unsafe"

// ptrMap is an open-addressing hash table keyed by node pointers, used for
// the per-comparison variable maps of equality and hashing.
//
// Why not a Go map: comparisons of long functions insert one entry per
// binding and look up one per use. Go's map hashes pointers randomly, so at
// 100k bindings every access is a cache miss. ptrMap derives the slot from
// the address itself (Go's heap does not move objects), so variables
// allocated one after another land in neighbouring slots and the recent
// definitions most uses refer to stay in cache. Linear probing, load factor
// at most 1/2, deletion by backward shift. Keys and values share a slot so
// a probe touches one cache line.
type ptrMap[K any, V any] struct {
	slots []ptrSlotKV[K, V]
	n     int
}

type ptrSlotKV[K any, V any] struct {
	k *K
	v V
}

func ptrSlot[K any](k *K, mask int) int {
	a := uintptr(unsafe.Pointer(k))
	return int((a>>4)^(a>>22)) & mask
}

// reserve makes room for n entries without regrowing.
func (m *ptrMap[K, V]) reserve(n int) {
	size := 16
	for size < 2*n {
		size *= 2
	}
	if size <= len(m.slots) {
		return
	}
	old := m.slots
	m.slots = make([]ptrSlotKV[K, V], size)
	m.n = 0
	for _, s := range old {
		if s.k != nil {
			m.set(s.k, s.v)
		}
	}
}

// reset empties the table; a large table is dropped rather than cleared, so
// comparing many small functions after a large one stays cheap.
func (m *ptrMap[K, V]) reset() {
	if m.n == 0 {
		return
	}
	if len(m.slots) > 1024 {
		m.slots, m.n = nil, 0
		return
	}
	clear(m.slots)
	m.n = 0
}

// maxRecycledSlots bounds the table kept for reuse by later comparisons
// (8 MiB at 16 bytes a slot: functions of up to about 260k bindings).
const maxRecycledSlots = 1 << 19

// recycle empties the table for a later comparison, keeping its storage
// unless it is huge. Clearing costs no more than filling it did: tables are
// sized for the function that used them.
func (m *ptrMap[K, V]) recycle() {
	if len(m.slots) > maxRecycledSlots {
		m.slots, m.n = nil, 0
		return
	}
	if m.n > 0 {
		clear(m.slots)
		m.n = 0
	}
}

func (m *ptrMap[K, V]) len() int { return m.n }

func (m *ptrMap[K, V]) get(k *K) (V, bool) {
	if m.n == 0 {
		var zero V
		return zero, false
	}
	mask := len(m.slots) - 1
	for i := ptrSlot(k, mask); ; i = (i + 1) & mask {
		switch s := &m.slots[i]; s.k {
		case k:
			return s.v, true
		case nil:
			var zero V
			return zero, false
		}
	}
}

// set stores k→v; when k was already present it returns the replaced value
// and true.
func (m *ptrMap[K, V]) set(k *K, v V) (V, bool) {
	if 2*(m.n+1) > len(m.slots) {
		m.reserve(m.n + 1)
	}
	mask := len(m.slots) - 1
	for i := ptrSlot(k, mask); ; i = (i + 1) & mask {
		switch s := &m.slots[i]; s.k {
		case k:
			old := s.v
			s.v = v
			return old, true
		case nil:
			s.k, s.v = k, v
			m.n++
			var zero V
			return zero, false
		}
	}
}

func (m *ptrMap[K, V]) delete(k *K) {
	if m.n == 0 {
		return
	}
	mask := len(m.slots) - 1
	i := ptrSlot(k, mask)
	for m.slots[i].k != k {
		if m.slots[i].k == nil {
			return
		}
		i = (i + 1) & mask
	}
	// Backward shift: move later entries of the probe run into the hole
	// unless their home slot lies cyclically in (hole, j].
	for j := (i + 1) & mask; m.slots[j].k != nil; j = (j + 1) & mask {
		home := ptrSlot(m.slots[j].k, mask)
		if (j > i && (home <= i || home > j)) || (j < i && home <= i && home > j) {
			m.slots[i] = m.slots[j]
			i = j
		}
	}
	m.slots[i] = ptrSlotKV[K, V]{}
	m.n--
}
