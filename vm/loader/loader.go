// Package loader turns an executable into a runnable VM: it decodes the
// file (vm.Unmarshal, which validates it), decodes each kernel's TIR
// (ir/tirenc), compiles it (vm/kernel), checks the compiled signature
// against the one the compiler recorded, rebuilds the external modules
// (vm/extern) and links (vm.New).
//
// It is the runtime's entry point, and it stands apart from the compiler:
// a program that only runs .pvm files links this package and, of phasec,
// only what it imports: vm/loader, vm, vm/abi, vm/kernel, vm/extern, vm/blas,
// ir/tirenc, ir, diag, internal/ptrmap and tensor. No TVMScript parser, no
// op registry, no pass, no code generator (internal/deps's test holds
// this; `go list -deps ./vm/loader` shows it).
package loader

import (
	"fmt"

	"github.com/phasec/phasec/ir"
	"github.com/phasec/phasec/ir/tirenc"
	"github.com/phasec/phasec/vm"
	"github.com/phasec/phasec/vm/abi"
	"github.com/phasec/phasec/vm/extern"
	"github.com/phasec/phasec/vm/kernel"
)

// Load decodes an executable (validating it) and links it. Kernels are
// compiled by CompileKernel unless opts.CompileKernel is set.
func Load(data []byte, opts vm.Options) (*vm.VM, error) {
	exe, err := vm.Unmarshal(data)
	if err != nil {
		return nil, err
	}
	return Link(exe, opts)
}

// Link links an executable, compiling its kernels with CompileKernel
// unless opts.CompileKernel is set, and rebuilding its external modules
// with vm/extern's registry of kinds unless opts.LinkExternal is set.
func Link(exe *vm.Executable, opts vm.Options) (*vm.VM, error) {
	if opts.CompileKernel == nil {
		opts.CompileKernel = CompileKernel
	}
	if opts.LinkExternal == nil {
		opts.LinkExternal = extern.Link
	}
	return vm.New(exe, opts)
}

// DecodeKernel decodes a kernel's TIR.
func DecodeKernel(k *vm.Kernel) (*ir.PrimFunc, error) {
	f, err := tirenc.Decode(k.TIR)
	if err != nil {
		return nil, fmt.Errorf("kernel %s: %w", k.Name, err)
	}
	return f, nil
}

// CompileKernel decodes a kernel's TIR and compiles it with vm/kernel
// (with the schedule the TIR carries, kernel.ScheduleOf), checking the compiled signature and return type against the ones the
// executable records (which its call sites were validated against).
// Decoding never panics; a panic of the kernel compiler on TIR that no
// compiler would produce is reported as an internal error, so that a
// corrupt executable is an error, never a crash (vm's invariant).
func CompileKernel(k vm.Kernel) (_ abi.Kernel, err error) {
	defer func() {
		if r := recover(); r != nil {
			err = fmt.Errorf("kernel %s: internal error: the kernel compiler panicked: %v", k.Name, r)
		}
	}()
	f, err := DecodeKernel(&k)
	if err != nil {
		return nil, err
	}
	if ret := retType(f); ret != k.Ret {
		return nil, fmt.Errorf("kernel %s returns %q, the executable records %q", k.Name, ret, k.Ret)
	}
	// A tuned kernel carries its general-path schedule in its TIR
	// (vm/kernel/tunedb.Apply wrote it).
	sched, err := kernel.ScheduleOf(f)
	if err != nil {
		return nil, fmt.Errorf("kernel %s: %w", k.Name, err)
	}
	kern, err := kernel.CompileWith(f, k.Name, kernel.Options{Schedule: sched})
	if err != nil {
		return nil, err
	}
	if err := abi.CheckSignature(k.Params, kern.Signature()); err != nil {
		return nil, fmt.Errorf("kernel %s: %w", k.Name, err)
	}
	return kern, nil
}

// retType is the return dtype an executable records: "" for none.
func retType(f *ir.PrimFunc) string {
	if f.Ret.IsVoid() {
		return ""
	}
	return f.Ret.String()
}
