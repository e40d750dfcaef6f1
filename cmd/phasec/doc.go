package main

import (
	"encoding/json"
	"fmt"
	"io"
	"os"
	"strings"

	"github.com/phasec/phasec/barrier"
	"github.com/phasec/phasec/diag"

	"github.com/spf13/pflag"
)

func init() {
	register(&command{
		name:    "doc",
		summary: "generate documentation: `doc phases` writes PHASES.md from the phases, rules, barriers and pass registry; `doc codes` lists every diagnostic code",
		usage:   "phases|codes",
		sub: []*command{
			{name: "phases", summary: "write PHASES.md from the phases, rules, barriers and pass registry", usage: "[-o FILE]", setup: runDocPhases},
			{name: "codes", summary: "list every diagnostic code by family", usage: "[--json]", setup: runDocCodes},
		},
	})
}

func runDocPhases(fs *pflag.FlagSet) runFunc {
	out := fs.StringP("output", "o", "PHASES.md", "write to `FILE` (- for stdout)")
	return func(args []string, _ io.Reader, stdout, stderr io.Writer) int {
		if len(args) != 0 {
			fmt.Fprintln(stderr, "usage: phasec doc phases [-o FILE]")
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
		fmt.Fprintf(stderr, "wrote %s\n", *out)
		return 0
	}
}

// codeFamilyJSON is the --json form of one family of diagnostic codes.
type codeFamilyJSON struct {
	Prefix string     `json:"prefix"`
	Owner  string     `json:"owner"`
	Doc    string     `json:"doc"`
	Codes  []codeJSON `json:"codes"`
}

type codeJSON struct {
	Code  string `json:"code"`
	Title string `json:"title"`
}

// runDocCodes lists every diagnostic code the program defines, by family:
// the registry of diag.NewFamily and Family.Define.
func runDocCodes(fs *pflag.FlagSet) runFunc {
	asJSON := fs.Bool("json", false, "print JSON")
	return func(args []string, _ io.Reader, stdout, stderr io.Writer) int {
		if len(args) != 0 {
			fmt.Fprintln(stderr, "usage: phasec doc codes [--json]")
			return 2
		}
		families := codeFamilies()
		if *asJSON {
			enc := json.NewEncoder(stdout)
			enc.SetEscapeHTML(false)
			enc.SetIndent("", "  ")
			if err := enc.Encode(families); err != nil {
				fmt.Fprintf(stderr, "phasec doc: %v\n", err)
				return 1
			}
			return 0
		}
		fmt.Fprint(stdout, codesText(families))
		return 0
	}
}

// codeFamilies groups the registered codes by family, both in order.
func codeFamilies() []codeFamilyJSON {
	var out []codeFamilyJSON
	index := map[*diag.Family]int{}
	for _, f := range diag.Families() {
		index[f] = len(out)
		out = append(out, codeFamilyJSON{Prefix: f.Prefix, Owner: f.Owner, Doc: f.Doc, Codes: []codeJSON{}})
	}
	for _, c := range diag.Codes() {
		fam := &out[index[c.Family]]
		fam.Codes = append(fam.Codes, codeJSON{Code: string(c.Code), Title: c.Title})
	}
	return out
}

// codesText renders the families for a reader: a heading per family (its
// prefix, doc and owner package), then a line per code.
func codesText(families []codeFamilyJSON) string {
	var b strings.Builder
	b.WriteString("Diagnostic codes of phasec, by family. A family is declared once, by the package\n")
	b.WriteString("that owns it (diag.NewFamily), which defines each code beside the code reporting it\n")
	b.WriteString("(Family.Define); a new code takes the next free number.\n")
	width := 0
	for _, f := range families {
		for _, c := range f.Codes {
			width = max(width, len(c.Code))
		}
	}
	for _, f := range families {
		fmt.Fprintf(&b, "\n%s: %s\n", f.Prefix, f.Doc)
		fmt.Fprintf(&b, "  defined in %s\n", f.Owner)
		for _, c := range f.Codes {
			fmt.Fprintf(&b, "  %-*s  %s\n", width, c.Code, c.Title)
		}
	}
	return b.String()
}
