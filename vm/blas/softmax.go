package blas

import "fmt"

// ExpSubSumF32 sets dst[i] = e^(x[i]-m), the subtraction rounded to
// float32 first (as softmax's legalized TIR computes it), and returns the
// sum of dst: softmax's exp-and-sum pass over one row in one pass. The
// sum's order is unspecified (partial sums per lane), as SumF32's. dst
// and x have the same length (a mismatch panics) and may be the same
// slice. The exponentials are ExpF32's (ExpMaxULP), bitwise.
func ExpSubSumF32(dst, x []float32, m float32) float32 {
	if len(dst) != len(x) {
		panic(fmt.Sprintf("blas.ExpSubSumF32: lengths differ: dst %d, x %d", len(dst), len(x)))
	}
	return expSubSumF32(dst, x, m)
}

// expSubSumF32Composed is ExpSubSumF32 from the slice loops (the portable
// path, and the 256-bit one).
func expSubSumF32Composed(dst, x []float32, m float32) float32 {
	addScalarF32(dst, x, -m, false)
	expF32(dst, dst)
	return sumF32(dst)
}

// SoftmaxRowsF32 computes softmax over each of the len(m) contiguous rows
// of x (n = len(x)/len(m) elements each, n > 0) into dst, as softmax's
// legalized TIR does with its intermediates written too: m[r] =
// max(init, row) (NaN if the row holds a NaN, as Go's max), s[r] = the
// sum of e^(x-m[r]) (x - m rounded first; unspecified sum order), dst
// row = e^(x-m[r]) * (1/s[r]) (within an ULP of the division). The
// exponentials are within ExpSoftmaxMaxULP with AVX-512 (ExpF32's
// elsewhere). dst may be x. With AVX-512 the rows run in blocks of up to
// rowBlock elements, one assembly pass over the block at a time (max, exp
// and sum, scale; the last two in L1, the tails masked). Lengths that do
// not fit panic naming the function.
func SoftmaxRowsF32(dst, x, m, s []float32, init float32) {
	rows, n := rowsOf("SoftmaxRowsF32", dst, x, m, s)
	if rows == 0 {
		return
	}
	if !hasAVX512Math {
		softmaxRowsGo(dst, x, m, s, rows, n, init)
		return
	}
	for lo := 0; lo < rows; {
		b := min(rows-lo, max(1, rowBlock/n))
		xb, db := x[lo*n:(lo+b)*n], dst[lo*n:(lo+b)*n]
		mb, sb := m[lo:lo+b], s[lo:lo+b]
		rowsMaxF32AVX512(&xb[0], &mb[0], b, n, init)
		if rowsExpSubSumF32AVX512(&db[0], &xb[0], &mb[0], &sb[0], b, n) > 0 {
			nanRowMax(xb, mb, sb, n, init)
		}
		rowsScaleF32AVX512(&db[0], &sb[0], b, n)
		lo += b
	}
}

// softmaxRowsGo is SoftmaxRowsF32 from the slice loops (other CPUs).
func softmaxRowsGo(dst, x, m, s []float32, rows, n int, init float32) {
	for r := range rows {
		xr, or := x[r*n:(r+1)*n], dst[r*n:(r+1)*n]
		m[r] = max(init, maxF32(xr))
		s[r] = expSubSumF32Composed(or, xr, m[r])
		mulScalarF32(or, or, 1/s[r], false)
	}
}

// LogSoftmaxRowsF32 computes log-softmax over each of the len(m)
// contiguous rows of x into dst: m and s as SoftmaxRowsF32's, dst row =
// (x - m[r]) - ln s[r], the subtractions rounded as written and the
// logarithm LogF32's (LogMaxULP from the correctly rounded one). dst may
// be x. With AVX-512 the rows run in blocks of up to 16 KiB (max and sum
// of each row in one call, the block's logarithms in one LogF32, the
// output in another call while the block is in L1).
func LogSoftmaxRowsF32(dst, x, m, s []float32, init float32) {
	rows, n := rowsOf("LogSoftmaxRowsF32", dst, x, m, s)
	var l [64]float32
	for lo := 0; lo < rows; {
		b := min(rows-lo, max(1, min(len(l), rowBlock/n)))
		xb, db := x[lo*n:(lo+b)*n], dst[lo*n:(lo+b)*n]
		mb, sb := m[lo:lo+b], s[lo:lo+b]
		if hasAVX512Math {
			rowsMaxF32AVX512(&xb[0], &mb[0], b, n, init)
			if rowsExpSumF32AVX512(&xb[0], &mb[0], &sb[0], b, n) > 0 {
				nanRowMax(xb, mb, sb, n, init)
			}
			logSmallF32(&l, sb)
			logSoftmaxOutF32AVX512(&db[0], &xb[0], &mb[0], &l[0], b, n)
		} else {
			logSoftmaxBlockGo(db, xb, mb, sb, &l, n, init)
		}
		lo += b
	}
}

// logSoftmaxBlockGo is a block of LogSoftmaxRowsF32 from the slice loops
// (other CPUs; len(m) <= 64); l receives the logarithms.
func logSoftmaxBlockGo(dst, x, m, s []float32, l *[64]float32, n int, init float32) {
	var scratch [1024]float32
	for r := range m {
		xr := x[r*n : (r+1)*n]
		m[r] = max(init, maxF32(xr))
		var sum float32
		for c := 0; c < n; c += len(scratch) {
			e := min(c+len(scratch), n)
			sum += expSubSumF32Composed(scratch[:e-c], xr[c:e], m[r])
		}
		s[r] = sum
	}
	logSmallF32(l, s)
	for r := range m {
		or := dst[r*n : (r+1)*n]
		addScalarF32(or, x[r*n:(r+1)*n], -m[r], false)
		addScalarF32(or, or, -l[r], false)
	}
}

// rowBlock is the number of elements (16 KiB) the row functions pass over
// at a time: a block stays in L1 between its passes.
const rowBlock = 4096

// rowsOf checks the shapes of a row function's operands: dst and x hold
// len(m) rows of n > 0 elements, s one per row.
func rowsOf(name string, dst, x, m, s []float32) (rows, n int) {
	rows = len(m)
	if len(s) != rows || len(dst) != len(x) || (rows == 0 && len(x) != 0) || (rows > 0 && (len(x) == 0 || len(x)%rows != 0)) {
		panic(fmt.Sprintf("blas.%s: lengths do not fit: dst %d, x %d, m %d, s %d", name, len(dst), len(x), len(m), len(s)))
	}
	if rows == 0 {
		return 0, 0
	}
	return rows, len(x) / rows
}

// nanRowMax sets m[r] to NaN for the rows with a NaN sum that hold a NaN
// (the assembly's maximum skips NaN lanes; a NaN sum without a NaN in the
// row comes from +Inf - +Inf, and m[r] = +Inf is right).
func nanRowMax(x, m, s []float32, n int, init float32) {
	for r, v := range s {
		if v != v {
			m[r] = max(init, maxF32(x[r*n:(r+1)*n]))
		}
	}
}

// ExpSoftmaxMaxULP is the largest error, in ULPs against math.Exp over
// the dense non-positive float32 samples (their arguments x - m, m the
// row's maximum, are never positive), of the exponentials SoftmaxRowsF32
// and LogSoftmaxRowsF32 compute with AVX-512: exp's range reduction with
// a degree-5 polynomial in Horner form (five FMAs) instead of ExpF32's
// degree 7, the rows' whole cost (softmax_test.go measures it).
const ExpSoftmaxMaxULP = 2.5
