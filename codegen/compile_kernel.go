package codegen

import (
	"fmt"

	"github.com/phasec/phasec/vm"
	"github.com/phasec/phasec/vm/kernel"
)

// CompileKernel parses a kernel's source and compiles it with vm/kernel,
// checking the compiled signature against the one the executable records.
func CompileKernel(k vm.Kernel) (vm.KernelFunc, error) {
	f, err := ParseKernel(k)
	if err != nil {
		return nil, err
	}
	kern, err := kernel.Compile(f, k.Name)
	if err != nil {
		return nil, err
	}
	got := make([]vm.KernelParam, 0, len(kern.Params()))
	for _, p := range kern.Params() {
		kp := vm.KernelParam{Kind: vm.ParamKind(p.Kind), DType: p.DType.String()}
		if p.Kind == kernel.ParamBuffer {
			kp.NDim = p.NDim
		}
		got = append(got, kp)
	}
	if err := vm.CheckKernelSignature(k, got); err != nil {
		return nil, fmt.Errorf("kernel %s: %w", k.Name, err)
	}
	return kern, nil
}
