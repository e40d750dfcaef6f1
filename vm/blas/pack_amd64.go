//go:build !purego

package blas

//go:noescape
func packA6AVX2(dst, src *float32, lda, blocks int, alpha float32)

// packAFullPanel packs the first 8*floor(kcur/8) columns of a full 6-row
// A micro-panel (rows of src at stride lda) with the AVX2 transpose and
// returns how many columns it did; packA does the rest. dst must have
// packSlack floats of room past the panel.
func packAFullPanel(dst, src []float32, lda, kcur int, alpha float32) int {
	blocks := kcur / 8
	if !hasAVX2FMA || blocks == 0 {
		return 0
	}
	// The assembly reads rows 0..5 up to column 8*blocks and writes
	// 48*blocks+2 floats; check both once here.
	_ = src[5*lda+8*blocks-1]
	_ = dst[48*blocks+1]
	packA6AVX2(&dst[0], &src[0], lda, blocks, alpha)
	return 8 * blocks
}

//go:noescape
func packBT8AVX2(dst, src *float32, ldb, blocks int)

// packBTFullPanel packs the first 8*floor(kcur/8) rows of a full 16-column
// micro-panel of a transposed B (the 16 columns are rows of src at stride
// ldb) with two AVX2 8x8 transposes per 8 rows and returns how many rows
// it did; packB does the rest.
func packBTFullPanel(dst, src []float32, ldb, kcur int) int {
	blocks := kcur / 8
	if !hasAVX2FMA || blocks == 0 {
		return 0
	}
	_ = src[15*ldb+8*blocks-1]
	_ = dst[nr*8*blocks-1]
	packBT8AVX2(&dst[0], &src[0], ldb, blocks)
	packBT8AVX2(&dst[8], &src[8*ldb], ldb, blocks)
	return 8 * blocks
}

//go:noescape
func packB16AVX2(dst, src *float32, ldb, k int)

// packBFullPanel packs a full 16-column micro-panel of B as stored (rows
// of src at stride ldb) and reports whether it could (AVX2 present).
func packBFullPanel(dst, src []float32, ldb, kcur int) bool {
	if !hasAVX2FMA || kcur == 0 {
		return false
	}
	_ = src[(kcur-1)*ldb+nr-1]
	_ = dst[kcur*nr-1]
	packB16AVX2(&dst[0], &src[0], ldb, kcur)
	return true
}
