// Package blas is phasec's dense float32 kernel library: a GEMM near the
// machine's FMA limit and vectorised elementwise loops, for the TIR
// kernels in vm/kernel to dispatch to.
//
// # GEMM
//
// Sgemm / SgemmThreads compute C = alpha*op(A)*op(B) + beta*C on row-major
// matrices with explicit leading dimensions (CheckSgemm states the layout
// and validates it). The implementation is the GotoBLAS/BLIS loop nest
// (Goto and van de Geijn, "Anatomy of High-Performance Matrix
// Multiplication", ACM TOMS 34(3), 2008; https://github.com/flame/blis
// docs/KernelsHowTo.md):
//
//	for jc in n by nc:               B block kc x nc in L3
//	  for pc in k by kc:
//	    pack B[pc:, jc:] into nr-column micro-panels
//	    for ic in m by mc:           A block mc x kc in L2
//	      pack alpha*A[ic:, pc:] into mr-row micro-panels
//	      for jr in nc by nr:        B micro-panel kc x nr in L1
//	        for ir in mc by mr:
//	          micro-kernel: C[ir:ir+mr, jr:jr+nr] += Apanel * Bpanel
//
// The micro-kernel keeps a 6x16 tile of C in twelve YMM registers and does
// twelve independent FMAs per k step (kernel_amd64.s, AVX2+FMA, chosen at
// start-up with golang.org/x/sys/cpu). Packing is assembly too: 8x8
// register transposes where the source is strided (A as stored, B
// transposed) and a row copy for B as stored (pack_amd64.s). Elsewhere, or
// with the build tag purego, a portable Go kernel and Go packing with the
// same layout run; tests compare both with a naive triple loop on every
// shape class.
//
// Packing zero-pads partial micro-panels. A last row panel of 1 to 5 rows
// runs a kernel for exactly that many rows (kernel_rows_amd64.s), which
// updates only those rows of C; tiles with fewer than 16 valid columns are
// computed into a scratch tile and only their valid part is added to C. beta is applied to C once before the first k
// block (beta == 0 overwrites, so NaN in an uninitialised C does not
// leak); alpha is folded into the A packing.
//
// m == 1 (a batch-1 dense layer, a GEMV) skips packing: each thread streams
// its columns of B through DotF32 (transB) or AxpyF32.
//
// # Epilogues
//
// SgemmEpilogue runs an Epilogue (epilogue.go) on C a tile at a time:
// after the last k block of a row block, on every 64 columns of it as soon
// as their micro-panels are final (the tile is still in L1/L2), on a GEMV
// thread's columns, and on the whole of C when k or alpha is zero. Every
// element is finished exactly once, by the thread that computed it (tid
// numbers the threads, for lock-free scratch). Conv hands each output row
// to a ConvRowEpilogue, after its bias and ReLU and before the store.
// vm/kernel compiles the elementwise nests FuseTIR fuses after a matmul or
// convolution (bias, residual, activation) into such an epilogue.
//
// # Threads
//
// Sgemm uses GOMAXPROCS threads, fewer when m*n*k is small. Normally each
// thread owns a range of C's columns (whole 16-column micro-panels) and runs
// the whole loop nest on it with its own packed B, repeating only the
// cheap A packing: threads share nothing and meet once per call. With few
// columns and many rows they instead share one packed B per (jc, pc) block
// and split the rows, with two barriers per block. Work goes to long-lived
// worker goroutines, which (like the caller at the join) spin up to 200 µs
// before parking, because waking a parked thread on an idle vCPU costs tens
// of microseconds here. Call state and packing buffers are reused from a
// small free list, so steady-state calls do not allocate. Parallel hands
// other work to the same workers: vm/kernel runs a batched matmul whose
// per-batch products are too small to split (GemmThreads == 1) as whole
// batches side by side, each product on one thread.
//
// # Packed weights
//
// PackB packs all of op(B) once into the loop nest's panel layout (per k
// block, every micro-panel) and SgemmPackedB runs the same nest reading
// those panels instead of packing B per call (the same kernels and
// summation order, so the results are bit-identical): vm/kernel packs a
// matmul's frozen weights once per storage, as ONNX Runtime's MLAS packs
// constant weights at session load. On BERT's shapes it saves 5-30% of a
// call (BenchmarkBertGemmsSideBySide).
//
// AVX-512: where the CPU has it (x/sys/cpu, OS-enabled ZMM state), whole
// pairs of A and B micro-panels run a 12x32 block in 24 ZMM accumulators
// (kernel_avx512_amd64.s), with 6x32 and 12x16 blocks for the rows and the
// column panel a block leaves over; the packing is the 6x16 kernels', so
// edge tiles and other CPUs are unchanged. On Zen 5 (the project's
// machines since 2026-11-29: family 26), whose FMA units are 512 bits
// wide, this doubles the FLOP per cycle (FMA peak ~224 GFLOP/s per core
// with ZMM, ~117 with YMM); on Zen 4, which splits a 512-bit FMA in two,
// it runs at the AVX2 kernel's rate.
//
// # Elementwise primitives
//
// AddF32, SubF32, MulF32, DivF32, MaximumF32, MinimumF32 (dst = a op b),
// AddScalarF32, ScaleF32, MaxScalarF32 (dst = a op s; ReLU is
// MaxScalarF32(dst, a, 0)) and the trailing-axis broadcasts AddRowF32,
// MulRowF32 (bias add: dst = a + row repeated over rows) are the
// elementwise and broadcast patterns vm/kernel dispatches to. See vec.go for
// their shared contract (equal lengths, in-place allowed). They are AVX2
// loops on amd64 and plain Go loops elsewhere, with identical results
// (except the sign of a zero from max/min of ±0). A leading-axis broadcast
// (dst[i, j] = a[i, j] + col[i]) is AddScalarF32 per row.
//
// DotF32, SumF32, MaxF32 (row reductions: softmax, layer norm) and AxpyF32
// are in reduce.go; their AVX2 loops keep 32 partial sums, so they agree
// with a sequential loop up to rounding, not bitwise. NormF32 (norm.go) is
// layer norm's and RMS norm's normalization, (x - m) * r * g + h, in one
// pass.
//
// # Vector math
//
// ExpF32, LogF32, ErfF32, TanhF32, SigmoidF32, GeluF32 (exact, erf form),
// GeluTanhF32, SqrtF32 and RsqrtF32 map float32 slices (math.go): AVX2/FMA
// assembly generated by gen_math.go, 8 lanes per step (16 with AVX-512,
// bitwise equal), and portable Go
// running the same algorithm. math.go states each function's maximum error
// against Go's math in ULPs (1 for exp and log, at most 3 for the others),
// measured by math_test.go over every 2^10-th float32 bit pattern and the
// edge cases, for both implementations. PowF32 and PowScalarF32 (pow.go)
// are math.Pow rounded once (0.5 ULP against it), vector operations only
// for the exponents 1, 2 and 0.5.
//
// # Benchmarks
//
// BenchmarkSgemm512SideBySide and BenchmarkAddSideBySide interleave
// phasec, the FMA peak loop, gonum and copy() in every iteration and
// report medians and ratios (see bench_test.go for the commands).
package blas
