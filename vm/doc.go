// Package vm is phasec's Relax virtual machine: the executable format, its
// loader and validator, the disassembler, the interpreter and the
// vm.builtin.* runtime functions, after TVM's relax_vm (include/tvm/runtime/
// relax_vm/{bytecode.h,executable.h,vm.h}, src/runtime/relax_vm/builtin.cc).
//
// # Executable
//
// An Executable is plain data: a function table (VM functions with their
// code ranges and register counts, builtins by name, kernels by name), the
// code as TVM's four instructions (Call, Ret, Goto, If) with argument words
// tagged register / immediate / constant / function, a constant pool, the
// kernels as encoded TIR (package ir/tirenc) with their signatures
// (abi.Param), a source map from every instruction to the Relax
// binding it implements, and the external modules external codegens
// compiled (kind, exported symbols, payload), rebuilt at link time by
// Options.LinkExternal (vm/extern's registry) into packed functions.
// Marshal/Unmarshal use a versioned, checksummed, sectioned binary form (see
// format.go). Unmarshal and New validate everything the interpreter relies
// on before anything runs (Executable.Validate); a corrupt file is an error,
// never a panic.
//
// # What the runtime links
//
// The vm package imports, of phasec, only tensor and vm/abi (the
// compiler-VM contract: builtin names, match codes, the kernel ABI); it
// never reads TIR. Kernels are compiled when an executable is linked, by
// Options.CompileKernel; package vm/loader supplies the decoder (ir/tirenc)
// and the kernel compiler (vm/kernel). A program that only runs .pvm files
// calls loader.Load and links, of phasec: vm/loader, vm, vm/abi,
// vm/kernel, vm/blas, ir/tirenc, ir, diag, internal/ptrmap and tensor --
// not the TVMScript parser, the op registry, the passes or code
// generation (`go list -deps ./vm/loader`; internal/deps's test enforces
// it).
//
// # Execution form
//
// The on-disk encoding is TVM's; the in-memory one is finer. New links each
// Call by callee kind once (builtin function pointer, kernel, VM function,
// invoke_closure, call_tir_dyn) and turns vm.builtin.copy and
// vm.builtin.null_value into register moves, so the dispatch loop is a
// switch over dense structs with pre-resolved callees and operands, and
// never looks anything up by name. BenchmarkDispatch measures it against
// interpreting the words directly: about the same for a builtin call (the
// call itself dominates), twice as fast for the copies and kills codegen
// emits around every binding and If, and the callee kinds TVM resolves
// through PackedFunc objects (VM function, kernel, closure, call_tir_dyn)
// need no per-call test. Jumps only go forward (validated), so a
// function body always terminates; only calls repeat work, bounded by
// Options.MaxCallDepth and Options.MaxSteps and interrupted by the context
// (checked every 256 instructions; a kernel call runs to completion).
//
// # Invariants
//
//   - A VM is immutable after New; each call runs on a Machine (registers,
//     frames, scratch, allocator) taken from a pool, so calls may run
//     concurrently on one VM.
//   - VM-to-VM calls push frames on the Machine's own stack (no Go
//     recursion); registers of all frames live in one growing slice.
//   - The steady state allocates nothing but what escapes: arguments are
//     gathered into a scratch slice sized at link time, kernels get a
//     reused argument slice, frames and shape heaps are recycled, shapes
//     are reused per instruction when their dimensions repeat, and tensor
//     headers from alloc_tensor/reshape come back at Ret unless the result
//     reaches them. Tuples and closures are allocated when made.
//   - Storage from vm.builtin.alloc_storage is recorded in the allocating
//     frame and returned to the allocator at Ret unless the returned value
//     reaches it; that is what makes the pooled allocator's reuse work
//     across calls (Go has no reference counts to do it as TVM does). The
//     result's own storage escapes to the caller, who may hand it back
//     with VM.Release once done with it, so a loop of calls allocates no
//     fresh memory for its outputs either.
//   - Constant tensors are frozen when New links them (tensor.Storage.Freeze):
//     no kernel may write them, and kernels keep what they derive from them
//     (packed weights) for the life of the VM.
//   - A builtin reports bad input as an error; the VM wraps every error in
//     a RuntimeError naming the function, the instruction and its source
//     position. A panic is recovered and reported the same way, as an
//     internal error.
package vm
