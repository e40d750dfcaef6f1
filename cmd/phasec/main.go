// Command phasec is the command-line driver of the phasec compiler
// framework: it formats, compares, checks, optimizes and lowers Relax
// modules written in TVMScript.
package main

import (
	"fmt"
	"io"
	"os"
	"slices"
	"strings"
)

// command is one subcommand. Each lives in its own file and registers itself
// in an init function.
type command struct {
	name    string
	summary string
	usage   string // the argument synopsis after "phasec NAME"
	// run executes the command and returns the process exit code:
	// 0 success, 1 failure (diagnostics), 2 usage error.
	run func(args []string, stdin io.Reader, stdout, stderr io.Writer) int
}

var commands []*command

func register(c *command) { commands = append(commands, c) }

func lookup(name string) *command {
	for _, c := range commands {
		if c.name == name {
			return c
		}
	}
	return nil
}

func main() {
	setMemoryLimit()
	os.Exit(run(os.Args[1:], os.Stdin, os.Stdout, os.Stderr))
}

// run is main without the process: testable end to end.
func run(args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	if len(args) == 0 {
		usage(stderr)
		return 2
	}
	name := args[0]
	switch name {
	case "help", "-h", "-help", "--help":
		if len(args) > 1 {
			if c := lookup(args[1]); c != nil {
				fmt.Fprintf(stdout, "usage: phasec %s %s\n\n%s\n", c.name, c.usage, c.summary)
				return 0
			}
			fmt.Fprintf(stderr, "phasec: unknown command %q\n", args[1])
			usage(stderr)
			return 2
		}
		usage(stdout)
		return 0
	}
	c := lookup(name)
	if c == nil {
		fmt.Fprintf(stderr, "phasec: unknown command %q\n", name)
		usage(stderr)
		return 2
	}
	return c.run(args[1:], stdin, stdout, stderr)
}

func usage(w io.Writer) {
	fmt.Fprintln(w, "usage: phasec <command> [arguments]")
	fmt.Fprintln(w)
	fmt.Fprintln(w, "phasec builds phase-checked compilation pipelines for Relax tensor programs.")
	fmt.Fprintln(w)
	fmt.Fprintln(w, "commands:")
	sorted := slices.Clone(commands)
	slices.SortFunc(sorted, func(a, b *command) int { return strings.Compare(a.name, b.name) })
	for _, c := range sorted {
		fmt.Fprintf(w, "  %-8s %s\n", c.name, c.summary)
	}
	fmt.Fprintln(w, "  help     show this list, or the usage of one command")
}
