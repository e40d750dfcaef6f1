package codegen

import (
	"fmt"

	"github.com/phasec/phasec/ir"
	"github.com/phasec/phasec/syntax"
	"github.com/phasec/phasec/vm"
)

// ParseKernel turns a kernel's TVMScript text back into its PrimFunc.
func ParseKernel(k vm.Kernel) (*ir.PrimFunc, error) {
	mod, diags := syntax.Parse(k.Name+".tvms", []byte(k.Source))
	if diags.HasErrors() {
		return nil, fmt.Errorf("kernel source does not parse: %v", diags[0])
	}
	f := mod.PrimFunc(k.Name)
	if f == nil {
		return nil, fmt.Errorf("kernel source does not define PrimFunc %s", k.Name)
	}
	params, err := Signature(f)
	if err != nil {
		return nil, err
	}
	if err := vm.CheckKernelSignature(k, params); err != nil {
		return nil, err
	}
	return f, nil
}

// Load decodes an executable (validating it) and links it: kernels are
// re-parsed and compiled unless opts.CompileKernel is set.
func Load(data []byte, opts vm.Options) (*vm.VM, error) {
	exe, err := vm.Unmarshal(data)
	if err != nil {
		return nil, err
	}
	return Link(exe, opts)
}

// Link links an executable with the default kernel compiler.
func Link(exe *vm.Executable, opts vm.Options) (*vm.VM, error) {
	if opts.CompileKernel == nil {
		opts.CompileKernel = CompileKernel
	}
	return vm.New(exe, opts)
}
