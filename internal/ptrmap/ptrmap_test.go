package ptrmap

import (
	"math/rand/v2"
	"testing"
)

type node struct{ _ [16]byte }

func nodes(n int) []*node {
	ns := make([]*node, n)
	for i := range ns {
		ns[i] = new(node)
	}
	return ns
}

// TestAgainstMap checks Map against a Go map under random Set, Get,
// GetOrSet and Delete (including the backward-shift deletion), starting
// from an empty and from a reserved table.
func TestAgainstMap(t *testing.T) {
	for _, reserved := range []int{0, 10, 5000} {
		keys := nodes(3000)
		var m Map[node, int]
		m.Reserve(reserved)
		ref := map[*node]int{}
		rng := rand.New(rand.NewPCG(1, uint64(reserved)))
		for step := range 200000 {
			k := keys[rng.IntN(len(keys))]
			switch rng.IntN(4) {
			case 0:
				prev, had := ref[k]
				if old, ok := m.Set(k, step); ok != had || old != prev {
					t.Fatalf("step %d: Set = %d,%v, want %d,%v", step, old, ok, prev, had)
				}
				ref[k] = step
			case 1:
				m.Delete(k)
				delete(ref, k)
			case 2:
				v, ok := m.Get(k)
				rv, rok := ref[k]
				if ok != rok || v != rv {
					t.Fatalf("step %d: Get = %d,%v want %d,%v", step, v, ok, rv, rok)
				}
			case 3:
				rv, rok := ref[k]
				if !rok {
					rv = step
					ref[k] = step
				}
				if v, ok := m.GetOrSet(k, step); ok != rok || v != rv {
					t.Fatalf("step %d: GetOrSet = %d,%v want %d,%v", step, v, ok, rv, rok)
				}
			}
			if m.Len() != len(ref) {
				t.Fatalf("step %d: Len %d, want %d", step, m.Len(), len(ref))
			}
		}
		for k, rv := range ref {
			if v, ok := m.Get(k); !ok || v != rv {
				t.Fatalf("final: Get = %d,%v want %d", v, ok, rv)
			}
		}
		m.Reset()
		if _, ok := m.Get(keys[0]); ok || m.Len() != 0 {
			t.Fatalf("Reset left entries")
		}
	}
	var empty Map[node, int]
	if _, ok := empty.Get(new(node)); ok {
		t.Error("the zero Map finds a key")
	}
}

// TestRecycle checks that a recycled table is empty but keeps its storage,
// unless it is too large to keep.
func TestRecycle(t *testing.T) {
	keys := nodes(5000)
	var m Map[node, int]
	for i, k := range keys {
		m.Set(k, i)
	}
	size := len(m.slots)
	m.Recycle()
	if m.Len() != 0 || len(m.slots) != size {
		t.Fatalf("Recycle: Len %d, %d slots; want 0, %d", m.Len(), len(m.slots), size)
	}
	for _, k := range keys {
		if _, ok := m.Get(k); ok {
			t.Fatalf("recycled table still maps %p", k)
		}
	}
	m.Reserve(maxRecycledSlots)
	m.Set(keys[0], 0)
	m.Recycle()
	if m.Len() != 0 || m.slots != nil {
		t.Fatalf("a table of more than %d slots was kept", maxRecycledSlots)
	}
}

// TestDeleteAcrossTheEnd deletes the head of a probe run that wraps past
// the table's last slot. Homes 15, 15, 15 fill slots 15, 0, 1: both later
// entries must shift back, or the one behind the hole is lost. Homes 14,
// 15, 15 fill slots 14, 15, 0: nothing may move into slot 14, before the
// others' home. Homes 15, 0: the entry in slot 0 is at home and stays.
func TestDeleteAcrossTheEnd(t *testing.T) {
	for _, homes := range [][]int{{15, 15, 15}, {14, 15, 15}, {15, 0}} {
		var m Map[node, int]
		m.Reserve(1) // 16 slots
		keys := make([]*node, 0, len(homes))
		for len(keys) < len(homes) {
			if k := new(node); home(k, 15) == homes[len(keys)] {
				keys = append(keys, k)
			}
		}
		for i, k := range keys {
			m.Set(k, i)
		}
		m.Delete(keys[0])
		for i := 1; i < len(keys); i++ {
			if v, ok := m.Get(keys[i]); !ok || v != i {
				t.Errorf("homes %v, after deleting the first: Get(key %d) = %d,%v", homes, i, v, ok)
			}
		}
	}
}
