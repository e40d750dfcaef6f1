package main

import (
	"context"
	"fmt"
	"io"
	"math"
	"math/rand/v2"
	"os"
	"os/signal"
	"slices"
	"strconv"
	"strings"
	"time"
	"unicode"

	"github.com/phasec/phasec/codegen"
	"github.com/phasec/phasec/frontend/onnx"
	"github.com/phasec/phasec/ir"
	"github.com/phasec/phasec/tensor"
	"github.com/phasec/phasec/vm"
	"github.com/phasec/phasec/vm/loader"

	"github.com/spf13/pflag"
)

const runUsage = "[--func main] [--input name=file.npy]... [--random-inputs] [--seed N] [--symbolic n=32]... " +
	"[--params PARAMS.npz] [-o out.npz] [--stats] [--repeat N] [--expect FILE.npy]... [build flags] MODEL.pvm|FILE.tvms|MODEL.onnx"

func init() {
	register(&command{
		name:    "run",
		summary: "run a function of an executable (or of a module, built first) on .npy inputs",
		usage:   runUsage,
		setup:   runRun,
	})
}

func runRun(fs *pflag.FlagSet) runFunc {
	var inputs, symbolic, expect repeatFlag
	fn := fs.String("func", "main", "the function to run")
	fs.Var(&inputs, "input", "bind parameter `name=file.npy` (repeatable; in parameter order without name=); element i of a tuple parameter p is p.i (p.1.0 nested)")
	random := fs.Bool("random-inputs", false, "fill parameters without --input with random values (uniform in [-1, 1) for floats)")
	seed := fs.Uint64("seed", defaultSeed, "seed of --random-inputs")
	npzPath := fs.String("inputs", "", "bind parameters by name from `FILE.npz` (a tuple parameter p by the keys p.0, p.1, ...)")
	maxMemory := byteSize(defaultMaxMemory())
	fs.Var(&maxMemory, "max-memory", "stop before the inputs and tensors of the run exceed `SIZE` (default half the machine's memory)")
	fs.Var(&symbolic, "symbolic", "value of a symbolic dimension for --random-inputs (`n=32`, repeatable)")
	outPath := fs.StringP("output", "o", "", "write the outputs to `OUT.npz` (- for stdout)")
	paramsPath := fs.String("params", "", "bind parameters by name from `PARAMS.npz` (the weights phasec import wrote)")
	stats := fs.Bool("stats", false, "print instructions executed, time per function and kernel, allocations and peak bytes")
	repeat := fs.Int("repeat", 1, "run `N` times (timings over all runs)")
	fs.Var(&expect, "expect", "compare the outputs, in order, with `FILE.npy` (repeatable): fail beyond 1e-5 * max(1, |expected|)")
	bf := addBuildFlags(fs)
	return func(args []string, stdin io.Reader, stdout, stderr io.Writer) int {
		if len(args) != 1 || *repeat < 1 {
			fmt.Fprintf(stderr, "phasec run: want one MODEL.pvm or FILE.tvms (and --repeat >= 1)\nusage: phasec run %s\n", runUsage)
			return 2
		}
		syms := map[string]int64{}
		for _, kv := range symbolic {
			k, v, ok := strings.Cut(kv, "=")
			n, err := strconv.ParseInt(v, 10, 64)
			if !ok || err != nil || n < 0 {
				fmt.Fprintf(stderr, "phasec run: --symbolic %q: want name=non-negative integer\n", kv)
				return 2
			}
			syms[strings.TrimSpace(k)] = n
		}

		// Load: an executable, or a module built in memory.
		bf.tune.dims = syms
		path := args[0]
		start := time.Now()
		var exe *vm.Executable
		var model *onnx.Result // an ONNX model's input and output names
		if strings.HasSuffix(path, ".tvms") || path == "-" || isONNX(path) {
			var mod *ir.Module
			var code int
			if !isONNX(path) {
				mod, code = parseInput(path, stdin, stderr)
			} else {
				mod, model, code = importONNX(path, stderr)
				for i, kv := range inputs {
					if name, file, ok := strings.Cut(kv, "="); ok {
						inputs[i] = onnxInputName(model, mod, name) + "=" + file
					}
				}
			}
			if mod == nil {
				return code
			}
			var ok bool
			if exe, ok = bf.compile(mod, args[0], stderr); !ok {
				return 1
			}
		} else {
			data, err := os.ReadFile(path)
			if err != nil {
				fmt.Fprintf(stderr, "phasec run: %v\n", err)
				return 1
			}
			if exe, err = vm.Unmarshal(data); err != nil {
				fmt.Fprintf(stderr, "phasec run: %s: %v\n", path, err)
				return 1
			}
			if !bf.tune.apply(exe, stderr) {
				return 1
			}
		}
		budget := &memoryBudget{limit: int64(maxMemory)}
		machine, err := loader.Link(exe, vm.Options{Stats: *stats,
			NewAllocator: func() tensor.Allocator { return budget.allocator(tensor.NewPooledAllocator()) }})
		if err != nil {
			fmt.Fprintf(stderr, "phasec run: %s: %v\n", path, err)
			return 1
		}
		loadTime := time.Since(start)

		fi := exe.FuncIndex(*fn)
		if fi < 0 || exe.Funcs[fi].Kind != vm.FuncVM {
			fmt.Fprintf(stderr, "phasec run: %s has no function %q\n", path, *fn)
			return 1
		}
		var weights []tensor.Named
		if *paramsPath != "" {
			if weights, err = tensor.ReadNpz(*paramsPath); err != nil {
				fmt.Fprintf(stderr, "phasec run: --params: %v\n", err)
				return 1
			}
		}
		in := &runInputs{inputs: inputs, params: weights, random: *random, seed: *seed, syms: syms, budget: budget}
		if *npzPath != "" {
			if in.npz, err = tensor.ReadNpz(*npzPath); err != nil {
				fmt.Fprintf(stderr, "phasec run: --inputs: %v\n", err)
				return 2
			}
		}
		given := len(syms)
		argv, err := in.bind(&exe.Funcs[fi])
		if err != nil {
			fmt.Fprintf(stderr, "phasec run: %v\n", err)
			return 1
		}
		if len(syms) > given {
			var unset []string
			for name, v := range syms {
				if !slices.Contains(symbolicNames(symbolic), name) {
					unset = append(unset, fmt.Sprintf("%s=%d", name, v))
				}
			}
			slices.Sort(unset)
			fmt.Fprintf(stderr, "phasec run: unset symbolic dimensions are %d: %s (give --symbolic NAME=N)\n", unsetDim, strings.Join(unset, ", "))
		}

		ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
		defer stop()
		var out vm.Value
		var total *vm.Stats
		times := make([]time.Duration, 0, *repeat)
		for i := 0; i < *repeat; i++ {
			t0 := time.Now()
			v, st, err := machine.Call(ctx, *fn, argv)
			times = append(times, time.Since(t0))
			if err != nil {
				fmt.Fprintf(stderr, "phasec run: %v\n", err)
				return 1
			}
			out = v
			if st != nil {
				if total == nil {
					total = st
				} else {
					total.Add(st)
				}
			}
		}

		info := stdout
		if *outPath == "-" {
			info = stderr // stdout carries the .npz
		}
		named := flattenOutputs("output", out)
		if names := onnxOutputNames(model, len(named)); names != nil {
			for i := range named {
				named[i].Name = names[i]
			}
		}
		fmt.Fprintf(info, "%s: %d output(s)\n", *fn, len(named))
		for _, n := range named {
			fmt.Fprintf(info, "  %s\n", describe(n.Name, n.Value))
		}
		fmt.Fprintf(info, "load %s; run %s\n", fmtDur(loadTime), timingSummary(times))
		if total != nil {
			fmt.Fprintf(info, "stats over %d run(s):\n", *repeat)
			total.Print(info)
			b, n := exe.PlannedStaticBytes()
			fmt.Fprintf(info, "memory per run: plan %d bytes in %d storages (%d of constant size in the executable: %d bytes), allocator peak %d bytes\n",
				total.StorageBytes/int64(*repeat), total.Storages/int64(*repeat), n, b, total.Alloc.Peak)
		}
		if len(expect) > 0 {
			if err := compareExpected(info, named, expect); err != nil {
				fmt.Fprintf(stderr, "phasec run: %v\n", err)
				return 1
			}
		}
		if *outPath != "" {
			var arrays []tensor.Named
			for _, n := range named {
				if t, ok := n.Value.Tensor(); ok {
					arrays = append(arrays, tensor.Named{Name: n.Name, Tensor: t})
				}
			}
			if err := writeNpz(*outPath, stdout, arrays); err != nil {
				fmt.Fprintf(stderr, "phasec run: %v\n", err)
				return 1
			}
		}
		return 0
	}
}

