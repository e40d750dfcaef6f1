package syntax

import (
	"fmt"
	"testing"

	"github.com/stretchr/testify/require"
)

// TestLookupCache: lookup answers as a walk of the scope maps would, across
// shadowing, pops and names sharing a cache slot.
func TestLookupCache(t *testing.T) {
	bd := newBuilder("t")
	walk := func(name string) *symbol {
		for s := bd.scope; s != nil; s = s.parent {
			if sym, ok := s.names[name]; ok {
				return sym
			}
		}
		return nil
	}
	check := func(names ...string) {
		t.Helper()
		for _, n := range names {
			require.Same(t, walk(n), bd.lookup(n), n)
			require.Same(t, walk(n), bd.lookup(n), n+" (second lookup)")
		}
	}
	outerA := &symbol{}
	bd.define("a", outerA)
	bd.define("x", &symbol{})
	check("a", "x", "b")
	bd.push()
	bd.define("a", &symbol{}) // shadows
	bd.define("b", &symbol{})
	check("a", "b", "x")
	bd.pop()
	check("a", "b", "x")
	require.Same(t, outerA, bd.lookup("a"))
	require.Nil(t, bd.lookup("b"))
	// More names than slots: every slot is shared.
	bd.push()
	var names []string
	for i := range 3 * recentSlots {
		n := fmt.Sprintf("lv%d", i)
		names = append(names, n)
		bd.define(n, &symbol{})
		check(n, names[i/2], "a")
	}
	bd.push()
	bd.define("lv7", &symbol{})
	check(names...)
	bd.pop()
	check(names...)
	bd.pop()
	check(names...)
	check("a", "x")
}
