// Command phasec is the command-line driver of the phasec compiler
// framework: it formats, compares, checks, optimizes, lowers, builds and
// runs Relax modules written in TVMScript.
//
// Conventions every command follows (README "Command line"): flags go
// anywhere among the arguments and `--` ends them; long flags take two
// dashes; `-o -` writes to standard output and a FILE of `-` reads standard
// input; `--help` prints the usage on standard output and exits 0. Exit
// codes: 0 success, 1 findings or a failed run (diagnostics, a module that
// differs, a run that fails), 2 usage errors or unreadable input (bad flags,
// a missing or unparsable file).
//
// The command line is spf13/cobra over spf13/pflag: one definition per
// command gives the consistent flag syntax, help, "did you mean" for command
// names and the shell completion scripts (`phasec completion bash|zsh|fish`)
// that hand-rolled parsing lacked.
package main

import (
	"errors"
	"fmt"
	"io"
	"os"
	"slices"
	"strings"

	"github.com/phasec/phasec/tensor"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"
)

// Exit codes.
const (
	exitOK       = 0
	exitFindings = 1 // diagnostics, differences, a failed run
	exitUsage    = 2 // bad flags or arguments, unreadable or unparsable input
)

// defaultSeed seeds --random-inputs in every command (run, eval, opt
// --verify-semantics, bisect), so the same flags give the same inputs.
const defaultSeed = 0

// command is one subcommand. Each lives in its own file and registers itself
// in an init function.
type command struct {
	name    string
	summary string
	usage   string // the argument synopsis after "phasec NAME"
	// setup declares the command's flags on fs and returns the function
	// that runs the command once the flags are parsed; args are the
	// positional arguments (fs.Args()).
	setup func(fs *pflag.FlagSet) runFunc
	// sub are the subcommands of a command that only groups them (doc).
	sub []*command
}

// runFunc executes a command and returns the process exit code.
type runFunc func(args []string, stdin io.Reader, stdout, stderr io.Writer) int

var commands []*command

func register(c *command) { commands = append(commands, c) }

func main() {
	setMemoryLimit()
	os.Exit(run(os.Args[1:], os.Stdin, os.Stdout, os.Stderr))
}