// runInputs are run's ways of giving a function its parameters: .npy
// files by name or in order (--input), an .npz by name (--inputs), the
// weights phasec import wrote (--params), seeded random values for the rest
// (--random-inputs), symbolic dimensions (--symbolic), all within the
// memory budget of --max-memory.
type runInputs struct {
	inputs []string
	npz    []tensor.Named
	params []tensor.Named
	random bool
	seed   uint64
	syms   map[string]int64
	budget *memoryBudget
}

// bind builds f's argument list (inputs.go says how values name
// parameters and tuple elements). Every given tensor is checked against
// its annotation (dtype, rank, constant dimensions) so a mismatch reads in
// the user's terms, before the VM's own checks.
func (in *runInputs) bind(f *vm.Function) ([]vm.Value, error) {
	b, err := newVMBinder(f)
	if err != nil {
		return nil, err
	}
	reserve := func(flag string, t *tensor.Tensor) error {
		return in.budget.reserveTensor(t.DType, t.Shape, flag)
	}
	byName := func(flag string, named []tensor.Named) error {
		for _, p := range named {
			if err := b.give(flag, p.Name, p.Tensor); err != nil {
				return err
			}
			if err := reserve(flag, p.Tensor); err != nil {
				return err
			}
		}
		return nil
	}
	if err := byName("--params", in.params); err != nil {
		return nil, err
	}
	if err := byName("--inputs", in.npz); err != nil {
		return nil, err
	}
	for _, spec := range in.inputs {
		name, file, named := strings.Cut(spec, "=")
		if !named {
			file = spec
		} else if err := b.check("--input "+spec, name); err != nil {
			return nil, err
		}
		t, err := tensor.ReadNpyFile(file)
		if err != nil {
			return nil, fmt.Errorf("--input %s: %w", spec, err)
		}
		if named {
			err = b.give("--input "+spec, name, t)
		} else {
			err = b.giveNext("--input "+spec, t)
		}
		if err != nil {
			return nil, err
		}
		if err := reserve("--input "+spec, t); err != nil {
			return nil, err
		}
	}
	argv := make([]vm.Value, f.NumArgs)
	rng := rand.New(rand.NewPCG(in.seed, 0x9e3779b97f4a7c15))
	for i := range argv {
		v, given, err := b.value(i)
		if err != nil {
			return nil, err
		}
		if given {
			if argv[i], err = codegen.ToVM(v); err != nil {
				return nil, fmt.Errorf("parameter %s of %s: %w", f.ParamNames[i], f.Name, err)
			}
			continue
		}
		if !in.random {
			return nil, fmt.Errorf("parameter %s of %s has no value: give %s or --random-inputs", f.ParamNames[i], f.Name, howToGive(b, i))
		}
		// Random values leaf by leaf, each from its own annotation.
		var leaves []vm.Value
		for _, l := range b.leaves {
			if l.param != i {
				continue
			}
			if !l.known {
				return nil, fmt.Errorf("parameter %s of %s has no recorded annotation: give --input %s=FILE.npy", l.path, f.Name, l.path)
			}
			v, err := in.randomValue(f.Name, l.path, l.sig, rng)
			if err != nil {
				return nil, err
			}
			leaves = append(leaves, v)
		}
		if b.isTuple(i) {
			argv[i] = assemble(b.infos[i], leaves, func(fields []vm.Value) vm.Value { return vm.TupleValue(fields...) })
		} else {
			argv[i] = leaves[0]
		}
	}
	return argv, nil
}

