package kernel

import "github.com/phasec/phasec/vm/blas"

// packedB returns op(B) packed for this call when B's storage is frozen
// (constants, weights bound once) and every batch of C reads the same
// matrix of B: packed once per kernel and storage (keyed by this
// kernel), the packing recording the view and geometry it came from. nil
// otherwise, or when the view or geometry differ from the packed one:
// then Sgemm packs B per call.
func (m *matmul) packedB(B *bufData, N, K, ldb int) *blas.PackedB {
	for _, v := range m.bIdx[:len(m.bIdx)-2] {
		if v >= 0 {
			return nil // a batch of B per batch of C
		}
	}
	pb, _ := packedOnce(m, B,
		func() *blas.PackedB { return blas.PackB(m.transB, K, N, B.f32, ldb) },
		func(pb *blas.PackedB) bool { return pb.Fits(m.transB, K, N, ldb) })
	return pb
}
