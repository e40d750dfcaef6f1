package main

import (
	"context"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/phasec/phasec/diag"
	"github.com/phasec/phasec/htmlview"
	"github.com/phasec/phasec/ir"
	"github.com/phasec/phasec/passes"
	"github.com/phasec/phasec/phase"
	"github.com/phasec/phasec/semcheck"
	"github.com/phasec/phasec/syntax/printer"
	"github.com/phasec/phasec/wellformed"

	"github.com/spf13/pflag"
)

const optUsage = "[--passes SPEC] [--opt-level N | -O0..-O3] [--disable A,B] [--require A,B] [--config key=value]... " +
	"[--print-before-all] [--print-after-all] [--print-before A,B] [--print-after A,B] [--print-changed[=diff]] " +
	"[--dump-dir DIR] [--time-passes] [--verify-each] [--record FILE.jsonl] [--summary] [--html OUT.html] [--bisect-limit N] " +
	"[--run-prerequisites] [--verify-semantics (--inputs A.npz | --random-inputs [--seed N]) [--symbolic n=8]... [--func F] [--semantics-dir DIR]] " +
	"[-o OUT] FILE"

func init() {
	register(&command{
		name:    "opt",
		summary: "run a pass pipeline on a module, checked against the pass contracts first",
		usage:   optUsage,
		setup:   runOpt,
	})
}

// addOptLevelFlags defines --opt-level N and its compiler-style shorthands
// -O0 .. -O3; the last one given wins.
// addOptLevelFlags declares --opt-level N, whose short form is -O0 .. -O3
// (as C compilers spell it).
func addOptLevelFlags(fs *pflag.FlagSet) *int {
	level := optLevel(passes.DefaultOptLevel)
	fs.VarP(&level, "opt-level", "O",
		"opt level 0..3 gating optional passes, as TVM's PassContext opt_level: a pass runs when its level is at most this; 0 skips the optimize step")
	return (*int)(&level)
}

// optLevel is an opt level, checked while the flags are parsed so that a
// level out of range is a usage error.
type optLevel int

func (l *optLevel) String() string { return strconv.Itoa(int(*l)) }
func (l *optLevel) Type() string   { return "N" }
func (l *optLevel) Set(s string) error {
	n, err := strconv.Atoi(s)
	if err != nil {
		return fmt.Errorf("want an opt level 0..3, got %q", s)
	}
	if n < 0 || n > 3 {
		return fmt.Errorf("opt level %d outside 0..3", n)
	}
	*l = optLevel(n)
	return nil
}

// listFlag is a comma-separated list flag.
type listFlag []string

func (l *listFlag) String() string { return strings.Join(*l, ",") }
func (l *listFlag) Type() string   { return "A,B" }
func (l *listFlag) Set(s string) error {
	for _, x := range strings.Split(s, ",") {
		if x = strings.TrimSpace(x); x != "" {
			*l = append(*l, x)
		}
	}
	return nil
}

// repeatFlag collects every occurrence.
type repeatFlag []string

func (r *repeatFlag) String() string     { return strings.Join(*r, " ") }
func (r *repeatFlag) Type() string       { return "value" }
func (r *repeatFlag) Set(s string) error { *r = append(*r, s); return nil }

// changedFlag is --print-changed or --print-changed=diff.
type changedFlag struct{ on, diff bool }

func (c *changedFlag) Type() string { return "diff" }
func (c *changedFlag) String() string {
	if c.diff {
		return "diff"
	}
	return fmt.Sprint(c.on)
}
func (c *changedFlag) Set(s string) error {
	switch s {
	case "true":
		c.on, c.diff = true, false
	case "false":
		c.on, c.diff = false, false
	case "diff":
		c.on, c.diff = true, true
	default:
		return fmt.Errorf("want --print-changed or --print-changed=diff, got %q", s)
	}
	return nil
}

