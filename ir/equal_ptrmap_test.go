package ir

import (
	"math/rand"
	"testing"
)

// TestPtrMapAgainstMap checks ptrMap against a Go map under random
// inserts, lookups and deletions, including the backward-shift deletion.
func TestPtrMapAgainstMap(t *testing.T) {
	rng := rand.New(rand.NewSource(1))
	vars := make([]*PrimVar, 3000)
	for i := range vars {
		vars[i] = SymVar("v")
	}
	var m ptrMap[PrimVar, int]
	ref := map[*PrimVar]int{}
	for step := range 200000 {
		k := vars[rng.Intn(len(vars))]
		switch rng.Intn(3) {
		case 0:
			prev, had := ref[k]
			if old, ok := m.set(k, step); ok != had || old != prev {
				t.Fatalf("step %d: set = %d,%v, want %d,%v", step, old, ok, prev, had)
			}
			ref[k] = step
		case 1:
			m.delete(k)
			delete(ref, k)
		case 2:
			v, ok := m.get(k)
			rv, rok := ref[k]
			if ok != rok || v != rv {
				t.Fatalf("step %d: get = %d,%v want %d,%v", step, v, ok, rv, rok)
			}
		}
		if m.len() != len(ref) {
			t.Fatalf("step %d: len %d, want %d", step, m.len(), len(ref))
		}
	}
	for k, rv := range ref {
		if v, ok := m.get(k); !ok || v != rv {
			t.Fatalf("final: get = %d,%v want %d", v, ok, rv)
		}
	}
	m.reset()
	if _, ok := m.get(vars[0]); ok || m.len() != 0 {
		t.Fatalf("reset left entries")
	}
}

// TestPtrMapRecycle checks that a recycled table is empty but keeps its
// storage, unless it is too large to keep.
func TestPtrMapRecycle(t *testing.T) {
	vars := make([]*PrimVar, 5000)
	var m ptrMap[PrimVar, int]
	for i := range vars {
		vars[i] = SymVar("v")
		m.set(vars[i], i)
	}
	size := len(m.slots)
	m.recycle()
	if m.len() != 0 || len(m.slots) != size {
		t.Fatalf("recycle: len %d, %d slots; want 0, %d", m.len(), len(m.slots), size)
	}
	for _, v := range vars {
		if _, ok := m.get(v); ok {
			t.Fatalf("recycled table still maps %p", v)
		}
	}
	m.reserve(maxRecycledSlots)
	m.set(vars[0], 0)
	m.recycle()
	if m.len() != 0 || m.slots != nil {
		t.Fatalf("a table of more than %d slots was kept", maxRecycledSlots)
	}
}

// TestRecycledStatesStartClean runs comparisons and hashes that stop
// half-way (leaving variable pairs and ordinals behind) before ones whose
// result depends on starting from empty tables.
func TestRecycledStatesStartClean(t *testing.T) {
	add := MustOp("relax.add")
	x, y, p, q := NewVar("x", nil), NewVar("y", nil), NewVar("p", nil), NewVar("q", nil)
	mapFree := EqualOptions{MapFreeVars: true}
	for range 3 {
		// Pairs x↔p before failing on y vs p.
		if Diff(NewCall(add, x, y), NewCall(add, p, p), mapFree) == nil {
			t.Fatal("add(x, y) equal to add(p, p)")
		}
		if StructuralEqual(NewCall(add, x, y), NewCall(add, p, p), mapFree) {
			t.Fatal("add(x, y) equal to add(p, p)")
		}
		// Correct only if x↔p is gone.
		if d := Diff(NewCall(add, x, y), NewCall(add, q, p), mapFree); d != nil {
			t.Fatalf("add(x, y) vs add(q, p): %v", d)
		}
		if !StructuralEqual(NewCall(add, x, y), NewCall(add, q, p), mapFree) {
			t.Fatal("add(x, y) not equal to add(q, p)")
		}
	}
	// Hashes number free variables in the order first met, from zero, so
	// add(x, y) and add(y, x) hash alike unless x and y keep the ordinals
	// of the previous hash.
	for range 3 {
		if a, b := StructuralHash(NewCall(add, x, y)), StructuralHash(NewCall(add, y, x)); a != b {
			t.Fatalf("hash depends on the previous hash: %x vs %x", a, b)
		}
	}
}
