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
	npzPath := fs.String("inputs", "", "parameters by name from `FILE.npz` (a tuple parameter p by the keys p.0, p.1, ...)")
	outPath := fs.StringP("output", "o", "", "write the results to `OUT.npz` instead of printing them")
	fs.Var(&inputs, "input", "a parameter's value (`name=file.npy`), repeatable; element i of a tuple parameter p is p.i (p.1.0 nested)")
	fs.Var(&dims, "symbolic", "a symbolic dimension for --random-inputs (`name=N`), repeatable; unset ones are 4")
	fs.Var(&dims, "dim", "the old name of --symbolic")
	_ = fs.MarkDeprecated("dim", "use --symbolic")
	return func(positional []string, stdin io.Reader, stdout, stderr io.Writer) int {
		if len(positional) != 1 {
			fmt.Fprintf(stderr, "phasec eval: want exactly one FILE, got %d\nusage: phasec eval %s\n", len(positional), evalUsage)
			return 2
		}
		for _, kv := range inputs {
			if name, path, ok := strings.Cut(kv, "="); !ok || name == "" || path == "" {
				fmt.Fprintf(stderr, "phasec eval: --input %q: want name=file.npy\n", kv)
				return 2
			}
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
		if p, err := phase.Recorded(mod); err == nil && p == phase.Build {
			fmt.Fprintf(stderr, "phasec eval: %s is in phase build, which the evaluator does not run (it runs modules up to phase lower): use phasec run %s\n", positional[0], positional[0])
			return 2
		}
		f := mod.Func(*fn)
		if f == nil {
			fmt.Fprintf(stderr, "phasec eval: %s: no Relax function named %s\n", positional[0], *fn)
			return 1
		}
		b := newIRBinder(f, *fn)
		for _, kv := range inputs {
			name, path, _ := strings.Cut(kv, "=")
			if err := b.check("--input "+kv, onnxInputName(model, mod, name)); err != nil {
				fmt.Fprintf(stderr, "phasec eval: %v\n", err)
				return 2
			}
			t, err := tensor.ReadNpyFile(path)
			if err != nil {
				fmt.Fprintf(stderr, "phasec eval: --input %s: %v\n", name, err)
				return 1
			}
			if err := b.give("--input "+kv, onnxInputName(model, mod, name), t); err != nil {
				fmt.Fprintf(stderr, "phasec eval: %v\n", err)
				return 2
			}
		}
		if *npzPath != "" {
			named, err := tensor.ReadNpz(*npzPath)
			if err != nil {
				fmt.Fprintf(stderr, "phasec eval: --inputs: %v\n", err)
				return 2
			}
			for _, n := range named {
				if err := b.give("--inputs "+n.Name, onnxInputName(model, mod, n.Name), n.Tensor); err != nil {
					fmt.Fprintf(stderr, "phasec eval: %v\n", err)
					return 2
				}
			}
		}
		var randomArgs []op.Value
		argv := make([]op.Value, len(f.Params))
		for i, p := range f.Params {
			v, given, err := b.value(i)
			if err != nil {
				fmt.Fprintf(stderr, "phasec eval: %v\n", err)
				return 2
			}
			if given {
				argv[i] = v
				continue
			}
			if !*random {
				fmt.Fprintf(stderr, "phasec eval: parameter %s of %s has no value: give %s or --random-inputs\n", p.Name, *fn, howToGive(b, i))
				return 2
			}
			if randomArgs == nil {
				if randomArgs, err = eval.RandomArgs(f, *seed, dimValues, 4); err != nil {
					fmt.Fprintf(stderr, "phasec eval: --random-inputs: %v\n", err)
					return 1
				}
			}
			argv[i] = randomArgs[i]
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