func runOpt(fs *pflag.FlagSet) runFunc {
	var (
		spec                                   = fs.String("passes", "", "the pipeline, e.g. canonicalize,optimize,fixpoint(A,B),C{key=value}")
		optLevel                               = addOptLevelFlags(fs)
		disable, require, printBefore, printAf listFlag
		configs                                repeatFlag
		changed                                changedFlag
		printBeforeAll                         = fs.Bool("print-before-all", false, "print the module before every pass (stderr)")
		printAfterAll                          = fs.Bool("print-after-all", false, "print the module after every pass (stderr)")
		dumpDir                                = fs.String("dump-dir", "", "write NNN_<phase>_<pass>.tvms files into `DIR`")
		timePasses                             = fs.Bool("time-passes", false, "print the pass timing tree (stderr)")
		verifyEach                             = fs.Bool("verify-each", false, "check well-formedness and claimed properties after every pass that changed the module")
		record                                 = fs.String("record", "", "write a JSON-lines run record to `FILE`")
		summary                                = fs.Bool("summary", false, "print a per-pass summary table (stderr)")
		bisectLimit                            = fs.Int("bisect-limit", -1, "run only the first `N` optional passes")
		prereqs                                = fs.Bool("run-prerequisites", false, "run missing Requires prerequisites automatically")
		outPath                                = fs.StringP("output", "o", "", "write the result to `OUT` instead of stdout")
		htmlPath                               = fs.String("html", "", "write the per-pass view of the pipeline to `OUT.html`")
		verifySemantics                        = fs.Bool("verify-semantics", false, "evaluate the module after every pass that changed it and stop at the first that changes the result")
		semantics                              = addSemanticsFlags(fs, filepath.Join(os.TempDir(), "phasec-semantics"))
	)
	fs.Var(&disable, "disable", "passes never to run (`A,B`)")
	fs.Var(&require, "require", "passes always to run (`A,B`)")
	fs.Var(&printBefore, "print-before", "print the module before the named passes (`A,B`)")
	fs.Var(&printAf, "print-after", "print the module after the named passes (`A,B`)")
	fs.Var(&configs, "config", "set a registered config key (`key=value`), repeatable")
	fs.Var(&changed, "print-changed", "print the module after each pass that changed it; =diff prints a unified diff")
	fs.Lookup("print-changed").NoOptDefVal = "true"
	return func(args []string, stdin io.Reader, stdout, stderr io.Writer) int {
		if len(args) != 1 {
			fmt.Fprintf(stderr, "phasec opt: want exactly one FILE (or -), got %d\nusage: phasec opt %s\n", len(args), optUsage)
			return 2
		}

		// Everything that can be a usage error is checked before reading input.
		pipeline := passes.Sequential("pipeline")
		if *spec != "" {
			var errs diag.List
			if pipeline, errs = passRegistry.ParseAndBuild("--passes", *spec); errs != nil {
				printDiags(stderr, errs)
				return 2
			}
		}
		pc := passes.NewPassContext()
		pc.OptLevel = *optLevel
		pc.Required, pc.Disabled, pc.Registry = require, disable, passRegistry
		pc.RunPrerequisites = *prereqs
		pc.Warn = func(d *diag.Diagnostic) { fmt.Fprintln(stderr, d) }
		for _, kv := range configs {
			k, v, err := passes.ParseConfig(kv)
			if err != nil {
				fmt.Fprintf(stderr, "phasec opt: --config: %v\n", err)
				return 2
			}
			if pc.Config == nil {
				pc.Config = map[string]any{}
			}
			pc.Config[k] = v
		}
		for _, n := range append(append([]string(nil), printBefore...), printAf...) {
			if err := passRegistry.UnknownPass(n); err != nil {
				fmt.Fprintf(stderr, "phasec opt: --print-before/--print-after: %v\n", err)
				return 2
			}
		}
		if errs := pc.Validate(); errs.HasErrors() {
			printDiags(stderr, errs)
			return 2
		}

		var checker *semcheck.Checker
		if *verifySemantics {
			var err error
			if checker, err = semantics.checker(pc); err != nil {
				fmt.Fprintf(stderr, "phasec opt: %v\n", err)
				return 2
			}
		}

		mod, code := parseInput(args[0], stdin, stderr)
		if mod == nil {
			return code
		}
		if checker != nil {
			if err := semantics.bind(&checker.Inputs, mod); err != nil {
				fmt.Fprintf(stderr, "phasec opt: %v\n", err)
				return 2
			}
		}

		var timing *passes.Timing
		var sum *passes.Summary
		var recordFile *os.File
		if *printBeforeAll || *printAfterAll {
			pc.Instruments = append(pc.Instruments, &passes.PrintIR{W: stderr, Before: *printBeforeAll, After: *printAfterAll})
		}
		if len(printBefore) > 0 {
			pc.Instruments = append(pc.Instruments, &passes.PrintIR{W: stderr, Before: true, Passes: printBefore})
		}
		if len(printAf) > 0 {
			pc.Instruments = append(pc.Instruments, &passes.PrintIR{W: stderr, After: true, Passes: printAf})
		}
		if changed.on {
			pc.Instruments = append(pc.Instruments, &passes.PrintChanged{W: stderr, Diff: changed.diff})
		}
		if *dumpDir != "" {
			pc.Instruments = append(pc.Instruments, &passes.DumpDir{Dir: *dumpDir})
		}
		if *bisectLimit >= 0 {
			pc.Instruments = append(pc.Instruments, &passes.Bisect{Limit: *bisectLimit, W: stderr})
		}
		if *verifyEach {
			pc.Instruments = append(pc.Instruments, &passes.VerifyEach{Check: func(m *ir.Module, _ phase.Phase, props phase.Set) diag.List {
				return wellformed.CheckProperties(m, props)
			}})
		}
		if *record != "" {
			var err error
			recordFile, err = os.Create(*record)
			if err != nil {
				fmt.Fprintf(stderr, "phasec opt: %v\n", err)
				return 1
			}
			defer recordFile.Close()
			pc.Instruments = append(pc.Instruments, &passes.RunRecord{W: recordFile})
		}
		if *timePasses {
			timing = &passes.Timing{}
			pc.Instruments = append(pc.Instruments, timing)
		}
		if *summary {
			sum = &passes.Summary{}
			pc.Instruments = append(pc.Instruments, sum)
		}

		var view *htmlview.Recorder
		if *htmlPath != "" {
			view = &htmlview.Recorder{Title: args[0]}
			pc.Instruments = append(pc.Instruments, view)
		}
		out, err := pc.Run(context.Background(), pipeline, mod)
		if timing != nil {
			fmt.Fprint(stderr, timing.Report())
		}
		if view != nil && !writeHTMLView(*htmlPath, view, stderr) {
			return 1
		}
		if sum != nil {
			fmt.Fprint(stderr, sum.Table())
		}
		if err != nil {
			if l, ok := err.(diag.List); ok {
				printDiags(stderr, l)
			} else {
				fmt.Fprintf(stderr, "phasec opt: %v\n", err)
			}
			return 1
		}
		if checker != nil {
			fmt.Fprintf(stderr, "verify-semantics: %s keeps its result after every pass (%d evaluated, %d between build steps skipped)\n",
				checker.Func, checker.Checked, checker.Skipped)
		}
		// Printed straight to the destination: at 1M bindings the text is
		// ~190 MB, and every copy of it counts in the peak.
		if *outPath != "" && *outPath != "-" {
			if err := writeModuleFile(*outPath, out); err != nil {
				fmt.Fprintf(stderr, "phasec opt: %v\n", err)
				return 1
			}
			return 0
		}
		if err := printer.Fprint(stdout, out); err != nil {
			fmt.Fprintf(stderr, "phasec opt: %v\n", err)
			return 1
		}
		return 0
	}
}

// writeModuleFile prints mod into the file path.
func writeModuleFile(path string, mod *ir.Module) error {
	f, err := os.Create(path)
	if err != nil {
		return err
	}
	if err := printer.Fprint(f, mod); err != nil {
		f.Close()
		return err
	}
	return f.Close()
}

// readInput reads FILE, or stdin for "-".
func readInput(path string, stdin io.Reader) ([]byte, string, error) {
	if path == "-" {
		b, err := io.ReadAll(stdin)
		return b, "<stdin>", err
	}
	b, err := os.ReadFile(path)
	return b, path, err
}

func printDiags(w io.Writer, l diag.List) {
	for _, d := range l {
		fmt.Fprintln(w, d)
	}
}
