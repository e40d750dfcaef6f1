package wellformed

import (
	"math/rand/v2"
	"testing"

	"github.com/phasec/phasec/ir"
)

// TestPtrIDsAgainstMap: ptrIDs agrees with a Go map on a mix of fresh and
// repeated keys, across regrowth from an empty and from a reserved table.
func TestPtrIDsAgainstMap(t *testing.T) {
	for _, reserved := range []int{0, 10, 5000} {
		vars := make([]*ir.Var, 3000)
		for i := range vars {
			vars[i] = ir.NewVar("v", nil)
		}
		var tab ptrIDs[ir.Var]
		tab.reserve(reserved)
		want := map[*ir.Var]int32{}
		rng := rand.New(rand.NewPCG(1, uint64(reserved)))
		for step := 0; step < 20000; step++ {
			v := vars[rng.IntN(len(vars))]
			if step%3 == 0 {
				id, ok := tab.get(v)
				wid, wok := want[v]
				if ok != wok || id != wid {
					t.Fatalf("reserved %d, step %d: get = (%d, %v), want (%d, %v)", reserved, step, id, ok, wid, wok)
				}
				continue
			}
			next := int32(len(want))
			id, found := tab.getOrAdd(v, next)
			wid, wok := want[v]
			if !wok {
				want[v] = next
				wid = next
			}
			if found != wok || id != wid {
				t.Fatalf("reserved %d, step %d: getOrAdd = (%d, %v), want (%d, %v)", reserved, step, id, found, wid, wok)
			}
		}
		if tab.n != len(want) {
			t.Errorf("reserved %d: %d entries, want %d", reserved, tab.n, len(want))
		}
		var none ptrIDs[ir.Var]
		if _, ok := none.get(vars[0]); ok {
			t.Errorf("empty table finds a key")
		}
	}
}
