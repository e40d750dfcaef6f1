package main

import (
	"fmt"
	"io"
	"os"

	"github.com/phasec/phasec/vm"
)

func init() {
	register(&command{
		name:    "disasm",
		summary: "print an executable's functions, instructions, constants and kernels",
		usage:   "MODEL.pvm",
		run:     runDisasm,
	})
}

func runDisasm(args []string, _ io.Reader, stdout, stderr io.Writer) int {
	if len(args) != 1 || len(args[0]) > 0 && args[0][0] == '-' {
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
	fmt.Fprint(stdout, exe.Text())
	return 0
}
