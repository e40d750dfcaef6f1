package blas

// packSlack is the room packing buffers need past their last panel: the
// AVX2 A packer's last store overruns a panel by two floats.
const packSlack = 8

// packA copies alpha * op(A)[i0:i0+mcur, p0:p0+kcur] into dst as micro-panels
// of mr rows: panel r holds, for each p, the mr values A(i0+r*mr+i, p0+p)
// contiguously (dst[r*mr*kcur + p*mr + i]). Rows past mcur are zero, so the
// micro-kernel can always compute a full tile. Folding alpha in here costs
// nothing extra and leaves the micro-kernel a pure C += A*B.
func packA(dst, a []float32, lda int, trans bool, i0, p0, mcur, kcur int, alpha float32) {
	for ir := 0; ir < mcur; ir += mr {
		panel := dst[ir*kcur : (ir+mr)*kcur]
		rows := min(mr, mcur-ir)
		row0 := i0 + ir
		switch {
		case trans:
			// A(i, p) = a[p*lda+i]: each p reads rows contiguous values.
			for p := range kcur {
				src := a[(p0+p)*lda+row0:][:rows]
				d := panel[p*mr : p*mr+mr]
				for i, v := range src {
					d[i] = alpha * v
				}
				clear(d[rows:])
			}
		case rows == mr:
			// A(i, p) = a[i*lda+p]: read the mr rows side by side, the
			// bulk with the AVX2 transpose where there is one.
			done := packAFullPanel(dst[ir*kcur:], a[row0*lda+p0:], lda, kcur, alpha)
			r0 := a[(row0+0)*lda+p0:][:kcur]
			r1 := a[(row0+1)*lda+p0:][:kcur]
			r2 := a[(row0+2)*lda+p0:][:kcur]
			r3 := a[(row0+3)*lda+p0:][:kcur]
			r4 := a[(row0+4)*lda+p0:][:kcur]
			r5 := a[(row0+5)*lda+p0:][:kcur]
			for p := done; p < kcur; p++ {
				d := (*[mr]float32)(panel[p*mr:])
				d[0] = alpha * r0[p]
				d[1] = alpha * r1[p]
				d[2] = alpha * r2[p]
				d[3] = alpha * r3[p]
				d[4] = alpha * r4[p]
				d[5] = alpha * r5[p]
			}
		default:
			clear(panel)
			for i := range rows {
				src := a[(row0+i)*lda+p0:][:kcur]
				for p, v := range src {
					panel[p*mr+i] = alpha * v
				}
			}
		}
	}
}

// packB copies micro-panels p0..p1 of op(B)[pc:pc+kcur, jc:jc+ncur] into
// dst: panel q holds, for each p, the nr values B(pc+p, jc+q*nr+j)
// contiguously (dst[q*nr*kcur + p*nr + j]). Columns past ncur are zero.
// Threads pack disjoint panel ranges of the same dst.
func packB(dst, b []float32, ldb int, trans bool, pc, jc, kcur, ncur, p0, p1 int) {
	for q := p0; q < p1; q++ {
		panel := dst[q*nr*kcur : (q+1)*nr*kcur]
		col0 := jc + q*nr
		cols := min(nr, ncur-q*nr)
		switch {
		case trans:
			// B(p, j) = b[j*ldb+p]: each column of op(B) is a row of b.
			// Full panels transpose the bulk with AVX2 where there is one.
			done := 0
			if cols == nr {
				done = packBTFullPanel(panel, b[col0*ldb+pc:], ldb, kcur)
			} else {
				clear(panel)
			}
			for j := range cols {
				src := b[(col0+j)*ldb+pc:][:kcur]
				for p := done; p < kcur; p++ {
					panel[p*nr+j] = src[p]
				}
			}
		case cols == nr:
			if packBFullPanel(panel, b[pc*ldb+col0:], ldb, kcur) {
				continue
			}
			for p := range kcur {
				*(*[nr]float32)(panel[p*nr:]) = *(*[nr]float32)(b[(pc+p)*ldb+col0:])
			}
		default:
			for p := range kcur {
				d := panel[p*nr : p*nr+nr]
				copy(d, b[(pc+p)*ldb+col0:][:cols])
				clear(d[cols:])
			}
		}
	}
}