// howToGive says how to give parameter p: its flag, or its elements'.
func howToGive(b *inputBinder, p int) string {
	if !b.isTuple(p) {
		return fmt.Sprintf("--input %s=FILE.npy, --inputs FILE.npz", b.params[p])
	}
	paths := b.leafPaths(p)
	return fmt.Sprintf("its elements (--input %s=FILE.npy, ..., or .npz keys %s)", paths[0], strings.Join(paths, ", "))
}

// randomValue makes a seeded random value for the parameter (or tuple
// element) name of function fn from its recorded signature: a tensor
// (uniform in [-1, 1) for floats, integers in [0, 10), booleans), a prim
// value of its dtype, or a shape.
func (in *runInputs) randomValue(fn, name string, sg vm.ParamSig, rng *rand.Rand) (vm.Value, error) {
	dims := func() ([]int64, error) {
		shape := make([]int64, len(sg.Dims))
		for j, d := range sg.Dims {
			n, err := dimValue(d, in.syms)
			if err != nil {
				return nil, fmt.Errorf("parameter %s of %s, dimension %d: %w", name, fn, j, err)
			}
			shape[j] = n
		}
		return shape, nil
	}
	switch {
	case sg.Tensor && sg.DType != "" && sg.Dims != nil:
		dt, err := tensor.ParseDType(sg.DType)
		if err != nil {
			return vm.Value{}, fmt.Errorf("parameter %s of %s: %w", name, fn, err)
		}
		shape, err := dims()
		if err != nil {
			return vm.Value{}, err
		}
		if err := in.budget.reserveTensor(dt, shape, "random input "+name); err != nil {
			return vm.Value{}, err
		}
		t, err := tensor.NewChecked(dt, shape)
		if err != nil {
			return vm.Value{}, fmt.Errorf("parameter %s of %s: %w", name, fn, err)
		}
		for k := range int(t.NumElements()) {
			switch {
			case dt.IsFloat():
				t.SetFloat64(k, rng.Float64()*2-1)
			case dt == tensor.Bool:
				t.SetFloat64(k, float64(rng.IntN(2)))
			default:
				t.SetFloat64(k, float64(rng.IntN(10)))
			}
		}
		return vm.TensorValue(t), nil
	case !sg.Tensor && strings.HasPrefix(sg.Annotation, "R.Prim("):
		dtype := sg.DType
		if dtype == "" {
			// R.Prim("int64") records its dtype only in the annotation;
			// R.Prim(value=n) is an int64 whose value is a dimension.
			if _, q, ok := strings.Cut(sg.Annotation, `"`); ok {
				dtype, _, _ = strings.Cut(q, `"`)
			} else if _, v, ok := strings.Cut(sg.Annotation, "value="); ok {
				n, err := dimValue(strings.TrimSuffix(v, ")"), in.syms)
				if err != nil {
					return vm.Value{}, fmt.Errorf("parameter %s of %s: %w", name, fn, err)
				}
				return vm.Int(n), nil
			}
		}
		switch {
		case dtype == "":
			return vm.Value{}, fmt.Errorf("parameter %s of %s is %s: --random-inputs cannot type it; give --input %s=FILE.npy", name, fn, sg.Annotation, name)
		case dtype == "bool":
			return vm.Bool(rng.IntN(2) == 1), nil
		case strings.HasPrefix(dtype, "float"):
			return vm.Float(rng.Float64()*2 - 1), nil
		default:
			return vm.Int(int64(rng.IntN(10))), nil
		}
	case !sg.Tensor && strings.HasPrefix(sg.Annotation, "R.Shape(["):
		if sg.Dims == nil {
			// The signature keeps a shape's dimensions only in its
			// annotation: R.Shape([k, 2]).
			inner := strings.TrimSuffix(strings.TrimPrefix(sg.Annotation, "R.Shape(["), "])")
			if inner != "" {
				sg.Dims = strings.Split(inner, ",")
			} else {
				sg.Dims = []string{}
			}
		}
		shape, err := dims()
		if err != nil {
			return vm.Value{}, err
		}
		return vm.ShapeValue(shape...), nil
	}
	return vm.Value{}, fmt.Errorf("parameter %s of %s is %s: --random-inputs cannot make one; give --input %s=FILE.npy", name, fn, sg.Annotation, name)
}

