package main

import (
	"fmt"
	"io"

	"github.com/phasec/phasec/ir"
	"github.com/phasec/phasec/syntax"
	"github.com/phasec/phasec/syntax/printer"

	"github.com/spf13/pflag"
)

func init() {
	register(&command{
		name:    "fmt",
		summary: "print a module in canonical TVMScript",
		usage:   "[FILE|-]",
		setup:   runFmt,
	})
}

// runFmt parses FILE (stdin when absent or "-") and prints its canonical
// text. Parse errors go to stderr with the offending source line (exit 1).
func runFmt(fs *pflag.FlagSet) runFunc {
	return func(args []string, stdin io.Reader, stdout, stderr io.Writer) int {
		if len(args) > 1 {
			printUsage(stderr, "fmt")
			return 2
		}
		path := "-"
		if len(args) == 1 {
			path = args[0]
		}
		mod, code := parseInput(path, stdin, stderr)
		if mod == nil {
			return code
		}
		if err := printer.Fprint(stdout, mod); err != nil {
			fmt.Fprintf(stderr, "phasec fmt: %v\n", err)
			return 1
		}
		return 0
	}
}

// parseInput reads and parses FILE (or stdin for "-"). On failure it writes
// the error or the formatted diagnostics to stderr and returns a nil module
// with exit code 1. Diagnostics that are not errors are reported and the
// module returned.
//
// An ONNX model (FILE.onnx) is imported instead, its weights as
// constants (see importONNX).
func parseInput(path string, stdin io.Reader, stderr io.Writer) (*ir.Module, int) {
	if isONNX(path) {
		mod, _, code := importONNX(path, stderr)
		return mod, code
	}
	src, name, err := readInput(path, stdin)
	if err != nil {
		fmt.Fprintf(stderr, "phasec: %v\n", err)
		return nil, 1
	}
	mod, diags := syntax.Parse(name, src)
	if len(diags) > 0 {
		fmt.Fprint(stderr, syntax.FormatDiagnostics(diags, src))
	}
	if diags.HasErrors() || mod == nil {
		return nil, 1
	}
	return mod, 0
}
