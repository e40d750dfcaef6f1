package main

import (
	"flag"
	"fmt"
	"io"
	"os"

	"github.com/phasec/phasec/barrier"
)

const docUsage = "phases [-o FILE]"

func init() {
	register(&command{
		name:    "doc",
		summary: "generate documentation: `doc phases` writes PHASES.md from the phases, rules, barriers and pass registry",
		usage:   docUsage,
		run:     runDoc,
	})
}

func runDoc(args []string, _ io.Reader, stdout, stderr io.Writer) int {
	if len(args) == 0 || args[0] != "phases" {
		fmt.Fprintf(stderr, "usage: phasec doc %s\n", docUsage)
		return 2
	}
	fs := flag.NewFlagSet("doc phases", flag.ContinueOnError)
	fs.SetOutput(stderr)
	out := fs.String("o", "PHASES.md", "write to `FILE` (- for stdout)")
	fs.Usage = func() { fmt.Fprintf(stderr, "usage: phasec doc %s\n", docUsage); fs.PrintDefaults() }
	if err := fs.Parse(args[1:]); err != nil {
		if err == flag.ErrHelp {
			return 0
		}
		return 2
	}
	if fs.NArg() != 0 {
		fmt.Fprintf(stderr, "usage: phasec doc %s\n", docUsage)
		return 2
	}
	text := barrier.PhasesDoc()
	if *out == "-" {
		fmt.Fprint(stdout, text)
		return 0
	}
	if err := os.WriteFile(*out, []byte(text), 0o644); err != nil {
		fmt.Fprintf(stderr, "phasec doc: %v\n", err)
		return 1
	}
	return 0
}