// symbolicNames are the names --symbolic gave.
func symbolicNames(specs []string) []string {
	var names []string
	for _, kv := range specs {
		k, _, _ := strings.Cut(kv, "=")
		names = append(names, strings.TrimSpace(k))
	}
	return names
}

// unsetDim is the value of a symbolic dimension no --symbolic gives, in
// every command that makes random inputs (eval.RandomArgs uses the same).
// dimValue records the value it chose in the map of given values.
const unsetDim = 4

func isIdentifier(s string) bool {
	for i, r := range s {
		if r != '_' && !unicode.IsLetter(r) && (i == 0 || !unicode.IsDigit(r)) {
			return false
		}
	}
	return s != ""
}

// dimValue evaluates a recorded dimension: an integer, a symbolic variable
// given by --symbolic, or a product/sum of those.
func dimValue(d string, syms map[string]int64) (int64, error) {
	d = strings.TrimSpace(d)
	for _, op := range []string{" + ", " * "} {
		if a, b, ok := strings.Cut(d, op); ok {
			x, err := dimValue(a, syms)
			if err != nil {
				return 0, err
			}
			y, err := dimValue(b, syms)
			if err != nil {
				return 0, err
			}
			if op == " + " {
				return x + y, nil
			}
			return x * y, nil
		}
	}
	if n, err := strconv.ParseInt(d, 10, 64); err == nil {
		return n, nil
	}
	if n, ok := syms[d]; ok {
		return n, nil
	}
	if !isIdentifier(d) {
		return 0, fmt.Errorf("dimension %q is not an integer, a symbolic variable or a sum or product of those", d)
	}
	// Unset symbolic dimensions are unsetDim, as in eval and semantic
	// checking; the binder reports each one it chose.
	syms[d] = unsetDim
	return unsetDim, nil
}

