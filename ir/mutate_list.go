package ir

// Copy-on-write list steps shared by Mutator, Rewriter and TIRMutator.

// mapList applies f to every element of in. The result is copied from in
// only once f first changes an element, so when f changes nothing, in
// itself comes back with changed false and nothing is allocated.
func mapList[T comparable](in []T, f func(T) T) (out []T, changed bool) {
	for i, x := range in {
		n := f(x)
		if out == nil {
			if n == x {
				continue
			}
			out = make([]T, len(in))
			copy(out, in[:i])
		}
		out[i] = n
	}
	if out == nil {
		return in, false
	}
	return out, true
}

// mapFilterList is mapList for lists from which results may be dropped:
// once the list is being copied, results for which keep is false are left
// out. A list f does not change comes back as is (changed false).
func mapFilterList[T comparable](in []T, f func(T) T, keep func(T) bool) (out []T, changed bool) {
	for i, x := range in {
		n := f(x)
		if out == nil {
			if n == x {
				continue
			}
			out = make([]T, 0, len(in))
			out = append(out, in[:i]...)
		}
		if keep(n) {
			out = append(out, n)
		}
	}
	if out == nil {
		return in, false
	}
	return out, true
}
