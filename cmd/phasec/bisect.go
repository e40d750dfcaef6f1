package main

import (
	"fmt"
	"io"
	"os"
	"sort"
	"strings"

	"github.com/phasec/phasec/diag"
	"github.com/phasec/phasec/semcheck"
	"github.com/phasec/phasec/syntax/printer"

	"github.com/spf13/pflag"
)

const bisectUsage = "--passes SPEC [--inputs A.npz] [--random-inputs] [--seed N] [--symbolic n=8]... [--func F] " +
	"[--budget N] [-o REPRO.tvms] FILE"

func init() {
	register(&command{
		name:    "bisect",
		summary: "find the first pass after which the module computes something else, breaks an invariant or crashes, and reduce the module",
		usage:   bisectUsage,
		setup:   runBisect,
	})
}

// runBisect checks the module after every pass of the pipeline (result,
// well-formedness, no failure), names the first pass that breaks one,
// reduces the module that pass received while the failure persists, and
// writes the reproducer with the command replaying it. Exit 0: no pass
// fails; 1: a culprit was found (or an error); 2: usage.
func runBisect(fs *pflag.FlagSet) runFunc {
	spec := fs.String("passes", "", "the pipeline to bisect, e.g. canonicalize,lower,build")
	budget := fs.Int("budget", 500, "the most reduction candidates to try")
	outPath := fs.StringP("output", "o", "repro.tvms", "where to write the reduced reproducer")
	sem := addSemanticsFlags(fs, "")
	return func(args []string, stdin io.Reader, stdout, stderr io.Writer) int {
		if len(args) != 1 || *spec == "" {
			fmt.Fprintf(stderr, "phasec bisect: want --passes SPEC and exactly one FILE\nusage: phasec bisect %s\n", bisectUsage)
			return 2
		}
		if *sem.inputs == "" && len(sem.files) == 0 {
			*sem.random = true // bisect needs some inputs; seeded random ones by default
		}
		in, err := sem.build()
		if err != nil {
			fmt.Fprintf(stderr, "phasec bisect: %v\n", err)
			return 2
		}
		pipeline, errs := passRegistry.ParseAndBuild("--passes", *spec)
		if errs != nil {
			printDiags(stderr, errs)
			return 2
		}
		mod, code := parseInput(args[0], stdin, stderr)
		if mod == nil {
			return code
		}
		if err := sem.bind(&in, mod); err != nil {
			fmt.Fprintf(stderr, "phasec bisect: %v\n", err)
			return 2
		}
		prog := newProgress(stderr)
		defer prog.Done()
		in.Progress = prog.Printf
		cu, err := semcheck.FindCulprit(mod, pipeline, in)
		prog.Done()
		if err != nil {
			if l, ok := err.(diag.List); ok {
				printDiags(stderr, l)
			} else {
				fmt.Fprintf(stderr, "phasec bisect: %v\n", err)
			}
			return 1
		}
		if cu == nil {
			fmt.Fprintf(stdout, "no pass of %s changes the result of %s, breaks an invariant or fails\n", *spec, in.Func)
			return 0
		}
		fmt.Fprintf(stdout, "first failing pass: %s (%s failure, module in phase %v)\n  %s\n", cu.Name, cu.Kind, cu.Phase,
			strings.ReplaceAll(strings.TrimSpace(cu.Detail), "\n", "\n  "))
		limits := ""
		if lr, err := semcheck.BisectLimits(mod, pipeline, in); err == nil && lr.Limit > 0 {
			limits = fmt.Sprintf("opt-bisect: optional pass %d of %d (%s) is the first whose run fails; --bisect-limit %d keeps every property",
				lr.Limit, lr.Optional, lr.Pass, lr.Limit-1)
			fmt.Fprintln(stdout, limits)
		} else if err == nil && lr.Limit < 0 {
			limits = "opt-bisect: the run fails with no optional pass (the culprit is a required pass or a barrier step)"
			fmt.Fprintln(stdout, limits)
		}
		before := semcheck.CountBindings(cu.Input)
		repro := cu.Input
		if cu.Pass != nil && cu.Fails(cu.Input, in) {
			repro = cu.Reduce(in, *budget)
			prog.Done()
			if shrunk := cu.ShrinkDims(repro, in); len(shrunk.Dims) > 0 && fmt.Sprint(shrunk.Dims) != fmt.Sprint(in.Dims) {
				in = shrunk
				fmt.Fprintf(stdout, "symbolic sizes shrunk to %v\n", shrunk.Dims)
			}
		} else {
			fmt.Fprintf(stdout, "the pass alone does not reproduce the failure on its input; writing its input unreduced\n")
		}
		inputs := *sem.inputs
		if fn := repro.Func(in.Func); fn != nil && inputs != "" {
			params := map[string]bool{}
			for _, p := range fn.Params {
				params[p.Name] = true
			}
			for name := range in.Given {
				if !params[name] {
					inputs = "" // reduction turned that input into a value again; replay on random inputs
				}
			}
		}
		symbols := []string(sem.symbols)
		if len(in.Dims) > 0 {
			symbols = nil
			keys := make([]string, 0, len(in.Dims))
			for k := range in.Dims {
				keys = append(keys, k)
			}
			sort.Strings(keys)
			for _, k := range keys {
				symbols = append(symbols, fmt.Sprintf("%s=%d", k, in.Dims[k]))
			}
		}
		// The replay is checked before it is printed: the culprit pass
		// alone first, then the culprit with the rest of the pipeline after
		// it (a pass whose damage only a later step detects).
		file := *outPath
		if file == "-" {
			tmp, err := os.CreateTemp("", "phasec-repro-*.tvms")
			if err != nil {
				fmt.Fprintf(stderr, "phasec bisect: %v\n", err)
				return 1
			}
			tmp.Close()
			defer os.Remove(tmp.Name())
			file = tmp.Name()
		}
		write := func(replay string) (string, error) {
			header := cu.Header(*spec, replay)
			if limits != "" {
				header += "# " + limits + "\n"
			}
			text := header + printer.Print(repro)
			return text, os.WriteFile(file, []byte(text), 0o644)
		}
		var replay string
		for _, pipeline := range replayPipelines(cu, *spec) {
			args := replayArgs(cu, pipeline, in, inputs, symbols, file)
			if _, err := write("phasec " + shellJoin(args)); err != nil {
				fmt.Fprintf(stderr, "phasec bisect: %v\n", err)
				return 1
			}
			if run(args, nil, io.Discard, io.Discard) == exitFindings {
				replay = "phasec " + shellJoin(replayArgs(cu, pipeline, in, inputs, symbols, *outPath))
				break
			}
		}
		found := replay != ""
		if !found {
			replay = "(no phasec opt command reproduces it alone: run phasec bisect on the original module)"
		}
		text, err := write(replay)
		if err != nil {
			fmt.Fprintf(stderr, "phasec bisect: %v\n", err)
			return 1
		}
		reduced := fmt.Sprintf("reduced %s from %d to %d bindings", in.Func, before, semcheck.CountBindings(repro))
		if *outPath == "-" {
			fmt.Fprint(stdout, text)
			fmt.Fprintf(stderr, "%s (above); save it as REPRO.tvms and replay: %s < REPRO.tvms\n", reduced, replay)
			return 1
		}
		fmt.Fprintf(stdout, "%s: wrote %s\nreplay: %s\n", reduced, *outPath, replay)
		if !found {
			fmt.Fprintf(stderr, "phasec bisect: the reproducer fails in the pipeline but no replay command was found that shows it alone\n")
		}
		return 1
	}
}

