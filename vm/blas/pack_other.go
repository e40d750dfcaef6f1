//go:build !amd64 || purego

package blas

func packAFullPanel(dst, src []float32, lda, kcur int, alpha float32) int { return 0 }
func packBTFullPanel(dst, src []float32, ldb, kcur int) int               { return 0 }
func packBFullPanel(dst, src []float32, ldb, kcur int) bool               { return false }
