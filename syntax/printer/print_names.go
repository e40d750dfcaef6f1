package printer

import (
	"strconv"
)

// nameSpace hands out the printed names of one Python function scope (a
// top-level def with everything nested in it). Names are derived from hints:
// the first use of a hint prints as is, later ones get the smallest numeric
// suffix not yet taken (lv, lv1, lv2, ...), as TVM's GenerateUniqueName does.
// next remembers, per hint, where to resume counting, so a module where
// 100 000 vars are all called "lv" is still printed in linear time.
type nameSpace struct {
	used map[string]bool
	next map[string]int
	// releasable is set for a name space whose names are released (TIR's):
	// only then does fresh record in suffixed the hint and number of each
	// name it made by appending a number, so that release can make the
	// number available again. A Relax scope never releases, and a million
	// "lv" hints would otherwise fill a million-entry map for nothing.
	releasable bool
	suffixed   map[string]suffix
	// cand is scratch space for suffixed candidates, so that a taken one
	// costs no allocation.
	cand []byte
}

type suffix struct {
	base string
	n    int
}

// newNameSpace returns a name space whose names may be released.
func newNameSpace() *nameSpace {
	ns := newNameSpaceSized(0)
	ns.releasable = true
	return ns
}

// newNameSpaceSized returns a name space expecting about n names, none of
// them released.
func newNameSpaceSized(n int) *nameSpace {
	ns := &nameSpace{used: make(map[string]bool, n+len(reservedNames)), next: map[string]int{}}
	for _, r := range reservedNames {
		ns.used[r] = true
	}
	return ns
}

// Names the printed text itself uses at module or function level.
var reservedNames = []string{"I", "R", "T", "cls", "Module", "metadata", "range"}

// take marks name used and reports whether it was free. One map operation:
// the map grows exactly when the name was not there (a million bindings
// make a million calls).
func (ns *nameSpace) take(name string) bool {
	n := len(ns.used)
	ns.used[name] = true
	return len(ns.used) > n
}

// fresh returns a new unique name for hint.
func (ns *nameSpace) fresh(hint string) string {
	base := sanitizeName(hint)
	if ns.take(base) {
		return base
	}
	for i := max(ns.next[base], 1); ; i++ {
		ns.cand = strconv.AppendInt(append(ns.cand[:0], base...), int64(i), 10)
		if ns.used[string(ns.cand)] { // no allocation for a taken candidate
			continue
		}
		cand := string(ns.cand)
		ns.used[cand] = true
		ns.next[base] = i + 1
		if ns.releasable {
			if ns.suffixed == nil {
				ns.suffixed = map[string]suffix{}
			}
			ns.suffixed[cand] = suffix{base, i}
		}
		return cand
	}
}

// release frees a name whose scope ended (TVM's printer frees the names
// of a frame when it exits: the loop variables of one loop nest, the
// iteration variables and buffers of one block), so a sibling scope can
// use it again.
func (ns *nameSpace) release(name string) {
	delete(ns.used, name)
	if s, ok := ns.suffixed[name]; ok {
		delete(ns.suffixed, name)
		if ns.next[s.base] > s.n {
			ns.next[s.base] = s.n
		}
	}
}

// sanitizeName makes hint a valid identifier: characters other than letters,
// digits and '_' become '_', a leading digit gets a "v_" prefix, a keyword a
// "_" suffix, and an empty hint is "v".
func sanitizeName(hint string) string {
	if isIdent(hint) {
		return hint
	}
	if hint == "" {
		return "v"
	}
	b := []byte(hint)
	for i, c := range b {
		if !(c == '_' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9') {
			b[i] = '_'
		}
	}
	s := string(b)
	if s[0] >= '0' && s[0] <= '9' {
		s = "v_" + s
	}
	if pythonKeywords[s] {
		s += "_"
	}
	return s
}
