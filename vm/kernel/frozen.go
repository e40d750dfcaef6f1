package kernel

// frozenPacking is what a kernel keeps with frozen storage (constants,
// weights bound once): the packing of one view of it and that view.
type frozenPacking[P any] struct {
	offset int64
	n      int
	packed P
}

// packedOnce returns the packing of b's float32 view kept with b's frozen
// storage under key (the kernel's own match, a pointer: no allocation),
// building it with pack on first use. It reports false when b's storage
// is not frozen, when the kept packing came from another view of the
// storage, or when fits rejects it (another geometry): the caller then
// packs per call.
func packedOnce[P any](key any, b *bufData, pack func() P, fits func(P) bool) (P, bool) {
	var zero P
	if b.storage == nil || len(b.f32) == 0 {
		return zero, false
	}
	v, frozen := b.storage.Memo(key, func() any {
		return &frozenPacking[P]{offset: b.offset, n: len(b.f32), packed: pack()}
	})
	f, _ := v.(*frozenPacking[P])
	if !frozen || f == nil || f.offset != b.offset || f.n != len(b.f32) || !fits(f.packed) {
		return zero, false
	}
	return f.packed, true
}
