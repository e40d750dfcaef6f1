package main

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/phasec/phasec/diag"
	"github.com/phasec/phasec/diag/format"
	"github.com/phasec/phasec/phase"
	"github.com/phasec/phasec/syntax"
	"github.com/phasec/phasec/wellformed"

	"github.com/spf13/pflag"
)

func init() {
	register(&command{
		name:    "check",
		summary: "check modules against the structural rules and a phase's invariants",
		usage:   "[--phase ingest|optimize|lower|build] [--format text|json|github|sarif] PATH...",
		setup:   runCheck,
	})
}

// runCheck checks every .tvms file named or found (recursively) under a named
// directory: the structural rules always, plus the invariants of --phase or,
// without it, of the phase each module records. Exit status: 0 clean, 1 with
// violations, 2 on usage errors and unreadable or unparsable input (whose
// diagnostics are printed too, in the chosen format).
func runCheck(fl *pflag.FlagSet) runFunc {
	phaseName := fl.String("phase", "", "check this phase's invariants (default: the phase each module records)")
	formatName := fl.String("format", "text", "output format: text, json, github or sarif")
	return func(args []string, stdin io.Reader, stdout, stderr io.Writer) int {
		if len(args) == 0 {
			printUsage(stderr, "check")
			return 2
		}
		out, err := format.Parse(*formatName)
		if err != nil {
			fmt.Fprintln(stderr, "phasec check:", err)
			return 2
		}
		forced := phase.None
		if *phaseName != "" {
			if forced, err = phase.Parse(*phaseName); err != nil {
				fmt.Fprintln(stderr, "phasec check:", err)
				return 2
			}
		}

		var all diag.List
		badInput := false
		files, listErrs := collectFiles(args)
		if len(listErrs) > 0 {
			all = append(all, listErrs...)
			badInput = true
		}
		for _, file := range files {
			l, ok := checkFile(file, forced, stdin)
			all = append(all, l...)
			badInput = badInput || !ok
		}
		if err := format.Write(stdout, out, all, checkTool()); err != nil {
			fmt.Fprintln(stderr, "phasec check:", err)
			return 2
		}
		switch {
		case badInput:
			return 2
		case all.HasErrors():
			return 1
		}
		return 0
	}
}

// checkFile parses and checks one file. ok is false when the file could not
// be read or parsed; the returned diagnostics then say why.
func checkFile(file string, forced phase.Phase, stdin io.Reader) (l diag.List, ok bool) {
	src, name, err := readInput(file, stdin)
	if err != nil {
		return diag.List{readError(file, err)}, false
	}
	file = name
	if d := notText(file, src); d != nil {
		return diag.List{d}, false
	}
	mod, perrs := syntax.Parse(file, src)
	if perrs.HasErrors() || mod == nil {
		if len(perrs) == 0 {
			perrs.Add(diag.Span{File: file}, "", "cannot parse module")
		}
		return perrs, false
	}
	if mod.Source == "" {
		mod.Source = file
	}
	if forced != phase.None {
		return wellformed.Check(mod, forced), true
	}
	_, l = wellformed.CheckRecorded(mod)
	return l, true
}

func readError(file string, err error) *diag.Diagnostic {
	var pe *fs.PathError
	if errors.As(err, &pe) {
		err = pe.Err
	}
	return &diag.Diagnostic{Span: diag.Span{File: file}, Severity: diag.Error, Msg: "cannot read: " + err.Error()}
}

// collectFiles expands the arguments: a file stands for itself (whatever its
// extension), a directory for every .tvms file below it, in lexical order;
// a directory without any is an error.
func collectFiles(paths []string) ([]string, diag.List) {
	var files []string
	var errs diag.List
	for _, p := range paths {
		if p == "-" {
			files = append(files, p) // standard input
			continue
		}
		info, err := os.Stat(p)
		if err != nil {
			errs = append(errs, readError(p, err))
			continue
		}
		if !info.IsDir() {
			files = append(files, p)
			continue
		}
		var found []string
		err = filepath.WalkDir(p, func(path string, d fs.DirEntry, err error) error {
			if err != nil {
				errs = append(errs, readError(path, err))
				return nil
			}
			if !d.IsDir() && strings.HasSuffix(path, ".tvms") {
				found = append(found, path)
			}
			return nil
		})
		if err != nil {
			errs = append(errs, readError(p, err))
		}
		if len(found) == 0 {
			// A mistyped directory must not pass as a clean check.
			errs = append(errs, &diag.Diagnostic{Span: diag.Span{File: p}, Severity: diag.Error, Msg: "no .tvms files in this directory"})
		}
		slices.Sort(found)
		files = append(files, found...)
	}
	return files, errs
}

// checkTool describes phasec and its rule catalogue for SARIF.
func checkTool() format.Tool {
	t := format.Tool{Name: "phasec", Version: version}
	for _, r := range wellformed.Rules() {
		t.Rules = append(t.Rules, format.Rule{ID: string(r.Code), Title: r.Title, Hint: r.Hint, Property: r.Property.String()})
	}
	return t
}
