package main

import (
	"encoding/json"
	"fmt"
	"io"
	"strings"

	"github.com/phasec/phasec/barrier"
	"github.com/phasec/phasec/passes"

	"github.com/spf13/pflag"
)

// passRegistry resolves the pass names of every command (`--passes`,
// `--require`, `--disable`, `--print-before`) and is what `phasec passes`
// lists; tests extend it with passes of their own.
var passRegistry = barrier.Registry

func init() {
	register(&command{
		name:    "passes",
		summary: "list the registered passes with their docs, opt levels, contracts and options",
		usage:   "[--json]",
		setup:   runPasses,
	})
}

// passJSON is the --json form of one registered pass.
type passJSON struct {
	Name          string       `json:"name"`
	Doc           string       `json:"doc"`
	OptLevel      int          `json:"opt_level"`
	AlwaysRun     bool         `json:"always_run,omitempty"`
	Requires      []string     `json:"requires,omitempty"`
	Accepts       []string     `json:"accepts,omitempty"`
	Leaves        string       `json:"leaves,omitempty"`
	RequiresProps []string     `json:"requires_props,omitempty"`
	Establishes   []string     `json:"establishes,omitempty"`
	Invalidates   []string     `json:"invalidates,omitempty"`
	Preserves     []string     `json:"preserves,omitempty"`
	Horizon       string       `json:"horizon"`
	Options       []optionJSON `json:"options,omitempty"`
}

type optionJSON struct {
	Name    string `json:"name"`
	Type    string `json:"type"`
	Default any    `json:"default"`
	Doc     string `json:"doc"`
}

func runPasses(fs *pflag.FlagSet) runFunc {
	asJSON := fs.Bool("json", false, "print JSON")
	return func(args []string, _ io.Reader, stdout, stderr io.Writer) int {
		if len(args) != 0 {
			fmt.Fprintln(stderr, "usage: phasec passes [--json]")
			return 2
		}
		regs := passRegistry.Passes()
		if *asJSON {
			var list []passJSON
			for _, r := range regs {
				in := r.Info()
				j := passJSON{Name: in.Name, Doc: in.Doc, OptLevel: in.OptLevel, AlwaysRun: in.AlwaysRun}
				if len(in.Prerequisites) > 0 {
					j.Requires = in.PrerequisiteNames()
				}
				for _, p := range in.Accepts {
					j.Accepts = append(j.Accepts, p.String())
				}
				if in.Leaves != passes.Unchanged {
					j.Leaves = in.Leaves.String()
				}
				for _, p := range in.RequiredProps().List() {
					j.RequiresProps = append(j.RequiresProps, p.String())
				}
				for _, p := range in.Establishes.List() {
					j.Establishes = append(j.Establishes, p.String())
				}
				for _, p := range in.Invalidates.List() {
					j.Invalidates = append(j.Invalidates, p.String())
				}
				for _, p := range in.Preserves.List() {
					j.Preserves = append(j.Preserves, p.String())
				}
				j.Horizon = in.Horizon().String()
				for _, o := range in.Options {
					j.Options = append(j.Options, optionJSON{o.Name, o.Type.String(), o.Default, o.Doc})
				}
				list = append(list, j)
			}
			b, err := json.MarshalIndent(list, "", "  ")
			if err != nil {
				fmt.Fprintln(stderr, "phasec passes:", err)
				return 1
			}
			fmt.Fprintf(stdout, "%s\n", b)
			return 0
		}
		for _, r := range regs {
			in := r.Info()
			fmt.Fprintf(stdout, "%s (opt level %d", in.Name, in.OptLevel)
			if in.AlwaysRun {
				fmt.Fprint(stdout, ", always runs")
			}
			fmt.Fprintf(stdout, ")\n    %s\n    contract: %s\n", in.Doc, in.Contract())
			if len(in.Prerequisites) > 0 {
				fmt.Fprintf(stdout, "    requires: %s\n", strings.Join(in.PrerequisiteNames(), ", "))
			}
			for _, o := range in.Options {
				fmt.Fprintf(stdout, "    option %s %v = %v: %s\n", o.Name, o.Type, o.Default, o.Doc)
			}
		}
		if keys := passes.ConfigKeys(); len(keys) > 0 {
			fmt.Fprintln(stdout, "config keys:")
			for _, k := range keys {
				fmt.Fprintf(stdout, "    %s %v = %v: %s\n", k.Name, k.Type, k.Default, k.Doc)
			}
		}
		return 0
	}
}
