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
