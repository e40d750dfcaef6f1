package main

import (
	"context"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"

	"github.com/phasec/phasec/codegen"
	"github.com/phasec/phasec/diag"
	"github.com/phasec/phasec/htmlview"
	"github.com/phasec/phasec/ir"
	"github.com/phasec/phasec/passes"
	"github.com/phasec/phasec/phase"
	"github.com/phasec/phasec/vm"

	"github.com/spf13/pflag"
)

const (
	// defaultBuildPasses is the whole pipeline, phase by phase: the
	// optimize step is gated at opt level 1, so -O0 skips it.
	defaultBuildPasses = "canonicalize,optimize,lower,build"
	buildUsage         = "[--passes SPEC] [--opt-level N | -O0..-O3] [--time-passes] [--html OUT.html] [--tune [--tune-budget 30s]] [--tune-db FILE] [-o OUT.pvm|-] FILE"
)

func init() {
	register(&command{
		name:    "build",
		summary: "compile a module through the barriers and VM code generation into an executable",
		usage:   buildUsage,
		setup:   runBuild,
	})
}

// buildFlags are the pipeline flags build and run share.
type buildFlags struct {
	spec       *string
	optLevel   *int
	timePasses *bool
	html       *string
	tune       *tuneFlags
}

func addBuildFlags(fs *pflag.FlagSet) *buildFlags {
	return &buildFlags{
		spec:       fs.String("passes", defaultBuildPasses, "the pipeline before code generation; it must end in phase build"),
		optLevel:   addOptLevelFlags(fs),
		timePasses: fs.Bool("time-passes", false, "print the pass timing tree (stderr)"),
		html:       fs.String("html", "", "write the per-pass view of the pipeline to `OUT.html`"),
		tune:       addTuneFlags(fs),
	}
}

// compile runs the pipeline (unless the module already is in phase build)
// and VM code generation; diagnostics go to stderr.
func (bf *buildFlags) compile(mod *ir.Module, source string, stderr io.Writer) (*vm.Executable, bool) {
	if p, err := phase.Recorded(mod); err != nil || p != phase.Build {
		pipeline, errs := passRegistry.ParseAndBuild("--passes", *bf.spec)
		if errs != nil {
			printDiags(stderr, errs)
			return nil, false
		}
		pc := passes.NewPassContext()
		pc.OptLevel = *bf.optLevel
		pc.Warn = func(d *diag.Diagnostic) { fmt.Fprintln(stderr, d) }
		var timing *passes.Timing
		if *bf.timePasses {
			timing = &passes.Timing{}
			pc.Instruments = append(pc.Instruments, timing)
		}
		var view *htmlview.Recorder
		if *bf.html != "" {
			view = &htmlview.Recorder{Title: source}
			pc.Instruments = append(pc.Instruments, view)
		}
		out, err := pc.Run(context.Background(), pipeline, mod)
		if timing != nil {
			fmt.Fprint(stderr, timing.Report())
		}
		if view != nil && !writeHTMLView(*bf.html, view, stderr) {
			return nil, false
		}
		if err != nil {
			if l, ok := err.(diag.List); ok {
				printDiags(stderr, l)
			} else {
				fmt.Fprintf(stderr, "phasec: %v\n", err)
			}
			return nil, false
		}
		mod = out
	}
	exe, errs := codegen.Build(mod)
	if errs != nil {
		printDiags(stderr, errs)
		return nil, false
	}
	return exe, bf.tune.apply(exe, stderr)
}

func runBuild(fs *pflag.FlagSet) runFunc {
	bf := addBuildFlags(fs)
	out := fs.StringP("output", "o", "", "write the executable to `OUT.pvm` (- for stdout; default FILE with .pvm for its extension)")
	return func(args []string, stdin io.Reader, stdout, stderr io.Writer) int {
		if len(args) != 1 {
			fmt.Fprintf(stderr, "phasec build: want one FILE\nusage: phasec build %s\n", buildUsage)
			return 2
		}
		if *out == "" {
			if args[0] == "-" {
				fmt.Fprintf(stderr, "phasec build: reading stdin, so -o OUT.pvm (or -o -) is needed\nusage: phasec build %s\n", buildUsage)
				return 2
			}
			*out = strings.TrimSuffix(args[0], filepath.Ext(args[0])) + ".pvm"
		}
		mod, code := parseInput(args[0], stdin, stderr)
		if mod == nil {
			return code
		}
		exe, ok := bf.compile(mod, args[0], stderr)
		if !ok {
			return 1
		}
		data := exe.Marshal()
		info := stdout
		if *out == "-" {
			info = stderr // stdout carries the executable
			if _, err := stdout.Write(data); err != nil {
				fmt.Fprintf(stderr, "phasec build: %v\n", err)
				return 1
			}
		} else if err := os.WriteFile(*out, data, 0o644); err != nil {
			fmt.Fprintf(stderr, "phasec build: %v\n", err)
			return 1
		}
		fmt.Fprintf(info, "wrote %s: %d bytes, %d functions, %d kernels, %d constants, %d instructions\n",
			*out, len(data), len(exe.Funcs), len(exe.Kernels), len(exe.Constants), len(exe.Code))
		return 0
	}
}

// writeHTMLView writes the recorded pipeline's page to path (also after a
// failed run: the page then ends in the failing pass) and says so on
// stderr.
func writeHTMLView(path string, view *htmlview.Recorder, stderr io.Writer) bool {
	f, err := os.Create(path)
	if err == nil {
		err = view.WriteHTML(f)
		if cerr := f.Close(); err == nil {
			err = cerr
		}
	}
	if err != nil {
		fmt.Fprintf(stderr, "phasec: --html: %v\n", err)
		return false
	}
	fmt.Fprintf(stderr, "wrote %s\n", path)
	return true
}