// run is main without the process: testable end to end. It builds the
// command tree afresh, so flag values never leak from one call to the next.
func run(args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	code := exitOK
	root := &cobra.Command{
		Use:   "phasec",
		Short: "phasec builds phase-checked compilation pipelines for Relax tensor programs.",
		Long: "phasec builds phase-checked compilation pipelines for Relax tensor programs.\n\n" +
			"Flags go anywhere among the arguments; -- ends them. A FILE of - is standard input,\n" +
			"-o - is standard output. Exit codes: 0 success, 1 findings or a failed run,\n" +
			"2 usage errors or unreadable input.",
		Version:       version,
		SilenceErrors: true,
		SilenceUsage:  true,
		// A bare "phasec" is a usage error: print the command list.
		RunE: func(cmd *cobra.Command, args []string) error {
			if len(args) > 0 {
				msg := fmt.Sprintf("unknown command %q", args[0])
				if s := cmd.SuggestionsFor(args[0]); len(s) > 0 {
					msg += fmt.Sprintf(" (did you mean %q?)", s[0])
				}
				return errors.New(msg)
			}
			cmd.SetOut(stderr)
			_ = cmd.Usage()
			code = exitUsage
			return nil
		},
		CompletionOptions: cobra.CompletionOptions{HiddenDefaultCmd: false},
	}
	root.SuggestionsMinimumDistance = 2
	root.SetVersionTemplate("phasec {{.Version}}\n")
	root.SetIn(stdin)
	root.SetOut(stdout)
	root.SetErr(stderr)
	root.SetFlagErrorFunc(func(_ *cobra.Command, err error) error { return usageError{err} })
	root.SetUsageTemplate(usageTemplate)
	root.SetHelpTemplate(helpTemplate)
	root.Args = cobra.ArbitraryArgs

	sorted := slices.Clone(commands)
	slices.SortFunc(sorted, func(a, b *command) int { return strings.Compare(a.name, b.name) })
	var add func(parent *cobra.Command, c *command)
	add = func(parent *cobra.Command, c *command) {
		cc := &cobra.Command{
			Use:                   strings.TrimSpace(c.name + " " + c.usage),
			Short:                 c.summary,
			DisableFlagsInUseLine: true,
			SilenceErrors:         true,
			SilenceUsage:          true,
		}
		if c.setup != nil {
			exec := c.setup(cc.Flags())
			cc.RunE = func(cmd *cobra.Command, args []string) error {
				code = exec(args, stdin, stdout, stderr)
				return nil
			}
		} else {
			// A group (doc) run without a known subcommand.
			cc.Args = cobra.ArbitraryArgs
			cc.RunE = func(cmd *cobra.Command, args []string) error {
				if len(args) == 0 {
					return errors.New("want a subcommand")
				}
				msg := fmt.Sprintf("unknown subcommand %q", args[0])
				if s := cmd.SuggestionsFor(args[0]); len(s) > 0 {
					msg += fmt.Sprintf(" (did you mean %q?)", s[0])
				}
				return errors.New(msg)
			}
		}
		for _, s := range c.sub {
			add(cc, s)
		}
		parent.AddCommand(cc)
	}
	for _, c := range sorted {
		add(root, c)
	}

	root.SetArgs(args)
	cmd, err := root.ExecuteC()
	if err == nil {
		return code
	}
	name := "phasec"
	if cmd != nil && cmd != root {
		name += " " + cmd.Name()
	}
	if msg := err.Error(); strings.HasPrefix(msg, "unknown command") {
		fmt.Fprintf(stderr, "phasec: %s\nusage: phasec <command> [arguments]\nRun 'phasec help' for the list of commands.\n", strings.TrimRight(msg, "\n"))
		return exitUsage
	}
	// Every error cobra returns is about the command line: commands report
	// their own failures and return an exit code.
	fmt.Fprintf(stderr, "%s: %v\n", name, err)
	if cmd != nil {
		fmt.Fprintf(stderr, "usage: %s\nRun '%s --help' for the flags.\n", usageLine(cmd), name)
	}
	return exitUsage
}

// usageError marks an error in the command line itself.
type usageError struct{ error }

func usageLine(cmd *cobra.Command) string {
	if cmd.Parent() == nil {
		return "phasec <command> [arguments]"
	}
	return cmd.UseLine()
}

// usageTemplate is what a usage error and --help print: the synopsis, then
// the flags or commands.
const usageTemplate = `usage: {{if .HasParent}}{{.UseLine}}{{else}}phasec <command> [arguments]{{end}}
{{if .HasAvailableSubCommands}}
commands:{{range .Commands}}{{if (or .IsAvailableCommand (eq .Name "help"))}}
  {{rpad .Name .NamePadding}} {{.Short}}{{end}}{{end}}

Run 'phasec help <command>' or 'phasec <command> --help' for a command's flags.
{{end}}{{if .HasAvailableLocalFlags}}
flags:
{{.LocalFlags.FlagUsages | trimTrailingWhitespaces}}
{{end}}`

const helpTemplate = `{{with (or .Long .Short)}}{{. | trimTrailingWhitespaces}}

{{end}}{{.UsageString}}`

// printUsage writes a command's synopsis, as a usage error shows it.
func printUsage(w io.Writer, name string) {
	for _, c := range commands {
		if c.name == name {
			fmt.Fprintf(w, "usage: phasec %s %s\nRun 'phasec %s --help' for the flags.\n", c.name, c.usage, c.name)
			return
		}
	}
}

// writeNpz writes arrays to path, or to stdout for "-".
func writeNpz(path string, stdout io.Writer, arrays []tensor.Named) error {
	if path == "-" {
		return tensor.WriteNpzTo(stdout, arrays, false)
	}
	return tensor.WriteNpz(path, arrays)
}
