package main

import (
	"fmt"
	"io"
	"strconv"
	"strings"

	"github.com/phasec/phasec/eval"
	"github.com/phasec/phasec/frontend/onnx"
	"github.com/phasec/phasec/ir"
	"github.com/phasec/phasec/op"
	"github.com/phasec/phasec/phase"
	"github.com/phasec/phasec/tensor"

	"github.com/spf13/pflag"
)

func init() {
	register(&command{
		name:    "eval",
		summary: "run a module with the reference evaluator (any phase up to lower), without building it",
		usage:   evalUsage,
		setup:   runEval,
	})
}

const evalUsage = "[--func main] [--input name=file.npy]... [--inputs FILE.npz] [--random-inputs [--seed N] [--symbolic name=N]...] [-o OUT.npz|-] FILE"

// runEval evaluates one function of FILE. Parameters come from --input
// .npy files, or with --random-inputs from a seeded generator (symbolic
// dimensions from --dim, else 4). Results are printed, or written to an
// .npz file with -o (fields output_0, output_1, ... for a tuple result).
func runEval(fs *pflag.FlagSet) runFunc {
	var inputs, dims repeatFlag
	fn := fs.String("func", "main", "the Relax function to run")
	random := fs.Bool("random-inputs", false, "fill parameters not given by --input with seeded random values")
	seed := fs.Uint64("seed", defaultSeed, "the random seed for --random-inputs")
	npzPath := fs.String("inputs", "", "parameters by name from `FILE.npz`")
	outPath := fs.StringP("output", "o", "", "write the results to `OUT.npz` instead of printing them")
	fs.Var(&inputs, "input", "a parameter's value (`name=file.npy`), repeatable")
	fs.Var(&dims, "symbolic", "a symbolic dimension for --random-inputs (`name=N`), repeatable; unset ones are 4")
	fs.Var(&dims, "dim", "the old name of --symbolic")
	_ = fs.MarkDeprecated("dim", "use --symbolic")
	return func(positional []string, stdin io.Reader, stdout, stderr io.Writer) int {
		if len(positional) != 1 {
			fmt.Fprintf(stderr, "phasec eval: want exactly one FILE, got %d\nusage: phasec eval %s\n", len(positional), evalUsage)
			return 2
		}
		given := map[string]string{}
		for _, kv := range inputs {
			name, path, ok := strings.Cut(kv, "=")
			if !ok || name == "" || path == "" {
				fmt.Fprintf(stderr, "phasec eval: --input %q: want name=file.npy\n", kv)
				return 2
			}
			given[name] = path
		}
		dimValues := map[string]int64{}
		for _, kv := range dims {
			name, v, ok := strings.Cut(kv, "=")
			n, err := strconv.ParseInt(v, 10, 64)
			if !ok || err != nil || n < 0 {
				fmt.Fprintf(stderr, "phasec eval: --symbolic %q: want name=N with N >= 0\n", kv)
				return 2
			}
			dimValues[name] = n
		}

		var mod *ir.Module
		var code int
		var model *onnx.Result // an ONNX model's input and output names
		if isONNX(positional[0]) {
			mod, model, code = importONNX(positional[0], stderr)
		} else {
			mod, code = parseInput(positional[0], stdin, stderr)
		}
		if mod == nil {
			return code
		}
		for name, path := range given {
			if p := onnxInputName(model, mod, name); p != name {
				delete(given, name)
				given[p] = path
			}
		}
		if p, err := phase.Recorded(mod); err == nil && p == phase.Build {
			fmt.Fprintf(stderr, "phasec eval: %s is in phase build, which the evaluator does not run (it runs modules up to phase lower): use phasec run %s\n", positional[0], positional[0])
			return 2
		}
		f := mod.Func(*fn)
		if f == nil {
			fmt.Fprintf(stderr, "phasec eval: %s: no Relax function named %s\n", positional[0], *fn)
			return 1
		}
		fromNpz := map[string]*tensor.Tensor{}
		if *npzPath != "" {
			named, err := tensor.ReadNpz(*npzPath)
			if err != nil {
				fmt.Fprintf(stderr, "phasec eval: --inputs: %v\n", err)
				return 2
			}
			for _, n := range named {
				fromNpz[onnxInputName(model, mod, n.Name)] = n.Tensor
			}
		}
		var randomArgs []op.Value
		if *random {
			var err error
			if randomArgs, err = eval.RandomArgs(f, *seed, dimValues, 4); err != nil && len(given) < len(f.Params) {
				fmt.Fprintf(stderr, "phasec eval: --random-inputs: %v\n", err)
				return 1
			}
		}
		params := map[string]bool{}
		argv := make([]op.Value, len(f.Params))
		for i, p := range f.Params {
			params[p.Name] = true
			if path, ok := given[p.Name]; ok {
				t, err := tensor.ReadNpyFile(path)
				if err != nil {
					fmt.Fprintf(stderr, "phasec eval: --input %s: %v\n", p.Name, err)
					return 1
				}
				argv[i] = t
				continue
			}
			if t, ok := fromNpz[p.Name]; ok {
				argv[i] = t
				continue
			}
			if randomArgs == nil {
				fmt.Fprintf(stderr, "phasec eval: parameter %s of %s has no value: give --input %s=FILE.npy, --inputs FILE.npz or --random-inputs\n", p.Name, *fn, p.Name)
				return 2
			}
			argv[i] = randomArgs[i]
		}
		for name := range fromNpz {
			if !params[name] {
				fmt.Fprintf(stderr, "phasec eval: --inputs %s: %s has no parameter %s\n", name, *fn, name)
				return 2
			}
		}
		for name := range given {
			if !params[name] {
				fmt.Fprintf(stderr, "phasec eval: --input %s: %s has no parameter %s\n", name, *fn, name)
				return 2
			}
		}
		m := eval.New(mod)
		m.Out = stdout
		res, err := m.Call(*fn, argv...)
		if err != nil {
			fmt.Fprintf(stderr, "phasec eval: %v\n", err)
			return 1
		}
		outs := flattenResult("output", res)
		if names := onnxOutputNames(model, len(outs)); names != nil {
			for i := range outs {
				outs[i].name = names[i]
			}
		}
		if *outPath != "" {
			var named []tensor.Named
			for _, o := range outs {
				t, ok := o.v.(*tensor.Tensor)
				if !ok {
					fmt.Fprintf(stderr, "phasec eval: -o: %s is %s, not a tensor\n", o.name, op.KindOf(o.v))
					return 1
				}
				named = append(named, tensor.Named{Name: o.name, Tensor: t})
			}
			if err := writeNpz(*outPath, stdout, named); err != nil {
				fmt.Fprintf(stderr, "phasec eval: %v\n", err)
				return 1
			}
			return 0
		}
		for _, o := range outs {
			fmt.Fprintf(stdout, "%s: %s\n", o.name, describeValue(o.v))
		}
		return 0
	}
}

