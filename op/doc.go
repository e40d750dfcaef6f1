// Package op is phasec's library of Relax operators: every op the
// TVMScript dialect names (R.add, R.nn.softmax, R.call_tir,
// R.memory.alloc_tensor, ...), registered in ir's op registry when the
// package initializes.
//
// Package ir keeps only the registry and the ir.Op type the parser, the
// normalizer and the passes resolve against; what an op means lives here,
// one file per TVM op category, each holding its ops' schema and struct
// info inference (and, as they are added, evaluation and legalization) side
// by side, so adding an op touches one file:
//
//	call.go    call_tir family, packed calls, closures, shape_of, print, assert
//	memory.go  builtin.alloc_tensor and relax.memory.*
//	vm.go      relax.vm.*
//	unary.go   elementwise unary math (exp, sqrt, ..., nn.relu, nn.gelu, nn.silu)
//	binary.go  elementwise arithmetic and comparison with broadcasting
//	tensor.go  matmul, astype and creation (full, zeros, ones, *_like)
//	manip.go   reshape, permute_dims, expand_dims, squeeze, flatten, concat,
//	           split, broadcast_to, strided_slice, take
//	reduce.go  sum, mean, max, min, prod
//	nn.go      softmax, log_softmax, layer_norm, rms_norm
//	infer.go, schema.go  helpers shared by the categories (argument and
//	           attribute access, broadcasting, errors prefixed with R.<op>)
//
// It is one package rather than a package per category because the
// categories share those helpers and reuse each other (a softmax is
// inferred like a reduction), and sub-packages would turn every shared
// helper into exported API of a third package. Passes refer to the ops they
// rewrite by their Go names (op.CallTIR, op.MemAllocTensor) and compare
// them by pointer; code that only parses or prints reaches the ops by name
// through the registry, which package syntax populates by importing this
// package.
//
// Invariants every op hook keeps: Infer, Normalize and Validate tolerate
// arguments the normalizer has not reached yet (literal leaves without
// struct info) and report problems as errors prefixed with the op's
// TVMScript name ("R.reshape: ..."), which the normalizer positions at the
// call.
package op
