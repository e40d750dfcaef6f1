package kernel

import "github.com/phasec/phasec/vm/blas"

// frozenMatmulB is what a matmul kernel keeps with frozen B storage (a
// model's weights): the view it packed and the packing.
type frozenMatmulB struct {
	offset int64
	n      int
	pb     *blas.PackedB
}

// packedB returns op(B) packed for this call when B's storage is frozen
// (constants, weights bound once) and every batch of C reads the same
// matrix of B: packed once per kernel and storage (keyed by this
// kernel), the packing recording the view and geometry it came from. nil
// otherwise, or when the view or geometry differ from the packed one:
// then Sgemm packs B per call.
func (m *matmul) packedB(B *bufData, N, K, ldb int) *blas.PackedB {
	if B.storage == nil || len(B.f32) == 0 {
		return nil
	}
	for _, v := range m.bIdx[:len(m.bIdx)-2] {
		if v >= 0 {
			return nil // a batch of B per batch of C
		}
	}
	v, frozen := B.storage.Memo(m, func() any {
		return &frozenMatmulB{offset: B.offset, n: len(B.f32), pb: blas.PackB(m.transB, K, N, B.f32, ldb)}
	})
	if f, _ := v.(*frozenMatmulB); frozen && f.offset == B.offset && f.n == len(B.f32) && f.pb.Fits(m.transB, K, N, ldb) {
		return f.pb
	}
	return nil
}
