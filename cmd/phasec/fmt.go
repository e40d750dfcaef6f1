package main

import (
	"flag"
	"fmt"
	"io"

	"github.com/phasec/phasec/ir"
	"github.com/phasec/phasec/syntax"
	"github.com/phasec/phasec/syntax/printer"
)

func init() {
	register(&command{
		name:    "fmt",
		summary: "print a module in canonical TVMScript",
		usage:   "[FILE|-]",
		run:     runFmt,
	})
}

// runFmt parses FILE (stdin when absent or "-") and prints its canonical
// text. Parse errors go to stderr with the offending source line (exit 1).
func runFmt(args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("fmt", flag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.Usage = func() { fmt.Fprintln(stderr, "usage: phasec fmt [FILE|-]") }
	if err := fs.Parse(args); err != nil {
		if err == flag.ErrHelp {
			return 0 // -h asked for the usage, as with opt and passes
		}
		return 2
	}
	if fs.NArg() > 1 {
		fs.Usage()
		return 2
	}
	path := "-"
	if fs.NArg() == 1 {
		path = fs.Arg(0)
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
