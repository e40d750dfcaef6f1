package syntax

import (
	"fmt"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/phasec/phasec/ir"
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

// TestScopeNumbered: a large scope keeps what a map would, whichever
// place each name goes to (numbered or the map), and lists the same names.
func TestScopeNumbered(t *testing.T) {
	s := newScope(nil, 300)
	want := map[string]*symbol{}
	names := []string{"lv", "lv0", "lv1", "lv01", "lv10", "lv599", "lv600", "lv100000", "gv1", "x", "x1y", "1", "_9", "lv1234567890", "lv5",
		"a1", "b2", "c3", "d4", "e5", "a7", "e9"} // more prefixes than are numbered
	for i := range 700 {
		names = append(names, fmt.Sprintf("lv%d", i*7%650))
	}
	for i, n := range names {
		sym := &symbol{}
		if i%3 == 0 {
			sym.poison = true
		}
		s.set(n, sym)
		want[n] = sym
		for m, w := range want {
			require.Same(t, w, s.get(m), m)
		}
		require.Nil(t, s.get("lv649x"))
		require.Nil(t, s.get("zz1"))
	}
	got := map[string]*symbol{}
	s.each(func(n string, sym *symbol) {
		_, dup := got[n]
		require.False(t, dup, n)
		got[n] = sym
	})
	require.Equal(t, want, got)
	require.Len(t, s.sortedNames(), len(want))
	require.NotEmpty(t, s.numbered, "the numbered names of a large scope")
	require.LessOrEqual(t, len(s.numbered), maxPrefixes)
	require.Contains(t, s.names, "e5", "a prefix past maxPrefixes is in the map")
	require.Nil(t, newScope(nil, 10).numbered, "a small scope is a map")
}

// TestRelaxOpCache: the cached resolution of R.* callees answers as
// ir.OpByPath does, struct info names resolving to no operator, across
// repeats and slot collisions.
func TestRelaxOpCache(t *testing.T) {
	bd := newBuilder("t")
	paths := []string{"R.Tensor", "R.Shape", "R.Object", "R.no_such_op", "R.nn"}
	for _, op := range ir.Ops() {
		paths = append(paths, ir.OpPath(op))
	}
	for round := range 3 {
		for _, p := range paths {
			want, wantOK := ir.OpByPath(p)
			if isStructInfoName(p) {
				want, wantOK = nil, false
			}
			got, ok := bd.relaxOp(p)
			require.Equal(t, wantOK, ok, "%s (round %d)", p, round)
			require.Same(t, want, got, "%s (round %d)", p, round)
		}
	}
}

// TestStructInfoCallee: a struct info name called as a value is reported
// as such, also after the same callee form resolved operators.
func TestStructInfoCallee(t *testing.T) {
	src := `@I.ir_module
class Module:
    @R.function
    def main(x: R.Tensor((2,), dtype="float32")) -> R.Tensor((2,), dtype="float32"):
        a = R.add(x, x)
        b = R.Tensor((2,), dtype="float32")
        return a
`
	_, diags := Parse("t.tvms", []byte(src))
	require.Len(t, diags, 1)
	require.Equal(t, `expected a Relax value, found the struct info R.Tensor(...)`, diags[0].Msg)
	require.Equal(t, 6, diags[0].Span.Line)
}
