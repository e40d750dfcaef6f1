package main

import (
	"fmt"
	"io"
	"os"

	"github.com/phasec/phasec/ir"
	"github.com/phasec/phasec/syntax/printer"
	"github.com/phasec/phasec/vm"
	"github.com/phasec/phasec/vm/loader"

	"github.com/spf13/pflag"
)

func init() {
	register(&command{
		name:    "disasm",
		summary: "print an executable's functions, instructions, constants and kernels",
		usage:   "MODEL.pvm",
		setup:   func(*pflag.FlagSet) runFunc { return runDisasm },
	})
}

func runDisasm(args []string, _ io.Reader, stdout, stderr io.Writer) int {
	if len(args) != 1 {
		fmt.Fprintln(stderr, "usage: phasec disasm MODEL.pvm")
		return 2
	}
	data, err := os.ReadFile(args[0])
	if err != nil {
		fmt.Fprintf(stderr, "phasec disasm: %v\n", err)
		return 1
	}
	exe, err := vm.Unmarshal(data)
	if err != nil {
		fmt.Fprintf(stderr, "phasec disasm: %s: %v\n", args[0], err)
		return 1
	}
	fmt.Fprint(stdout, exe.TextWith(kernelSource))
	return 0
}

// kernelSource shows a kernel as TVMScript: its TIR decoded and printed
// alone in a module, as the compiler saw it.
func kernelSource(k *vm.Kernel) (string, error) {
	f, err := loader.DecodeKernel(k)
	if err != nil {
		return "", err
	}
	m := ir.NewModule()
	if err := m.Add(k.Name, f); err != nil {
		return "", err
	}
	return printer.Print(m), nil
}