type evalOutput struct {
	name string
	v    op.Value
}

// flattenResult names the leaves of a (possibly nested) tuple result:
// output, or output_0, output_1, output_1_0, ...
func flattenResult(name string, v op.Value) []evalOutput {
	t, ok := v.(op.Tuple)
	if !ok {
		return []evalOutput{{name, v}}
	}
	var out []evalOutput
	for i, x := range t {
		out = append(out, flattenResult(fmt.Sprintf("%s_%d", name, i), x)...)
	}
	return out
}

// describeValue prints a value compactly: a tensor's dtype, shape and up
// to 32 elements.
func describeValue(v op.Value) string {
	switch x := v.(type) {
	case *tensor.Tensor:
		n := int(x.NumElements())
		parts := make([]string, 0, min(n, 32))
		for i := 0; i < n && i < 32; i++ {
			parts = append(parts, strconv.FormatFloat(x.Float64At(i), 'g', 8, 64))
		}
		if n > 32 {
			parts = append(parts, fmt.Sprintf("... (%d elements)", n))
		}
		return x.String() + " [" + strings.Join(parts, " ") + "]"
	case op.Prim:
		if x.DType.IsFloat() {
			return fmt.Sprintf("%s %g", x.DType, x.F)
		}
		return fmt.Sprintf("%s %d", x.DType, x.I)
	case op.Shape:
		return fmt.Sprintf("shape %v", []int64(x))
	}
	return op.KindOf(v)
}