// replayPipelines are the pipelines a replay may run on the reproducer
// (the module the culprit received), in the order they are tried: the
// culprit alone, then the culprit and every step after it in the pipeline
// text.
func replayPipelines(cu *semcheck.Culprit, spec string) []string {
	pass := cu.Name
	if cu.Pass != nil {
		pass = cu.Pass.String()
	}
	out := []string{pass}
	if i := strings.Index(spec, pass); i >= 0 {
		if rest := spec[i:]; rest != pass {
			out = append(out, rest)
		}
	}
	return out
}

// replayArgs is the phasec opt command line that shows the failure on the
// reproducer at path.
func replayArgs(cu *semcheck.Culprit, pipeline string, in semcheck.Inputs, inputs string, symbols []string, path string) []string {
	cmd := []string{"opt", "--passes", pipeline}
	switch cu.Kind {
	case semcheck.Semantic, semcheck.EvalCrash:
		cmd = append(cmd, "--verify-semantics")
		if inputs != "" {
			cmd = append(cmd, "--inputs", inputs)
		}
		cmd = append(cmd, "--random-inputs", "--seed", fmt.Sprint(in.Seed))
		for _, s := range symbols {
			cmd = append(cmd, "--symbolic", s)
		}
		if in.Func != "main" {
			cmd = append(cmd, "--func", in.Func)
		}
	case semcheck.Malformed:
		cmd = append(cmd, "--verify-each")
	}
	return append(cmd, path)
}

// shellJoin joins args for a POSIX shell, quoting those with characters
// the shell would interpret (pipelines have braces and commas).
func shellJoin(args []string) string {
	out := make([]string, len(args))
	for i, a := range args {
		if a != "" && strings.Trim(a, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789-_./=:,") == "" {
			out[i] = a
		} else {
			out[i] = "'" + strings.ReplaceAll(a, "'", `'\''`) + "'"
		}
	}
	return strings.Join(out, " ")
}
