package syntax

import (
	"slices"
	"strconv"
)

// scope is one level of names: a module, a function, a block.
//
// A large block's names go mostly to numbered: TVM's printer names
// bindings with a prefix and a counter (lv, lv1, lv2, ..., gv1), and a
// slice per prefix indexed by the counter holds them in the order they
// come, where a map of 100k names made each definition a cache miss. Each
// name has one place: a name of a numbered prefix with a number below
// limit is in its prefix's slice, any other in the map. A prefix is
// numbered from its first name on, while fewer than maxPrefixes are (so
// slices take at most maxPrefixes*limit slots whatever the names).
type scope struct {
	parent   *scope
	names    map[string]*symbol
	numbered map[string][]*symbol // by prefix, indexed by number
	limit    int                  // numbers below limit go to numbered
	size     int                  // the names expected
}

// minNumbered is the least name count for which a scope numbers names;
// maxPrefixes bounds the numbered prefixes of a scope.
const (
	minNumbered = 256
	maxPrefixes = 4
)

// newScope returns a scope inside parent for about n names.
func newScope(parent *scope, n int) *scope {
	s := &scope{parent: parent}
	if n >= minNumbered {
		s.limit, s.size = 2*n, n
		s.numbered = map[string][]*symbol{}
		n = 0
	}
	s.names = make(map[string]*symbol, n)
	return s
}

// number splits a name like lv12 into its prefix and number; ok is false
// for names that are not such (no digits, a leading zero, no prefix) or
// whose number is not below limit.
func number(name string, limit int) (prefix string, n int, ok bool) {
	i := len(name)
	for i > 0 && isDigit(name[i-1]) {
		i--
	}
	digits := name[i:]
	if i == 0 || digits == "" || len(digits) > 9 || (digits[0] == '0' && len(digits) > 1) {
		return "", 0, false
	}
	for _, d := range []byte(digits) {
		n = n*10 + int(d-'0')
	}
	return name[:i], n, n < limit
}

func (s *scope) get(name string) *symbol {
	if s.limit > 0 {
		if prefix, n, ok := number(name, s.limit); ok {
			if slots, numbered := s.numbered[prefix]; numbered {
				if n < len(slots) {
					return slots[n]
				}
				return nil
			}
		}
	}
	return s.names[name]
}

func (s *scope) set(name string, sym *symbol) {
	if s.limit > 0 {
		if prefix, n, ok := number(name, s.limit); ok {
			slots, numbered := s.numbered[prefix]
			if numbered || len(s.numbered) < maxPrefixes {
				if n >= len(slots) {
					if n >= cap(slots) {
						// The first prefix has room for the scope's names,
						// the others start small; then capacity doubles.
						want := max(2*n+1, 16)
						if slots == nil && len(s.numbered) == 0 {
							want = max(n+1, s.size)
						}
						slots = slices.Grow(slots, min(want, s.limit)-len(slots))
					}
					slots = slots[:n+1]
					s.numbered[prefix] = slots
				}
				slots[n] = sym
				return
			}
		}
	}
	s.names[name] = sym
}

// each calls f on every name of the scope, in no particular order.
func (s *scope) each(f func(name string, sym *symbol)) {
	for n, sym := range s.names {
		f(n, sym)
	}
	for prefix, slots := range s.numbered {
		for n, sym := range slots {
			if sym != nil {
				f(prefix+strconv.Itoa(n), sym)
			}
		}
	}
}

// sortedNames lists the scope's names in order.
func (s *scope) sortedNames() []string {
	var out []string
	s.each(func(n string, _ *symbol) { out = append(out, n) })
	slices.Sort(out)
	return out
}
