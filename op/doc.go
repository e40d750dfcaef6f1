// Package op is phasec's library of Relax operators: every op the
// TVMScript dialect names (R.add, R.nn.softmax, R.call_tir,
// R.memory.alloc_tensor, ...), registered when the package initializes.
//
// Each op is one record, a Def, defined in one place (its file, usually
// one constructor) and registered once, by Define:
//
//   - Op, the *ir.Op: schema, struct-info inference (Infer, Normalize,
//     Validate), purity, category, fusion pattern (ir.OpPattern, TVM's
//     OpPatternKind) and whether VM code generation emits it
//     (LegalAtBuild, read by the checker's BuiltinsLowered rule and by
//     codegen);
//   - Eval: what it computes, for the reference evaluator in package eval;
//   - Legalize: the TIR PrimFunc LegalizeOps (package lower) calls through
//     R.call_tir;
//   - Layout and Gradient: the rules ConvertLayout and Gradient will read
//     (types defined, nil for every op so far).
//
// DefOf finds an op's record. The record is split between ir and op
// because ir, which the parser, the normalizer and the checker stand on,
// cannot import op: what ir-level code reads lives on ir.Op, and what
// needs this package's types (evaluator values, the Kernel builder) lives
// on Def. Define puts the ir.Op in ir's registry (by name, for the parser)
// and the Def in this package's (by op). Calls of TVM operators phasec has
// no op for yet get opaque ops (Opaque), records of the same registry with
// no Eval or Legalize, interned by name and argument shape.
//
// The files:
//
//	call.go    call_tir family, packed calls, closures, shape_of, print, assert
//	memory.go  builtin.alloc_tensor and relax.memory.* (memory.view: a
//	           byte-level view, lowered by LowerRuntimeBuiltin)
//	vm.go      relax.vm.*
//	vdevice.go to_vdevice, hint_on_device
//	unary.go   elementwise unary math (exp, sqrt, ..., nn.relu, nn.gelu,
//	           nn.silu), predicates, clip, nn.leakyrelu
//	binary.go  elementwise arithmetic, comparison, logical and bitwise ops
//	           with broadcasting
//	tensor.go  matmul, astype, wrap_param, creation (full, zeros, ones,
//	           *_like), tril, triu
//	manip.go   reshape, permute_dims, expand_dims, squeeze, flatten, concat,
//	           split, broadcast_to, strided_slice, take, flip
//	reduce.go  sum, mean, max, min, prod, variance, std
//	search.go  where, argmax, argmin
//	nn.go      softmax, log_softmax, layer_norm, rms_norm, prelu
//	more_manip.go  stack, tile, repeat, gather_elements, outer, cumsum, cumprod
//	create.go  arange, eye, one_hot (scalar operands as R.prim_value)
//	conv.go    nn.pad, nn.conv1d/2d/3d (any permutation layouts)
//	conv_transpose.go  nn.conv1d/2d/3d_transpose (any permutation layouts;
//	           scatter evaluation, topi-shaped gather legalization)
//	pool.go    nn.max_pool1d/2d/3d, nn.avg_pool1d/2d/3d,
//	           nn.adaptive_avg_pool1d/2d/3d (one constructor per family over
//	           the number of spatial axes; N/C/spatial layouts in any order)
//	image.go   image.resize2d (topi's float32 coordinate arithmetic, mirrored
//	           operation by operation in the evaluator)
//	nn_norm.go nn.batch_norm, nn.group_norm, nn.dropout
//	attention.go  nn.attention (scaled dot-product, causal masks, bias)
//	loss.go    nn.cross_entropy_with_logits, nn.nll_loss
//	einsum.go  einsum (no ellipses)
//	sort.go    sort, argsort, topk (stable; rank-counting TIR kernels)
//	gather.go  gather_nd, scatter_elements, collapse_sum_to, collapse_sum_like,
//	           dynamic_strided_slice (legalized with a run-time shape function)
//	scatter_nd.go  scatter_nd (and Kernel.Scatter, a serial block writing at
//	           computed positions)
//	layout.go  layout_transform (index maps: ir.IndexMap)
//
// and the machinery they share: def.go (the record and its registry),
// infer.go and schema.go (argument and attribute access, broadcasting,
// errors prefixed with R.<op>), value.go and eval.go (evaluator values;
// exact float64/int64 element arrays that each op computes on and rounds
// once to its output dtype), legalize.go (the Kernel builder that emits
// TVM-shaped TIR).
//
// It is one package rather than a package per category because the
// categories share those helpers and reuse each other (mean is a sum and a
// divide, softmax a max, an exp and a sum), and sub-packages would turn
// every shared helper into exported API of a third package. Passes refer
// to the ops they rewrite by their Go names (op.CallTIR, op.MemAllocTensor)
// and compare them by pointer; code that only parses or prints reaches the
// ops by name through the registry, which package syntax populates by
// importing this package.
//
// Invariants every op hook keeps: Infer, Normalize and Validate tolerate
// arguments the normalizer has not reached yet (literal leaves without
// struct info) and report problems as errors prefixed with the op's
// TVMScript name ("R.reshape: ..."), which the normalizer positions at the
// call. Evaluations never panic on bad values: they return errors naming
// the op, the parameter and the dimension. Legalizations return
// ErrNotLegalizable, never a wrong kernel, for calls they do not handle.
// Every op states its Pattern with TVM's value for the same operator (the
// zero value, ElemWise, would let an op fuse that must not); ops outside
// the tensor families are Opaque, as TVM's FuseOps treats them. An Eval or
// Legalize defined as a named function takes its op from the call (opOf):
// naming the op's package variable there would make the variable's own
// Define an initialization cycle.
package op
