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
// at most 1/2, deletion by backward shift.
type ptrMap[K any, V any] struct {
	keys []*K
	vals []V
	n    int
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
	if size <= len(m.keys) {
		return
	}
	old, oldVals := m.keys, m.vals
	m.keys = make([]*K, size)
	m.vals = make([]V, size)
	m.n = 0
	for i, k := range old {
		if k != nil {
			m.set(k, oldVals[i])
		}
	}
}

// reset empties the table; a large table is dropped rather than cleared, so
// comparing many small functions after a large one stays cheap.
func (m *ptrMap[K, V]) reset() {
	if m.n == 0 {
		return
	}
	if len(m.keys) > 1024 {
		m.keys, m.vals, m.n = nil, nil, 0
		return
	}
	clear(m.keys)
	clear(m.vals)
	m.n = 0
}

func (m *ptrMap[K, V]) len() int { return m.n }

func (m *ptrMap[K, V]) get(k *K) (V, bool) {
	if m.n == 0 {
		var zero V
		return zero, false
	}
	mask := len(m.keys) - 1
	for i := ptrSlot(k, mask); ; i = (i + 1) & mask {
		switch m.keys[i] {
		case k:
			return m.vals[i], true
		case nil:
			var zero V
			return zero, false
		}
	}
}

// set stores k→v; when k was already present it returns the replaced value
// and true.
func (m *ptrMap[K, V]) set(k *K, v V) (V, bool) {
	if 2*(m.n+1) > len(m.keys) {
		m.reserve(m.n + 1)
	}
	mask := len(m.keys) - 1
	for i := ptrSlot(k, mask); ; i = (i + 1) & mask {
		switch m.keys[i] {
		case k:
			old := m.vals[i]
			m.vals[i] = v
			return old, true
		case nil:
			m.keys[i] = k
			m.vals[i] = v
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
	mask := len(m.keys) - 1
	i := ptrSlot(k, mask)
	for m.keys[i] != k {
		if m.keys[i] == nil {
			return
		}
		i = (i + 1) & mask
	}
	// Backward shift: move later entries of the probe run into the hole
	// unless their home slot lies cyclically in (hole, j].
	var zero V
	for j := (i + 1) & mask; m.keys[j] != nil; j = (j + 1) & mask {
		home := ptrSlot(m.keys[j], mask)
		if (j > i && (home <= i || home > j)) || (j < i && home <= i && home > j) {
			m.keys[i], m.vals[i] = m.keys[j], m.vals[j]
			i = j
		}
	}
	m.keys[i], m.vals[i] = nil, zero
	m.n--
}
