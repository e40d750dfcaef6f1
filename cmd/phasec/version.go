package main

import (
	"fmt"
	"io"

	"github.com/spf13/pflag"
)

// version is the phasec release, printed by "phasec version".
const version = "0.1.0-dev"

func init() {
	register(&command{
		name:    "version",
		summary: "print the phasec version",
		setup:   func(*pflag.FlagSet) runFunc { return printVersion },
	})
}

// printVersion is "phasec version" (also "phasec --version").
func printVersion(args []string, _ io.Reader, stdout, stderr io.Writer) int {
	if len(args) != 0 {
		fmt.Fprintln(stderr, "usage: phasec version")
		return 2
	}
	fmt.Fprintln(stdout, "phasec", version)
	return 0
}
