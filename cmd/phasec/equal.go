package main

import (
	"fmt"
	"io"

	"github.com/phasec/phasec/ir"

	"github.com/spf13/pflag"
)

const equalUsage = "[--map-free-vars] [--function NAME] A B"

func init() {
	register(&command{
		name:    "equal",
		summary: "compare two modules structurally (alpha-equivalence)",
		usage:   equalUsage,
		setup:   runEqual,
	})
}

// runEqual exits 0 when A and B are structurally equal and 1 when they are
// not, printing the first difference as "path: left vs right". Usage errors,
// unreadable inputs and parse errors exit 2: no comparison took place.
// Either input may be "-" (stdin), not both.
func runEqual(fs *pflag.FlagSet) runFunc {
	mapFree := fs.Bool("map-free-vars", false, "let free variables on one side match free variables on the other")
	function := fs.String("function", "", "compare only the function `NAME` of both modules")
	return func(files []string, stdin io.Reader, stdout, stderr io.Writer) int {
		if len(files) != 2 {
			fmt.Fprintf(stderr, "phasec equal: want two modules A and B, got %d\nusage: phasec equal %s\n", len(files), equalUsage)
			return 2
		}
		if files[0] == "-" && files[1] == "-" {
			fmt.Fprintln(stderr, "phasec equal: only one of A and B may be - (stdin)")
			return 2
		}
		var mods [2]*ir.Module
		for i, f := range files {
			if mods[i], _ = parseInput(f, stdin, stderr); mods[i] == nil {
				return 2
			}
		}
		var a, b any = mods[0], mods[1]
		if *function != "" {
			var fns [2]ir.BaseFunc
			for i, m := range mods {
				f, ok := m.Lookup(*function)
				if !ok {
					fmt.Fprintf(stderr, "phasec equal: %s has no function %q\n", displayName(files[i]), *function)
					return 2
				}
				fns[i] = f
			}
			a, b = fns[0], fns[1]
		}
		if d := ir.Diff(a, b, ir.EqualOptions{MapFreeVars: *mapFree}); d != nil {
			fmt.Fprintln(stdout, d.String())
			return 1
		}
		return 0
	}
}

func displayName(path string) string {
	if path == "-" {
		return "<stdin>"
	}
	return path
}
