// Package kernel runs TIR PrimFuncs (ir.PrimFunc) by compiling each one, once,
// into a tree of Go closures.
//
// Compile walks the PrimFunc and produces closures specialised on types,
// operators and operand kinds, so running a kernel never switches on an IR
// node or a dtype per scalar. Loop variables, let-bound values, block
// iteration variables, scalar parameters and symbolic shape variables live in
// numbered slots of a frame (ints in int64, floats in float64 rounded to the
// variable's precision after every operation, so float32 arithmetic is exactly
// float32 arithmetic). Frames are pooled: Kernel.Call allocates nothing in
// steady state and is safe for concurrent use.
//
// Innermost loops run a chunk of iterations at a time ("vector mode") when
// their bodies allow it: every expression that varies with the loop variable
// becomes a closure over a slice of up to chunkSize lanes, loads and stores
// whose indices are affine in the loop variable read and write buffer slices
// directly, bounds are checked once per chunk at the two ends of each affine
// index, loads with other indices gather lane by lane (each lane checked),
// reductions into a loop-invariant element accumulate a whole chunk at
// once, T.where predicates affine in the loop variable clip the chunk,
// T.if_then_else and if/else statements with an affine condition run
// each arm only on its own lanes (padding), and a block's T.init runs on
// the single iteration where it applies (peeled). In a perfect nest around one block, the
// spatial loop indexing the output's last dimension is moved innermost
// (reorder.go), so reductions written innermost still update rows.
// Vector mode distributes the loop body over the chunk statement by
// statement, which is only valid when no iteration observes another
// iteration's writes; compileVector checks that every access to a buffer
// written in the body uses the same index expressions, and falls back to the
// scalar closures otherwise. Buffers of different parameters are assumed
// not to overlap (TIR's tir.noalias).
//
// Compile also matches each top-level loop nest structurally, whatever
// its buffer, block and variable names (pattern.go): fp32 matmul and
// batch matmul (either operand transposed, broadcast batches, any T.init
// constant) run on vm/blas's Sgemm; fp32 elementwise and trailing-row
// broadcast +, -, *, / and max run on vm/blas's AVX2 loops over the
// flattened arrays, split across cores for large outputs; nests that only
// move elements (permute_dims, reshape with its div/mod indices,
// broadcast_to, and FuseTIR's chains of them) run as cache-blocked strided
// copies (permute.go, "permute"); nests with
// reduction variables that nothing else matches are reported as
// "reduction" and run on the vector path. Row kernels (rows.go,
// rowexpr.go): consecutive nests over the same rows (softmax's max, exp,
// sum and divide; layer norm's sums and normalization; a fused residual
// add before them; chains of elementwise ops through T.alloc_buffer
// intermediates, as FuseTIR writes them) run as one group, row by row and
// rows split across cores, each nest's row as vm/blas vector operations
// including its vector math (exp, erf, tanh, ...); they are reported as
// "rows" (with a reduction) or "elementwise". A matmul, batch matmul or
// convolution followed by the elementwise nests FuseTIR fuses after it
// (bias, residual add, relu, clip, gelu, scaling, casts: epilogue.go)
// runs as one vm/blas GEMM or convolution that applies the nests, as a
// small vector program, to each output tile while it is in cache; the
// intermediates are never written ("matmul+epilogue"). A
// fast path checks at run time that the loops cover its buffers exactly
// and otherwise runs the nest's general closure (a fused epilogue run: its
// nests' unfused dispatch). Kernel.Pattern names the
// dispatch ("matmul+epilogue" for a fused dense with bias);
// Options.General turns it off, and the tests check that both paths agree.
//
// TIR semantics follow TVM: Div/Mod on integers truncate (truncdiv,
// truncmod), FloorDiv/FloorMod round towards negative infinity, integer
// arithmetic wraps at the type's width, and T.init runs when every
// reduction iteration variable of its block is at the start of its domain.
// T.round and T.nearbyint both round half to even, as NumPy's round does
// (only exact halves could differ from a backend rounding them away from
// zero). T.thread_binding loops run serially. A T.handle parameter that no
// T.match_buffer views is opaque: Call accepts any tensor for it.
//
// Runtime faults are returned by Call as errors, never as panics: a shape
// or dtype that does not match the buffer declaration, an integer division
// by zero, and an index out of bounds in any dimension of any access
// (vector mode checks each affine access once per chunk).
package kernel
