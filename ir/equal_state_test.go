package ir

import "testing"

// TestRecycledStatesStartClean runs comparisons and hashes that stop
// half-way (leaving variable pairs and ordinals behind) before ones whose
// result depends on starting from empty tables.
func TestRecycledStatesStartClean(t *testing.T) {
	add := testOp("relax.add")
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