type namedValue struct {
	Name  string
	Value vm.Value
}

// flattenOutputs names the leaves of a (possibly nested) tuple result.
func flattenOutputs(prefix string, v vm.Value) []namedValue {
	t, ok := v.Tuple()
	if !ok {
		return []namedValue{{prefix, v}}
	}
	var out []namedValue
	for i, f := range t.Fields {
		out = append(out, flattenOutputs(fmt.Sprintf("%s_%d", prefix, i), f)...)
	}
	return out
}

// describe prints a value NumPy-style: dtype, shape and leading values.
func describe(name string, v vm.Value) string {
	if t, ok := v.Tensor(); ok {
		dims := make([]string, len(t.Shape))
		for i, d := range t.Shape {
			dims[i] = strconv.FormatInt(d, 10)
		}
		shape := "(" + strings.Join(dims, ", ")
		if len(dims) == 1 {
			shape += ","
		}
		shape += ")"
		return fmt.Sprintf("%s: %s %s %s", name, t.DType, shape, vm.Preview(t, 8))
	}
	return fmt.Sprintf("%s: %s", name, v)
}

func timingSummary(ts []time.Duration) string {
	var sum, lo time.Duration
	for i, t := range ts {
		sum += t
		if i == 0 || t < lo {
			lo = t
		}
	}
	if len(ts) == 1 {
		return fmtDur(ts[0])
	}
	return fmt.Sprintf("%d times: mean %s, min %s", len(ts), fmtDur(sum/time.Duration(len(ts))), fmtDur(lo))
}

func fmtDur(d time.Duration) string {
	return fmt.Sprintf("%.3f ms", float64(d.Nanoseconds())/1e6)
}

// compareExpected checks each output against an expected .npy (fp32
// tolerance 1e-5, relative beyond magnitude 1) and prints the distance.
func compareExpected(w io.Writer, outs []namedValue, files []string) error {
	if len(files) > len(outs) {
		return fmt.Errorf("--expect: %d files for %d outputs", len(files), len(outs))
	}
	for i, file := range files {
		want, err := tensor.ReadNpyFile(file)
		if err != nil {
			return fmt.Errorf("--expect: %w", err)
		}
		got, ok := outs[i].Value.Tensor()
		if !ok || got.DType != want.DType || tensor.FormatShape(got.Shape) != tensor.FormatShape(want.Shape) {
			return fmt.Errorf("%s: got %s, expected %s%s from %s", outs[i].Name, outs[i].Value, want.DType, tensor.FormatShape(want.Shape), file)
		}
		worst, at := 0.0, 0
		for k := range int(want.NumElements()) {
			g, e := got.Float64At(k), want.Float64At(k)
			if d := math.Abs(g-e) / math.Max(1, math.Abs(e)); d > worst || math.IsNaN(d) {
				worst, at = d, k
			}
		}
		fmt.Fprintf(w, "%s vs %s: max error %.3g (tolerance 1e-5)\n", outs[i].Name, file, worst)
		if !(worst <= 1e-5) {
			return fmt.Errorf("%s differs from %s at element %d: %g vs %g", outs[i].Name, file, at, got.Float64At(at), want.Float64At(at))
		}
	}
	return nil
}
