package lower_test

import (
	"flag"
	"fmt"
	"os"
	"sort"
	"strings"
	"sync"
	"testing"

	"github.com/phasec/phasec/ir"
	"github.com/phasec/phasec/op"
)

// oracleChecked records every op an oracle case saw legalized: present in
// the case's module before LegalizeOps and gone after it, with the
// evaluator agreeing on both modules (runLegalCases).
var oracleChecked sync.Map // op name -> true

func recordLegalized(before, after *ir.Module) {
	gone := opsCalled(before)
	for name := range opsCalled(after) {
		delete(gone, name)
	}
	for name := range gone {
		oracleChecked.Store(name, true)
	}
}

func opsCalled(mod *ir.Module) map[string]bool {
	seen := map[string]bool{}
	ir.WalkModule(mod, &ir.Visitor{Expr: func(e ir.Expr) bool {
		if c, ok := e.(*ir.Call); ok {
			if o, ok := c.Op.(*ir.Op); ok {
				seen[o.Name] = true
			}
		}
		return true
	}})
	return seen
}

// TestMain checks, after a run of the whole package, that every op with a
// legalization was legalized by at least one oracle case, so a new
// legalization cannot land without being compared with the evaluator.
// Runs filtered with -run, or -short ones, skip the check (they leave cases
// out on purpose).
func TestMain(m *testing.M) {
	code := m.Run()
	if code == 0 && flag.Lookup("test.run").Value.String() == "" && !testing.Short() {
		if missing, report := oracleCoverage(); len(missing) > 0 {
			fmt.Fprintf(os.Stderr, "legalized ops no oracle case checks: %s\n", strings.Join(missing, ", "))
			code = 1
		} else if testing.Verbose() {
			fmt.Println(report)
		}
	}
	os.Exit(code)
}

// oracleCoverage lists the legalized ops no oracle case checked, and a line
// counting the Relax ops registered, evaluated, legalized and checked.
func oracleCoverage() (missing []string, report string) {
	var registered, evaluated, legalized, checked int
	for _, o := range ir.Ops() {
		if !strings.HasPrefix(o.Name, "relax.") {
			continue
		}
		registered++
		d, ok := op.DefOf(o)
		if ok && d.Eval != nil {
			evaluated++
		}
		if !ok || d.Legalize == nil {
			continue
		}
		legalized++
		if _, ok := oracleChecked.Load(o.Name); ok {
			checked++
		} else {
			missing = append(missing, o.Name)
		}
	}
	sort.Strings(missing)
	return missing, fmt.Sprintf("oracle coverage: %d relax ops registered, %d evaluated by op, %d legalized, %d legalized ops oracle-checked",
		registered, evaluated, legalized, checked)
}
