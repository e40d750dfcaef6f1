package main

import (
	"bytes"
	"fmt"
	"io"
	"unicode/utf8"

	"github.com/phasec/phasec/diag"
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
		return nil, exitUsage
	}
	if d := notText(name, src); d != nil {
		fmt.Fprintln(stderr, d)
		return nil, exitUsage
	}
	mod, diags := syntax.Parse(name, src)
	if len(diags) > 0 {
		fmt.Fprint(stderr, syntax.FormatDiagnostics(diags, src))
	}
	if diags.HasErrors() || mod == nil {
		return nil, exitUsage
	}
	return mod, 0
}

// notText reports input that cannot be a module before the parser sees it:
// an empty file (or only blanks and comments would still parse to an empty
// module, which is legal; nothing at all is not), and binary data (a NUL
// byte, or mostly bytes that are not printable UTF-8 in its first 4 KiB).
func notText(name string, src []byte) *diag.Diagnostic {
	if len(bytes.TrimSpace(src)) == 0 {
		return &diag.Diagnostic{Span: diag.Span{File: name}, Severity: diag.Error,
			Msg: "empty input: expected a TVMScript module (or an .onnx model)"}
	}
	head := src[:min(len(src), 4096)]
	bad, first := 0, -1
	for i := 0; i < len(head); {
		r, size := utf8.DecodeRune(head[i:])
		if r == 0 || r == utf8.RuneError && size == 1 || r < 0x20 && r != '\t' && r != '\n' && r != '\r' || r == 0x7f {
			if first < 0 {
				first = i
			}
			if r == 0 {
				bad = len(head)
			}
			bad++
		}
		i += size
	}
	if first >= 0 && bad*10 > len(head) {
		return &diag.Diagnostic{Span: diag.Span{File: name}, Severity: diag.Error,
			Msg: fmt.Sprintf("binary input (byte 0x%02x at offset %d): expected TVMScript text", src[first], first)}
	}
	return nil
}
