package lower

import (
	"slices"

	"github.com/phasec/phasec/ir"
)

// The offsets planner: instead of TVM's one storage per reused token, every
// constant-size planned tensor of a function is placed at a byte offset in
// one arena per reuse class, two tensors sharing bytes only when their
// lifetimes (allocation to release, in binding order) do not overlap. The
// placement is the best of two greedy orders (largest first, and by
// allocation time) and TVM's own plan laid end to end in the arena; when
// alignment padding still makes the arena larger than TVM's storages, the
// class keeps TVM's storages, so the planner never takes more bytes than
// TVM. Symbolic-size tensors keep TVM's per-token storages.

// minAlign is the least alignment of an offset in an arena: small enough
// that small tensors do not pay for padding; a class whose element type is
// wider (or not a power of two) aligns to a multiple of the element size,
// so a tensor at an offset is a valid view. Storages themselves are
// 64-byte aligned by the runtime.
const minAlign = 16

// arena is one reuse class's storage in the offsets planner.
type arena struct {
	key  classKey
	size int64
	dev  ir.Expr // the device index of the first tensor placed in it
	v    *ir.Var // the alloc_storage var, once emitted
}

// classAlign is the offset alignment of a reuse class: the least common
// multiple of minAlign and the element size.
func classAlign(dt ir.DataType) int64 {
	a, b := int64(minAlign), int64(max(dt.Bytes(), 1))
	x, y := a, b
	for y != 0 {
		x, y = y, x%y
	}
	return a / x * b
}

func alignUp(n, align int64) int64 { return (n + align - 1) / align * align }

// classTokens groups the constant-size planned prototypes by reuse class,
// classes in order of first appearance.
func classTokens(planned []*token) ([]classKey, map[classKey][]*token) {
	var keys []classKey
	by := map[classKey][]*token{}
	for _, tk := range planned {
		if tk.size < 0 {
			continue
		}
		k := classKey{tk.scope, tk.dtype}
		if by[k] == nil {
			keys = append(keys, k)
		}
		by[k] = append(by[k], tk)
	}
	return keys, by
}

// liveLowerBound is the peak, over binding indices, of the bytes of the
// tensors live at once: no placement can use less.
func liveLowerBound(tks []*token) int64 {
	type event struct {
		at    int
		delta int64
	}
	ev := make([]event, 0, 2*len(tks))
	for _, tk := range tks {
		ev = append(ev, event{tk.start, tk.size}, event{tk.end + 1, -tk.size})
	}
	slices.SortFunc(ev, func(a, b event) int {
		if a.at != b.at {
			return a.at - b.at
		}
		// Releases at the same index come first: [s, e] and [e+1, ...]
		// do not overlap.
		switch {
		case a.delta < b.delta:
			return -1
		case a.delta > b.delta:
			return 1
		}
		return 0
	})
	var live, peak int64
	for _, e := range ev {
		live += e.delta
		peak = max(peak, live)
	}
	return peak
}

// overlapLists returns, for each token (by index in tks), the indices of
// the tokens whose lifetimes overlap it, by a sweep in start order: O(n·k)
// for k tensors live at once.
func overlapLists(tks []*token) [][]int {
	order := make([]int, len(tks))
	for i := range order {
		order[i] = i
	}
	slices.SortStableFunc(order, func(a, b int) int { return tks[a].start - tks[b].start })
	out := make([][]int, len(tks))
	var active []int
	for _, i := range order {
		kept := active[:0]
		for _, j := range active {
			if tks[j].end >= tks[i].start {
				kept = append(kept, j)
				out[i] = append(out[i], j)
				out[j] = append(out[j], i)
			}
		}
		active = append(kept, i)
	}
	return out
}

// greedyPlace places the tokens in the given order, each at the lowest
// aligned offset free of the already placed tokens that overlap it, and
// returns the offsets and the arena size.
func greedyPlace(tks []*token, overlaps [][]int, order []int, align int64) ([]int64, int64) {
	const unplaced = -1
	offsets := make([]int64, len(tks))
	for i := range offsets {
		offsets[i] = unplaced
	}
	type span struct{ lo, hi int64 }
	var busy []span
	var total int64
	for _, i := range order {
		busy = busy[:0]
		for _, j := range overlaps[i] {
			if offsets[j] != unplaced {
				busy = append(busy, span{offsets[j], offsets[j] + tks[j].size})
			}
		}
		slices.SortFunc(busy, func(a, b span) int {
			switch {
			case a.lo < b.lo:
				return -1
			case a.lo > b.lo:
				return 1
			}
			return 0
		})
		var off int64
		for _, b := range busy {
			if off+tks[i].size <= b.lo {
				break
			}
			off = max(off, alignUp(b.hi, align))
		}
		offsets[i] = off
		total = max(total, off+tks[i].size)
	}
	return offsets, total
}

// placeClass assigns offsets to one reuse class's tokens and returns the
// arena size. tvmLayout is the fallback: TVM's storages end to end.
func placeClass(tks []*token) int64 {
	align := classAlign(tks[0].dtype)
	overlaps := overlapLists(tks)
	bySize := make([]int, len(tks))
	for i := range bySize {
		bySize[i] = i
	}
	byStart := slices.Clone(bySize)
	slices.SortStableFunc(bySize, func(a, b int) int {
		switch {
		case tks[a].size > tks[b].size:
			return -1
		case tks[a].size < tks[b].size:
			return 1
		}
		return tks[a].start - tks[b].start
	})
	best, bestSize := greedyPlace(tks, overlaps, bySize, align)
	if offs, size := greedyPlace(tks, overlaps, byStart, align); size < bestSize {
		best, bestSize = offs, size
	}
	if offs, size := tvmLayout(tks, align); size < bestSize {
		best, bestSize = offs, size
	}
	for i, tk := range tks {
		tk.offset = best[i]
	}
	return bestSize
}

// tvmLayout places TVM's storages (of these tokens) end to end, each
// prototype at its storage's offset.
func tvmLayout(tks []*token, align int64) ([]int64, int64) {
	base := map[*token]int64{}
	var next int64
	offsets := make([]int64, len(tks))
	for i, tk := range tks {
		st := tk.storage
		off, ok := base[st]
		if !ok {
			off = alignUp(next, align)
			base[st] = off
			next = off + st.size
		}
		offsets[i] = off
	}
	return offsets, next
}
