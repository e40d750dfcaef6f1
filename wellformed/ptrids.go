package wellformed

import "unsafe"

// ptrIDs maps node pointers to dense per-check IDs: an open-addressing hash
// table, the checker's replacement for map[*ir.Var]int32.
//
// Why not a Go map: a check defines one variable per binding and looks one
// up per use. Go's map hashes pointers randomly, so in a 100k-binding
// module every definition (a new key) misses the cache, twice (control
// word, then slot). ptrIDs derives the slot from the address itself (Go's
// heap does not move objects), so variables allocated one after another land
// in neighbouring slots, and the recent definitions most uses refer to stay
// in cache. A definition is a single probe sequence (getOrAdd), not a lookup
// followed by an insert. Linear probing, load factor at most 1/2, no
// deletion (IDs are never reused within a check). ir's ptrMap, used by
// structural equality, is the same design.
type ptrIDs[K any] struct {
	slots []ptrIDSlot[K]
	n     int
}

type ptrIDSlot[K any] struct {
	k  *K
	id int32
}

// home is k's preferred slot: address bits (objects 16 bytes apart get
// neighbouring slots) folded with higher bits so that objects in different
// regions of the heap do not pile up on the same slots.
func home[K any](k *K, mask int) int {
	a := uintptr(unsafe.Pointer(k))
	return int((a>>4)^(a>>22)) & mask
}

// reserve makes room for n entries without regrowing.
func (t *ptrIDs[K]) reserve(n int) {
	size := 16
	for size < 2*n {
		size *= 2
	}
	if size <= len(t.slots) {
		return
	}
	old := t.slots
	t.slots = make([]ptrIDSlot[K], size)
	mask := size - 1
	for _, s := range old {
		if s.k == nil {
			continue
		}
		i := home(s.k, mask)
		for t.slots[i].k != nil {
			i = (i + 1) & mask
		}
		t.slots[i] = s
	}
}

// get returns k's ID, if it has one.
func (t *ptrIDs[K]) get(k *K) (int32, bool) {
	if t.n == 0 {
		return 0, false
	}
	mask := len(t.slots) - 1
	for i := home(k, mask); ; i = (i + 1) & mask {
		switch s := &t.slots[i]; s.k {
		case k:
			return s.id, true
		case nil:
			return 0, false
		}
	}
}

// getOrAdd returns k's ID and true when it has one; otherwise it gives k
// the ID next and returns next and false.
func (t *ptrIDs[K]) getOrAdd(k *K, next int32) (int32, bool) {
	if 2*(t.n+1) > len(t.slots) {
		t.reserve(t.n + 1)
	}
	mask := len(t.slots) - 1
	for i := home(k, mask); ; i = (i + 1) & mask {
		switch s := &t.slots[i]; s.k {
		case k:
			return s.id, true
		case nil:
			s.k, s.id = k, next
			t.n++
			return next, false
		}
	}
}
