package semcheck

import (
	"bufio"
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"

	"github.com/phasec/phasec/ir"
	"github.com/phasec/phasec/passes"
	"github.com/phasec/phasec/syntax"
	"github.com/phasec/phasec/syntax/printer"
)

// Regression is a failure of a pipeline reduced to a reproducer: the
// smallest module the culprit pass still fails on, with the inputs that show
// it. Its Text is a .tvms file whose header records where it came from and
// how to replay it; committed under testdata/semcheck/regress, the replay
// test requires it to pass, so a fixed bug stays fixed.
type Regression struct {
	Origin   string // where the failing module came from ("randmod seed 17")
	Pipeline string // the pipeline the original module failed
	Culprit  *Culprit
	// Replay is the pipeline that shows the failure on Module: the culprit
	// pass alone, or the whole pipeline when the culprit could not be
	// isolated (Module is then the unreduced original).
	Replay string
	Inputs Inputs
	Module *ir.Module
	// Before is the binding count of the module the culprit received.
	Before int
}

// DiffCheck runs pipeline spec (resolved against reg) on mod with the semantic Checker. When a pass
// changes the result, breaks a claimed invariant or fails, it bisects to the
// culprit, reduces the module (at most budget candidates) and shrinks its
// symbolic dimensions, and returns the Regression together with the
// failure. err alone (nil Regression) reports what prevents the check, such
// as an input module the evaluator cannot run.
func DiffCheck(reg *passes.Registry, mod *ir.Module, spec, origin string, in Inputs, budget int) (*Regression, error) {
	pipeline, diags := reg.ParseAndBuild("pipeline", spec)
	if diags.HasErrors() {
		return nil, diags
	}
	c := &Checker{Inputs: in}
	pc := passes.NewPassContext()
	pc.Instruments = []passes.Instrument{c}
	_, runErr := pc.Run(context.Background(), pipeline, mod)
	if runErr == nil {
		if c.Checked == 0 {
			return nil, fmt.Errorf("%s changed nothing the checker could evaluate: the check is vacuous", spec)
		}
		return nil, nil
	}
	if c.args == nil {
		return nil, runErr // the input itself could not be evaluated
	}
	cu, err := FindCulprit(mod, pipeline, in)
	if err != nil {
		return nil, fmt.Errorf("%v (bisecting: %v)", runErr, err)
	}
	r := &Regression{Origin: origin, Pipeline: spec, Replay: spec, Inputs: in, Module: mod, Before: CountBindings(mod)}
	if cu == nil {
		// The checked run failed but the bisecting one did not (a flaky
		// failure): keep the original module and pipeline.
		r.Culprit = &Culprit{Name: "?", Kind: EvalCrash, Detail: runErr.Error()}
		return r, runErr
	}
	r.Culprit, r.Before = cu, CountBindings(cu.Input)
	if cu.Pass != nil && cu.Fails(cu.Input, in) {
		r.Module = cu.Reduce(in, budget)
		r.Inputs = cu.ShrinkDims(r.Module, in)
		r.Replay = cu.Pass.String()
	}
	return r, runErr
}

// symbols are the --symbolic values a replay passes: every symbolic
// dimension of the function's parameters, sorted.
func (r *Regression) symbols() []string {
	dim := r.Inputs.Dim
	if dim == 0 {
		dim = 4
	}
	var out []string
	for _, name := range paramSymbols(r.Module, r.Inputs.funcName()) {
		v, ok := r.Inputs.Dims[name]
		if !ok {
			v = dim
		}
		out = append(out, fmt.Sprintf("%s=%d", name, v))
	}
	sort.Strings(out)
	return out
}

// Text is the reproducer file: a header of "# key: value" lines (read back
// by ReadRegression) and the module.
func (r *Regression) Text() string {
	var b strings.Builder
	fmt.Fprintf(&b, "# semcheck regression from %s\n# pipeline: %s\n", r.Origin, r.Pipeline)
	if cu := r.Culprit; cu != nil {
		fmt.Fprintf(&b, "# culprit pass: %s (module in phase %v)\n# failure: %s\n", cu.Name, cu.Phase, cu.Kind)
		for _, l := range strings.Split(strings.TrimSpace(cu.Detail), "\n") {
			fmt.Fprintf(&b, "#   %s\n", l)
		}
	}
	fmt.Fprintf(&b, "# reduced from %d to %d bindings\n", r.Before, CountBindings(r.Module))
	syms := r.symbols()
	fmt.Fprintf(&b, "# replay pipeline: %s\n# seed: %d\n", r.Replay, r.Inputs.Seed)
	if len(syms) > 0 {
		fmt.Fprintf(&b, "# symbolic: %s\n", strings.Join(syms, " "))
	}
	cmd := []string{"phasec", "opt", "--passes", r.Replay, "--verify-semantics", "--random-inputs", "--seed", fmt.Sprint(r.Inputs.Seed)}
	for _, s := range syms {
		cmd = append(cmd, "--symbolic", s)
	}
	fmt.Fprintf(&b, "# replay: %s FILE\n", strings.Join(cmd, " "))
	b.WriteString(printer.Print(r.Module))
	return b.String()
}

// Write writes the reproducer to dir as <hash>.tvms, named by the module's
// text so the same failure found twice is one file, and returns the path.
func (r *Regression) Write(dir string) (string, error) {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return "", err
	}
	sum := sha256.Sum256([]byte(printer.Print(r.Module)))
	path := filepath.Join(dir, hex.EncodeToString(sum[:6])+".tvms")
	return path, os.WriteFile(path, []byte(r.Text()), 0o644)
}

// ReadRegression reads a reproducer written by Regression.Write: the module,
// the replay pipeline and the inputs from its header.
func ReadRegression(path string) (mod *ir.Module, replay string, in Inputs, err error) {
	src, err := os.ReadFile(path)
	if err != nil {
		return nil, "", in, err
	}
	sc := bufio.NewScanner(bytes.NewReader(src))
	for sc.Scan() {
		line, ok := strings.CutPrefix(sc.Text(), "# ")
		if !ok {
			if strings.HasPrefix(sc.Text(), "#") {
				continue
			}
			break
		}
		key, val, _ := strings.Cut(line, ": ")
		switch key {
		case "replay pipeline":
			replay = val
		case "seed":
			if in.Seed, err = strconv.ParseUint(val, 10, 64); err != nil {
				return nil, "", in, fmt.Errorf("%s: seed: %v", path, err)
			}
		case "symbolic":
			in.Dims = map[string]int64{}
			for _, kv := range strings.Fields(val) {
				k, v, _ := strings.Cut(kv, "=")
				n, err := strconv.ParseInt(v, 10, 64)
				if err != nil {
					return nil, "", in, fmt.Errorf("%s: symbolic %q: %v", path, kv, err)
				}
				in.Dims[k] = n
			}
		}
	}
	if replay == "" {
		return nil, "", in, fmt.Errorf("%s: no \"# replay pipeline:\" line in the header", path)
	}
	mod, diags := syntax.Parse(path, src)
	if diags.HasErrors() {
		return nil, "", in, diags
	}
	return mod, replay, in, nil
}

// Replay runs a reproducer's replay pipeline (resolved against reg) on its
// module with the checks of FindCulprit and returns the culprit, nil when
// every property holds.
func Replay(reg *passes.Registry, path string) (*Culprit, error) {
	mod, spec, in, err := ReadRegression(path)
	if err != nil {
		return nil, err
	}
	pipeline, diags := reg.ParseAndBuild(path, spec)
	if diags.HasErrors() {
		return nil, diags
	}
	return FindCulprit(mod, pipeline, in)
}
